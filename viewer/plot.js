// Chart.js plots of one env over its frames, with episode boundaries and a frame cursor:
// MyriadPlot.create, its reward, value and return so far; MyriadPlot.createSeries, the plotted
// series of format 1.2 (each X solid, its target X_command dashed in X's colour).
//
// The cursor is drawn on a separate canvas laid over the chart, so moving it costs one line
// on a small canvas instead of a chart.update() per frame.
(function (global) {
  'use strict';

  const R = () => global.MyriadReplay;

  /** Episode boundaries drawn under the data: dashed lines where an episode starts, red when
   * the one before was terminated, grey when truncated; "ep k" labels at the top. */
  const boundaryPlugin = {
    id: 'myriadBoundaries',
    beforeDatasetsDraw(chart) {
      const marks = chart.$myriadBoundaries;
      if (!marks || !marks.length) return;
      const { ctx, chartArea: a, scales: { x } } = chart;
      ctx.save();
      ctx.beginPath();
      ctx.rect(a.left, a.top, a.right - a.left, a.bottom - a.top);
      ctx.clip();
      ctx.setLineDash([4, 3]);
      ctx.lineWidth = 1;
      ctx.font = '10px system-ui, sans-serif';
      ctx.textBaseline = 'top';
      let lastLabelX = -Infinity;
      for (const m of marks) {
        const px = x.getPixelForValue(m.frame - 0.5);
        ctx.strokeStyle = m.terminated ? 'rgba(200, 40, 40, 0.75)' : 'rgba(90, 100, 115, 0.6)';
        ctx.beginPath();
        ctx.moveTo(px, a.top);
        ctx.lineTo(px, a.bottom);
        ctx.stroke();
        if (px - lastLabelX > 34) {  // skip labels that would overlap
          ctx.fillStyle = 'rgba(60, 70, 80, 0.85)';
          ctx.fillText('ep ' + m.episode, px + 3, a.top + 2);
          lastLabelX = px;
        }
      }
      ctx.restore();
    },
    afterRender(chart) {
      if (chart.$myriadAfterRender) chart.$myriadAfterRender();
    },
  };

  /** Colours of the series (X and X_command share one). */
  const SERIES_COLOURS = ['#2f6fd0', '#e07b1a', '#3a9d5d', '#c23b8a', '#7a5cc7', '#1f9eb0', '#b0862b', '#d0453a'];
  const COMMAND_SUFFIX = '_command';

  /** Episode boundaries of env e's first n frames: where an episode starts after frame 0. */
  function episodeMarks(replay, e, n) {
    const off = e * replay.numFrames, marks = [];
    for (let f = 1; f < n; f++) {
      if (replay.flags[off + f] & R().FLAG_FIRST) {
        marks.push({ frame: f, episode: replay.episode[off + f],
                     terminated: (replay.flags[off + f - 1] & R().FLAG_TERMINATED) !== 0 });
      }
    }
    return marks;
  }

  /**
   * A line chart over frames (x, titled unless xTitle is false) with the given y scales and
   * legend options, the boundary plugin, click-to-seek and the cursor overlay; plot gets
   * chart, frame, setCursor(f) and destroy().
   */
  function frameChart(plot, canvas, cursorCanvas, onSeek, scales, legend, xTitle) {
    const chart = new Chart(canvas.getContext('2d'), {
      type: 'line',
      data: { datasets: [] },
      options: {
        animation: false,
        parsing: false,
        normalized: true,
        responsive: true,
        maintainAspectRatio: false,
        spanGaps: false,
        elements: { point: { radius: 0, hitRadius: 4 }, line: { borderWidth: 1.5, tension: 0 } },
        interaction: { mode: 'index', axis: 'x', intersect: false },
        scales: Object.assign({
          x: { type: 'linear', title: { display: xTitle !== false, text: 'frame' }, ticks: { maxTicksLimit: 12 } },
        }, scales),
        plugins: {
          legend: Object.assign({ position: 'top', align: 'end', labels: { boxWidth: 12, boxHeight: 2 } }, legend),
          tooltip: {
            callbacks: { title: (items) => (items.length ? 'frame ' + items[0].parsed.x : '') },
          },
        },
        onClick(evt, elements, ch) {
          const f = Math.round(ch.scales.x.getValueForPixel(evt.x));
          if (onSeek && isFinite(f)) onSeek(f);
        },
      },
      plugins: [boundaryPlugin],
    });
    plot.chart = chart;
    plot.frame = 0;
    chart.$myriadAfterRender = () => drawCursor();

    /** Moves the cursor to frame f (cheap: one line on the overlay canvas). */
    plot.setCursor = function (f) {
      plot.frame = f;
      drawCursor();
    };

    function drawCursor() {
      const a = chart.chartArea;
      if (!a || !chart.scales.x) return;
      // Match the overlay to the chart canvas (size and device pixel ratio).
      const w = canvas.width, h = canvas.height;
      if (cursorCanvas.width !== w || cursorCanvas.height !== h) {
        cursorCanvas.width = w;
        cursorCanvas.height = h;
        cursorCanvas.style.width = canvas.style.width || canvas.clientWidth + 'px';
        cursorCanvas.style.height = canvas.style.height || canvas.clientHeight + 'px';
      }
      const ctx = cursorCanvas.getContext('2d');
      const ratio = chart.currentDevicePixelRatio || 1;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, w, h);
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      const px = Math.round(chart.scales.x.getPixelForValue(plot.frame)) + 0.5;
      if (px < a.left - 1 || px > a.right + 1) return;
      ctx.strokeStyle = 'rgba(20, 20, 20, 0.8)';
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(px, a.top);
      ctx.lineTo(px, a.bottom);
      ctx.stroke();
    }

    plot.destroy = function () {
      chart.destroy();
    };
    return chart;
  }

  /** The reward chart: reward (left axis), value and return so far (right axis). */
  function create(canvas, cursorCanvas, onSeek) {
    const plot = { chart: null, env: -1, frame: 0, replay: null, returns: null };
    const chart = frameChart(plot, canvas, cursorCanvas, onSeek, {
      y: { position: 'left', title: { display: true, text: 'reward' } },
      y1: { position: 'right', title: { display: true, text: 'value / return' }, grid: { drawOnChartArea: false } },
    });

    /** Shows env e of the replay. */
    plot.setEnv = function (replay, e, returns) {
      plot.replay = replay;
      plot.env = e;
      const F = replay.numFrames;
      const n = Math.max(0, replay.framesPerEnv[e]);
      const off = e * F;
      const reward = new Array(n), value = new Array(n), ret = new Array(n);
      for (let f = 0; f < n; f++) {
        reward[f] = { x: f, y: replay.reward[off + f] };
        value[f] = { x: f, y: replay.value[off + f] };
        ret[f] = { x: f, y: returns[off + f] };
      }
      chart.$myriadBoundaries = episodeMarks(replay, e, n);
      chart.data.datasets = [
        { label: 'reward', data: reward, yAxisID: 'y', borderColor: '#2f6fd0', backgroundColor: '#2f6fd0' },
        { label: 'value', data: value, yAxisID: 'y1', borderColor: '#e07b1a', backgroundColor: '#e07b1a' },
        { label: 'return so far', data: ret, yAxisID: 'y1', borderColor: '#3a9d5d', backgroundColor: '#3a9d5d',
          borderDash: [5, 3], hidden: true },
      ];
      chart.options.scales.x.min = 0;
      chart.options.scales.x.max = Math.max(1, n - 1);
      chart.update('none');
    };

    return plot;
  }

  /**
   * The series chart (format 1.2): every plotted series of one env on one axis, a name X in
   * a colour of its own, X_command (the target X follows) dashed in X's colour.
   */
  function createSeries(canvas, cursorCanvas, onSeek) {
    const plot = { chart: null, env: -1, frame: 0, replay: null };
    const chart = frameChart(plot, canvas, cursorCanvas, onSeek, {
      y: { position: 'left' },
    }, { labels: { boxWidth: 18, boxHeight: 2 } }, false);  // frames: as on the chart above

    /** Shows env e's series (none when the replay has none). */
    plot.setEnv = function (replay, e) {
      plot.replay = replay;
      plot.env = e;
      const names = replay.seriesNames || [], S = names.length, data = replay.series;
      const F = replay.numFrames;
      const n = data ? Math.max(0, replay.framesPerEnv[e]) : 0;
      // One colour per followed series X, in order of first appearance (X or X_command).
      const colours = new Map();
      const baseOf = (name) => (name.endsWith(COMMAND_SUFFIX) && name.length > COMMAND_SUFFIX.length
        ? name.slice(0, -COMMAND_SUFFIX.length) : name);
      for (const name of names) {
        const b = baseOf(name);
        if (!colours.has(b)) colours.set(b, SERIES_COLOURS[colours.size % SERIES_COLOURS.length]);
      }
      chart.data.datasets = names.map((name, s) => {
        const points = new Array(n);
        for (let f = 0; f < n; f++) points[f] = { x: f, y: data[(e * F + f) * S + s] };
        const colour = colours.get(baseOf(name));
        const command = baseOf(name) !== name;
        return { label: name, data: points, yAxisID: 'y', borderColor: colour, backgroundColor: colour,
                 borderDash: command ? [6, 4] : [], borderWidth: command ? 1.25 : 1.5 };
      });
      chart.$myriadBoundaries = n ? episodeMarks(replay, e, n) : [];
      chart.options.scales.x.min = 0;
      chart.options.scales.x.max = Math.max(1, n - 1);
      chart.update('none');
    };

    return plot;
  }

  global.MyriadPlot = { create, createSeries };
})(window);
