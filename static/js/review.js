/* The review page: a decision (send back, approve) is not sent while a comment box holds text
   not yet saved with its "Save comment": the comment would be lost, or the reference approved
   with the change the reviewer asked for unsaid. The page says so and shows the comment. */
(function () {
  "use strict";
  const alertEl = document.getElementById("review-alert");
  if (!alertEl) return;
  document.addEventListener("submit", function (e) {
    if (!e.target.matches("form[data-decision]")) return;
    const typed = Array.from(document.querySelectorAll("textarea.review-comment")).find(function (box) {
      return box.value.trim() !== "";
    });
    if (!typed) return;
    e.preventDefault();
    const details = typed.closest("details");
    if (details) details.open = true;
    alertEl.hidden = false;
    alertEl.textContent = "Nothing was decided: a comment you typed is not saved yet. Press its “Save comment” (or clear it), then decide again.";
    typed.focus();
  });
})();
