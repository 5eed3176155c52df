/* Every chart on every page is drawn the same way: a <canvas data-chart="ID"> whose
   configuration sits in <script type="application/json" id="ID">. Points may carry
   yMin/yMax, drawn as error bars; lines with `reference: true` are dashed. Each chart gets
   a "Download PNG" button. Uses the vendored Chart.js (static/vendor/chartjs). */
(function () {
  "use strict";
  const errorBars = {
    id: "errorBars",
    afterDatasetsDraw(chart) {
      const ctx = chart.ctx;
      chart.data.datasets.forEach(function (ds, i) {
        const meta = chart.getDatasetMeta(i);
        if (meta.hidden) return;
        meta.data.forEach(function (el, j) {
          const p = ds.data[j];
          if (!p || p.yMin === undefined || p.yMin === null) return;
          const y = chart.scales[meta.yAxisID];
          const x = el.x, top = y.getPixelForValue(p.yMax), bottom = y.getPixelForValue(p.yMin);
          ctx.save();
          ctx.strokeStyle = ds.borderColor || "#333";
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          ctx.moveTo(x, top); ctx.lineTo(x, bottom);
          ctx.moveTo(x - 4, top); ctx.lineTo(x + 4, top);
          ctx.moveTo(x - 4, bottom); ctx.lineTo(x + 4, bottom);
          ctx.stroke();
          ctx.restore();
        });
      });
    },
  };
  const whiteBackground = {
    id: "whiteBackground",
    beforeDraw(chart) {
      const ctx = chart.ctx;
      ctx.save();
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, chart.width, chart.height);
      ctx.restore();
    },
  };

  function prepare(config) {
    if (config.xLabels) {
      // Numbered x positions shown with their labels (e.g. the time of each scoring run).
      const labels = config.xLabels;
      const x = config.options.scales.x;
      x.ticks = Object.assign({}, x.ticks, {
        stepSize: 1,
        callback: function (value) { return Number.isInteger(value) && labels[value] !== undefined ? labels[value] : ""; },
      });
      delete config.xLabels;
    }
    (config.data.datasets || []).forEach(function (ds) {
      if (ds.reference) { ds.borderDash = [6, 4]; ds.pointRadius = 0; ds.borderWidth = 1.5; }
    });
    config.options = Object.assign({ responsive: true, maintainAspectRatio: false, animation: false }, config.options || {});
    config.plugins = [errorBars, whiteBackground];
    return config;
  }

  const charts = {};
  window.drawChart = function (canvas) {
    const source = document.getElementById(canvas.dataset.chart);
    if (!source) return null;
    const config = prepare(JSON.parse(source.textContent));
    if (charts[canvas.dataset.chart]) charts[canvas.dataset.chart].destroy();
    const chart = new window.Chart(canvas.getContext("2d"), config);
    charts[canvas.dataset.chart] = chart;
    return chart;
  };
  window.updateChart = function (id, config) {
    const canvas = document.querySelector('canvas[data-chart="' + id + '"]');
    const source = document.getElementById(id);
    if (!canvas || !source) return;
    source.textContent = JSON.stringify(config);
    window.drawChart(canvas);
  };

  // The PNG is saved through a temporary link outside this handler: clicking the visible link
  // again from its own handler ran it twice and ended with the default prevented (no download).
  function downloadPng(canvas) {
    const a = document.createElement("a");
    a.href = canvas.toDataURL("image/png");
    a.download = (canvas.dataset.name || canvas.dataset.chart) + ".png";
    a.hidden = true;
    document.body.appendChild(a);
    a.click();
    a.remove();
  }

  document.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
    window.drawChart(canvas);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "chart-download";
    button.textContent = "Download PNG";
    button.addEventListener("click", function () { downloadPng(canvas); });
    canvas.parentElement.appendChild(button);
  });
})();
