/* The ACU writing page: one editable list of ACUs per reference sentence.
   Every change is saved at once (typing after a short pause) by sending the whole list
   with the version it was based on; the server answers 409 when another tab or person
   saved in between, and the page then says so instead of overwriting.
   Drafts (Suggest ACUs) appear as marked rows under their sentence: Enter accepts one,
   Shift+Enter accepts all of the sentence, Escape dismisses, typing in one accepts it. */
(function () {
  "use strict";
  const root = document.getElementById("editor");
  if (!root) return;
  const state = JSON.parse(document.getElementById("reference-state").textContent);
  const editable = root.dataset.editable === "true";
  const saveUrl = root.dataset.saveUrl;
  const pageCsrf = document.querySelector("[name=csrfmiddlewaretoken]").value;
  // The CSRF token of the cookie: signing in again (in another tab, after the session ended)
  // renews it, and the token this page was rendered with is refused from then on.
  function csrf() {
    const found = document.cookie.split("; ").find(function (c) { return c.indexOf("csrftoken=") === 0; });
    return found ? decodeURIComponent(found.slice("csrftoken=".length)) : pageCsrf;
  }
  const loginUrl = root.dataset.loginUrl;
  const statusEl = document.getElementById("save-state");
  const alertEl = document.getElementById("editor-alert");
  const suggestUrl = root.dataset.suggestUrl;
  const drafterEl = document.getElementById("drafter");
  const historyEl = document.getElementById("history-list");
  let dismissed = [];
  const submitForm = document.getElementById("submit-form");
  const submitVersion = submitForm ? submitForm.querySelector("[name=version]") : null;
  let version = state.version;
  let dirty = false, saving = false, stopped = false, timer = null, retryDelay = 1000, dragged = null;
  let refused = false;  // the last save was refused (400): its changes are only on this page
  let retrying = false;  // a save is due again later (offline or signed out): no quicker one
  let sending = false;  // Done was pressed: saving first, then sending (or staying, when refused)
  // The editor's DOM and the fields' accessible names (authoring_view.js, loaded before this file).
  const view = window.acuAuthoringView(root, state, { editable: editable, suggestUrl: suggestUrl, historyEl: historyEl });
  const h = view.h, hintList = view.hintList, acuItem = view.acuItem, draftList = view.draftList;
  const render = view.render, renderHistory = view.renderHistory, nameFields = view.nameFields;

  function setStatus(kind, text) {
    statusEl.className = "save-state " + kind;
    statusEl.textContent = text;
  }

  function showAlert(text, withReload) {
    alertEl.hidden = false;
    alertEl.textContent = text + " ";
    if (withReload) {
      const b = h("button", { type: "button", class: "primary", text: "Reload the current version" });
      b.addEventListener("click", function () { window.location.reload(); });
      alertEl.appendChild(b);
    }
  }

  function collect() {
    return Array.from(root.querySelectorAll(".sentence-block")).map(function (block) {
      const items = Array.from(block.querySelectorAll("li.acu")).filter(function (li) {
        return li.querySelector(".acu-text").value.trim() !== "";
      });
      return { id: Number(block.dataset.sentenceId), items: items };
    });
  }

  // The text each ACU has on the server (by id), so a refused conflict knows which rows are this page's own changes.
  const savedText = {};
  state.sentences.forEach(function (s) { s.acus.forEach(function (a) { savedText[a.id] = a.text; }); });

  function applySaved(sent, data) {
    const byId = {};
    data.sentences.forEach(function (s) { byId[s.id] = s; });
    // A row this save did not send (emptied) was deleted on the server: typed in again, it is a new ACU.
    const kept = new Set();
    sent.forEach(function (s) { s.items.forEach(function (li) { kept.add(li); }); });
    root.querySelectorAll("li.acu").forEach(function (li) { if (!kept.has(li)) li.dataset.id = ""; });
    if (undo.offer && !kept.has(undo.offer.li)) undo.offer.li.dataset.id = "";  // restored by Undo: a new ACU
    sent.forEach(function (s) {
      const saved = byId[s.id];
      s.items.forEach(function (li, j) {
        const acu = saved.acus[j];
        if (!acu) return;
        li.dataset.id = String(acu.id);
        savedText[acu.id] = acu.text;
        delete li.dataset.draft;
        const fresh = hintList("hints", acu.hints);
        li.querySelector(".hints").replaceWith(fresh);
      });
      const block = root.querySelector('[data-sentence-id="' + s.id + '"] .sentence-hints');
      if (block) block.replaceWith(hintList("sentence-hints", saved.hints));
    });
  }

  // A save answered by the sign-in page (the session ended): the changes stay here, unsaved, and
  // are sent again until the person has signed in again (in another tab), never dropped.
  function signedOut(resp) {
    return resp.status === 401 || (resp.redirected && new URL(resp.url).pathname === loginUrl);
  }

  function showSignedOut() {
    alertEl.hidden = false;
    alertEl.textContent = "You are signed out (your session ended): your latest changes are not saved, but they are kept on this page. ";
    alertEl.appendChild(h("a", { href: loginUrl + "?next=" + encodeURIComponent(window.location.pathname), target: "_blank", rel: "noopener", text: "Sign in again in a new tab" }));
    alertEl.appendChild(document.createTextNode(", then come back: they are saved then. Do not reload this page before."));
  }

  function retryLater(kind, text) {
    dirty = true;
    retrying = true;
    setStatus(kind, text);
    clearTimeout(timer);
    timer = setTimeout(save, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 30000);
  }

  // The ACU a refused save names (its sentence id and its index in the list sent) is marked, and
  // its field says it is invalid; any earlier mark goes. Returns the marked row, or null.
  function markRefused(sent, data) {
    root.querySelectorAll("li.acu.refused").forEach(function (li) {
      li.classList.remove("refused");
      li.querySelector(".acu-text").removeAttribute("aria-invalid");
      li.querySelector(".acu-text").removeAttribute("aria-describedby");
    });
    const s = sent.find(function (x) { return x.id === data.sentence; });
    const li = s && typeof data.acu === "number" ? s.items[data.acu] : null;
    if (!li || !li.isConnected) return null;
    li.classList.add("refused");
    li.querySelector(".acu-text").setAttribute("aria-invalid", "true");
    li.querySelector(".acu-text").setAttribute("aria-describedby", "editor-alert");
    return li;
  }

  async function save() {
    if (saving || stopped || !dirty) return;
    clearTimeout(timer);
    retrying = false;
    saving = true;
    dirty = false;
    setStatus("saving", "Saving…");
    const sent = collect();
    const body = {
      version: version,
      sentences: sent.map(function (s) {
        return { id: s.id, acus: s.items.map(function (li) {
          return { id: li.dataset.id ? Number(li.dataset.id) : null, text: li.querySelector(".acu-text").value,
                   draft: li.dataset.draft ? Number(li.dataset.draft) : null };
        }) };
      }),
      dismissed: dismissed.slice(),
    };
    try {
      const resp = await fetch(saveUrl, {
        method: "POST", credentials: "same-origin", body: JSON.stringify(body),
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      });
      if (signedOut(resp)) {
        showSignedOut();
        retryLater("error", "Not saved: signed out");
        return;
      }
      const data = await resp.json().catch(function () { return {}; });
      if (resp.status === 409) {
        stopped = true;
        root.querySelectorAll("input, textarea").forEach(function (i) { i.readOnly = true; });
        document.querySelectorAll("#submit-form button").forEach(function (b) { b.disabled = true; });
        setStatus("conflict", "Not saved: conflict");
        const mine = keepUnsaved();
        refused = mine.length > 0 && !storageWorks;  // not kept in this browser: leaving asks first
        showAlert((data.error || "Changed elsewhere: reload.") + (mine.length ? (storageWorks
          ? " Your changes come back after the reload, each in its sentence's new-ACU box (Enter adds it): "
          : " Copy your changes before you reload: ") + mine.join("; ") : ""), true);
        return;
      }
      if (!resp.ok) {
        stopped = resp.status === 403 || resp.status === 404;
        refused = true;  // its changes are only on this page: leaving it asks first
        // No reload offered: it would drop every change on this page; fixing the marked ACU saves them.
        setStatus("error", markRefused(sent, data) ? "Not saved: fix the marked ACU" : "Not saved");
        showAlert(data.error || "The change could not be saved (" + resp.status + ").", false);
        return;
      }
      version = data.version;
      if (submitVersion) submitVersion.value = String(version);
      refused = false;
      markRefused(sent, {});
      dismissed = dismissed.filter(function (id) { return body.dismissed.indexOf(id) < 0; });
      applySaved(sent, data);
      renderHistory(data.history);
      const badge = document.getElementById("ref-status");
      if (badge && data.status_display) {
        badge.textContent = data.status_display;
        badge.className = "badge status-" + data.status;
      }
      retryDelay = 1000;
      alertEl.hidden = true;
      setStatus(dirty ? "pending" : "saved", dirty ? "Unsaved changes…" : "All changes saved");
    } catch (err) {
      retryLater("offline", "Offline: retrying…");
    } finally {
      saving = false;
      if (dirty && !stopped && !retrying) schedule(200);
    }
  }

  function schedule(delay) {
    if (stopped) return;
    dirty = true;
    setStatus("pending", "Unsaved changes…");
    clearTimeout(timer);
    timer = setTimeout(save, delay);
  }

  // ---- the new-ACU boxes: what is typed there is kept in this browser until it becomes an ACU ----
  // (localStorage, keyed by reference and sentence), so a reload or a closed tab loses nothing.
  let storageWorks = true;
  function keptKey(block) { return "acu-new:" + state.id + ":" + block.dataset.sentenceId; }
  function keepNew(box) {
    try {
      const key = keptKey(box.closest(".sentence-block"));
      if (box.value.trim()) window.localStorage.setItem(key, box.value); else window.localStorage.removeItem(key);
    } catch (err) { storageWorks = false; /* storage full or disabled: beforeunload warns instead */ }
  }
  function restoreNew() {
    let restored = 0;
    root.querySelectorAll(".acu-new").forEach(function (box) {
      let text = null;
      try { text = window.localStorage.getItem(keptKey(box.closest(".sentence-block"))); } catch (err) { text = null; }
      if (text) { box.value = text; box.classList.add("kept"); restored += 1; }
    });
    return restored;
  }
  // A save refused by a conflict: this page's new and edited ACUs (and its new-ACU boxes' text) are kept in this
  // browser as their sentence's new-ACU text, so the reload the page asks for loses none of them. Returns them named.
  function keepUnsaved() {
    const named = [];
    root.querySelectorAll(".sentence-block").forEach(function (block, i) {
      const box = block.querySelector(".acu-new");
      const texts = Array.from(block.querySelectorAll("li.acu")).map(function (li) {
        const text = li.querySelector(".acu-text").value.trim();
        return text && (!li.dataset.id || savedText[li.dataset.id] !== text) ? text : "";
      }).concat([box ? box.value.trim() : ""]).filter(Boolean);
      if (!texts.length || !box) return;
      try { window.localStorage.setItem(keptKey(block), texts.join(" ")); } catch (err) { storageWorks = false; }
      texts.forEach(function (t) { named.push("sentence " + (i + 1) + ": “" + t + "”"); });
    });
    return named;
  }
  function unsavedNewText() {
    return Array.from(root.querySelectorAll(".acu-new")).some(function (box) { return box.value.trim() !== ""; });
  }

  function inputs() { return Array.from(root.querySelectorAll(".acu-text, .draft-text, .acu-new")); }

  // ---- drafts ----------------------------------------------------------------------------
  function nextFocusAfterDraft(li) {
    const block = li.closest(".sentence-block");
    const next = li.nextElementSibling || li.previousElementSibling;
    return next ? next.querySelector(".draft-text") : block.querySelector(".acu-new");
  }

  function acceptDraft(li, keepFocus) {
    const block = li.closest(".sentence-block");
    const input = li.querySelector(".draft-text");
    const text = input.value;  // as typed: a space typed after the draft's text stays (the save trims the ends)
    const focusNext = nextFocusAfterDraft(li);
    if (!text.trim()) { dismissDraft(li); return null; }
    const hints = Array.from(li.querySelectorAll(".hints li")).map(function (x) { return x.textContent; });
    const item = acuItem({ id: null, text: text, hints: hints, drafter: li.dataset.drafter, draft: Number(li.dataset.draft) });
    block.querySelector(".acu-list").appendChild(item);
    li.remove();
    schedule(keepFocus ? 700 : 0);
    if (keepFocus) {
      const field = item.querySelector(".acu-text");
      const caret = input.selectionStart;
      field.focus();
      field.setSelectionRange(caret, caret);
    } else if (focusNext) focusNext.focus();
    return item;
  }

  function dismissDraft(li) {
    const focusNext = nextFocusAfterDraft(li);
    dismissed.push(Number(li.dataset.draft));
    li.remove();
    schedule(0);
    if (focusNext) focusNext.focus();
  }

  function waitIdle() {
    return new Promise(function (resolve) {
      if (!dirty && !saving) { resolve(); return; }
      save();
      const wait = setInterval(function () {
        if (!saving && !dirty) { clearInterval(wait); resolve(); }
        else if (!saving && dirty && !retrying) save();
        if (stopped) { clearInterval(wait); resolve(); }
      }, 100);
    });
  }

  async function suggest(sentenceId) {
    if (!suggestUrl || stopped) return;
    await waitIdle();
    if (stopped) return;
    const drafter = drafterEl ? drafterEl.value : "rules";
    setStatus("saving", "Drafting with " + drafter + "…");
    try {
      const resp = await fetch(suggestUrl, {
        method: "POST", credentials: "same-origin",
        body: JSON.stringify({ drafter: drafter, sentence: sentenceId }),
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      });
      if (signedOut(resp)) {
        setStatus("error", "No drafts: signed out");
        showSignedOut();
        return;
      }
      const data = await resp.json().catch(function () { return {}; });
      if (!resp.ok) {
        setStatus("error", "No drafts");
        showAlert(data.error || "No drafts could be made (" + resp.status + ").", false);
        return;
      }
      if (!refused) alertEl.hidden = true;  // a refused save's message stays until the change is fixed
      let first = null;
      data.sentences.forEach(function (s) {
        if (sentenceId !== null && s.id !== sentenceId) return;
        const block = root.querySelector('[data-sentence-id="' + s.id + '"]');
        const fresh = draftList(s);
        block.querySelector(".draft-list").replaceWith(fresh);
        if (!first) first = fresh.querySelector(".draft-text");
      });
      growAll();
      const made = data.made + " draft" + (data.made === 1 ? "" : "s") + " from " + drafter;
      // Drafts are not a save: after a refused one the page still says its changes are not saved.
      if (refused) setStatus("error", "Not saved · " + made);
      else setStatus("saved", made);
      if (first) first.focus();
    } catch (err) {
      setStatus("offline", "Offline: no drafts");
    }
  }

  function acceptAll(scope) {
    Array.from(scope.querySelectorAll("li.draft")).forEach(function (li) { acceptDraft(li, false); });
  }

  function focusSibling(from, step) {
    const all = inputs();
    const next = all[all.indexOf(from) + step];
    if (next) next.focus();
  }

  function moveItem(li, step) {
    const list = li.parentElement;
    const block = li.closest(".sentence-block");
    if (step < 0 && li.previousElementSibling) list.insertBefore(li, li.previousElementSibling);
    else if (step > 0 && li.nextElementSibling) list.insertBefore(li.nextElementSibling, li);
    else {
      const blocks = Array.from(root.querySelectorAll(".sentence-block"));
      const other = blocks[blocks.indexOf(block) + step];
      if (!other) return;
      const otherList = other.querySelector(".acu-list");
      if (step < 0) otherList.appendChild(li); else otherList.insertBefore(li, otherList.firstChild);
    }
    li.querySelector(".acu-text").focus();
    schedule(0);
  }

  // Undo of a delete (authoring_undo.js, loaded before this file).
  const undo = window.acuAuthoringUndo(document.getElementById("undo-bar"), {
    h: h, grow: grow, schedule: schedule, stopped: function () { return stopped; },
  });

  function removeAcu(li, step) {
    const list = li.parentElement;
    const offer = { li: li, list: list, index: Array.from(list.children).indexOf(li), text: undo.textOf(li) };
    focusSibling(li.querySelector(".acu-text"), step);
    li.remove();
    offer.focused = document.activeElement;
    offer.focusedValue = offer.focused ? offer.focused.value : undefined;
    undo.offerFor(offer);
    schedule(0);
  }

  function grow(field) { field.style.height = "auto"; field.style.height = field.scrollHeight + 2 + "px"; }
  function growAll() { root.querySelectorAll("textarea.acu-text, textarea.draft-text").forEach(grow); }

  root.addEventListener("input", function (e) {
    if (e.target.classList.contains("acu-text")) {
      undo.remember(e.target);
      if (/[\r\n]/.test(e.target.value)) e.target.value = e.target.value.replace(/\s*[\r\n]+\s*/g, " ");  // one line (pasted text)
      grow(e.target);
      schedule(700);
    } else if (e.target.classList.contains("draft-text") && editable) acceptDraft(e.target.closest("li.draft"), true);
    else if (e.target.classList.contains("acu-new")) { e.target.classList.remove("kept"); keepNew(e.target); }
  });
  window.addEventListener("resize", growAll);
  root.addEventListener("focusin", function (e) { if (e.target.classList.contains("acu-text")) undo.remember(e.target); });

  // Where the user types: a page shortcut never fires there (the key is the user's text).
  function typingIn(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  // "n": to the new-ACU box (the one holding text kept from before a reload, else the first).
  // The key is taken (preventDefault), so the "n" is not typed into the box it focuses.
  function newAcuShortcut(e) {
    if (e.key !== "n" || e.ctrlKey || e.metaKey || e.altKey || e.repeat || typingIn(e.target)) return false;
    const box = root.querySelector(".acu-new.kept") || root.querySelector(".acu-new");
    if (!box) return false;
    e.preventDefault();
    box.focus();
    return true;
  }

  // On the document, not the editor: the page's shortcuts work before anything is focused.
  document.addEventListener("keydown", function (e) {
    const t = e.target;
    if (newAcuShortcut(e)) return;
    if ((e.ctrlKey || e.metaKey) && e.key === "s") { e.preventDefault(); if (dirty || refused) { dirty = true; save(); } return; }
    if ((e.ctrlKey || e.metaKey) && !e.shiftKey && (e.key === "z" || e.key === "Z") && undo.byKey(t, typingIn(t))) { e.preventDefault(); return; }
    if (editable && e.altKey && (e.key === "g" || e.key === "G" || e.code === "KeyG")) {
      e.preventDefault();
      const block = t.closest(".sentence-block");
      suggest(e.shiftKey || !block ? null : Number(block.dataset.sentenceId));
      return;
    }
    if (t.classList.contains("draft-text")) {
      const li = t.closest("li.draft");
      if (!editable && (e.key === "Enter" || e.key === "Escape")) return;  // read only: drafts stay as they are
      if (e.key === "Enter" && e.shiftKey) { e.preventDefault(); acceptAll(li.closest(".sentence-block")); }
      else if (e.key === "Enter") { e.preventDefault(); acceptDraft(li, false); }
      else if (e.key === "Escape") { e.preventDefault(); dismissDraft(li); }
      else if (e.key === "ArrowUp" || e.key === "ArrowDown") { e.preventDefault(); focusSibling(t, e.key === "ArrowUp" ? -1 : 1); }
      return;
    }
    if (t.classList.contains("acu-new")) {
      if (e.key === "Enter") {
        e.preventDefault();
        if (!t.value.trim()) return;
        t.closest(".sentence-block").querySelector(".acu-list").appendChild(acuItem({ id: null, text: t.value.trim(), hints: [] }));
        t.value = "";
        t.classList.remove("kept");
        keepNew(t);  // now an ACU (saved with the list): no longer kept here
        growAll();
        schedule(0);
      } else if (e.key === "ArrowUp" || e.key === "ArrowDown") {
        e.preventDefault();
        focusSibling(t, e.key === "ArrowUp" ? -1 : 1);
      }
      return;
    }
    if (!t.classList.contains("acu-text") || !editable) return;
    const li = t.closest("li.acu");
    if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown")) {
      e.preventDefault();
      moveItem(li, e.key === "ArrowUp" ? -1 : 1);
    } else if (e.key === "ArrowUp" || e.key === "ArrowDown") {
      e.preventDefault();
      focusSibling(t, e.key === "ArrowUp" ? -1 : 1);
    } else if (e.key === "Enter") {
      e.preventDefault();
      t.closest(".sentence-block").querySelector(".acu-new").focus();
    } else if (e.key === "Backspace" && t.value === "") {
      e.preventDefault();
      removeAcu(li, -1);
    }
  });

  root.addEventListener("click", function (e) {
    if (e.target.classList.contains("suggest")) { suggest(Number(e.target.dataset.sentence)); return; }
    if (e.target.classList.contains("accept")) { acceptDraft(e.target.closest("li.draft"), false); return; }
    if (e.target.classList.contains("dismiss")) { dismissDraft(e.target.closest("li.draft")); return; }
    if (e.target.classList.contains("delete")) removeAcu(e.target.closest("li.acu"), 1);
  });

  root.addEventListener("dragstart", function (e) {
    if (!e.target.classList || !e.target.classList.contains("handle")) return;
    dragged = e.target.closest("li.acu");
    dragged.classList.add("dragging");
    e.dataTransfer.effectAllowed = "move";
    e.dataTransfer.setData("text/plain", dragged.dataset.id || "new");
  });
  root.addEventListener("dragover", function (e) {
    if (!dragged) return;
    const list = e.target.closest ? e.target.closest(".sentence-block") : null;
    if (!list) return;
    e.preventDefault();
    const ol = list.querySelector(".acu-list");
    const over = e.target.closest("li.acu");
    if (over && over !== dragged) {
      const box = over.getBoundingClientRect();
      ol.insertBefore(dragged, e.clientY < box.top + box.height / 2 ? over : over.nextSibling);
    } else if (!over) {
      ol.appendChild(dragged);
    }
  });
  root.addEventListener("drop", function (e) { if (dragged) e.preventDefault(); });
  root.addEventListener("dragend", function () {
    if (!dragged) return;
    dragged.classList.remove("dragging");
    dragged = null;
    schedule(0);
  });

  // Done: sent only once everything on the page is saved. Unsaved or refused changes are saved first
  // (a refused save keeps the page, its reason and the marked ACU: never the older stored version
  // sent). A sentence without an ACU is asked about first (confirm.js reads data-confirm).
  // On the window, capturing: before confirm.js, which asks nothing for a submission stopped here.
  if (submitForm) {
    window.addEventListener("submit", function (e) {
      if (e.target !== submitForm) return;
      submitForm.querySelector("[name=csrfmiddlewaretoken]").value = csrf();
      const ask = emptySentencesQuestion();
      if (ask) submitForm.dataset.confirm = ask; else delete submitForm.dataset.confirm;
      if (!dirty && !saving && !refused) return;
      e.preventDefault();
      if (!stopped && !sending) sendWhenSaved();
    }, true);
  }

  function sendWhenSaved() {
    sending = true;
    if (refused) dirty = true;  // the page's current list is tried again: the ACU may be fixed
    setStatus("saving", "Saving before sending…");
    const wait = setInterval(function () {
      if (saving) return;
      if (stopped || (refused && !dirty)) {
        clearInterval(wait);
        sending = false;
        if (stopped) return;
        setStatus("error", "Not sent to review: a change is not saved");
        const marked = root.querySelector("li.acu.refused .acu-text");
        if (marked) { marked.focus(); marked.scrollIntoView({ block: "center" }); }
      } else if (!dirty) {
        clearInterval(wait);
        sending = false;
        submitForm.requestSubmit();  // through the submit listeners again: the question, then the post
      } else if (!retrying) save();
    }, 150);
  }

  // "Sentence 4 has no ACU (5 drafts not decided). Send to review anyway?", or "" when each
  // sentence has one (or none has: the server refuses that with its own message).
  function emptySentencesQuestion() {
    const empty = [];
    let drafts = 0;
    const blocks = Array.from(root.querySelectorAll(".sentence-block"));
    blocks.forEach(function (block, i) {
      const has = Array.from(block.querySelectorAll("li.acu .acu-text")).some(function (f) { return f.value.trim() !== ""; });
      if (!has) { empty.push(i + 1); drafts += block.querySelectorAll("li.draft").length; }
    });
    if (!empty.length || empty.length === blocks.length) return "";
    const which = empty.length === 1 ? "Sentence " + empty[0] + " has"
      : "Sentences " + empty.slice(0, -1).join(", ") + " and " + empty[empty.length - 1] + " have";
    const undecided = drafts ? " (" + drafts + " draft" + (drafts === 1 ? "" : "s") + " not decided)" : "";
    return which + " no ACU" + undecided + ". Send to review anyway?";
  }

  // Back from signing in again in another tab (or back online): the due save goes at once.
  window.addEventListener("focus", function () { if (retrying && !saving) save(); });

  window.addEventListener("beforeunload", function (e) {
    if (dirty || saving || refused || (editable && !stopped && !storageWorks && unsavedNewText())) { e.preventDefault(); e.returnValue = ""; }
  });

  const suggestAll = document.getElementById("suggest-all");
  if (suggestAll) suggestAll.addEventListener("click", function () { suggest(null); });
  const acceptAllButton = document.getElementById("accept-all");
  if (acceptAllButton) acceptAllButton.addEventListener("click", function () { acceptAll(root); });


  new MutationObserver(nameFields).observe(root, { childList: true, subtree: true });
  render();
  nameFields();
  growAll();
  renderHistory(state.history);
  setStatus("saved", editable ? "All changes saved" : "Read only");
  const kept = editable ? restoreNew() : 0;
  if (kept) setStatus("pending", "Text not yet added as an ACU was kept from before the reload (Enter adds it)");
  // Focus goes back only where text was being typed; else the page waits for the user (press n).
  const keptBox = root.querySelector(".acu-new.kept");
  if (keptBox) keptBox.focus();
})();
