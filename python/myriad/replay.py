"""Reading replay files (docs/replay-format.md) into numpy arrays, without the C++ module.

    r = myriad.load_replay("eval.replay")
    r.body_pose        # float32 [M, F, B, 7]: x, y, z, qw, qx, qy, qz per body and frame
    r.reward, r.value  # float32 [M, F]
    r.scene["geoms"]   # what draws each body
"""
import json
import math
import re
import struct
import zlib
from pathlib import Path

import numpy as np

MAJOR_VERSION, MINOR_VERSION = 1, 2
_MAGIC = b"MYRIADRP"
_PREFIX = struct.Struct("<8sHHIQ")  # magic, major, minor, header length, payload length
_DTYPES = {"float32": np.float32, "int32": np.int32, "uint8": np.uint8}


class ReplayError(ValueError):
    """The file is not a replay, or is truncated, corrupt or from a newer major version."""


class Replay:
    """A decoded replay: `header` (dict), `scene` (dict) and `arrays` (name -> numpy array),
    also reachable as attributes (r.reward is r.arrays["reward"]; r.num_frames holds each
    env's frame count, header["num_frames"] the padded length F)."""

    def __init__(self, header, arrays):
        self.header = header
        self.scene = header.get("scene", {})
        self.arrays = arrays

    def __getattr__(self, name):
        arrays = self.__dict__.get("arrays", {})
        if name in arrays:
            return arrays[name]
        raise AttributeError(f"replay has no array or attribute {name!r} "
                             f"(arrays: {', '.join(sorted(arrays))})")

    @property
    def num_envs(self):
        return int(self.header["num_envs"])

    def episodes(self, env):
        """The episodes of one env as (first, last) frame index pairs, last inclusive."""
        flags, n = self.arrays["flags"][env], int(self.arrays["num_frames"][env])
        starts = np.flatnonzero(flags[:n] & 1)
        ends = np.flatnonzero(flags[:n] & 6)
        return list(zip(starts.tolist(), ends.tolist()))

    def __repr__(self):
        return (f"Replay({self.header.get('env')!r}, num_envs={self.num_envs}, "
                f"num_frames={self.header.get('num_frames')}, arrays={sorted(self.arrays)})")


# Limits every reader applies (docs/replay-format.md, "What a reader refuses").
_MAX_JSON_DEPTH = 64  # nested arrays and objects in the header
_MAX_DIMS = 32  # dimensions of one array
_MAX_INFLATE = 1032  # zlib's largest expansion ratio
_MAX_INDEX = 2**63  # sizes, offsets and dims are below 2^63
# A JSON string, or what is left of an unterminated one (possessive: linear time on any input).
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")
# The arrays of the format's table: dtypes and shape (M envs, F frames, None: any size).
_KNOWN_ARRAYS = {
    "body_pose": (("float32",), ("M", "F", None, 7)),
    "reward": (("float32",), ("M", "F")),
    "value": (("float32",), ("M", "F")),
    "action": (("float32", "int32"), ("M", "F", None)),
    "episode": (("int32",), ("M", "F")),
    "flags": (("uint8",), ("M", "F")),
    "num_frames": (("int32",), ("M",)),
    "mesh_vertex": (("float32",), (None, 3)),
    "mesh_face": (("int32",), (None, 3)),
    "hfield_elevation": (("float32",), (None,)),
    "series": (("float32",), ("M", "F", None)),
}


class _Refused(Exception):
    """A refusal inside the header checks; decode_replay turns it into ReplayError."""


def _json_depth(text):
    """Deepest nesting of arrays and objects, outside strings (before json.loads recurses)."""
    if text.count(b"[") + text.count(b"{") <= _MAX_JSON_DEPTH:
        return 0  # too few brackets to go deeper than the limit
    marks = np.frombuffer(_JSON_STRING.sub(b'""', text), np.uint8)
    steps = (np.isin(marks, (0x5B, 0x7B)).astype(np.int64)
             - np.isin(marks, (0x5D, 0x7D)).astype(np.int64))
    return int(np.cumsum(steps).max(initial=0))


