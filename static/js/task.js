/* The ACU matching task: mark each fact Present or Not present, with the keyboard
   (y/1 present, n/2/0 not present, ↑/↓ or k/j to move; or Tab to a row's choices, ←/→ between
   them, Space or Enter to choose: each row is one Tab stop, its pressed choice) or by tapping. A rating task
   (data-kind="rating", hits.ratings): rate each summary 1-5 with the keys 1-5. Answers are kept in
   the browser until the server confirms it stored them, so a reload or a lost connection
   loses nothing. Active time (idle after one minute; kept across a reload too) goes with the
   submission. */
(function () {
  "use strict";
  const form = document.getElementById("task-form");
  if (!form) return;
  const rows = Array.from(form.querySelectorAll(".acu-row"));
  const submitBtn = document.getElementById("submit-task");
  const progress = document.getElementById("progress");
  const bar = document.getElementById("progress-bar");
  const notice = document.getElementById("task-notice");
  const comment = document.getElementById("task-comment");
  const preview = form.dataset.preview === "true";
  const rating = form.dataset.kind === "rating";
  // A button's answer: a rating's score, or an ACU's present (true) / not present (false).
  function valueOf(b) { return rating ? Number(b.dataset.value) : b.dataset.value === "1"; }
  const storageKey = form.dataset.storageKey;
  let current = 0, active = 0, last = Date.now(), sending = false, opening = false;
  const answers = {};

  // Submitted already (the server says so, or this browser stored it a moment ago and the page
  // came back from the history): say so at once and offer no buttons.
  // Closed with nothing sent: its time ran out ("expired"), or it was taken back before that
  // ("withdrawn": its worker was blocked, its session gave its places back).
  const withdrawn = form.dataset.done === "withdrawn";
  const expired = form.dataset.done === "expired" || withdrawn;
  let submitted = form.dataset.done === "true" || expired;
  try {
    const saved = storageKey && JSON.parse(localStorage.getItem(storageKey) || "null");
    if (saved && saved.submitted) submitted = true;
    else if (saved) { Object.assign(answers, saved.answers || {}); if (comment && saved.comment) comment.value = saved.comment; }
  } catch (e) { /* private mode: answers simply are not kept across reloads */ }
  // The active seconds counted so far, kept beside the answers (under a key of their own, written
  // every second): a reload goes on counting from them instead of from 0.
  const activeKey = storageKey ? storageKey + ":active" : "";
  try {
    const kept = activeKey ? Number(localStorage.getItem(activeKey)) : 0;
    if (isFinite(kept) && kept > 0) active = kept;
  } catch (e) {}
  // A page restored from the back/forward cache is the old one: ask the server again.
  window.addEventListener("pageshow", function (e) { if (e.persisted) window.location.reload(); });

  function showSubmitted() {
    const already = document.getElementById("already-submitted");
    if (already) {
      if (!already.textContent) already.textContent = "This task is already submitted. Thank you!";
      already.hidden = false;
    }
    form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    if (comment) comment.disabled = true;
    progress.textContent = withdrawn ? "Taken back" : expired ? "Expired" : "Submitted";
    dropDeadline();
  }

  // Stored: no time left to count down (the page opened again after submitting shows none either).
  function dropDeadline() {
    const deadline = document.getElementById("task-deadline");
    if (deadline) deadline.remove();
  }

  // The time left to submit ("within 59 minutes"), counted down every 30 s from the server's
  // deadline: the page's own clock only measures the time since the page was made (data-now, the
  // server's time then), so a browser whose clock is wrong still shows the server's time left.
  const deadlineLine = document.getElementById("task-deadline");
  const timeLeft = deadlineLine && deadlineLine.querySelector(".time-left");
  if (timeLeft && deadlineLine.dataset.deadline && deadlineLine.dataset.now) {
    const due = parseTime(deadlineLine.dataset.deadline) - parseTime(deadlineLine.dataset.now);
    const opened = performance.now();
    const showLeft = function () {
      if (!document.body.contains(timeLeft)) return;  // stored: the line is gone
      timeLeft.textContent = leftText(due - (performance.now() - opened));
    };
    if (isFinite(due)) { showLeft(); setInterval(showLeft, 30000); }
  }

  // An ISO time of the server's ("2026-12-07T10:49:00.123456+00:00"): its fraction cut to milliseconds.
  function parseTime(iso) { return Date.parse(String(iso).replace(/(\.\d{3})\d+/, "$1")); }

  // Time left as the server's first line says it: the largest unit and the next ("1 hour, 5 minutes").
  function leftText(ms) {
    const minutes = Math.floor(ms / 60000);
    if (ms <= 0) return "time is up";
    if (minutes < 1) return "within less than a minute";
    const units = [[Math.floor(minutes / 1440), "day"], [Math.floor(minutes / 60) % 24, "hour"], [minutes % 60, "minute"]];
    const first = units.findIndex(function (u) { return u[0] > 0; });
    const shown = units.slice(first, first + 2).filter(function (u) { return u[0] > 0; });
    return "within " + shown.map(function (u) { return u[0] + "\u00a0" + u[1] + (u[0] === 1 ? "" : "s"); }).join(", ");
  }

  // The summary card stays in view at most a third of the screen high: while the summary goes on
  // below its edge, its foot says so (a phone shows no scrollbar until it is scrolled).
  const card = document.querySelector(".task .summary-card");
  const more = card && card.querySelector(".summary-more");
  function markMore() {
    if (more) more.hidden = card.scrollHeight - card.clientHeight - card.scrollTop <= 2;
  }
  if (more) {
    card.addEventListener("scroll", markMore, { passive: true });
    window.addEventListener("resize", markMore);
    markMore();
  }

  function persist() {
    if (!storageKey) return;
    try { localStorage.setItem(storageKey, JSON.stringify({ answers: answers, comment: comment ? comment.value : "" })); } catch (e) {}
  }

  function render() {
    rows.forEach(function (row, i) {
      const value = answers[row.dataset.acu];
      row.classList.toggle("current", i === current);
      row.classList.toggle("answered", value !== undefined);
      row.querySelectorAll("button[data-value]").forEach(function (b) {
        b.setAttribute("aria-pressed", String(value === valueOf(b)));
      });
      const focused = document.activeElement;
      const stop = row.contains(focused) && focused.matches("button[data-value]") ? focused : tabStop(row);
      row.querySelectorAll("button[data-value]").forEach(function (b) { b.tabIndex = b === stop ? 0 : -1; });
    });
    const done = rows.filter(function (r) { return answers[r.dataset.acu] !== undefined; }).length;
    progress.textContent = done + " of " + rows.length + (rating ? " rated" : " answered");
    bar.value = done;
    if (submitBtn) submitBtn.disabled = preview || sending || done < rows.length;
  }

  // A row's one Tab stop: its pressed choice, else its first.
  function tabStop(row) {
    return row.querySelector("button[data-value][aria-pressed='true']") || row.querySelector("button[data-value]");
  }

  function focusRow(i, first) {
    current = Math.max(0, Math.min(rows.length - 1, i));
    opening = !!first;  // on opening, the page starts at the summary
    tabStop(rows[current]).focus({ preventScroll: true });
    opening = false;
    render();
  }

  function answer(i, present) {
    answers[rows[i].dataset.acu] = present;
    persist();
    const next = rows.findIndex(function (r, j) { return j > i && answers[r.dataset.acu] === undefined; });
    const firstOpen = rows.findIndex(function (r) { return answers[r.dataset.acu] === undefined; });
    if (next >= 0) focusRow(next);
    else if (firstOpen >= 0) focusRow(firstOpen);
    else { render(); if (submitBtn && !preview) submitBtn.focus(); }
  }

  form.addEventListener("click", function (e) {
    const b = e.target.closest("button[data-value]");
    if (!b || submitted) return;
    e.preventDefault();
    answer(rows.indexOf(b.closest(".acu-row")), valueOf(b));
  });
  // Focus in a row (a key, Tab, or a click) makes it the current one, scrolled clear of the sticky summary.
  rows.forEach(function (row, i) {
    row.addEventListener("focusin", function () {
      current = i;
      render();
      if (!opening) row.scrollIntoView({ block: "nearest" });
    });
  });

  // ← → move between a row's choices (the focus only: Space or Enter chooses).
  function moveChoice(b, step) {
    const choices = Array.from(b.closest(".acu-row").querySelectorAll("button[data-value]"));
    choices[Math.max(0, Math.min(choices.length - 1, choices.indexOf(b) + step))].focus();
  }

  document.addEventListener("keydown", function (e) {
    last = Date.now();
    if (submitted) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const active = document.activeElement;
    if (active && (active.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName))) return;
    const k = e.key.toLowerCase();
    if (rating && "12345".indexOf(k) >= 0 && k.length === 1) { e.preventDefault(); answer(current, Number(k)); }
    else if (rating && (k === "y" || k === "n" || k === "0")) { /* no meaning in a rating task */ }
    else if (k === "y" || k === "1") { e.preventDefault(); answer(current, true); }
    else if (k === "n" || k === "2" || k === "0") { e.preventDefault(); answer(current, false); }
    else if (k === "arrowdown" || k === "j") { e.preventDefault(); focusRow(current + 1); }
    else if (k === "arrowup" || k === "k") { e.preventDefault(); focusRow(current - 1); }
    else if ((k === "arrowleft" || k === "arrowright") && active && active.matches(".acu-row button[data-value]")) {
      e.preventDefault();
      moveChoice(active, k === "arrowleft" ? -1 : 1);
    }
  });
  ["mousedown", "touchstart", "input", "scroll"].forEach(function (t) {
    document.addEventListener(t, function () { last = Date.now(); }, { passive: true, capture: true });
  });
  setInterval(function () {
    if (submitted || sending || document.visibilityState !== "visible" || Date.now() - last >= 60000) return;
    active += 1;
    if (activeKey) { try { localStorage.setItem(activeKey, String(active)); } catch (e) {} }
  }, 1000);
  if (comment) comment.addEventListener("input", persist);

  function say(text, kind) {
    notice.hidden = false;
    notice.className = "notice " + kind;
    notice.textContent = text;
  }

  async function send(attempt) {
    const body = JSON.stringify({ answers: answers, comment: comment ? comment.value : "", active_seconds: active });
    try {
      // A crowd task is authorized by its link alone (no cookies: it may sit in a provider's
      // iframe); an expert round's task by the expert's session, with its CSRF token.
      const session = form.dataset.session === "true";
      const headers = { "Content-Type": "application/json" };
      if (session) headers["X-CSRFToken"] = form.querySelector("[name=csrfmiddlewaretoken]").value;
      const resp = await fetch(form.action, { method: "POST", body: body, headers: headers, credentials: session ? "same-origin" : "omit" });
      const data = await resp.json().catch(function () { return {}; });
      if (resp.ok && data.ok) {
        try { localStorage.setItem(storageKey, JSON.stringify({ submitted: true })); localStorage.removeItem(activeKey); } catch (e) {}
        dropDeadline();
        form.dispatchEvent(new CustomEvent("task:stored", { detail: data }));
        return;
      }
      if (data.final) {
        // No retry can succeed (the time ran out, or the task is not this worker's any more):
        // stop offering Submit and offer the way on instead (the next task, or a session's
        // Continue: every page's `.after-task`, as the page shows it when opened again).
        try { localStorage.removeItem(storageKey); localStorage.removeItem(activeKey); } catch (e) {}
        say(data.error, "error");
        form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
        document.querySelectorAll(".after-task").forEach(function (next) {
          next.hidden = false;
          next.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
        });
        return;
      }
      sending = false;
      say(data.error || "The answers could not be saved (" + resp.status + "). Try again.", "error");
      render();
    } catch (err) {
      if (attempt < 5) {
        say("Connection lost; trying again… (your answers are kept)", "warn");
        setTimeout(function () { send(attempt + 1); }, 1000 * Math.pow(2, attempt));
      } else {
        sending = false;
        say("Could not reach the server. Your answers are kept in this browser; press Submit again.", "error");
        render();
      }
    }
  }

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    if (preview || sending) return;
    sending = true;
    render();
    say("Saving your answers…", "info");
    send(0);
  });

  // In-house default after a stored submission: say so and offer the next task.
  form.addEventListener("task:stored", function (e) {
    const giveBack = document.getElementById("give-back");
    if (giveBack) giveBack.hidden = true;  // stored: nothing left to give back
    const keys = document.getElementById("key-hint");
    if (keys) keys.hidden = true;  // stored: no key answers anything now
    if (form.dataset.afterSubmit !== "inhouse") return;
    say(e.detail.message, "ok");
    submitted = true;
    progress.textContent = "Submitted";
    form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    const next = document.getElementById("after-submit");
    if (next) { next.hidden = false; const b = next.querySelector("button"); if (b) b.focus(); }
  });

  if (submitted) { render(); showSubmitted(); return; }
  focusRow(Math.max(0, rows.findIndex(function (r) { return answers[r.dataset.acu] === undefined; })), true);
})();
