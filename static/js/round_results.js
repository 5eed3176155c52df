/* The batch page's "Results of this round": both alphas of the round, read from the dashboard's JSON. */
(function () {
  "use strict";
  const box = document.getElementById("round-results");
  if (!box) return;
  function show(id, value) {
    const el = document.getElementById(id);
    el.textContent = value === null || value === undefined ? "–" : Number(value).toFixed(4);
    return value === null || value === undefined;
  }
  fetch(box.dataset.liveUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then(function (resp) { return resp.ok ? resp.json() : null; })
    .then(function (data) {
      const alpha = (data && data.alpha) || {};
      const a = show("round-alpha", alpha.acu_level), b = show("round-alpha-summary", alpha.summary_level);
      document.getElementById("round-alpha-note").hidden = !(a || b);
    })
    .catch(function () { show("round-alpha", null); show("round-alpha-summary", null); });
})();
