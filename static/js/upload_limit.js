/* Upload forms marked with data-max-bytes ({% upload_limit %}: the most bytes the server takes
   from them, config.limits) check the chosen file's size before sending it. Behind gunicorn a
   request over the limit is refused by closing the connection, which a browser may show as
   "connection reset" instead of the server's "File too large" page; here the lead reads the
   reason at once, and nothing is sent. A view's own bound on each file (data-max-file-bytes,
   config.limits.file_bound: the panel's participant-ids file) is checked the same way, in the
   words of the view's refusal (config.limits.file_refusal). */
(function () {
  "use strict";
  // The multipart framing and the form's other fields (name, format, token) on top of the files.
  const FORM_BYTES = 8 * 1024;

  // Python's round(value, 1), which filesizeformat uses: an exact tie (x.25, x.75, e.g. 800,000
  // bytes = 781.25 KB) goes to the even digit (781.2), where toFixed would round it up (781.3).
  function tenths(value) {
    if (Number.isInteger(value * 4) && !Number.isInteger(value * 2)) {
      const down = Math.floor(value * 10);
      return (down % 2 === 0 ? down : down + 1) / 10;
    }
    return value;
  }

  // As Django's filesizeformat: "812 bytes", "1.5 KB", "2.0 MB", "1.0 GB" (1024-based).
  function readable(bytes) {
    if (bytes < 1024) return bytes + (bytes === 1 ? " byte" : " bytes");
    const units = ["KB", "MB", "GB", "TB", "PB"];
    let value = bytes / 1024, unit = 0;
    while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
    return tenths(value).toFixed(1) + " " + units[unit];
  }

  document.querySelectorAll("form[data-max-bytes]").forEach(function (form) {
    const limit = Number(form.dataset.maxBytes);
    const command = form.dataset.largerCommand;
    const perFile = Number(form.dataset.maxFileBytes) || 0;
    const holds = form.dataset.fileHolds;
    const inputs = Array.from(form.querySelectorAll("input[type=file]"));
    if (!limit || !inputs.length) return;
    const note = document.createElement("p");
    note.className = "notice error upload-too-large";
    note.setAttribute("role", "alert");
    note.hidden = true;
    form.insertAdjacentElement("afterend", note);

    function chosen() {
      return inputs.reduce(function (sum, input) {
        return sum + Array.from(input.files || []).reduce(function (s, f) { return s + f.size; }, 0);
      }, 0);
    }

    // The largest chosen file over the view's own bound on one file (0: none is).
    function overBound() {
      if (!perFile) return 0;
      return inputs.reduce(function (largest, input) {
        return Array.from(input.files || []).reduce(function (l, f) {
          return f.size > perFile && f.size > l ? f.size : l;
        }, largest);
      }, 0);
    }

    function refuse(text) {
      note.textContent = text;
      note.hidden = false;
      return false;
    }

    function fits() {
      const size = chosen(), over = overBound();
      if (over) {
        return refuse("The file is " + readable(over) + "; the limit here is " + readable(perFile) +
          (holds ? " (" + holds + ")" : "") + ". Nothing was sent. Choose a smaller file.");
      }
      if (size + FORM_BYTES > limit) {
        return refuse("The file is " + readable(size) + "; the limit here is " + readable(limit) +
          ". Nothing was sent. " + (command ? "Use the " + command + " command for larger files." : "Choose a smaller file."));
      }
      note.hidden = true;
      note.textContent = "";
      return true;
    }

    inputs.forEach(function (input) { input.addEventListener("change", fits); });
    form.addEventListener("submit", function (e) {
      if (!fits()) {
        e.preventDefault();
        e.stopImmediatePropagation();
      }
    });
  });
})();
