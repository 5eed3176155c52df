/* A page following work that runs elsewhere reloads by itself: an element with data-refresh="seconds"
   (and data-refresh-url to move on to a link instead). In script rather than <meta http-equiv="refresh">
   (WCAG 2.2.1, axe-core's meta-refresh): the reload waits while someone is typing or choosing in a form. */
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    const marker = document.querySelector("[data-refresh]");
    if (!marker) return;
    const seconds = parseFloat(marker.dataset.refresh) || 5;
    function go() {
      const active = document.activeElement;
      if (active && active.matches("input, select, textarea")) { setTimeout(go, seconds * 1000); return; }
      if (marker.dataset.refreshUrl) window.location.assign(marker.dataset.refreshUrl);
      else window.location.reload();
    }
    setTimeout(go, seconds * 1000);
  });
})();
