/* The new batch form: only the chosen provider's fields, and a live count of HITs, assignments and
   cost (with the budget check) from the server's estimate as the lead changes the choices; a cost
   beyond the HITs' places (a Prolific screening study) is a line of its own, counted in the total,
   as on the batch page. */
(function () {
  "use strict";
  const form = document.getElementById("batch-form");
  if (!form) return;
  const provider = form.querySelector("[name=provider]");
  const box = document.getElementById("live-estimate");
  function showProviderFields() {
    form.querySelectorAll(".field[data-provider]").forEach(function (div) {
      div.hidden = div.dataset.provider !== provider.value;
    });
  }
  let timer = null, asked = 0;
  async function count() {
    const ask = ++asked;
    const params = new URLSearchParams(new FormData(form));
    params.delete("csrfmiddlewaretoken");
    try {
      const resp = await fetch(form.dataset.estimateUrl + "?" + params.toString(), { credentials: "same-origin" });
      const data = await resp.json();
      if (ask !== asked) return;  // a newer count is on its way
      if (!resp.ok) { box.className = "notice error"; box.textContent = data.error || "Cannot count this choice."; return; }
      let text = data.hits + " HITs · " + data.assignments + " assignments · " + data.total + " estimated (rewards " + data.rewards + ", fees " + data.fees + ")";
      if (data.budget) text += data.over_budget ? " — over the " + data.budget + " budget: publishing will be refused" : " — within the " + data.budget + " budget";
      box.className = "notice " + (data.over_budget || !data.hits ? "error" : "ok");
      box.textContent = text + (data.hits ? "" : " — no approved reference with ACUs matches");
      (data.extras || []).forEach(function (e) {
        const line = document.createElement("span");
        line.className = "extra-cost";
        line.textContent = "Counted in the total: " + e.label + ", at most " + e.places + (e.places === 1 ? " place" : " places") +
          " × (" + e.reward + " + " + e.fee + " fee) = " + e.total;
        box.appendChild(line);
      });
    } catch (e) { box.textContent = "Count unavailable for a moment."; }
  }
  form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(count, 250); });
  form.addEventListener("change", function (e) { if (e.target === provider) showProviderFields(); clearTimeout(timer); timer = setTimeout(count, 100); });
  showProviderFields();
  count();
})();