def _json_float(text):
    # As nlohmann::json (the C++ reader) reads numbers: one that overflows a double is an error.
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number overflow parsing {text[:40]!r}")
    return value


def _json_int(text):
    # As nlohmann::json reads integers: beyond 64 bits they are floats (and may overflow).
    if len(text) <= 21:
        value = int(text)
        if -2**63 <= value < 2**64:
            return value
    return _json_float(text)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _check_strings(value):
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise ValueError("a string holds an unpaired UTF-16 surrogate")
    elif isinstance(value, list):
        for item in value:
            if not isinstance(item, dict):
                _check_strings(item)


def _object(pairs):
    out = {}
    for key, value in pairs:
        _check_strings(key)
        if key in out:
            raise ValueError(f"duplicate key {json.dumps(key)}")
        _check_strings(value)
        out[key] = value
    return out


def _parse_header(text):
    """The header's JSON with the C++ reader's rules: at most _MAX_JSON_DEPTH levels, no
    duplicate keys, no byte-order mark, no NaN/Infinity, unpaired surrogates refused."""
    if text.startswith(b"\xef\xbb\xbf"):
        raise _Refused("corrupt replay header: it starts with a byte-order mark")
    if _json_depth(text) > _MAX_JSON_DEPTH:
        raise _Refused(f"corrupt replay header: JSON nested deeper than {_MAX_JSON_DEPTH} levels")
    try:
        root = json.loads(text.decode("utf-8"), object_pairs_hook=_object, parse_int=_json_int,
                          parse_float=_json_float, parse_constant=_no_constant)
        if isinstance(root, list):  # a top-level list is no header anyway; strings in it too
            _check_strings(root)
        return root
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError too
        raise _Refused(f"corrupt replay header: {e}") from None


def _index(value, field):
    """A JSON integer in 0..2^63-1 (not a float, a bool or a string)."""
    if type(value) is int and 0 <= value < _MAX_INDEX:
        return value
    raise _Refused(f"corrupt replay header: {field} is {json.dumps(value)[:80]}, not an integer "
                   f"in 0..2^63-1")


def _check_known_arrays(header, specs):
    bound = {}  # "M"/"F" -> (size, who set it)
    for key, dim in (("num_envs", "M"), ("num_frames", "F")):
        if key in header:
            bound[dim] = (header[key], f"header {key}")
    for name, (dtypes, want_shape) in _KNOWN_ARRAYS.items():
        if name not in specs:
            continue
        spec, field = specs[name], f"array {name!r}"
        if spec["dtype"] not in dtypes:
            raise _Refused(f"corrupt replay: {field} has dtype {spec['dtype']}, expected "
                           f"{dtypes[0]}")
        shape = spec["shape"]
        if len(shape) != len(want_shape):
            raise _Refused(f"corrupt replay: {field} has shape {shape}, expected "
                           f"{len(want_shape)} dimensions")
        for k, (got, want) in enumerate(zip(shape, want_shape)):
            if isinstance(want, int) and got != want:
                raise _Refused(f"corrupt replay: {field} has shape {shape}, dimension {k} "
                               f"should be {want}")
            if isinstance(want, str):
                size, who = bound.setdefault(want, (got, field))
                if size != got:
                    raise _Refused(f"corrupt replay: {field} has shape {shape}, but {who} says "
                                   f"{want} = {size}")


