/* The authoring overview: poll running drafting jobs (pre-drafting, budget) until they finish,
   then reload once to show the result. */
(function () {
  "use strict";
  document.querySelectorAll(".job-progress[data-finished=false]").forEach(function (el) {
    const timer = setInterval(async function () {
      try {
        const r = await fetch(el.dataset.url, { credentials: "same-origin" });
        if (!r.ok) return;
        const p = await r.json();
        el.querySelectorAll("[data-field]").forEach(function (n) { n.textContent = p[n.dataset.field]; });
        const bar = el.querySelector("progress");
        bar.max = p.total || 1; bar.value = p.done;
        if (p.finished) { clearInterval(timer); window.location.reload(); }
      } catch (e) { /* try again at the next tick */ }
    }, 2000);
  });
})();
