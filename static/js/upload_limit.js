/* Upload forms marked with data-max-bytes ({% upload_limit %}: the most bytes the server takes
   from them, config.limits) check the chosen file's size before sending it. Behind gunicorn a
   request over the limit is refused by closing the connection, which a browser may show as
   "connection reset" instead of the server's "File too large" page; here the lead reads the
   reason at once, and nothing is sent. */
(function () {
  "use strict";
  // The multipart framing and the form's other fields (name, format, token) on top of the files.
  const FORM_BYTES = 8 * 1024;

  // As Django's filesizeformat: "812 bytes", "1.5 KB", "2.0 MB", "1.0 GB" (1024-based).
  function readable(bytes) {
    if (bytes < 1024) return bytes + (bytes === 1 ? " byte" : " bytes");
    const units = ["KB", "MB", "GB", "TB", "PB"];
    let value = bytes / 1024, unit = 0;
    while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
    return value.toFixed(1) + " " + units[unit];
  }

  document.querySelectorAll("form[data-max-bytes]").forEach(function (form) {
    const limit = Number(form.dataset.maxBytes);
    const command = form.dataset.largerCommand;
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

    function fits() {
      const size = chosen();
      if (size + FORM_BYTES <= limit) {
        note.hidden = true;
        note.textContent = "";
        return true;
      }
      note.textContent = "The file is " + readable(size) + "; the limit here is " + readable(limit) +
        ". Nothing was sent. " + (command ? "Use the " + command + " command for larger files." : "Choose a smaller file.");
      note.hidden = false;
      return false;
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
