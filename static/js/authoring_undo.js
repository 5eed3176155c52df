/* Undo of a deleted ACU on the writing page: the deleted row is kept and offered back for a while
   ("Deleted “…” · Undo" in a toast, or Ctrl+Z before anything else is typed), restored at its place
   and saved (as a new ACU when the delete was saved already: authoring.js clears its id then).
   authoring.js calls acuAuthoringUndo once, with its element builder, field grower, save scheduler
   and whether the page stopped saving (a conflict). */
window.acuAuthoringUndo = function (bar, hooks) {
  "use strict";
  const UNDO_MS = 10000;
  const lastText = new WeakMap();  // a row's last text that was not empty (Backspace deletes an emptied one)
  let timer = null;
  const api = { offer: null };

  function hide() { api.offer = null; clearTimeout(timer); if (bar) bar.hidden = true; }
  function later() { clearTimeout(timer); if (api.offer) timer = setTimeout(hide, UNDO_MS); }

  api.remember = function (field) { if (field.value.trim()) lastText.set(field.closest("li.acu"), field.value.trim()); };
  api.textOf = function (li) { return li.querySelector(".acu-text").value.trim() || lastText.get(li) || ""; };

  // offer: {li, list, index (its place in list), text, focused (the field focused after it), focusedValue}
  api.offerFor = function (offer) {
    api.offer = offer;
    if (!bar) return;
    const shown = offer.text.length > 60 ? offer.text.slice(0, 59) + "…" : offer.text;
    bar.textContent = "Deleted “" + shown + "” · ";
    const b = hooks.h("button", { type: "button", class: "undo", text: "Undo" });
    b.addEventListener("click", api.restore);
    bar.appendChild(b);
    bar.hidden = false;
    later();
  };

  api.restore = function () {
    const o = api.offer;
    if (!o || hooks.stopped()) return;
    hide();
    const field = o.li.querySelector(".acu-text");
    if (!field.value.trim()) field.value = o.text;
    o.list.insertBefore(o.li, o.list.children[o.index] || null);
    hooks.grow(field);
    field.focus();
    hooks.schedule(0);
  };

  // Ctrl+Z: the delete is undone unless the focused field was typed in since (its own undo then).
  api.byKey = function (t, typing) {
    const o = api.offer;
    if (!o || (typing && (t !== o.focused || t.value !== o.focusedValue))) return false;
    api.restore();
    return true;
  };

  if (bar) {  // kept while the pointer or the focus is on it
    bar.addEventListener("mouseenter", function () { clearTimeout(timer); });
    bar.addEventListener("focusin", function () { clearTimeout(timer); });
    bar.addEventListener("mouseleave", later);
    bar.addEventListener("focusout", later);
  }
  return api;
};
