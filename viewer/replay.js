// Parser of Myriad replay files (docs/replay-format.md), version 1.x.
//
// MyriadReplay.parse(arrayBuffer) -> Promise<replay>; every problem with the file rejects with
// a ReplayError whose message names it ("truncated", "corrupt", "newer than this viewer", ...).
// The replay object holds the header, the scene and one typed array per array of the format,
// flat in C order, plus the shape numbers the viewer indexes with.
(function (global) {
  'use strict';

  const MAGIC = 'MYRIADRP';
  const PREFIX_BYTES = 24;
  const READER_MAJOR = 1;
  const DTYPES = {
    float32: { size: 4, ctor: Float32Array },
    int32: { size: 4, ctor: Int32Array },
    uint8: { size: 1, ctor: Uint8Array },
  };
  const FLAG_FIRST = 1, FLAG_TERMINATED = 2, FLAG_TRUNCATED = 4;

  class ReplayError extends Error {
    constructor(message) {
      super(message);
      this.name = 'ReplayError';
    }
  }

  function fail(message) {
    throw new ReplayError(message);
  }

  // Typed arrays use the platform's byte order and the format is little-endian; every browser
  // platform in use is little-endian, but say so clearly rather than draw garbage.
  const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

  /** Decodes base64 (whitespace allowed) to a Uint8Array. */
  function base64ToBytes(text) {
    let binary;
    try {
      binary = atob(text.replace(/\s+/g, ''));
    } catch (e) {
      fail('the embedded replay is not valid base64');
    }
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  /** Inflates a zlib (RFC 1950) stream; zlib checks the Adler-32 of the output. */
  async function inflate(bytes) {
    if (typeof DecompressionStream === 'undefined') {
      fail('this browser lacks DecompressionStream; use a current Chrome, Firefox or Safari');
    }
    try {
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
      return new Uint8Array(await new Response(stream).arrayBuffer());
    } catch (e) {
      fail('corrupt replay: the compressed payload does not decompress (' + (e && e.message || e) + ')');
    }
  }

  /** Undoes the byte-plane shuffle: element i byte k = stored[k * n + i]. */
  function unshuffle(stored, n, width) {
    const out = new Uint8Array(n * width);
    if (width === 4) {
      // The hot case (float32/int32): assemble whole little-endian words, 4x fewer stores.
      const out32 = new Uint32Array(out.buffer);
      const p0 = stored.subarray(0, n), p1 = stored.subarray(n, 2 * n);
      const p2 = stored.subarray(2 * n, 3 * n), p3 = stored.subarray(3 * n, 4 * n);
      for (let i = 0; i < n; i++) out32[i] = p0[i] | (p1[i] << 8) | (p2[i] << 16) | (p3[i] << 24);
      return out;
    }
    for (let k = 0; k < width; k++) {
      const plane = k * n;
      for (let i = 0, j = k; i < n; i++, j += width) out[j] = stored[plane + i];
    }
    return out;
  }

  function shapeText(shape) {
    return '[' + shape.join(', ') + ']';
  }

  function isNonNegInt(x) {
    return Number.isInteger(x) && x >= 0;
  }

  /** Reads one array of the payload, validating its spec against the payload. */
  function readArray(name, spec, payload) {
    if (!spec || typeof spec !== 'object') fail('corrupt replay: array "' + name + '" has no spec');
    const dtype = DTYPES[spec.dtype];
    if (!dtype) fail('corrupt replay: array "' + name + '" has unknown dtype "' + spec.dtype + '"');
    if (!Array.isArray(spec.shape) || !spec.shape.every(isNonNegInt)) {
      fail('corrupt replay: array "' + name + '" has a bad shape');
    }
    if (!isNonNegInt(spec.offset) || !isNonNegInt(spec.bytes)) {
      fail('corrupt replay: array "' + name + '" has a bad offset or byte count');
    }
    const n = spec.shape.reduce((a, b) => a * b, 1);
    if (n * dtype.size !== spec.bytes) {
      fail('corrupt replay: array "' + name + '" of shape ' + shapeText(spec.shape) + ' ' +
           spec.dtype + ' should take ' + n * dtype.size + ' bytes, header says ' + spec.bytes);
    }
    if (spec.offset + spec.bytes > payload.length) {
      fail('corrupt replay: array "' + name + '" (bytes ' + spec.offset + '..' +
           (spec.offset + spec.bytes) + ') lies outside the ' + payload.length + '-byte payload');
    }
    const stored = payload.subarray(spec.offset, spec.offset + spec.bytes);
    let bytes;
    if (spec.shuffle && dtype.size > 1) {
      bytes = unshuffle(stored, n, dtype.size);
    } else if ((payload.byteOffset + spec.offset) % dtype.size === 0) {
      bytes = stored;  // aligned: view in place, no copy
    } else {
      bytes = stored.slice();
    }
    return new dtype.ctor(bytes.buffer, bytes.byteOffset, n);
  }

  function expectShape(name, spec, want) {
    const got = spec.shape;
    const ok = got.length === want.length && want.every((w, i) => w === null || w === got[i]);
    if (!ok) {
      const wantText = '[' + want.map((w) => (w === null ? '*' : w)).join(', ') + ']';
      fail('corrupt replay: array "' + name + '" has shape ' + shapeText(got) + ', expected ' + wantText);
    }
  }

  /**
   * Parses a replay file. Returns {header, scene, version, numEnvs (M), numFrames (F),
   * numBodies (B), actionDim (A), framesPerEnv (Int32Array[M]), bodyPose (Float32Array
   * [M*F*B*7]), reward, value, action, episode, flags, hfieldElevation (Float32Array[E] or
   * null), seriesNames (the S names of the plotted series, [] without), series (Float32Array
   * [M*F*S] or null), arrays (all by name)}.
   */
  async function parse(input) {
    if (!LITTLE_ENDIAN) fail('this viewer needs a little-endian machine');
    const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
    if (bytes.length < 8) {
      fail('not a Myriad replay (' + bytes.length + ' bytes; too short for the magic) or truncated');
    }
    const magic = String.fromCharCode.apply(null, bytes.subarray(0, 8));
    if (magic !== MAGIC) {
      fail('not a Myriad replay: bad magic (expected "' + MAGIC + '", found "' +
           magic.replace(/[^\x20-\x7e]/g, '?') + '")');
    }
    if (bytes.length < PREFIX_BYTES) {
      fail('truncated replay: ' + bytes.length + ' bytes, shorter than the 24-byte prefix');
    }
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const major = dv.getUint16(8, true), minor = dv.getUint16(10, true);
    if (major > READER_MAJOR) {
      fail('replay format ' + major + '.' + minor + ' is newer than this viewer (' + READER_MAJOR +
           '.x); upgrade Myriad');
    }
    if (major < 1) fail('unsupported replay format ' + major + '.' + minor);
    const headerLen = dv.getUint32(12, true);
    const payloadLen = Number(dv.getBigUint64(16, true));
    const expected = PREFIX_BYTES + headerLen + payloadLen;
    if (bytes.length < expected) {
      fail('truncated replay: the file has ' + bytes.length + ' bytes, its prefix says ' + expected +
           ' (24 + header ' + headerLen + ' + payload ' + payloadLen + ')');
    }
    if (bytes.length > expected) {
      fail('corrupt replay: ' + (bytes.length - expected) + ' bytes after the payload (file has ' +
           bytes.length + ' bytes, its prefix says ' + expected + ')');
    }

    let header;
    try {
      header = JSON.parse(new TextDecoder('utf-8', { fatal: true })
        .decode(bytes.subarray(PREFIX_BYTES, PREFIX_BYTES + headerLen)));
    } catch (e) {
      fail('corrupt replay: the header is not valid UTF-8 JSON (' + e.message + ')');
    }
    if (!header || typeof header !== 'object' || Array.isArray(header)) {
      fail('corrupt replay: the header is not a JSON object');
    }
    if (header.format !== undefined && header.format !== 'myriad-replay') {
      fail('not a Myriad replay: header format is "' + header.format + '"');
    }
    const arrays = header.arrays;
    if (!arrays || typeof arrays !== 'object') fail('corrupt replay: the header has no "arrays"');
    const scene = header.scene;
    if (!scene || typeof scene !== 'object' || !Array.isArray(scene.bodies) || scene.bodies.length < 1) {
      fail('corrupt replay: the header has no scene with bodies');
    }

    const payload = await inflate(bytes.subarray(PREFIX_BYTES + headerLen));
    if (isNonNegInt(header.payload_bytes) && payload.length !== header.payload_bytes) {
      fail('corrupt replay: the payload decompresses to ' + payload.length + ' bytes, the header says ' +
           header.payload_bytes);
    }

    for (const name of ['body_pose', 'reward', 'value', 'action', 'episode', 'flags', 'num_frames']) {
      if (!arrays[name]) fail('corrupt replay: array "' + name + '" is missing');
    }
    const poseShape = arrays.body_pose.shape || [];
    if (!Array.isArray(poseShape) || poseShape.length !== 4) {
      fail('corrupt replay: array "body_pose" should have 4 dimensions [M, F, B, 7]');
    }
    const [M, F, B] = poseShape;
    if (!(M > 0) || !(F > 0)) {
      fail('empty replay: it holds ' + M + ' env(s) and ' + F + ' frame(s); nothing to show');
    }
    if (B !== scene.bodies.length) {
      fail('corrupt replay: body_pose has ' + B + ' bodies, the scene ' + scene.bodies.length);
    }
    const A = Array.isArray(arrays.action.shape) ? arrays.action.shape[2] : undefined;
    const want = {
      body_pose: [['float32'], [M, F, B, 7]],
      reward: [['float32'], [M, F]],
      value: [['float32'], [M, F]],
      action: [['float32', 'int32'], [M, F, null]],
      episode: [['int32'], [M, F]],
      flags: [['uint8'], [M, F]],
      num_frames: [['int32'], [M]],
      hfield_elevation: [['float32'], [null]],  // format 1.2
    };
    // Plotted series (format 1.2): the header's names and the float32 array [M, F, S] come
    // together.
    const seriesNamed = header.series !== undefined, seriesStored = arrays.series !== undefined;
    if (seriesNamed !== seriesStored) {
      fail('corrupt replay: ' + (seriesNamed ? 'the header names series but array "series" is missing'
        : 'array "series" is present but the header names no series'));
    }
    if (seriesNamed) {
      if (!Array.isArray(header.series) || !header.series.every((s) => typeof s === 'string')) {
        fail('corrupt replay: the header\'s "series" is not a list of names');
      }
      want.series = [['float32'], [M, F, header.series.length]];
    }
    const out = {};
    for (const name of Object.keys(arrays)) {
      const spec = arrays[name];
      if (Object.prototype.hasOwnProperty.call(want, name)) {
        if (!spec || !Array.isArray(spec.shape)) fail('corrupt replay: array "' + name + '" has a bad shape');
        expectShape(name, spec, want[name][1]);
        if (!want[name][0].includes(spec.dtype)) {
          fail('corrupt replay: array "' + name + '" has dtype ' + spec.dtype + ', expected ' +
               want[name][0].join(' or '));
        }
        out[name] = readArray(name, spec, payload);
      } else if (DTYPES[spec && spec.dtype]) {
        // Arrays a newer minor version adds: read if well formed, otherwise ignore.
        try { out[name] = readArray(name, spec, payload); } catch (e) { /* ignored */ }
      }
    }
    if (isNonNegInt(header.num_envs) && header.num_envs !== M) {
      fail('corrupt replay: header num_envs ' + header.num_envs + ' but body_pose has ' + M + ' envs');
    }
    if (isNonNegInt(header.num_frames) && header.num_frames !== F) {
      fail('corrupt replay: header num_frames ' + header.num_frames + ' but body_pose has ' + F + ' frames');
    }
    const framesPerEnv = out.num_frames;
    for (let e = 0; e < M; e++) {
      if (framesPerEnv[e] < 0 || framesPerEnv[e] > F) {
        fail('corrupt replay: env ' + e + ' has num_frames ' + framesPerEnv[e] + ' outside 0..' + F);
      }
    }
    const geoms = Array.isArray(scene.geoms) ? scene.geoms : [];
    const lines = Array.isArray(scene.lines) ? scene.lines : [];
    for (const g of geoms.concat(lines)) {
      if (!g || !Number.isInteger(g.body) || g.body < 0 || g.body >= B) {
        fail('corrupt replay: a scene geom or line refers to body ' + (g && g.body) + ' of ' + B);
      }
    }

    // Meshes (format 1.1): rows of mesh_vertex [V, 3] and mesh_face [F, 3].
    const meshes = Array.isArray(scene.meshes) ? scene.meshes : [];
    const V = out.mesh_vertex ? out.mesh_vertex.length / 3 : 0;
    const NF = out.mesh_face ? out.mesh_face.length / 3 : 0;
    for (const m of meshes) {
      const ok = m && [m.vertex_offset, m.vertex_count, m.face_offset, m.face_count].every(isNonNegInt) &&
        m.vertex_offset + m.vertex_count <= V && m.face_offset + m.face_count <= NF;
      if (!ok) fail('corrupt replay: mesh "' + (m && m.name) + '" lies outside mesh_vertex / mesh_face');
    }
    for (const g of geoms) {
      if (g.type === 'mesh' && !(Number.isInteger(g.mesh) && g.mesh >= 0 && g.mesh < meshes.length)) {
        fail('corrupt replay: geom "' + g.name + '" refers to mesh ' + g.mesh + ' of ' + meshes.length);
      }
    }

    // Height fields (format 1.2): nrow x ncol samples (each at least 2) of hfield_elevation [E].
    const hfields = Array.isArray(scene.hfields) ? scene.hfields : [];
    const E = out.hfield_elevation ? out.hfield_elevation.length : 0;
    for (const h of hfields) {
      const name = '"' + (h && h.name) + '"';
      if (!h || !Number.isInteger(h.nrow) || !Number.isInteger(h.ncol) || h.nrow < 2 || h.ncol < 2) {
        fail('corrupt replay: height field ' + name + ' has ' + (h && h.nrow) + ' x ' + (h && h.ncol) +
             ' samples; nrow and ncol must be integers of at least 2');
      }
      if (!isNonNegInt(h.offset) || h.offset + h.nrow * h.ncol > E) {
        fail('corrupt replay: height field ' + name + ' (' + h.nrow + ' x ' + h.ncol + ' samples from ' +
             h.offset + ') lies outside the ' + E + ' samples of hfield_elevation');
      }
    }
    for (const g of geoms) {
      if (g.type === 'hfield' &&
          !(Number.isInteger(g.hfield) && g.hfield >= 0 && g.hfield < hfields.length)) {
        fail('corrupt replay: geom "' + g.name + '" refers to height field ' + g.hfield + ' of ' +
             hfields.length);
      }
    }

    let frameDt = Number(header.frame_dt);
    if (!(frameDt > 0) || !isFinite(frameDt)) frameDt = 0.02;  // sensible fallback for playback

    return {
      header, scene, version: [major, minor], arrays: out,
      numEnvs: M, numFrames: F, numBodies: B, actionDim: A, frameDt,
      framesPerEnv,
      bodyPose: out.body_pose, reward: out.reward, value: out.value, action: out.action,
      episode: out.episode, flags: out.flags,
      hfieldElevation: out.hfield_elevation || null,
      seriesNames: seriesNamed ? header.series.slice() : [], series: out.series || null,
      fileBytes: bytes.length, payloadBytes: payload.length,
    };
  }

  global.MyriadReplay = {
    parse, base64ToBytes, unshuffle, ReplayError,
    FLAG_FIRST, FLAG_TERMINATED, FLAG_TRUNCATED, READER_MAJOR,
  };
})(typeof window !== 'undefined' ? window : globalThis);
