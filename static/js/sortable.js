/* Tables with class "sortable": click (or Enter on) a header to sort by that column;
   cells may carry data-value for the number to sort by. Click again to reverse.
   Each header's label goes into a button (keyboard and screen readers reach it); the header
   itself keeps its column-header role and carries aria-sort once its column is sorted. */
(function () {
  "use strict";
  function value(cell) {
    const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
    const n = parseFloat(raw);
    return raw === "" || isNaN(n) ? raw.toLowerCase() : n;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    const headers = table.querySelectorAll("thead th");
    headers.forEach(function (th, index) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      function sort() {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort(function (a, b) {
          const x = value(a.cells[index]), y = value(b.cells[index]);
          const blankX = x === "" || x === "–", blankY = y === "" || y === "–";
          if (blankX !== blankY) return blankX ? 1 : -1;  // empty cells last either way
          if (x < y) return ascending ? -1 : 1;
          if (x > y) return ascending ? 1 : -1;
          return 0;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      button.addEventListener("click", sort);
    });
  });
})();
