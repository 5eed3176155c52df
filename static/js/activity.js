/* Active time on task: counts seconds while the page is visible and the person typed,
   clicked or scrolled within the last minute (idle time is left out), and reports them
   every 15 seconds and when the page is left. Used by the authoring and review pages. */
(function () {
  "use strict";
  const tracker = document.querySelector("[data-time-url]");
  if (!tracker) return;
  const url = tracker.dataset.timeUrl;
  const kind = tracker.dataset.timeKind || "writing";
  const csrf = document.querySelector("[name=csrfmiddlewaretoken]").value;
  const IDLE_AFTER_MS = 60000;
  let last = Date.now();
  let pending = 0;

  ["keydown", "mousedown", "input", "scroll", "touchstart"].forEach(function (type) {
    document.addEventListener(type, function () { last = Date.now(); }, { passive: true, capture: true });
  });
  setInterval(function () {
    if (document.visibilityState === "visible" && Date.now() - last < IDLE_AFTER_MS) pending += 1;
  }, 1000);

  function form(seconds) {
    const data = new FormData();
    data.append("csrfmiddlewaretoken", csrf);
    data.append("seconds", String(seconds));
    data.append("kind", kind);
    return data;
  }
  function flush(leaving) {
    if (pending < 1) return;
    const seconds = pending;
    pending = 0;
    if (leaving && navigator.sendBeacon) {
      navigator.sendBeacon(url, form(seconds));
      return;
    }
    fetch(url, { method: "POST", body: form(seconds), credentials: "same-origin", keepalive: true })
      .then(function (r) { if (!r.ok && r.status >= 500) pending += seconds; })
      .catch(function () { pending += seconds; });
  }
  setInterval(function () { flush(false); }, 15000);
  window.addEventListener("pagehide", function () { flush(true); });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") flush(true);
  });
})();
