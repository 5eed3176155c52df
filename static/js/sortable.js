/* Tables with class "sortable": click (or Enter on) a header to sort by that column;
   cells may carry data-value for the number to sort by. Click again to reverse. */
(function () {
  "use strict";
  function value(cell) {
    const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
    const n = parseFloat(raw);
    return raw === "" || isNaN(n) ? raw.toLowerCase() : n;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, index) {
      th.tabIndex = 0;
      th.setAttribute("role", "button");
      th.setAttribute("aria-sort", "none");
      function sort() {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach(function (h) { h.setAttribute("aria-sort", "none"); });
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
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
    });
  });
})();
