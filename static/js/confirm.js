/* Money and blocking actions ask once before they are sent (forms with data-confirm, or a
   submit button with its own data-confirm); "tick all" boxes tick their table's rows. A form with
   data-needs-ticked="<checkbox name>" and nothing of that name ticked is not sent and does not
   ask: it shows its data-none-ticked message in its [data-none-ticked-note] (the server checks too).
   A submission a script stopped before (on the window, capturing) asks nothing. */
function noneTicked(form) {
  const name = form.dataset.needsTicked;
  if (!name || form.querySelector('input[type=checkbox][name="' + name + '"]:checked')) return false;
  const note = form.querySelector("[data-none-ticked-note]");
  if (note) { note.textContent = form.dataset.noneTicked; note.hidden = false; }
  return true;
}
document.addEventListener("submit", function (e) {
  if (e.defaultPrevented) return;  // a page's script stopped it first (authoring.js saves before Done): nothing to ask
  if (noneTicked(e.target)) { e.preventDefault(); return; }
  const note = e.target.querySelector("[data-none-ticked-note]");
  if (note) note.hidden = true;
  const button = e.submitter;
  const text = (button && button.dataset.confirm) || e.target.dataset.confirm;
  if (text && !window.confirm(text)) e.preventDefault();
}, true);
document.addEventListener("change", function (e) {
  if (!e.target.matches("[data-tick-all]")) return;
  e.target.closest("table").querySelectorAll("tbody input[type=checkbox]").forEach(function (box) { box.checked = e.target.checked; });
});
