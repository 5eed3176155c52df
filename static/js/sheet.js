/* A qualification or screening sheet (form.qualification): its answers are kept in this browser
   until the sheet is graded, so signing in again in between (the session ended while it was
   open), a reload or a lost connection loses none. The key names the page and the sheet's facts:
   a fresh sheet starts empty, and a page without a sheet (graded) forgets what was kept. Answers
   the server sent back (an incomplete sheet) stand over kept ones. The work page, where a graded
   in-house sheet lands, loads this with data-forget="all": it forgets every kept sheet. */
(function () {
  "use strict";
  /* Submit sends the sheet once: a double click would post it twice (the server shows the first
     post's result for the second, hits.views.worker.take_test, but one post is what is meant).
     Back to the page from the browser's history: the button works again. */
  const sheetForm = document.querySelector("form.qualification");
  if (sheetForm) {
    const buttons = function () { return sheetForm.querySelectorAll("button[type=submit]"); };
    sheetForm.addEventListener("submit", function (e) {
      if (sheetForm.dataset.sent) { e.preventDefault(); return; }
      sheetForm.dataset.sent = "1";
      buttons().forEach(function (b) { b.disabled = true; b.setAttribute("aria-busy", "true"); });
    });
    window.addEventListener("pageshow", function (e) {
      if (!e.persisted) return;
      delete sheetForm.dataset.sent;
      buttons().forEach(function (b) { b.disabled = false; b.removeAttribute("aria-busy"); });
    });
  }
})();
(function () {
  "use strict";
  const script = document.currentScript;
  const forgetAll = Boolean(script && script.dataset.forget === "all");
  const prefix = forgetAll ? "sheet:" : "sheet:" + window.location.pathname + ":";
  const kept = [];
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const k = localStorage.key(i);
      if (k && k.indexOf(prefix) === 0) kept.push(k);
    }
  } catch (e) { return; }  // storage off (private mode): nothing is kept
  const form = forgetAll ? null : document.querySelector("form.qualification");
  const radios = form ? Array.from(form.querySelectorAll("input[type=radio][name^='ans-']")) : [];
  const key = prefix + Array.from(new Set(radios.map(function (r) { return r.name; }))).sort().join(",");
  kept.forEach(function (k) { if (k !== key || !radios.length) localStorage.removeItem(k); });
  if (!radios.length) return;
  let saved = {};
  try { saved = JSON.parse(localStorage.getItem(key) || "{}") || {}; } catch (e) { saved = {}; }
  const given = new Set(radios.filter(function (r) { return r.checked; }).map(function (r) { return r.name; }));
  radios.forEach(function (r) { if (!given.has(r.name) && saved[r.name] === r.value) r.checked = true; });
  form.addEventListener("change", function (e) {
    const r = e.target;
    if (r.type !== "radio" || r.name.indexOf("ans-") !== 0) return;
    saved[r.name] = r.value;
    try { localStorage.setItem(key, JSON.stringify(saved)); } catch (err) { /* full: not kept */ }
  });
})();
