/* The ACU writing page's view: the editor's DOM built from the reference's state (each sentence
   with its ACUs, drafts, hints and the Suggest button; reviewer comments; the change history),
   and the accessible names that number each ACU field by its place. authoring.js, loaded after
   this file, saves, takes drafts, answers keys and moves ACUs; it calls acuAuthoringView once
   and keeps the fields' names right (a MutationObserver calling nameFields). */
window.acuAuthoringView = function (root, state, options) {
  "use strict";
  const editable = options.editable;
  const suggestUrl = options.suggestUrl;
  const historyEl = options.historyEl;

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
    const li = h("li", { class: "acu" + (acu.machine ? " machine" : ""), "data-id": acu.id === null ? "" : String(acu.id) });
    if (acu.draft) li.dataset.draft = String(acu.draft);
    if (editable) li.appendChild(h("span", { class: "handle", draggable: "true", title: "Drag to move", text: "⠿", "aria-hidden": "true" }));
    // A one-line field that grows with its text, so long ACUs wrap instead of scrolling sideways.
    const field = h("textarea", {
      class: "acu-text", rows: "1", readonly: !editable, "aria-label": "ACU", autocomplete: "off", spellcheck: "true",
    });
    field.value = acu.text;
    li.appendChild(field);
    if (editable) li.appendChild(h("button", { type: "button", class: "delete", title: "Delete this ACU", "aria-label": "Delete ACU", tabindex: "-1", text: "×" }));
    if (acu.machine) li.appendChild(h("span", { class: "badge machine-badge", title: "Placed by the human-unit budget; no person wrote or accepted it", text: "machine · " + acu.drafter }));
    else if (acu.drafter) li.appendChild(h("span", { class: "badge from-draft", title: "Accepted from a draft", text: "from " + acu.drafter }));
    li.appendChild(hintList("hints", acu.hints));
    commentsFor(acu.id).forEach(function (c) {
      li.appendChild(h("p", { class: "comment", text: "Reviewer " + c.by + ": " + c.text }));
    });
    return li;
  }

  function draftItem(d) {
    const li = h("li", { class: "draft", "data-draft": String(d.id), "data-drafter": d.drafter });
    li.appendChild(h("span", { class: "badge draft-badge", text: "draft · " + d.drafter }));
    // A field that grows with its text like an ACU's, so a long draft wraps whole (never clipped).
    const field = h("textarea", {
      class: "draft-text", rows: "1", readonly: !editable, autocomplete: "off", spellcheck: "false",
      "aria-label": "Draft from " + d.drafter + ", not an ACU until accepted (Enter accepts, Escape dismisses)",
    });
    field.value = d.text;
    li.appendChild(field);
    if (editable) {
      li.appendChild(h("button", { type: "button", class: "accept", title: "Accept (Enter)", "aria-label": "Accept draft", tabindex: "-1", text: "✓" }));
      li.appendChild(h("button", { type: "button", class: "dismiss", title: "Dismiss (Escape)", "aria-label": "Dismiss draft", tabindex: "-1", text: "×" }));
    }
    li.appendChild(hintList("hints", d.hints));
    return li;
  }

  function draftList(s) {
    const ol = h("ol", { class: "draft-list", "aria-label": "Drafts for this sentence" });
    (s.drafts || []).forEach(function (d) { ol.appendChild(draftItem(d)); });
    return ol;
  }

  function renderHistory(rows) {
    if (!historyEl) return;
    historyEl.textContent = "";
    (rows || []).forEach(function (c) {
      let text = c.new_text || c.old_text;
      if (c.action === "edit" || (c.action === "accept" && c.old_text !== c.new_text)) text = "“" + c.old_text + "” → “" + c.new_text + "”";
      else text = "“" + text + "”";
      historyEl.appendChild(h("li", { class: "change change-" + c.action }, [
        h("span", { class: "when", text: c.at.slice(0, 16).replace("T", " ") + " " }),
        h("b", { text: c.user + " " }),
        h("span", { class: "what", text: c.action_display + (c.drafter ? " (" + c.drafter + ")" : "") + ": " }),
        document.createTextNode(text),
      ]));
    });
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
      const head = h("p", { class: "sentence-text" }, [h("span", { class: "num", text: (i + 1) + "." }), document.createTextNode(" " + s.text)]);
      if (s.budget === "human") head.appendChild(h("span", { class: "badge budget-human", title: "The budget gives this sentence to an expert", text: "needs an expert" }));
      if (s.budget === "machine") head.appendChild(h("span", { class: "badge budget-machine", title: "The budget fills this sentence with machine units", text: "machine units" }));
      const top = h("div", { class: "sentence-head" }, [head]);
      if (editable && suggestUrl) top.appendChild(h("button", { type: "button", class: "suggest small", "data-sentence": String(s.id), title: "Suggest ACUs for this sentence (Alt+G)", "aria-label": "Suggest ACUs for sentence " + (i + 1), text: "Suggest ACUs" }));
      const block = h("section", { class: "sentence-block", "data-sentence-id": String(s.id) }, [
        top,
        hintList("sentence-hints", s.hints),
        list,
        draftList(s),
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

  // Each ACU field is named by its place ("ACU 2 of sentence 3"), kept right as ACUs are added, moved or deleted.
  function nameFields() {
    root.querySelectorAll(".sentence-block").forEach(function (block, i) {
      block.querySelectorAll("li.acu").forEach(function (li, j) {
        const name = "ACU " + (j + 1) + " of sentence " + (i + 1);
        li.querySelector(".acu-text").setAttribute("aria-label", name);
        const del = li.querySelector("button.delete");
        if (del) del.setAttribute("aria-label", "Delete " + name);
      });
    });
  }

  return {
    h: h, hintList: hintList, acuItem: acuItem, draftList: draftList,
    render: render, renderHistory: renderHistory, nameFields: nameFields,
  };
};
