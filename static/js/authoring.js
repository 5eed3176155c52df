/* The ACU writing page: one editable list of ACUs per reference sentence.
   Every change is saved at once (typing after a short pause) by sending the whole list
   with the version it was based on; the server answers 409 when another tab or person
   saved in between, and the page then says so instead of overwriting. */
(function () {
  "use strict";
  const root = document.getElementById("editor");
  if (!root) return;
  const state = JSON.parse(document.getElementById("reference-state").textContent);
  const editable = root.dataset.editable === "true";
  const saveUrl = root.dataset.saveUrl;
  const csrf = document.querySelector("[name=csrfmiddlewaretoken]").value;
  const statusEl = document.getElementById("save-state");
  const alertEl = document.getElementById("editor-alert");
  let version = state.version;
  let dirty = false, saving = false, stopped = false, timer = null, retryDelay = 1000, dragged = null;

  function h(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(function ([k, v]) {
      if (k === "text") node.textContent = v;
      else if (k.startsWith("data-")) node.setAttribute(k, v);
      else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }

  function hintList(cls, hints) {
    const ul = h("ul", { class: cls });
    (hints || []).forEach(function (t) { ul.appendChild(h("li", { text: t })); });
    return ul;
  }

  function commentsFor(acuId) {
    return state.comments.filter(function (c) { return c.acu === acuId; });
  }

  function acuItem(acu) {
    const li = h("li", { class: "acu", "data-id": acu.id === null ? "" : String(acu.id) });
    if (editable) li.appendChild(h("span", { class: "handle", draggable: "true", title: "Drag to move", text: "⠿", "aria-hidden": "true" }));
    // A one-line field that grows with its text, so long ACUs wrap instead of scrolling sideways.
    const field = h("textarea", {
      class: "acu-text", rows: "1", readonly: !editable, "aria-label": "ACU", autocomplete: "off", spellcheck: "true",
    });
    field.value = acu.text;
    li.appendChild(field);
    if (editable) li.appendChild(h("button", { type: "button", class: "delete", title: "Delete this ACU", "aria-label": "Delete ACU", tabindex: "-1", text: "×" }));
    li.appendChild(hintList("hints", acu.hints));
    commentsFor(acu.id).forEach(function (c) {
      li.appendChild(h("p", { class: "comment", text: "Reviewer " + c.by + ": " + c.text }));
    });
    return li;
  }

  function render() {
    root.textContent = "";
    const general = state.comments.filter(function (c) {
      return c.acu === null || !state.sentences.some(function (s) { return s.acus.some(function (a) { return a.id === c.acu; }); });
    });
    if (general.length) {
      const box = h("div", { class: "card comments-general" }, [h("strong", { text: "Reviewer comments" })]);
      general.forEach(function (c) { box.appendChild(h("p", { class: "comment", text: (c.acu_text ? "On “" + c.acu_text + "”: " : "") + c.text + " — " + c.by })); });
      root.appendChild(box);
    }
    state.sentences.forEach(function (s, i) {
      const list = h("ol", { class: "acu-list" });
      s.acus.forEach(function (a) { list.appendChild(acuItem(a)); });
      const block = h("section", { class: "sentence-block", "data-sentence-id": String(s.id) }, [
        h("p", { class: "sentence-text" }, [h("span", { class: "num", text: (i + 1) + "." }), document.createTextNode(" " + s.text)]),
        hintList("sentence-hints", s.hints),
        list,
      ]);
      if (editable) {
        block.appendChild(h("input", {
          class: "acu-new", type: "text", autocomplete: "off",
          placeholder: "New ACU for sentence " + (i + 1) + ", then Enter",
          "aria-label": "New ACU for sentence " + (i + 1),
        }));
      }
      root.appendChild(block);
    });
  }

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

  function applySaved(sent, data) {
    const byId = {};
    data.sentences.forEach(function (s) { byId[s.id] = s; });
    sent.forEach(function (s) {
      const saved = byId[s.id];
      s.items.forEach(function (li, j) {
        const acu = saved.acus[j];
        if (!acu) return;
        li.dataset.id = String(acu.id);
        const fresh = hintList("hints", acu.hints);
        li.querySelector(".hints").replaceWith(fresh);
      });
      const block = root.querySelector('[data-sentence-id="' + s.id + '"] .sentence-hints');
      if (block) block.replaceWith(hintList("sentence-hints", saved.hints));
    });
  }

  async function save() {
    if (saving || stopped || !dirty) return;
    clearTimeout(timer);
    saving = true;
    dirty = false;
    setStatus("saving", "Saving…");
    const sent = collect();
    const body = {
      version: version,
      sentences: sent.map(function (s) {
        return { id: s.id, acus: s.items.map(function (li) {
          return { id: li.dataset.id ? Number(li.dataset.id) : null, text: li.querySelector(".acu-text").value };
        }) };
      }),
    };
    try {
      const resp = await fetch(saveUrl, {
        method: "POST", credentials: "same-origin", body: JSON.stringify(body),
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
      });
      const data = await resp.json().catch(function () { return {}; });
      if (resp.status === 409) {
        stopped = true;
        root.querySelectorAll("input, textarea").forEach(function (i) { i.readOnly = true; });
        document.querySelectorAll("#submit-form button").forEach(function (b) { b.disabled = true; });
        setStatus("conflict", "Not saved: conflict");
        showAlert(data.error || "Changed elsewhere: reload.", true);
        return;
      }
      if (!resp.ok) {
        stopped = resp.status === 403 || resp.status === 404;
        setStatus("error", "Not saved");
        showAlert(data.error || "The change could not be saved (" + resp.status + ").", true);
        return;
      }
      version = data.version;
      applySaved(sent, data);
      const badge = document.getElementById("ref-status");
      if (badge && data.status_display) {
        badge.textContent = data.status_display;
        badge.className = "badge status-" + data.status;
      }
      retryDelay = 1000;
      alertEl.hidden = true;
      setStatus(dirty ? "pending" : "saved", dirty ? "Unsaved changes…" : "All changes saved");
    } catch (err) {
      dirty = true;
      setStatus("offline", "Offline: retrying…");
      setTimeout(save, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 30000);
    } finally {
      saving = false;
      if (dirty && !stopped) schedule(200);
    }
  }

  function schedule(delay) {
    if (stopped) return;
    dirty = true;
    setStatus("pending", "Unsaved changes…");
    clearTimeout(timer);
    timer = setTimeout(save, delay);
  }

  function inputs() { return Array.from(root.querySelectorAll(".acu-text, .acu-new")); }

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

  function grow(field) { field.style.height = "auto"; field.style.height = field.scrollHeight + 2 + "px"; }
  function growAll() { root.querySelectorAll("textarea.acu-text").forEach(grow); }

  root.addEventListener("input", function (e) {
    if (!e.target.classList.contains("acu-text")) return;
    if (/[\r\n]/.test(e.target.value)) e.target.value = e.target.value.replace(/\s*[\r\n]+\s*/g, " ");  // one line (pasted text)
    grow(e.target);
    schedule(700);
  });
  window.addEventListener("resize", growAll);

  root.addEventListener("keydown", function (e) {
    const t = e.target;
    if ((e.ctrlKey || e.metaKey) && e.key === "s") { e.preventDefault(); if (dirty) save(); return; }
    if (t.classList.contains("acu-new")) {
      if (e.key === "Enter") {
        e.preventDefault();
        if (!t.value.trim()) return;
        t.closest(".sentence-block").querySelector(".acu-list").appendChild(acuItem({ id: null, text: t.value.trim(), hints: [] }));
        t.value = "";
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
      focusSibling(t, -1);
      li.remove();
      schedule(0);
    }
  });

  root.addEventListener("click", function (e) {
    if (e.target.classList.contains("delete")) {
      const li = e.target.closest("li.acu");
      const input = li.querySelector(".acu-text");
      focusSibling(input, 1);
      li.remove();
      schedule(0);
    }
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

  const submitForm = document.getElementById("submit-form");
  if (submitForm) {
    submitForm.addEventListener("submit", function (e) {
      if (!dirty && !saving) return;
      e.preventDefault();
      setStatus("saving", "Saving before sending…");
      const wait = setInterval(function () {
        if (!saving && !dirty) { clearInterval(wait); submitForm.submit(); }
        else if (!saving && dirty) save();
        if (stopped) clearInterval(wait);
      }, 150);
    });
  }

  window.addEventListener("beforeunload", function (e) {
    if (dirty || saving) { e.preventDefault(); e.returnValue = ""; }
  });

  render();
  growAll();
  setStatus("saved", editable ? "All changes saved" : "Read only");
  const firstNew = root.querySelector(".acu-new");
  if (firstNew) firstNew.focus();
})();
