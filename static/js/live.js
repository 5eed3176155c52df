/* Live overview: poll the dashboard's JSON every 5 seconds and update the figures and the
   agreement chart without reloading the page. */
(function () {
  "use strict";
  const root = document.getElementById("overview");
  if (!root) return;
  const url = root.dataset.liveUrl;
  function set(id, text) { const el = document.getElementById(id); if (el) el.textContent = text; }
  function fixed(x) { return x === null || x === undefined ? "–" : Number(x).toFixed(4); }
  async function poll() {
    try {
      const resp = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!resp.ok) return;
      const data = await resp.json();
      const p = data.progress;
      set("done", p.done); set("places", p.places); set("percent", p.percent); set("in-progress", p.in_progress);
      // A batch that cannot finish by itself has no estimated finish (its notice, drawn with the page, names it).
      const stuck = p.cannot_finish && p.cannot_finish.length;
      set("left", p.left); set("per-hour", p.per_hour); set("eta", p.eta ? p.eta.slice(0, 16).replace("T", " ") : stuck ? "none" : "–");
      const notice = document.getElementById("cannot-finish");
      if (notice && !stuck) notice.hidden = true;
      const bar = document.getElementById("progress-bar");
      if (bar) { bar.max = p.places; bar.value = p.done; }
      if (data.alpha) { set("alpha-acu", fixed(data.alpha.acu_level)); set("alpha-summary", fixed(data.alpha.summary_level)); }
      const note = document.getElementById("stale-note");
      if (note) note.hidden = !data.stale;
      if (String(data.run) !== root.dataset.run && window.updateChart) {
        root.dataset.run = String(data.run);
        window.updateChart("trend-chart", data.trend);
      }
    } catch (e) { /* offline for a moment: the next poll tries again */ }
  }
  setInterval(poll, 5000);
})();
