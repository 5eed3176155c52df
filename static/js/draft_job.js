/* The authoring overview: poll the pre-drafting job until it finishes. */
(function () {
  "use strict";
  const el = document.getElementById("draft-job");
  if (!el || el.dataset.finished === "true") return;
  const set = function (id, v) { const n = document.getElementById(id); if (n) n.textContent = v; };
  const timer = setInterval(async function () {
    try {
      const r = await fetch(el.dataset.url, { credentials: "same-origin" });
      if (!r.ok) return;
      const p = await r.json();
      set("draft-job-status", p.status_display); set("draft-job-done", p.done); set("draft-job-total", p.total); set("draft-job-drafts", p.drafts);
      const bar = document.getElementById("draft-job-bar"); bar.max = p.total; bar.value = p.done;
      if (p.finished) clearInterval(timer);
    } catch (e) { /* try again at the next tick */ }
  }, 2000);
})();
