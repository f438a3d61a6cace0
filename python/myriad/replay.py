"""Reading replay files (docs/replay-format.md) into numpy arrays, without the C++ module.

    r = myriad.load_replay("eval.replay")
    r.body_pose        # float32 [M, F, B, 7]: x, y, z, qw, qx, qy, qz per body and frame
    r.reward, r.value  # float32 [M, F]
    r.scene["geoms"]   # what draws each body
"""
import json
import struct
import zlib
from pathlib import Path

import numpy as np

MAJOR_VERSION, MINOR_VERSION = 1, 1
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


def decode_replay(data, what="replay"):
    """Decodes the bytes of a replay file; `what` names it in errors."""
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
        header = json.loads(data[_PREFIX.size:_PREFIX.size + header_len].decode("utf-8"))
        specs, raw_len = header["arrays"], int(header["payload_bytes"])
        if not isinstance(header, dict) or not isinstance(specs, dict):
            raise TypeError("the header or its 'arrays' is not an object")
    except (ValueError, KeyError, TypeError) as e:
        raise ReplayError(f"{what}: corrupt replay header: {e}") from None
    if header.get("format", "myriad-replay") != "myriad-replay":
        raise ReplayError(f"{what}: not a Myriad replay (header format {header['format']!r})")
    # zlib expands at most ~1032:1; a larger claim is corrupt and is never allocated.
    if not 0 <= raw_len <= payload_len * 1032 + 64:
        raise ReplayError(f"{what}: corrupt replay header: payload_bytes {raw_len} cannot come "
                          f"from {payload_len} compressed bytes")
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(data[_PREFIX.size + header_len:expected], raw_len + 1)
    except zlib.error as e:
        raise ReplayError(f"{what}: corrupt replay payload (zlib: {e})") from None
    if len(raw) != raw_len or not inflater.eof or inflater.unused_data:
        raise ReplayError(f"{what}: corrupt replay payload (it does not decompress to exactly "
                          f"{raw_len} bytes filling the payload)")
    arrays = {}
    for name, spec in specs.items():
        try:
            dtype = np.dtype(_DTYPES[spec["dtype"]])
            shape = tuple(int(d) for d in spec["shape"])
            offset, nbytes = int(spec["offset"]), int(spec["bytes"])
        except (KeyError, TypeError, ValueError) as e:
            raise ReplayError(f"{what}: corrupt replay header: array {name!r}: {e}") from None
        count = 1
        for d in shape:  # Python ints: no overflow
            count *= d
        if (min(shape, default=0) < 0 or nbytes != count * dtype.itemsize or offset < 0
                or offset + nbytes > len(raw)):
            raise ReplayError(f"{what}: corrupt replay: array {name!r} does not fit its shape "
                              f"or the payload")
        stored = np.frombuffer(raw, np.uint8, nbytes, offset)
        if spec.get("shuffle") and dtype.itemsize > 1:
            # Byte planes back to elements: plane k holds byte k of every element.
            stored = np.ascontiguousarray(stored.reshape(dtype.itemsize, count).T)
        arrays[name] = stored.view(dtype.newbyteorder("<")).astype(dtype).reshape(shape)
    header.pop("arrays", None)
    header.pop("payload_bytes", None)
    return Replay(header, arrays)


def load_replay(path):
    """Reads a replay file (myriad eval --record, eval.record in a config, Policy.record)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"replay {str(path)!r} does not exist")
    return decode_replay(path.read_bytes(), str(path))
