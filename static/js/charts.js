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

  // `text` gives a tick's label (its value by default), whose width decides what fits.
  function thinned(scale, values, text) {
    const label = text || String;
    const ctx = scale.ctx;
    const font = scale.options.ticks.font || {};
    ctx.save();
    ctx.font = (font.size || window.Chart.defaults.font.size) + "px " + (font.family || window.Chart.defaults.font.family);
    const log = scale.type === "logarithmic";
    const f = function (v) { return log ? Math.log10(v) : v; };
    const lo = f(scale.min), hi = f(scale.max);
    const width = Math.max(scale.width || scale.chart.width, 1) * 0.8;  // the plot is narrower than the axis box at first
    const shown = values.filter(function (v) { return v >= scale.min && v <= scale.max; }).map(function (v) {
      return { value: v, x: (f(v) - lo) / ((hi - lo) || 1) * width, half: ctx.measureText(label(v)).width / 2 + 6 };
    });
    ctx.restore();
    if (shown.length < 2) return shown.map(function (t) { return { value: t.value }; });
    // Both ends always (where the axis starts and stops), then each value that fits between its kept neighbours.
    const last = shown[shown.length - 1];
    const kept = [shown[0]];
    shown.slice(1, -1).forEach(function (t) {
      const before = kept[kept.length - 1];
      if (t.x - t.half >= before.x + before.half && t.x + t.half <= last.x - last.half) kept.push(t);
    });
    kept.push(last);
    return kept.map(function (t) { return { value: t.value }; });
  }

  // A chart of this many categories or fewer names every one of them (four systems on a phone
  // showed two names); more are thinned to the ones that fit.
  const FEW = 12;
  // A label longer than this is cut with "…" (the point's tooltip names it whole).
  function shortened(label, narrow) {
    const most = narrow ? 18 : 28;
    return label.length > most ? label.slice(0, most - 1) + "\u2026" : label;
  }

  function prepare(config, narrow) {
    if (config.xLabels) {
      // Numbered x positions shown with their labels (e.g. the time of each scoring run).
      const labels = config.xLabels;
      const x = config.options.scales.x;
      const few = labels.length <= FEW;
      x.ticks = Object.assign({}, x.ticks, {
        callback: function (value) {
          return Number.isInteger(value) && labels[value] !== undefined ? shortened(String(labels[value]), narrow) : "";
        },
      });
      if (few) {
        // Every label, turned (up to upright) where they do not fit side by side. Chart.js reckons
        // the room of a label from the number of ticks, which is more than it has on an axis padded
        // half a category at both ends (three run times overlapped unturned on a phone): the turn is
        // worked out here from the room each label has.
        x.ticks.autoSkip = false;
        x.ticks.maxRotation = 90;
        x.afterCalculateLabelRotation = function (scale) {
          const font = scale.options.ticks.font || {};
          const size = font.size || window.Chart.defaults.font.size;
          const ctx = scale.ctx;
          ctx.save();
          ctx.font = size + "px " + (font.family || window.Chart.defaults.font.family);
          const widest = Math.max.apply(null, labels.map(function (l) { return ctx.measureText(shortened(String(l), narrow)).width; }));
          ctx.restore();
          const room = Math.max(scale.width || scale.chart.width, 1) * 0.8 / ((scale.max - scale.min) || 1);
          if (widest + 6 > room) {
            const turn = Math.asin(Math.min(1, (size * 1.2 + 6) / room)) * 180 / Math.PI;
            scale.labelRotation = Math.min(90, Math.max(scale.labelRotation, turn));
          }
        };
      }
      // Ticks at 0, 1, 2... (steps from a min of -0.5 fell between them: no label shown); of many,
      // only the ones whose labels fit beside their neighbours (three run times overlapped on a phone).
      x.afterBuildTicks = function (scale) {
        const all = labels.map(function (_, i) { return i; });
        scale.ticks = few ? all.map(function (i) { return { value: i }; })
          : thinned(scale, all, function (i) { return shortened(String(labels[i]), narrow); });
      };
      delete config.xLabels;
      // A point's tooltip names its label (the x of a dodged point is a little off the tick).
      const plugins = config.options.plugins = config.options.plugins || {};
      plugins.tooltip = Object.assign({}, plugins.tooltip, {
        callbacks: {
          title: function (items) { return items.length ? labels[Math.round(items[0].parsed.x)] : ""; },
          label: function (item) {
            const p = item.raw || {};
            const ci = p.yMin !== undefined && p.yMin !== null ? " [" + p.yMin.toFixed(3) + ", " + p.yMax.toFixed(3) + "]" : "";
            return item.dataset.label + ": " + item.parsed.y.toFixed(4) + ci;
          },
        },
      });
    }
    Object.values(config.options.scales || {}).forEach(function (axis) {
      if (axis.decimals !== undefined) {
        // Every tick written with the same digits, enough to tell each apart (charts.axis_ticks).
        const digits = axis.decimals;
        axis.ticks = Object.assign({}, axis.ticks, { callback: function (value) { return Number(value).toFixed(digits); } });
        delete axis.decimals;
      }
      if (axis.tickValues) {
        // Ticks only at these values (e.g. the sample sizes of a log axis), and of those only the
        // ones whose labels fit beside the previous kept one at this width: none overlap.
        const values = axis.tickValues.slice().sort(function (a, b) { return a - b; });
        delete axis.tickValues;
        axis.afterBuildTicks = function (scale) { scale.ticks = thinned(scale, values); };
        axis.ticks = Object.assign({ callback: function (value) { return String(value); } }, axis.ticks);
      }
    });
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
    const narrow = canvas.parentElement.clientWidth < 520;
    const config = prepare(JSON.parse(source.textContent), narrow);
    // Text dark enough to read on white (Chart.js's default grey is lighter), 12 px at least.
    window.Chart.defaults.color = "#333";
    if (narrow) {
      // A phone: a compact legend (small colour boxes), so the plot keeps its room.
      const plugins = config.options.plugins = config.options.plugins || {};
      plugins.legend = Object.assign({}, plugins.legend);
      plugins.legend.labels = Object.assign({ boxWidth: 12, font: { size: 12 } }, plugins.legend.labels);
      plugins.title = Object.assign({}, plugins.title, { font: { size: 12 } });
    }
    if (charts[canvas.dataset.chart]) charts[canvas.dataset.chart].destroy();
    const chart = new window.Chart(canvas.getContext("2d"), config);
    charts[canvas.dataset.chart] = chart;
    if (narrow) keepPlotRoom(canvas, chart);
    return chart;
  };

  // On a phone a long legend wraps to a line per entry: the power chart's six entries and its
  // two-line title left its plot 90 px of the box's 320. The box grows until the plot has PLOT_MIN.
  const PLOT_MIN = 180;
  function keepPlotRoom(canvas, chart) {
    const area = chart.chartArea;
    const short = area ? PLOT_MIN - (area.bottom - area.top) : 0;
    if (short <= 0) return;
    canvas.parentElement.style.height = Math.ceil(canvas.parentElement.clientHeight + short) + "px";
    chart.resize();
  }
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
