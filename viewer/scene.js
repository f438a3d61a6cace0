// three.js side of the replay viewer: renderer, camera, lights, ground, the geoms of every env
// and the per-frame pose update. Z is up; geoms follow MuJoCo's conventions.
//
// MyriadScene.create(container) -> view; view.load(replay) builds one THREE.Group per env (with
// one group per body), view.setLayout(env index | 'all') picks what is shown, view.applyFrame(f)
// moves the bodies, view.render() draws. A world (body 0) that holds a height field is a terrain
// every env shares (format 1.2): its geoms are built once, in view.world, and the envs stand at
// their own coordinates in every layout (view.sharedWorld).
(function (global) {
  'use strict';

  // Where the camera and the sun sit relative to the target (camera looks from -y, above).
  const CAMERA_DIR = new THREE.Vector3(0.35, -1, 0.5).normalize();
  const SUN_DIR = new THREE.Vector3(0.35, -0.45, 1).normalize();
  const INFINITE_PLANE = 0;  // plane size 0 means infinite

  /** A capsule along local z: radius r, half-length h of the cylindrical part. r111 has no
   * CapsuleGeometry, so revolve the outline (two quarter circles joined by a segment) with a
   * lathe; the lathe's axis is y, rotated onto z. */
  function capsuleGeometry(r, h, segments) {
    const pts = [];
    const arc = 8;
    for (let i = 0; i <= arc; i++) {  // bottom hemisphere, south pole up to the equator
      const a = -Math.PI / 2 + (i / arc) * (Math.PI / 2);
      pts.push(new THREE.Vector2(r * Math.cos(a), -h + r * Math.sin(a)));
    }
    for (let i = 0; i <= arc; i++) {  // top hemisphere, equator up to the north pole
      const a = (i / arc) * (Math.PI / 2);
      pts.push(new THREE.Vector2(r * Math.cos(a), h + r * Math.sin(a)));
    }
    pts[0].x = 0;
    pts[pts.length - 1].x = 0;
    const g = new THREE.LatheBufferGeometry(pts, segments);
    g.rotateX(Math.PI / 2);
    return g;
  }

  /** Geometry of one geom (shared between envs through the cache), or null for unknown types. */
  function geomGeometry(type, size, planeSize, cache) {
    const s = [0, 1, 2].map((i) => Math.abs(Number(size && size[i]) || 0));
    const key = type + ':' + s.join(',') + (type === 'plane' ? ':' + planeSize : '');
    if (cache.has(key)) return cache.get(key);
    let g = null;
    switch (type) {
      case 'sphere':
        g = new THREE.SphereBufferGeometry(s[0], 32, 16);
        break;
      case 'ellipsoid':
        g = new THREE.SphereBufferGeometry(1, 32, 16);
        g.scale(s[0], s[1], s[2]);
        break;
      case 'capsule':
        g = capsuleGeometry(s[0], s[1], 24);
        break;
      case 'cylinder':
        g = new THREE.CylinderBufferGeometry(s[0], s[0], 2 * s[1], 32);
        g.rotateX(Math.PI / 2);  // three's cylinder runs along y, MuJoCo's along z
        break;
      case 'box':
        g = new THREE.BoxBufferGeometry(2 * s[0], 2 * s[1], 2 * s[2]);
        break;
      case 'plane':
        g = new THREE.PlaneBufferGeometry(
          s[0] === INFINITE_PLANE ? planeSize : 2 * s[0], s[1] === INFINITE_PLANE ? planeSize : 2 * s[1]);
        break;
    }
    cache.set(key, g);
    return g;
  }

  /**
   * The top surface of height field k (format 1.2) in its geom's frame: nrow x ncol vertices,
   * sample (r, c) at x = -size[0] + 2 size[0] c / (ncol - 1), y = -size[1] + 2 size[1] r /
   * (nrow - 1), z = elevation * size[2] (vertex r * ncol + c), two triangles per cell, smooth
   * normals. Null when the replay lacks the samples (the parser checks they are there).
   */
  function hfieldGeometry(replay, k) {
    const h = Array.isArray(replay.scene.hfields) ? replay.scene.hfields[k] : null;
    const elev = replay.hfieldElevation;
    if (!h || !elev) return null;
    const nrow = h.nrow, ncol = h.ncol, off = h.offset;
    if (!(nrow >= 2 && ncol >= 2 && off + nrow * ncol <= elev.length)) return null;
    const size = hfieldSize(h);
    const n = nrow * ncol;
    const pos = new Float32Array(3 * n);
    for (let r = 0, i = 0; r < nrow; r++) {
      const y = -size[1] + (2 * size[1] * r) / (nrow - 1);
      for (let c = 0; c < ncol; c++, i++) {
        const e = elev[off + i];
        pos[3 * i] = -size[0] + (2 * size[0] * c) / (ncol - 1);
        pos[3 * i + 1] = y;
        pos[3 * i + 2] = (e === e ? e : 0) * size[2];  // NaN -> 0
      }
    }
    // Counter-clockwise seen from +z: (r, c), (r, c+1), (r+1, c+1) and (r, c), (r+1, c+1), (r+1, c).
    const index = new (n > 65535 ? Uint32Array : Uint16Array)(6 * (nrow - 1) * (ncol - 1));
    for (let r = 0, j = 0; r < nrow - 1; r++) {
      for (let c = 0; c < ncol - 1; c++) {
        const a = r * ncol + c, b = a + 1, d = a + ncol + 1, e = a + ncol;
        index[j++] = a; index[j++] = b; index[j++] = d;
        index[j++] = a; index[j++] = d; index[j++] = e;
      }
    }
    // Texture coordinates in metres of the geom's x and y: the grid texture draws 1 m cells.
    const uv = new Float32Array(2 * n);
    for (let i = 0; i < n; i++) {
      uv[2 * i] = pos[3 * i];
      uv[2 * i + 1] = pos[3 * i + 1];
    }
    const geo = new THREE.BufferGeometry();
    geo.setAttribute('position', new THREE.BufferAttribute(pos, 3));
    geo.setAttribute('uv', new THREE.BufferAttribute(uv, 2));
    geo.setIndex(new THREE.BufferAttribute(index, 1));
    geo.computeVertexNormals();
    return geo;
  }

  /** The sides and bottom of a height field's solid, down to z = -size[3] (flat normals):
   * one wall per edge of the grid, following its samples, and the bottom face. */
  function hfieldBaseGeometry(replay, k) {
    const h = replay.scene.hfields[k], elev = replay.hfieldElevation;
    const nrow = h.nrow, ncol = h.ncol, off = h.offset;
    const [sx, sy, sz, base] = hfieldSize(h);
    const pos = [], nrm = [], idx = [];
    const x = (c) => -sx + (2 * sx * c) / (ncol - 1), y = (r) => -sy + (2 * sy * r) / (nrow - 1);
    const z = (r, c) => { const e = elev[off + r * ncol + c]; return (e === e ? e : 0) * sz; };
    // Each wall runs counter-clockwise around the grid seen from above, so its outside faces out.
    const walls = [
      { n: ncol, at: (i) => [0, i], normal: [0, -1, 0] },                      // y = -sy, x rising
      { n: nrow, at: (i) => [i, ncol - 1], normal: [1, 0, 0] },               // x = +sx, y rising
      { n: ncol, at: (i) => [nrow - 1, ncol - 1 - i], normal: [0, 1, 0] },    // y = +sy, x falling
      { n: nrow, at: (i) => [nrow - 1 - i, 0], normal: [-1, 0, 0] },          // x = -sx, y falling
    ];
    for (const w of walls) {
      const v0 = pos.length / 3;
      for (let i = 0; i < w.n; i++) {
        const [r, c] = w.at(i);
        pos.push(x(c), y(r), z(r, c), x(c), y(r), -base);
        nrm.push(...w.normal, ...w.normal);
      }
      for (let i = 0; i < w.n - 1; i++) {
        const t0 = v0 + 2 * i, b0 = t0 + 1, t1 = t0 + 2, b1 = t0 + 3;
        idx.push(b0, b1, t1, b0, t1, t0);
      }
    }
    const v0 = pos.length / 3;  // the bottom, facing down
    pos.push(-sx, -sy, -base, sx, -sy, -base, sx, sy, -base, -sx, sy, -base);
    for (let i = 0; i < 4; i++) nrm.push(0, 0, -1);
    idx.push(v0, v0 + 2, v0 + 1, v0, v0 + 3, v0 + 2);
    const geo = new THREE.BufferGeometry();
    geo.setAttribute('position', new THREE.BufferAttribute(new Float32Array(pos), 3));
    geo.setAttribute('normal', new THREE.BufferAttribute(new Float32Array(nrm), 3));
    geo.setIndex(new THREE.BufferAttribute(new (pos.length / 3 > 65535 ? Uint32Array : Uint16Array)(idx), 1));
    return geo;
  }

  /** A height field's size [x, y, z_top, z_base], non-negative numbers. */
  function hfieldSize(h) {
    return [0, 1, 2, 3].map((i) => Math.abs(Number(h && Array.isArray(h.size) && h.size[i]) || 0));
  }

  /** Whether the world (body 0) holds a height field: a terrain every env shares. */
  function isSharedWorld(scene) {
    return Array.isArray(scene.geoms) && scene.geoms.some((g) => g && g.body === 0 && g.type === 'hfield');
  }

  /** The world-frame box of a geom with its pos and quat, from its local box [lo, hi]. */
  function placedBox(g, lo, hi) {
    const m = new THREE.Object3D();
    setPoseFrom(m, g.pos, g.quat);
    m.updateMatrix();
    return new THREE.Box3(new THREE.Vector3(...lo), new THREE.Vector3(...hi)).applyMatrix4(m.matrix);
  }

  /** Radius of a sphere around the geom's origin that contains it (for extents). */
  function geomReach(g) {
    const s = (g.size || [0, 0, 0]).map((x) => Math.abs(Number(x) || 0));
    switch (g.type) {
      case 'sphere': return s[0];
      case 'capsule': return s[0] + s[1];
      case 'cylinder': return Math.hypot(s[0], s[1]);
      case 'ellipsoid': return Math.max(s[0], s[1], s[2]);
      case 'box': return Math.hypot(s[0], s[1], s[2]);
      case 'mesh': return Math.hypot(s[0], s[1], s[2]);  // MuJoCo sizes a mesh by its box
      case 'plane': return s[0] && s[1] ? Math.hypot(s[0], s[1]) : 0;
      default: return 0;
    }
  }

  function isInfinitePlane(g) {
    return g.type === 'plane' && (!(Number(g.size && g.size[0]) > 0) || !(Number(g.size && g.size[1]) > 0));
  }

  function isIdentityQuat(q) {
    return !Array.isArray(q) || (Math.abs(Math.abs(+q[0]) - 1) < 1e-6 && !+q[1] && !+q[2] && !+q[3]);
  }

  function rgbaOf(x, fallback) {
    const c = Array.isArray(x) && x.length >= 3 ? x : fallback;
    return [Number(c[0]), Number(c[1]), Number(c[2]), c.length > 3 ? Number(c[3]) : 1];
  }

  function setPoseFrom(obj, pos, quat) {
    if (Array.isArray(pos)) obj.position.set(+pos[0] || 0, +pos[1] || 0, +pos[2] || 0);
    if (Array.isArray(quat) && quat.length === 4) {
      obj.quaternion.set(+quat[1] || 0, +quat[2] || 0, +quat[3] || 0, +quat[0]);  // w,x,y,z -> x,y,z,w
      if (obj.quaternion.lengthSq() < 1e-12) obj.quaternion.identity();
      obj.quaternion.normalize();
    }
  }

  /** The body the camera follows: the first after the world that holds a geom or line (a
   * body welded to the world is recorded with its geoms on the world, e.g. a terrain's), else
   * body 1 (or 0 when the world is all there is). */
  function rootBody(replay) {
    const B = replay.numBodies;
    const items = [].concat(Array.isArray(replay.scene.geoms) ? replay.scene.geoms : [],
                            Array.isArray(replay.scene.lines) ? replay.scene.lines : []);
    let root = B;
    for (const g of items) if (g && g.body >= 1 && g.body < root) root = g.body;
    return root < B ? root : Math.min(1, B - 1);
  }

  /**
   * Extents of the replay: box, the box around every body's geoms over all frames and the
   * static world geoms; spread, the largest distance of any geom from the root body (the "size" of
   * the robot at one instant); scenery, the box of what is drawn once for all envs (height
   * fields; every world geom in a shared world), kept out of box and spread so that a terrain
   * does not size the robot's camera, grid or shadows; shared, whether the world is shared.
   * One pass over body_pose, a few ms for 16 x 1000 x 14.
   */
  function computeExtents(replay) {
    const { numEnvs: M, numFrames: F, numBodies: B, bodyPose: pose, framesPerEnv } = replay;
    const geoms = Array.isArray(replay.scene.geoms) ? replay.scene.geoms : [];
    const lines = Array.isArray(replay.scene.lines) ? replay.scene.lines : [];
    const reach = new Float64Array(B);  // per body: geoms' reach from the body origin
    const has = new Uint8Array(B);
    const box = new THREE.Box3(), scenery = new THREE.Box3();
    const shared = isSharedWorld(replay.scene);
    const hfields = Array.isArray(replay.scene.hfields) ? replay.scene.hfields : [];
    const v = new THREE.Vector3();
    for (const g of geoms) {
      if (g.type === 'plane') continue;  // floors: the ground is sized from everything else
      if (g.type === 'hfield') {  // terrain: like floors, but its box sizes the scenery
        const s = hfieldSize(hfields[g.hfield]);
        if (g.body === 0) scenery.union(placedBox(g, [-s[0], -s[1], -s[3]], [s[0], s[1], s[2]]));
        continue;
      }
      const p = Array.isArray(g.pos) ? g.pos : [0, 0, 0];
      const r = Math.hypot(+p[0] || 0, +p[1] || 0, +p[2] || 0) + geomReach(g);
      reach[g.body] = Math.max(reach[g.body], r);
      has[g.body] = 1;
      if (g.body === 0) {  // world geoms: static, take their box directly
        v.set(+p[0] || 0, +p[1] || 0, +p[2] || 0);
        const into = shared ? scenery : box;
        into.expandByPoint(v.clone().addScalar(geomReach(g)));
        into.expandByPoint(v.addScalar(-geomReach(g)));
      }
    }
    for (const l of lines) {
      has[l.body] = 1;
      for (const pt of l.points || []) {
        const r = Math.hypot(+pt[0] || 0, +pt[1] || 0, +pt[2] || 0);
        reach[l.body] = Math.max(reach[l.body], r);
        if (l.body === 0) (shared ? scenery : box).expandByPoint(v.set(+pt[0] || 0, +pt[1] || 0, +pt[2] || 0));
      }
    }
    let minX = Infinity, minY = Infinity, minZ = Infinity, maxX = -Infinity, maxY = -Infinity, maxZ = -Infinity;
    let spread = 0;
    const root = rootBody(replay);
    for (let e = 0; e < M; e++) {
      const n = Math.max(1, Math.min(F, framesPerEnv[e]));
      for (let f = 0; f < n; f++) {
        const base = (e * F + f) * B * 7;
        const x1 = pose[base + 7 * root], y1 = pose[base + 7 * root + 1], z1 = pose[base + 7 * root + 2];
        for (let b = 1; b < B; b++) {
          if (!has[b]) continue;
          const i = base + b * 7, r = reach[b];
          const x = pose[i], y = pose[i + 1], z = pose[i + 2];
          if (!(Math.abs(x) < 1e6 && Math.abs(y) < 1e6 && Math.abs(z) < 1e6)) continue;  // NaN / inf
          if (x - r < minX) minX = x - r;
          if (y - r < minY) minY = y - r;
          if (z - r < minZ) minZ = z - r;
          if (x + r > maxX) maxX = x + r;
          if (y + r > maxY) maxY = y + r;
          if (z + r > maxZ) maxZ = z + r;
          if (B > 1) {
            const dx = x - x1, dy = y - y1, dz = z - z1;
            const d = Math.sqrt(dx * dx + dy * dy + dz * dz) + r;  // (Math.hypot is slow here)
            if (d > spread) spread = d;
          }
        }
      }
    }
    if (minX <= maxX) box.union(new THREE.Box3(new THREE.Vector3(minX, minY, minZ), new THREE.Vector3(maxX, maxY, maxZ)));
    if (box.isEmpty() && !scenery.isEmpty()) box.copy(scenery);  // nothing but scenery: frame it
    if (box.isEmpty()) box.set(new THREE.Vector3(-1, -1, 0), new THREE.Vector3(1, 1, 1));
    return { box, spread: Math.max(spread, 0.5), scenery, shared };
  }

  /** The GPU's renderer string, or '' (e.g. "SwiftShader", "llvmpipe", "ANGLE (NVIDIA ...)"). */
  function probeGpu() {
    try {
      const gl = document.createElement('canvas').getContext('webgl');
      if (!gl) return '';
      const info = gl.getExtension('WEBGL_debug_renderer_info');
      const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER) || '');
      const lose = gl.getExtension('WEBGL_lose_context');
      if (lose) lose.loseContext();
      return name;
    } catch (e) {
      return '';
    }
  }

  /**
   * quality: 'high' (antialiasing, soft 2048 shadows), 'low' (neither, 1024 shadows: software
   * rendering fills pixels ~100x slower than a GPU) or 'auto' (low on software renderers).
   */
  function create(container, quality) {
    let renderer;
    const gpu = probeGpu();
    if (quality !== 'high' && quality !== 'low') {
      quality = /swiftshader|llvmpipe|softpipe|software|basic render/i.test(gpu) ? 'low' : 'high';
    }
    const high = quality === 'high';
    try {
      // preserveDrawingBuffer: screenshots and readPixels (tests) see the last frame.
      renderer = new THREE.WebGLRenderer({ antialias: high, preserveDrawingBuffer: true });
    } catch (e) {
      throw new Error('WebGL is not available in this browser (' + (e && e.message || e) + ')');
    }
    renderer.setPixelRatio(Math.min(global.devicePixelRatio || 1, 2));
    renderer.shadowMap.enabled = true;
    renderer.shadowMap.type = high ? THREE.PCFSoftShadowMap : THREE.BasicShadowMap;
    renderer.outputEncoding = THREE.sRGBEncoding;
    container.appendChild(renderer.domElement);

    const scene = new THREE.Scene();
    scene.background = new THREE.Color(0xdfe6ee).convertSRGBToLinear();
    scene.fog = new THREE.Fog(scene.background.getHex(), 10, 100);  // hides the floor's edge
    const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 1000);
    camera.up.set(0, 0, 1);
    const controls = new THREE.OrbitControls(camera, renderer.domElement);
    controls.enableKeys = false;  // the arrow keys step frames
    controls.screenSpacePanning = true;

    const hemi = new THREE.HemisphereLight(0xffffff, 0x80776a, 0.6);
    hemi.position.set(0, 0, 1);  // sky above +z
    scene.add(hemi);
    const sun = new THREE.DirectionalLight(0xffffff, 0.75);
    sun.castShadow = true;
    sun.shadow.mapSize.set(high ? 2048 : 1024, high ? 2048 : 1024);
    sun.shadow.bias = -0.0005;
    scene.add(sun);
    scene.add(sun.target);

    const view = {
      renderer, scene, camera, controls, sun,
      replay: null, envRoots: [], bodies: [], layout: 0, extents: null, quality, gpu,
      grid: { cols: 1, rows: 1, sx: 1, sy: 1 },
      root: null,
      world: null,         // a shared world's geoms and lines, drawn once for all envs
      sharedWorld: false,  // the world holds a height field: no grid offsets in any layout
      frame: 0,            // the frame applyFrame last showed
      _geoCache: new Map(), _matCache: new Map(),
    };

    function material(rgba) {
      return cachedMaterial(rgba.join(','), rgba,
        () => new THREE.MeshStandardMaterial({ roughness: 0.55, metalness: 0.05 }));
    }

    /** One material per key, coloured (sRGB rgba) and made transparent where alpha < 1. */
    function cachedMaterial(key, rgba, make) {
      let m = view._matCache.get(key);
      if (!m) {
        m = make();
        m.color.setRGB(rgba[0], rgba[1], rgba[2]).convertSRGBToLinear();
        if (rgba[3] < 1) {
          m.transparent = true;
          m.opacity = Math.max(0, rgba[3]);
        }
        view._matCache.set(key, m);
      }
      return m;
    }

    /** Planes are matte floors covering much of the screen: Lambert (per-vertex lighting) is
     * exact for a flat surface under directional and hemisphere light, and far cheaper to fill. */
    function floorMaterial(rgba) {
      return cachedMaterial('floor:' + rgba.join(','), rgba, () => new THREE.MeshLambertMaterial());
    }

    function disposeReplay() {
      if (view.root) scene.remove(view.root);
      for (const g of view._geoCache.values()) if (g) g.dispose();
      for (const m of view._matCache.values()) m.dispose();
      if (view._texture) view._texture.dispose();
      if (view._terrainTexture) view._terrainTexture.dispose();
      view._texture = null;
      view._terrainTexture = null;
      view.ground = null;
      view._geoCache.clear();
      view._matCache.clear();
      view.root = null;
      view.world = null;
      view.sharedWorld = false;
      view.frame = 0;
      view.envRoots = [];
      view.bodies = [];
    }

    /** Builds the scene of a parsed replay (replacing any previous one). */
    view.load = function (replay) {
      disposeReplay();
      view.replay = replay;
      const sc = replay.scene;
      const M = replay.numEnvs, B = replay.numBodies;
      const ext = view.extents = computeExtents(replay);
      view.rootBody = rootBody(replay);
      const size = ext.box.getSize(new THREE.Vector3());
      // Grid layout: cells as large as one env's box over the replay plus a margin, as many
      // columns as make the whole grid roughly square.
      const margin = 0.15 * Math.max(size.x, size.y) + 0.3;
      const sx = size.x + margin, sy = size.y + margin;
      const cols = Math.max(1, Math.min(M, Math.round(Math.sqrt((M * sy) / sx)) || 1));
      view.grid = { cols, rows: Math.ceil(M / cols), sx, sy };
      const gridW = view.grid.cols * sx, gridH = view.grid.rows * sy;
      const scenery = ext.scenery.isEmpty() ? new THREE.Vector3() : ext.scenery.getSize(new THREE.Vector3());
      view.floorSize = Math.max(gridW, gridH, size.x, size.y, scenery.x, scenery.y, 4) * 4 + 20;

      view.root = new THREE.Group();
      scene.add(view.root);
      const geoms = Array.isArray(sc.geoms) ? sc.geoms : [];
      const lines = Array.isArray(sc.lines) ? sc.lines : [];
      // A world holding a height field is shared: its geoms and lines are built once, here.
      const shared = view.sharedWorld = ext.shared;
      view.world = new THREE.Group();
      view.world.name = 'world';
      view.root.add(view.world);

      // The ground (with its grid); an infinite world plane at its height becomes the ground.
      const gz = sc.ground && Number(sc.ground.z);
      // MJCF floors are often finite planes (e.g. 40 x 40 m) meant as the ground: same treatment.
      const floorGeom = geoms.find((g) => g.body === 0 && g.type === 'plane' && isIdentityQuat(g.quat) &&
                                         Math.abs((Number(g.pos && g.pos[2]) || 0) - gz) < 1e-6);
      const hasGround = buildGround(sc.ground, floorGeom);
      // Other infinite planes are drawn once, not per env (they would overlap in the grid), and
      // so is all of a shared world.
      const once = (g) => g.body === 0 && (shared || isInfinitePlane(g));
      for (const g of geoms) {
        if (once(g) && !(hasGround && g === floorGeom)) {
          const mesh = makeGeom(g);
          if (mesh) view.world.add(mesh);
        }
      }
      for (const l of lines) {
        if (shared && l.body === 0) {
          const obj = makeLine(l);
          if (obj) view.world.add(obj);
        }
      }
      for (let e = 0; e < M; e++) {
        const envRoot = new THREE.Group();
        const bodies = [];
        for (let b = 0; b < B; b++) {
          const grp = new THREE.Group();
          grp.matrixAutoUpdate = true;
          envRoot.add(grp);
          bodies.push(grp);
        }
        for (const g of geoms) {
          if (once(g) || (g.body === 0 && hasGround && g === floorGeom)) continue;
          const mesh = makeGeom(g);
          if (mesh) bodies[g.body].add(mesh);
        }
        for (const l of lines) {
          if (shared && l.body === 0) continue;
          const obj = makeLine(l);
          if (obj) bodies[l.body].add(obj);
        }
        view.envRoots.push(envRoot);
        view.bodies.push(bodies);
        view.root.add(envRoot);
      }
      view.setLayout(0);
      view.resetCamera();
    };

    /** A mesh geom's triangles (format 1.1: scene.meshes rows of mesh_vertex / mesh_face),
     * flat-shaded as MuJoCo draws convex hulls; null when the replay lacks the mesh. */
    function meshGeometry(index) {
      const key = 'mesh:' + index;
      if (view._geoCache.has(key)) return view._geoCache.get(key);
      const rp = view.replay;
      const m = rp && Array.isArray(rp.scene.meshes) ? rp.scene.meshes[index] : null;
      const verts = rp && rp.arrays.mesh_vertex, faces = rp && rp.arrays.mesh_face;
      if (!m || !verts || !faces) return null;
      const v0 = m.vertex_offset, f0 = m.face_offset, nv = m.vertex_count, nf = m.face_count;
      const pos = new Float32Array(nf * 9);
      for (let f = 0; f < nf; f++) {
        for (let c = 0; c < 3; c++) {
          const v = faces[3 * (f0 + f) + c];
          if (!(v >= 0 && v < nv)) return null;  // checked by the parser; never draw garbage
          for (let k = 0; k < 3; k++) pos[9 * f + 3 * c + k] = verts[3 * (v0 + v) + k];
        }
      }
      const geo = new THREE.BufferGeometry();
      geo.setAttribute('position', new THREE.BufferAttribute(pos, 3));
      geo.computeVertexNormals();  // unshared vertices: one normal per face
      view._geoCache.set(key, geo);
      return geo;
    }

    /** A terrain: matte, its colour lightened halfway to white (MuJoCo's terrains are often
     * dark checkers, which hide the relief under a robot) and the ground's 1 m grid on it, so
     * that stairs, slopes and rough cells read at a glance. */
    function terrainMaterial(rgba) {
      const light = [0, 1, 2].map((k) => 0.5 * rgba[k] + 0.5).concat([rgba[3]]);
      return cachedMaterial('terrain:' + light.join(','), light, () => {
        if (!view._terrainTexture) {
          view._terrainTexture = gridTexture();
          view._terrainTexture.anisotropy = high ? Math.min(8, renderer.capabilities.getMaxAnisotropy()) : 1;
        }
        return new THREE.MeshLambertMaterial({ map: view._terrainTexture });
      });
    }

    /** A geometry made once per key (shared between envs), disposed with the replay. */
    function cachedGeometry(key, make) {
      if (!view._geoCache.has(key)) view._geoCache.set(key, make());
      return view._geoCache.get(key);
    }

    function makeGeom(g) {
      const geo = g.type === 'mesh' ? meshGeometry(g.mesh)
        : g.type === 'hfield' ? cachedGeometry('hfield:' + g.hfield, () => hfieldGeometry(view.replay, g.hfield))
          : geomGeometry(g.type, g.size, view.floorSize, view._geoCache);
      if (!geo) return null;  // unknown type (newer format): skip
      const rgba = rgbaOf(g.rgba, [0.6, 0.6, 0.6, 1]);
      const mat = g.type === 'plane' ? floorMaterial(rgba)
        : g.type === 'hfield' ? terrainMaterial(rgba) : material(rgba);
      const mesh = new THREE.Mesh(geo, mat);
      setPoseFrom(mesh, g.pos, g.quat);
      // A terrain only receives shadows: casting them would put its (up to ~10^6) triangles
      // through the shadow pass for the little self-shadowing of its slopes.
      mesh.castShadow = g.type !== 'plane' && g.type !== 'hfield';
      mesh.receiveShadow = true;
      mesh.name = g.name || '';
      if (g.type === 'hfield') {  // the solid's sides and bottom, under the surface
        const base = new THREE.Mesh(cachedGeometry('hfield-base:' + g.hfield,
          () => hfieldBaseGeometry(view.replay, g.hfield)), mat);
        base.receiveShadow = true;
        base.name = (g.name || '') + ':base';
        mesh.add(base);
      }
      return mesh;
    }

    function makeLine(l) {
      const pts = Array.isArray(l.points) ? l.points : [];
      if (pts.length < 2) return null;
      const arr = new Float32Array(pts.length * 3);
      pts.forEach((p, i) => { arr[3 * i] = +p[0] || 0; arr[3 * i + 1] = +p[1] || 0; arr[3 * i + 2] = +p[2] || 0; });
      const geo = new THREE.BufferGeometry();
      geo.setAttribute('position', new THREE.BufferAttribute(arr, 3));
      const rgba = rgbaOf(l.rgba, [0, 0, 0, 1]);
      const mat = new THREE.LineBasicMaterial({ transparent: rgba[3] < 1, opacity: rgba[3] });
      mat.color.setRGB(rgba[0], rgba[1], rgba[2]).convertSRGBToLinear();
      view._matCache.set('line:' + view._matCache.size, mat);  // disposed with the replay
      view._geoCache.set('line:' + view._geoCache.size, geo);
      return new THREE.Line(geo, mat);
    }

    /**
     * The ground: one plane at ground.z whose texture draws the grid (1 m cells). A texture
     * rather than line geometry: no z-fighting with the floor, lines fade with distance through
     * mipmaps, and some software GL drops lines that cross the near plane. An infinite world
     * plane at the same height is this floor (its colour tints it) instead of a second mesh.
     */
    function buildGround(ground, floorGeom) {
      if (!ground || typeof ground !== 'object' || !isFinite(Number(ground.z))) return false;
      const z = Number(ground.z);
      const size = view.floorSize;
      const cell = Math.max(1, Math.pow(2, Math.ceil(Math.log2(size / 400))));  // coarser if huge
      const tex = gridTexture();
      tex.repeat.set(size / cell, size / cell);
      tex.anisotropy = high ? Math.min(8, renderer.capabilities.getMaxAnisotropy()) : 1;  // costly in software
      view._texture = tex;
      const rgba = floorGeom ? rgbaOf(floorGeom.rgba, [0.9, 0.9, 0.9, 1]) : [0.93, 0.94, 0.95, 1];
      const mat = new THREE.MeshLambertMaterial({ map: tex });
      mat.color.setRGB(rgba[0], rgba[1], rgba[2]).convertSRGBToLinear();
      view._matCache.set('ground', mat);
      const geo = new THREE.PlaneBufferGeometry(size, size);
      view._geoCache.set('ground', geo);
      const floor = new THREE.Mesh(geo, mat);
      floor.position.z = z;
      floor.receiveShadow = true;
      floor.name = 'ground';
      view.root.add(floor);
      view.ground = floor;
      return true;
    }

    function gridTexture() {
      const n = 128;
      const c = document.createElement('canvas');
      c.width = c.height = n;
      const ctx = c.getContext('2d');
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, n, n);
      ctx.fillStyle = 'rgba(40, 55, 75, 0.22)';
      ctx.fillRect(0, 0, n, 2);  // a 2-texel line on two edges: 1 line per cell once tiled
      ctx.fillRect(0, 0, 2, n);
      const tex = new THREE.CanvasTexture(c);
      tex.wrapS = tex.wrapT = THREE.RepeatWrapping;
      tex.encoding = THREE.sRGBEncoding;
      return tex;
    }

    /** Env index: show that env alone at its own coordinates; 'all': every env, in a grid, or
     * in a shared world at their own coordinates. */
    view.setLayout = function (layout) {
      view.layout = layout;
      const M = view.envRoots.length;
      const { cols, rows, sx, sy } = view.grid;
      for (let e = 0; e < M; e++) {
        const r = view.envRoots[e];
        if (layout === 'all' && view.sharedWorld) {
          r.position.set(0, 0, 0);
          r.visible = true;
        } else if (layout === 'all') {
          const col = e % cols, row = Math.floor(e / cols);
          r.position.set((col - (cols - 1) / 2) * sx, -(row - (rows - 1) / 2) * sy, 0);
          r.visible = true;
        } else {
          r.position.set(0, 0, 0);
          r.visible = e === layout;
        }
      }
      updateShadowCamera();
    };

    /** Center of the content: the env box's center (xy) and the scene camera's target height. */
    // (The grid is laid out around the env box's center too, so this is the grid's center.)
    function contentCenter() {
      return view.extents.box.getCenter(new THREE.Vector3());
    }

    /** The scene's camera.direction (e.g. from above for the 2D particle worlds), or CAMERA_DIR. */
    function cameraDirection(cam) {
      const d = Array.isArray(cam.direction) && cam.direction.length === 3
        ? new THREE.Vector3(+cam.direction[0] || 0, +cam.direction[1] || 0, +cam.direction[2] || 0)
        : null;
      return d && d.lengthSq() > 0 ? d.normalize() : CAMERA_DIR;
    }

    /**
     * Puts the camera back where the scene says (single env; in a shared world, where the
     * scene's target cannot know which env is shown, on the env's root body at the current frame)
     * or over the whole grid (in a shared world, over the box of the envs' bodies).
     */
    view.resetCamera = function () {
      const cam = (view.replay && view.replay.scene.camera) || {};
      const t = Array.isArray(cam.target) && cam.target.length === 3
        ? new THREE.Vector3(+cam.target[0] || 0, +cam.target[1] || 0, +cam.target[2] || 0)
        : contentCenter();
      let dist = Number(cam.distance) > 0 ? Number(cam.distance)
        : view.extents.box.getSize(new THREE.Vector3()).length() * 1.2 + 1;
      if (view.layout === 'all') {
        const c = contentCenter();
        t.x = c.x;
        t.y = c.y;
        if (view.sharedWorld) {
          const size = view.extents.box.getSize(new THREE.Vector3());
          dist = Math.max(dist, 0.9 * Math.hypot(size.x, size.y));
        } else {
          const { cols, rows, sx, sy } = view.grid;
          dist = Math.max(dist, 0.9 * Math.hypot(cols * sx, rows * sy));
        }
      } else if (view.sharedWorld && view.replay.numBodies > 1) {
        const e = Math.max(0, Math.min(view.replay.numEnvs - 1, Number(view.layout) || 0));
        view.bodyWorldPosition(e, view.rootBody, view.frame, t);
      }
      controls.target.copy(t);
      camera.position.copy(t).addScaledVector(cameraDirection(cam), dist);
      camera.near = Math.max(0.005, dist / 500);
      camera.far = Math.max(100, dist * 50, view.floorSize * 2);
      camera.updateProjectionMatrix();
      // Fog from a little beyond the content to before the floor's edge.
      scene.fog.near = dist + 0.1 * view.floorSize;
      scene.fog.far = dist + 0.4 * view.floorSize;
      controls.update();
      updateShadowCamera();
    };

    /** Shadow frustum: the whole grid, or around one env; it follows the camera target. */
    function updateShadowCamera() {
      if (!view.extents) return;
      const size = view.extents.box.getSize(new THREE.Vector3());
      let half;
      if (view.layout === 'all' && view.sharedWorld) {
        half = 0.6 * Math.hypot(size.x, size.y);
      } else if (view.layout === 'all') {
        half = 0.6 * Math.hypot(view.grid.cols * view.grid.sx, view.grid.rows * view.grid.sy);
      } else {
        half = Math.min(0.6 * Math.hypot(size.x, size.y), 2 * view.extents.spread + 3);
      }
      half = Math.max(half, 1.5);
      const sc = sun.shadow.camera;
      sc.left = -half; sc.right = half; sc.top = half; sc.bottom = -half;
      sc.near = 0.1;
      sc.far = 4 * half + 20;
      sc.updateProjectionMatrix();
      view._shadowHalf = half;
      placeSun();
    }

    function placeSun() {
      const half = view._shadowHalf || 5;
      // In the grid (and for replays that fit the frustum) keep the sun fixed on the content;
      // for a single env that roams further, keep the sun on the camera target.
      const c = view.layout === 'all' ? contentCenter() : controls.target;
      sun.target.position.copy(c);
      sun.position.copy(c).addScaledVector(SUN_DIR, 2 * half + 5);
      sun.target.updateMatrixWorld();
    }

    /** Poses of frame f (clamped to each env's last frame) for the shown envs. */
    view.applyFrame = function (f) {
      const rp = view.replay;
      if (!rp) return;
      view.frame = f;
      const pose = rp.bodyPose, F = rp.numFrames, B = rp.numBodies, nf = rp.framesPerEnv;
      const all = view.layout === 'all';
      for (let e = 0; e < rp.numEnvs; e++) {
        if (!all && e !== view.layout) continue;
        const fe = Math.max(0, Math.min(f, nf[e] - 1));
        const base = (e * F + fe) * B * 7;
        const bodies = view.bodies[e];
        for (let b = 1; b < B; b++) {  // body 0, the world, is static
          const i = base + b * 7;
          const g = bodies[b];
          g.position.set(pose[i], pose[i + 1], pose[i + 2]);
          g.quaternion.set(pose[i + 4], pose[i + 5], pose[i + 6], pose[i + 3]);
        }
      }
    };

    /** World position of body b of env e at frame f (into out), including the grid offset. */
    view.bodyWorldPosition = function (e, b, f, out) {
      const rp = view.replay;
      const F = rp.numFrames, B = rp.numBodies;
      const fe = Math.max(0, Math.min(f, rp.framesPerEnv[e] - 1));
      const i = ((e * F + fe) * B + b) * 7;
      const o = view.envRoots[e].position;
      return out.set(rp.bodyPose[i] + o.x, rp.bodyPose[i + 1] + o.y, rp.bodyPose[i + 2] + o.z);
    };

    /** Moves camera and target by the same delta (follow mode). */
    view.translateCamera = function (dx, dy, dz) {
      camera.position.x += dx; camera.position.y += dy; camera.position.z += dz;
      controls.target.x += dx; controls.target.y += dy; controls.target.z += dz;
      controls.update();
    };

    view.resize = function (w, h) {
      renderer.setSize(w, h);
      camera.aspect = w / Math.max(1, h);
      camera.updateProjectionMatrix();
    };

    view.render = function () {
      if (view.layout !== 'all') placeSun();
      renderer.render(scene, camera);
    };

    return view;
  }

  global.MyriadScene = { create, computeExtents, capsuleGeometry, hfieldGeometry, isSharedWorld, rootBody };
})(window);