def _index_below(obj, key, limit):
    """obj[key] is a JSON integer in 0..limit-1."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return type(value) is int and 0 <= value < limit


def _check_recording(header, arrays):
    """What the viewer needs to draw a recording (viewer/replay.js checks the same): the seven
    per-frame arrays, at least one env and frame, one scene body per body_pose body, each env's
    frame count within F, every scene reference (geom and line bodies, meshes, height fields) in
    range, and the plotted series named as the array holds them."""
    for name in ("body_pose", "reward", "value", "action", "episode", "flags", "num_frames"):
        if name not in arrays:
            raise _Refused(f"corrupt replay: array {name!r} is missing")
    M, F, B, _ = arrays["body_pose"].shape
    if M == 0 or F == 0:
        raise _Refused(f"empty replay: it holds {M} env(s) and {F} frame(s)")
    scene = header.get("scene")
    if (not isinstance(scene, dict) or not isinstance(scene.get("bodies"), list)
            or not scene["bodies"]):
        raise _Refused("corrupt replay: the header has no scene with bodies")
    if len(scene["bodies"]) != B:
        raise _Refused(f"corrupt replay: body_pose has {B} bodies, the scene "
                       f"{len(scene['bodies'])}")
    frames = arrays["num_frames"]
    bad = np.flatnonzero((frames < 0) | (frames > F))
    if bad.size:
        raise _Refused(f"corrupt replay: env {bad[0]} has num_frames {frames[bad[0]]} outside "
                       f"0..{F}")

    def listed(key):
        return scene[key] if isinstance(scene.get(key), list) else []

    geoms, lines, meshes = listed("geoms"), listed("lines"), listed("meshes")
    for g in geoms + lines:
        if not _index_below(g, "body", B):
            body = json.dumps(g["body"])[:80] if isinstance(g, dict) and "body" in g else "(none)"
            raise _Refused(f"corrupt replay: a scene geom or line refers to body {body} of {B}")
    V = arrays["mesh_vertex"].shape[0] if "mesh_vertex" in arrays else 0
    T = arrays["mesh_face"].shape[0] if "mesh_face" in arrays else 0
    for m in meshes:
        for offset, count, n in (("vertex_offset", "vertex_count", V),
                                 ("face_offset", "face_count", T)):
            if not (_index_below(m, offset, n + 1) and _index_below(m, count, n + 1)
                    and m[offset] + m[count] <= n):
                raise _Refused("corrupt replay: a scene mesh lies outside mesh_vertex / mesh_face")
    for g in geoms:
        if g.get("type") == "mesh" and not _index_below(g, "mesh", len(meshes)):
            mesh = json.dumps(g["mesh"])[:80] if "mesh" in g else "(none)"
            raise _Refused(f"corrupt replay: a mesh geom refers to mesh {mesh} of {len(meshes)}")
    # Height fields (1.2): nrow x ncol samples (each at least 2) inside hfield_elevation.
    hfields = listed("hfields")
    E = arrays["hfield_elevation"].shape[0] if "hfield_elevation" in arrays else 0
    for h in hfields:
        if not (_index_below(h, "nrow", 2**31) and _index_below(h, "ncol", 2**31)
                and _index_below(h, "offset", E + 1) and h["nrow"] >= 2 and h["ncol"] >= 2
                and h["nrow"] * h["ncol"] <= E - h["offset"]):
            raise _Refused("corrupt replay: a scene height field is not nrow x ncol samples "
                           "(each at least 2) inside hfield_elevation")
    for g in geoms:
        if g.get("type") == "hfield" and not _index_below(g, "hfield", len(hfields)):
            field = json.dumps(g["hfield"])[:80] if "hfield" in g else "(none)"
            raise _Refused(f"corrupt replay: an hfield geom refers to height field {field} of "
                           f"{len(hfields)}")
    # Plotted series (1.2): the header's names and the array [M, F, S] come together.
    named, stored = "series" in header, "series" in arrays
    if named != stored:
        raise _Refused("corrupt replay: " + (
            "the header names series but the array 'series' is missing" if named
            else "array 'series' is present but the header names no series"))
    if named:
        names = header["series"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _Refused("corrupt replay: the header's series is not a list of names")
        if arrays["series"].shape[2] != len(names):
            raise _Refused(f"corrupt replay: array 'series' holds {arrays['series'].shape[2]} "
                           f"series, the header names {len(names)}")


def _check_header(header, payload_len):
    """Checks everything the header claims before anything is inflated; returns
    (payload_bytes, {name: (dtype, shape, offset, nbytes, shuffle)})."""
    if not isinstance(header, dict):
        raise _Refused("corrupt replay header: it is not a JSON object")
    if header.get("format", "myriad-replay") != "myriad-replay":
        raise _Refused(f"not a Myriad replay (header format {json.dumps(header['format'])[:80]})")
    specs = header.get("arrays")
    if not isinstance(specs, dict):
        raise _Refused("corrupt replay header: 'arrays' is missing or not an object")
    if "payload_bytes" not in header:
        raise _Refused("corrupt replay header: 'payload_bytes' is missing")
    raw_len = _index(header["payload_bytes"], "payload_bytes")
    # zlib expands at most ~1032:1, so a larger claim is corrupt, whatever memory there is.
    if raw_len > payload_len * _MAX_INFLATE + 64:
        raise _Refused(f"corrupt replay header: payload_bytes {raw_len} cannot come from "
                       f"{payload_len} compressed bytes")
    for key in ("num_envs", "num_frames"):
        if key in header:
            _index(header[key], key)
    out = {}
    for name, spec in specs.items():
        field = f"array {name!r}"
        if not isinstance(spec, dict):
            raise _Refused(f"corrupt replay header: {field} is not an object")
        for key in ("dtype", "shape", "offset", "bytes"):
            if key not in spec:
                raise _Refused(f"corrupt replay header: {field} lacks {key!r}")
        dtype = spec["dtype"]
        if not isinstance(dtype, str) or dtype not in _DTYPES:
            raise _Refused(f"corrupt replay header: {field} has dtype {json.dumps(dtype)[:80]} "
                           f"(float32, int32 or uint8)")
        shape = spec["shape"]
        if not isinstance(shape, list) or len(shape) > _MAX_DIMS:
            raise _Refused(f"corrupt replay header: {field} has shape {json.dumps(shape)[:80]}, "
                           f"not a list of at most {_MAX_DIMS} sizes")
        shuffle = spec.get("shuffle", False)
        if not isinstance(shuffle, bool):
            raise _Refused(f"corrupt replay header: {field} has shuffle "
                           f"{json.dumps(shuffle)[:80]}, not true or false")
        offset = _index(spec["offset"], f"{field} offset")
        nbytes = _index(spec["bytes"], f"{field} bytes")
        shape = tuple(_index(d, f"{field} dimension") for d in shape)
        # Neither the shape nor its non-zero dimensions together may claim more than the payload
        # holds (an empty [0, 2^62] is refused too).
        count = 1
        for d in shape:  # Python ints: no overflow
            count *= d or 1
        if count > raw_len:
            raise _Refused(f"corrupt replay: {field} of shape {list(shape)} is larger than the "
                           f"{raw_len}-byte payload")
        count = 0 if 0 in shape else count
        itemsize = np.dtype(_DTYPES[dtype]).itemsize
        if nbytes != count * itemsize or offset > raw_len or nbytes > raw_len - offset:
            raise _Refused(f"corrupt replay: {field} (offset {offset}, {nbytes} bytes, shape "
                           f"{list(shape)} {dtype}) does not fit its shape or the {raw_len}-byte "
                           f"payload")
        if offset % 8:
            raise _Refused(f"corrupt replay: {field} offset {offset} is not a multiple of 8")
        out[name] = (dtype, shape, offset, nbytes, shuffle)
    # Arrays may not overlap (empty ones hold nothing): together they never hold more than the
    # payload.
    extents = sorted((offset, nbytes, name) for name, (_, _, offset, nbytes, _) in out.items()
                     if nbytes)
    for (o1, n1, a), (o2, _, b) in zip(extents, extents[1:]):
        if o2 < o1 + n1:
            raise _Refused(f"corrupt replay: arrays {a!r} and {b!r} overlap in the payload")
    _check_known_arrays(header, specs)
    return raw_len, out


def decode_replay(data, what="replay"):
    """Decodes the bytes of a replay file; `what` names it in errors. Every problem with the file
    raises ReplayError; the C++ reader (replay/replay_file.cc) accepts and refuses the same
    files (docs/replay-format.md, "What a reader refuses")."""
    data = bytes(data)
    if len(data) < 8 or data[:8] != _MAGIC:
        raise ReplayError(f"{what}: not a Myriad replay (the file does not start with MYRIADRP)")
    if len(data) < _PREFIX.size:
        raise ReplayError(f"{what}: truncated replay ({len(data)} bytes)")
    _, major, minor, header_len, payload_len = _PREFIX.unpack_from(data)
    if major == 0:
        raise ReplayError(f"{what}: unsupported replay format 0.{minor}")
    if major > MAJOR_VERSION:
        raise ReplayError(f"{what}: replay format {major}.{minor} is newer than this reader "
                          f"({MAJOR_VERSION}.x); upgrade Myriad")
    expected = _PREFIX.size + header_len + payload_len
    if len(data) < expected:
        raise ReplayError(f"{what}: truncated replay: {len(data)} bytes, the header announces "
                          f"{expected}")
    if len(data) > expected:
        raise ReplayError(f"{what}: corrupt replay: {len(data) - expected} bytes after the "
                          f"payload (the header announces {expected})")
    try:
        header = _parse_header(data[_PREFIX.size:_PREFIX.size + header_len])
        raw_len, specs = _check_header(header, payload_len)
    except _Refused as e:
        raise ReplayError(f"{what}: {e}") from None
    # max_length: the output grows with what the stream really holds, never past raw_len + 1.
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(data[_PREFIX.size + header_len:expected], raw_len + 1)
    except zlib.error as e:
        raise ReplayError(f"{what}: corrupt replay payload (zlib: {e})") from None
    if len(raw) > raw_len:
        raise ReplayError(f"{what}: corrupt replay payload: it decompresses to more than "
                          f"payload_bytes {raw_len}")
    if not inflater.eof:
        raise ReplayError(f"{what}: corrupt replay payload: the zlib stream is cut short after "
                          f"{len(raw)} of {raw_len} bytes")
    if len(raw) != raw_len:
        raise ReplayError(f"{what}: corrupt replay payload: it decompresses to {len(raw)} bytes, "
                          f"payload_bytes says {raw_len}")
    if inflater.unused_data:
        raise ReplayError(f"{what}: corrupt replay payload: the zlib stream ends "
                          f"{len(inflater.unused_data)} bytes before the payload does")
    arrays = {}
    for name, (dtype, shape, offset, nbytes, shuffle) in specs.items():
        dtype = np.dtype(_DTYPES[dtype])
        count = nbytes // dtype.itemsize
        stored = np.frombuffer(raw, np.uint8, nbytes, offset)
        if shuffle and dtype.itemsize > 1:
            # Byte planes back to elements: plane k holds byte k of every element.
            stored = np.ascontiguousarray(stored.reshape(dtype.itemsize, count).T)
        arrays[name] = stored.view(dtype.newbyteorder("<")).astype(dtype).reshape(shape)
    try:
        _check_recording(header, arrays)
    except _Refused as e:
        raise ReplayError(f"{what}: {e}") from None
    header.pop("arrays", None)
    header.pop("payload_bytes", None)
    return Replay(header, arrays)


def load_replay(path):
    """Reads a replay file (myriad eval --record, eval.record in a config, Policy.record)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"replay {str(path)!r} does not exist")
    return decode_replay(path.read_bytes(), str(path))
