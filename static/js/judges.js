/* Dataset page, machine judges: list the judge runs with their progress, polling the JSON
   every 2 seconds while one is queued or running, and say which judges can run here. */
(function () {
  "use strict";
  const root = document.getElementById("judge-runs");
  if (!root) return;
  const url = root.dataset.url;
  const body = root.querySelector("tbody");
  const availability = document.getElementById("judge-availability");
  function fixed(x, d) { return x === null || x === undefined ? "–" : Number(x).toFixed(d); }
  function cell(text, cls) { const td = document.createElement("td"); if (cls) td.className = cls; td.textContent = text; return td; }
  function render(data) {
    body.replaceChildren();
    if (!data.runs.length) {
      const tr = document.createElement("tr"); const td = cell("No judge run yet.", "empty"); td.colSpan = 8; tr.append(td); body.append(tr);
    }
    for (const r of data.runs) {
      const tr = document.createElement("tr");
      tr.id = "judge-run-" + r.id; tr.dataset.status = r.status;
      const judge = cell(r.judge + " v" + r.version + (r.model ? " · " + r.model : ""));
      if (r.ranking && r.ranking.for_ranking === false) {
        const mark = document.createElement("strong"); mark.className = "not-for-ranking"; mark.title = r.ranking.reason;
        mark.textContent = " not for ranking"; judge.append(mark);
      }
      tr.append(cell("#" + r.id + " (round " + r.round + ")"), judge);
      tr.append(cell(r.status_display + (r.error ? ": " + r.error : ""), "status " + r.status));
      const p = document.createElement("td");
      const bar = document.createElement("progress"); bar.max = 1; bar.value = r.progress;
      bar.setAttribute("aria-label", "progress of run " + r.id);
      p.append(bar, document.createTextNode(" " + r.pairs_done + " / " + r.pairs + " pairs"));
      if (r.llm) {
        /* An llm run's calls and tokens (a count the endpoint did not report is unknown, not 0). */
        const u = r.llm, usage = document.createElement("small");
        const count = function (x) { return x === null || x === undefined ? "unknown" : Number(x).toLocaleString("en"); };
        usage.className = "llm-usage";
        usage.textContent = (u.asked === null || u.asked === undefined ? "asked not recorded, " : count(u.asked) + " asked, ") +
          count(u.calls) + " calls, " + count(u.retries) + " retries" +
          (u.reused ? ", " + count(u.reused) + " reused" : "") +
          (u.reused_earlier ? ", " + count(u.reused_earlier) + " from earlier runs" : "") + (u.resumed ? ", resumed " + u.resumed + "×" : "") +
          "; tokens " + count(u.total_tokens) + (u.total_tokens !== null && u.replies_without_usage ? " at least" : "");
        p.append(document.createElement("br"), usage);
      } else if (r.llm_unrecorded) {
        /* An llm run from before its calls and tokens were recorded: said, not left blank. */
        const usage = document.createElement("small");
        usage.className = "llm-usage";
        usage.textContent = "usage not recorded (a run from before it was kept)";
        p.append(document.createElement("br"), usage);
      }
      tr.append(p, cell(fixed(r.accuracy, 3), "num accuracy"), cell(fixed(r.auc, 3), "num"), cell(fixed(r.kappa, 3), "num"));
      const link = document.createElement("td");
      if (r.status === "done") { const a = document.createElement("a"); a.href = r.systems_url; a.textContent = "scores"; link.append(a); }
      tr.append(link);
      body.append(tr);
    }
    if (availability) {
      availability.replaceChildren();
      for (const j of data.judges) {
        if (j.available) continue;
        const li = document.createElement("li"); li.textContent = j.name + ": " + j.reason; availability.append(li);
      }
    }
    return data.runs.some(function (r) { return r.status === "queued" || r.status === "running"; });
  }
  async function poll() {
    let again = true;
    try {
      const resp = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (resp.ok) again = render(await resp.json());
    } catch (e) { /* offline for a moment: try again */ }
    if (again) setTimeout(poll, 2000);
  }
  poll();
})();
