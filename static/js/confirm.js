/* Money and blocking actions ask once before they are sent (forms with data-confirm, or a
   submit button with its own data-confirm); "tick all" boxes tick their table's rows. */
document.addEventListener("submit", function (e) {
  const button = e.submitter;
  const text = (button && button.dataset.confirm) || e.target.dataset.confirm;
  if (text && !window.confirm(text)) e.preventDefault();
}, true);
document.addEventListener("change", function (e) {
  if (!e.target.matches("[data-tick-all]")) return;
  e.target.closest("table").querySelectorAll("tbody input[type=checkbox]").forEach(function (box) { box.checked = e.target.checked; });
});
