// Myriad replay viewer: loading, playback, UI and the test hooks (window.myriadViewer).
//
// Where the replay comes from, in order: the base64 in <script id="myriad-replay"> (the
// single-file page `myriad view --html` writes), ?replay=URL, the relative URL `replay` (what
// `myriad view` serves); a file picker and drag-and-drop open local files at any time.
(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const FLAG_FIRST = 1, FLAG_TERMINATED = 2, FLAG_TRUNCATED = 4;

  const hooks = window.myriadViewer = {
    ready: false,
    error: null,
    loadMs: null,
    initMs: null,       // viewer set-up before the load (WebGL context, chart)
    loadTimings: null,  // {fetch, parse, build, firstRender} ms of the last load
    numFrames: 0,
    numEnvs: 0,
    frame: 0,
    env: 0,
    playing: false,
    chart: null,
    seriesChart: null,  // the plotted series' chart (format 1.2), shown when the replay has any
    renderer: null,
    replay: null,
    setFrame: (f) => setFrame(f),
    play: () => play(),
    pause: () => pause(),
    selectEnv: (e) => selectEnv(e),
    fpsSample: (ms) => fpsSample(ms),
  };

  // ------------------------------------------------------------------------------------------
  // Errors and status
  // ------------------------------------------------------------------------------------------

  function showError(err) {
    const msg = (err && err.message) ? err.message : String(err);
    hooks.error = msg;
    const el = $('error');
    el.textContent = msg;
    el.hidden = false;
    setStatus('Could not show this replay. Open another one with “Open replay…” or drop a file here.');
    if (err && !(window.MyriadReplay && err instanceof MyriadReplay.ReplayError)) console.error(err);
  }

  function clearError() {
    hooks.error = null;
    $('error').hidden = true;
    $('error').textContent = '';
  }

  function setStatus(text) {
    const el = $('status');
    el.textContent = text || '';
    el.hidden = !text;
  }

  // Nothing may end in a blank page: report stray errors too.
  window.addEventListener('error', (e) => showError(e.error || e.message));
  window.addEventListener('unhandledrejection', (e) => showError(e.reason));

  // ------------------------------------------------------------------------------------------
  // State
  // ------------------------------------------------------------------------------------------

  let view = null;        // MyriadScene view (three.js), created once
  let plot = null;        // MyriadPlot, created once
  let seriesPlot = null;  // MyriadPlot.createSeries, created once, shown with series
  let replay = null;      // parsed replay
  let returns = null;     // Float64Array [M*F]: return of the episode so far
  let layout = 0;         // env index or 'all'
  let frame = 0;          // current integer frame
  let playhead = 0;       // fractional frame while playing
  let maxFrame = 0;       // last frame of the shown env (of the longest in the grid)
  let playing = false;
  let speed = 1;
  let dirty = true;       // a render is due
  let lastTick = 0;
  let tickCount = 0;      // rAF callbacks, for fpsSample
  let loadStart = 0;
  let firstRenderPending = false;
  let followPrev = null;  // THREE.Vector3s, made in init (three.js may have failed to load)
  let followNow = null;
  let following = false;
  let followAuto = false; // the follow box was ticked for a shared world, not by the user

  function init() {
    const missing = ['THREE', 'Chart', 'MyriadReplay', 'MyriadScene', 'MyriadPlot']
      .filter((g) => typeof window[g] === 'undefined' || (g === 'THREE' && !THREE.OrbitControls));
    if (missing.length) {
      showError('the viewer did not load completely (missing ' + missing.join(', ') +
                '); its scripts (vendor/three.min.js, vendor/OrbitControls.js, vendor/chart.min.js) must sit next to index.html');
      return false;
    }
    followPrev = new THREE.Vector3();
    followNow = new THREE.Vector3();
    try {
      const q = new URLSearchParams(location.search).get('quality');  // high, low, auto
      view = MyriadScene.create($('scene'), q || 'auto');
      hooks.renderer = view.renderer;
      hooks.view = view;  // for tests and debugging
      view.controls.addEventListener('change', () => { dirty = true; });
      plot = MyriadPlot.create($('chart'), $('chart-cursor'), (f) => setFrame(f));
      hooks.chart = plot.chart;
      seriesPlot = MyriadPlot.createSeries($('series-chart'), $('series-cursor'), (f) => setFrame(f));
      hooks.seriesChart = seriesPlot.chart;
    } catch (e) {
      showError(e);
      return false;
    }
    new ResizeObserver(resize).observe($('stage'));
    resize();
    wireUi();
    requestAnimationFrame(tick);
    return true;
  }

  function resize() {
    const st = $('stage');
    view.resize(Math.max(1, st.clientWidth), Math.max(1, st.clientHeight));
    dirty = true;
  }

  // ------------------------------------------------------------------------------------------
  // Loading
  // ------------------------------------------------------------------------------------------

  /** Starts getting the page's replay (a download runs while the caller goes on); returns
   * the function that finishes the load. */
  function begin() {
    loadStart = performance.now();
    const embedded = $('myriad-replay');
    const text = embedded ? embedded.textContent : '';
    if (text && /\S/.test(text)) {
      return () => loadBytes(() => MyriadReplay.base64ToBytes(text), 'embedded replay');
    }
    const param = new URLSearchParams(location.search).get('replay');
    const url = param || 'replay';
    const download = fetch(url).then((resp) => {
      if (!resp.ok) throw new Error('HTTP ' + resp.status + ' ' + resp.statusText);
      return resp.arrayBuffer();
    });
    download.catch(() => {});  // handled in loadUrl; no unhandled-rejection report meanwhile
    return () => loadUrl(url, !!param, download);
  }

  async function loadUrl(url, required, download) {
    setStatus('Loading ' + url + '…');
    let buf;
    try {
      buf = await download;
    } catch (e) {
      if (required) {
        showError('could not fetch replay "' + url + '": ' + (e.message || e));
      } else {
        // No server (file://) or nothing served: not an error, just nothing to show yet.
        setStatus('No replay loaded. Open a .replay file with “Open replay…” or drop one here.');
      }
      return;
    }
    await loadBytes(() => buf, url.split('/').pop() || url);
  }

  async function loadFile(file) {
    // Not ready from the moment a new file is chosen (reading it is asynchronous), so that
    // nothing reads the previous replay's readiness as this one's.
    hooks.ready = false;
    loadStart = performance.now();
    setStatus('Reading ' + file.name + '…');
    let buf;
    try {
      buf = await file.arrayBuffer();
    } catch (e) {
      showError('could not read ' + file.name + ': ' + (e.message || e));
      return;
    }
    await loadBytes(() => buf, file.name);
  }

  /** Parses and shows a replay; getBytes may throw (bad base64). */
  async function loadBytes(getBytes, name) {
    hooks.ready = false;
    clearError();
    let rp;
    try {
      const t0 = performance.now();
      rp = await MyriadReplay.parse(getBytes());
      const t1 = performance.now();
      show(rp, name);
      hooks.loadTimings = { fetch: t0 - loadStart, parse: t1 - t0, build: performance.now() - t1 };
    } catch (e) {
      pause();
      showError(e);
      return;
    }
    setStatus('');
    firstRenderPending = true;  // ready and loadMs once the first frame is drawn
    dirty = true;
  }

  /** Precomputes the return of the episode so far at every frame. */
  function computeReturns(rp) {
    const M = rp.numEnvs, F = rp.numFrames;
    const out = new Float64Array(M * F);
    for (let e = 0; e < M; e++) {
      let acc = 0;
      const n = rp.framesPerEnv[e];
      for (let f = 0; f < F; f++) {
        const i = e * F + f;
        if (f >= n) { out[i] = NaN; continue; }
        if (rp.flags[i] & FLAG_FIRST) acc = 0;
        const r = rp.reward[i];
        if (r === r) acc += r;  // skip NaN
        out[i] = acc;
      }
    }
    return out;
  }

  function show(rp, name) {
    pause();
    replay = rp;
    hooks.replay = rp;
    returns = computeReturns(rp);
    hooks.numFrames = rp.numFrames;
    hooks.numEnvs = rp.numEnvs;
    view.load(rp);
    const hasSeries = !!rp.series && rp.seriesNames.length > 0;
    $('series-plot').hidden = !hasSeries;
    if (hasSeries) seriesPlot.chart.resize();
    // In a shared world (a terrain) the envs stand apart: follow the robot unless the user says no.
    if (view.sharedWorld) {
      followAuto = followAuto || !$('follow').checked;
      $('follow').checked = true;
    } else if (followAuto) {
      $('follow').checked = false;
      followAuto = false;
    }
    buildInfo(rp, name);
    buildEnvSelect(rp);
    layout = -1;  // force selectEnv to rebuild
    selectEnv(0);
    setFrame(0);
  }

  // ------------------------------------------------------------------------------------------
  // Env selection, frames, playback
  // ------------------------------------------------------------------------------------------

  function plotEnv() {
    return layout === 'all' ? 0 : layout;
  }

  function selectEnv(e) {
    if (!replay) return;
    if (e !== 'all') {
      e = Number(e);
      if (!Number.isInteger(e) || e < 0 || e >= replay.numEnvs) e = 0;
    }
    const wasGrid = layout === 'all';
    const changedMode = (e === 'all') !== wasGrid || layout === -1;
    layout = e;
    hooks.env = e;
    $('env-select').value = String(e);
    view.setLayout(e);
    if (changedMode) view.resetCamera();
    else if (view.sharedWorld && e !== 'all') centerOnEnv(e);
    plot.setEnv(replay, plotEnv(), returns);
    if (!$('series-plot').hidden) seriesPlot.setEnv(replay, plotEnv());
    maxFrame = e === 'all' ? replay.numFrames - 1
      : Math.max(0, replay.framesPerEnv[e] - 1);
    const sc = $('scrubber');
    sc.max = String(maxFrame);
    startFollow();
    setFrame(Math.min(frame, maxFrame));
    dirty = true;
  }

  /** Jumps to frame f (clamped); keeps playing if it was. */
  function setFrame(f) {
    if (!replay) return;
    f = Math.max(0, Math.min(maxFrame, Math.round(Number(f) || 0)));
    playhead = f;
    showFrame(f);
  }

  function showFrame(f) {
    frame = f;
    hooks.frame = f;
    view.applyFrame(f);
    if (following) followStep();
    $('scrubber').value = String(f);
    plot.setCursor(f);
    if (!$('series-plot').hidden) seriesPlot.setCursor(f);
    updateReadouts();
    dirty = true;
  }

  function play() {
    if (!replay) return;
    if (frame >= maxFrame && !$('loop').checked) setFrame(0);
    playing = true;
    hooks.playing = true;
    playhead = frame;
    lastTick = performance.now();
    $('play').innerHTML = '&#10074;&#10074;';
  }

  function pause() {
    playing = false;
    hooks.playing = false;
    $('play').innerHTML = '&#9654;';
  }

  function step(delta) {
    pause();
    setFrame(frame + delta);
  }

  /** One rAF callback: advance the playhead in real time (frame_dt / speed), render if due. */
  function tick(now) {
    requestAnimationFrame(tick);
    tickCount++;
    if (playing && replay) {
      const dt = Math.min(0.1, Math.max(0, (now - lastTick) / 1000));  // no jumps after a stall
      playhead += (dt * speed) / replay.frameDt;
      if (playhead > maxFrame + 0.999) {
        if ($('loop').checked && maxFrame > 0) {
          playhead %= maxFrame + 1;
        } else {
          playhead = maxFrame;
          pause();
        }
      }
      const f = Math.floor(playhead);
      if (f !== frame) showFrame(f);
    }
    lastTick = now;
    if (dirty && replay) {
      dirty = false;
      const tr = performance.now();
      view.render();
      if (firstRenderPending) {
        hooks.loadTimings.firstRender = performance.now() - tr;
        firstRenderPending = false;
        hooks.loadMs = performance.now() - loadStart;
        hooks.ready = true;
      }
    }
  }

  /** Frames per second of the render loop while playing, measured over ms milliseconds. */
  function fpsSample(ms) {
    ms = Number(ms) > 0 ? Number(ms) : 1000;
    if (!playing) play();
    const c0 = tickCount, t0 = performance.now();
    return new Promise((resolve) => {
      setTimeout(() => resolve(((tickCount - c0) * 1000) / (performance.now() - t0)), ms);
    });
  }

  // ------------------------------------------------------------------------------------------
  // Follow camera: keep the target on the root body of the plotted env (view.rootBody), moving
  // the camera with it
  // ------------------------------------------------------------------------------------------

  /** Moves the camera (keeping its angle and distance) onto env e's root body: in a shared world
   * each env stands at its own coordinates. */
  function centerOnEnv(e) {
    if (replay.numBodies < 2) return;
    const p = view.bodyWorldPosition(e, view.rootBody, frame, new THREE.Vector3());
    const t = view.controls.target;
    view.translateCamera(p.x - t.x, p.y - t.y, p.z - t.z);
    dirty = true;
  }

  function startFollow() {
    following = $('follow').checked && replay && replay.numBodies > 1;
    if (!following) return;
    view.bodyWorldPosition(plotEnv(), view.rootBody, frame, followPrev);
    const t = view.controls.target;
    view.translateCamera(followPrev.x - t.x, followPrev.y - t.y, followPrev.z - t.z);
    dirty = true;
  }

  function followStep() {
    view.bodyWorldPosition(plotEnv(), view.rootBody, frame, followNow);
    view.translateCamera(followNow.x - followPrev.x, followNow.y - followPrev.y, followNow.z - followPrev.z);
    followPrev.copy(followNow);
  }

  // ------------------------------------------------------------------------------------------
  // Readouts and panels
  // ------------------------------------------------------------------------------------------

  function fmt(x, digits) {
    return typeof x === 'number' && x === x ? x.toFixed(digits) : '–';  // NaN, missing -> dash
  }

  function updateReadouts() {
    const t = frame * replay.frameDt;
    $('frame-readout').textContent = 'frame ' + frame + ' / ' + maxFrame + '  ·  ' + t.toFixed(2) + ' s';
    const e = plotEnv(), F = replay.numFrames, i = e * F + Math.min(frame, Math.max(0, replay.framesPerEnv[e] - 1));
    const A = replay.actionDim || 0;
    let action = '';
    for (let k = 0; k < Math.min(A, 6); k++) {
      const a = replay.action[i * A + k];
      action += (k ? ', ' : '') + (replay.header.discrete_actions ? fmt(a, 0) : fmt(a, 2));
    }
    if (A > 6) action += ', …';
    const fl = replay.flags[i];
    const end = fl & FLAG_TERMINATED ? ' (terminated)' : fl & FLAG_TRUNCATED ? ' (truncated)' : '';
    const rows = [
      ['env', String(e) + (layout === 'all' ? ' (plot)' : '')],
      ['episode', String(replay.episode[i]) + end],
      ['return', fmt(returns[i], 2)],
      ['reward', fmt(replay.reward[i], 3)],
      ['value', fmt(replay.value[i], 2)],
      ['action', '[' + action + ']'],
    ];
    const S = replay.series ? replay.seriesNames.length : 0;
    for (let s = 0; s < S; s++) rows.push([replay.seriesNames[s], fmt(replay.series[i * S + s], 3)]);
    const el = $('episode-readout');
    if (el.childElementCount !== rows.length * 2) {
      el.textContent = '';
      for (let k = 0; k < rows.length * 2; k++) el.appendChild(document.createElement('span'));
    }
    for (let k = 0; k < rows.length; k++) {
      el.children[2 * k].textContent = rows[k][0];
      el.children[2 * k + 1].textContent = rows[k][1];
    }
  }

  function buildInfo(rp, name) {
    const h = rp.header;
    let minF = Infinity, maxF = 0;
    for (let e = 0; e < rp.numEnvs; e++) {
      minF = Math.min(minF, rp.framesPerEnv[e]);
      maxF = Math.max(maxF, rp.framesPerEnv[e]);
    }
    const rows = [
      ['env', h.env],
      ['checkpoint', h.checkpoint],
      ['seed', h.seed],
      ['envs', rp.numEnvs],
      ['frames', minF === maxF ? String(maxF) : minF + '–' + maxF + ' per env'],
      ['frame_dt', +rp.frameDt.toPrecision(6) + ' s (' + +(1 / rp.frameDt).toPrecision(4) + ' fps)'],  // float32 in the file
      ['bodies', rp.numBodies],
      ['actions', (rp.actionDim || 0) + (h.discrete_actions ? ' (discrete)' : ' (continuous)')],
      ['file', name + ', ' + (rp.fileBytes / 1048576).toFixed(2) + ' MB'],
      ['format', rp.version.join('.')],
    ];
    const dl = $('info');
    dl.textContent = '';
    for (const [k, v] of rows) {
      if (v === undefined || v === null || v === '') continue;
      const dt = document.createElement('dt');
      dt.textContent = k;
      const dd = document.createElement('dd');
      dd.textContent = String(v);
      dl.append(dt, dd);
    }
    $('title').textContent = [h.env, h.checkpoint].filter(Boolean).join(' · ');
    document.title = (h.env ? h.env + ' – ' : '') + 'Myriad replay';
  }

  function buildEnvSelect(rp) {
    const sel = $('env-select');
    sel.textContent = '';
    for (let e = 0; e < rp.numEnvs; e++) {
      sel.appendChild(new Option('env ' + e + ' (' + rp.framesPerEnv[e] + ' frames)', String(e)));
    }
    if (rp.numEnvs > 1) {
      sel.appendChild(new Option(view.sharedWorld ? 'all (shared world)' : 'all (grid)', 'all'));
    }
  }

  // ------------------------------------------------------------------------------------------
  // UI wiring
  // ------------------------------------------------------------------------------------------

  function wireUi() {
    $('play').addEventListener('click', () => (playing ? pause() : play()));
    $('step-back').addEventListener('click', () => step(-1));
    $('step-forward').addEventListener('click', () => step(1));
    $('scrubber').addEventListener('input', (ev) => setFrame(Number(ev.target.value)));
    $('speed').addEventListener('change', (ev) => { speed = Number(ev.target.value) || 1; });
    $('env-select').addEventListener('change', (ev) => {
      const v = ev.target.value;
      selectEnv(v === 'all' ? 'all' : Number(v));
    });
    $('follow').addEventListener('change', () => {
      followAuto = false;
      startFollow();
      if (!following) dirty = true;
    });
    $('reset-camera').addEventListener('click', resetCamera);
    $('file-input').addEventListener('change', (ev) => {
      const f = ev.target.files && ev.target.files[0];
      if (f) loadFile(f);
      ev.target.value = '';  // the same file can be opened again
    });

    window.addEventListener('keydown', (ev) => {
      const tag = ev.target && ev.target.tagName;
      if (tag === 'SELECT' || (tag === 'INPUT' && ev.target.type !== 'range' && ev.target.type !== 'checkbox')) return;
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      let handled = true;
      switch (ev.key) {
        case ' ': playing ? pause() : play(); break;
        case 'ArrowLeft': step(ev.shiftKey ? -10 : -1); break;
        case 'ArrowRight': step(ev.shiftKey ? 10 : 1); break;
        case 'Home': step(-Infinity); break;
        case 'End': pause(); setFrame(maxFrame); break;
        case 'r': case 'R': resetCamera(); break;
        default: handled = false;
      }
      if (handled) ev.preventDefault();
    });

    // Drag and drop anywhere on the page.
    let depth = 0;
    document.addEventListener('dragenter', (ev) => { ev.preventDefault(); depth++; document.body.classList.add('dragging'); });
    document.addEventListener('dragleave', () => { if (--depth <= 0) { depth = 0; document.body.classList.remove('dragging'); } });
    document.addEventListener('dragover', (ev) => ev.preventDefault());
    document.addEventListener('drop', (ev) => {
      ev.preventDefault();
      depth = 0;
      document.body.classList.remove('dragging');
      const f = ev.dataTransfer && ev.dataTransfer.files && ev.dataTransfer.files[0];
      if (f) loadFile(f);
    });
  }

  function resetCamera() {
    if (!replay) return;
    view.resetCamera();
    startFollow();
    dirty = true;
  }

  // Set up first, then load: loadMs covers the replay (fetch or decode, parse, build, first
  // render), initMs the viewer (WebGL context, chart), which is slow only on first use of
  // software GL.
  const tInit = performance.now();
  if (init()) {
    hooks.initMs = performance.now() - tInit;
    begin()();
  }
})();
