"""Writes small spec-conforming Myriad replays (docs/replay-format.md) for viewer development
and tests, in pure Python (numpy, zlib, json, struct).

    python tests/viewer/sample_replay.py out.replay --kind 3d --envs 16 --frames 1000
    python tests/viewer/sample_replay.py bad.replay --variant truncated

Three scenes: ``cartpole`` (world, cart, pole; episodes end when the pole falls), ``3d``
(a walker-like torso with orbiting capsules, spheres, boxes, cylinders and ellipsoids over a
plane, exercising every geom type and ``lines``) and ``terrain`` (format 1.2: a height field on
the world that every env shares, a two-body walker per env at its own place on it, and plotted
series with their commands). The ``variant_*`` helpers turn a good file into the broken ones a
reader must reject; the ``DAMAGES`` break a terrain replay's height fields or series.
"""

import argparse
import json
import math
import struct
import zlib

import numpy as np

MAGIC = b"MYRIADRP"
FLAG_FIRST, FLAG_TERMINATED, FLAG_TRUNCATED = 1, 2, 4


# ---------------------------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------------------------

def _shuffle(raw: bytes, width: int) -> bytes:
    """Byte planes: element i byte k goes to k * n + i."""
    if width == 1:
        return raw
    return np.frombuffer(raw, np.uint8).reshape(-1, width).T.tobytes()


def encode(fields, scene, arrays, shuffle=True, version=(1, 0), magic=MAGIC, level=6):
    """Returns the bytes of a replay file.

    fields: header keys besides format/version/scene/arrays/payload_bytes (env, num_envs, ...).
    arrays: name -> numpy array (float32, int32 or uint8), stored in this order.
    """
    payload = bytearray()
    specs = {}
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        assert arr.dtype.name in ("float32", "int32", "uint8"), (name, arr.dtype)
        payload += b"\0" * (-len(payload) % 8)  # offsets are multiples of 8
        raw = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        w = arr.dtype.itemsize
        use_shuffle = bool(shuffle and w > 1)
        specs[name] = {"dtype": arr.dtype.name, "shape": list(arr.shape), "offset": len(payload),
                       "bytes": len(raw), "shuffle": use_shuffle}
        payload += _shuffle(raw, w) if use_shuffle else raw
    header = {"format": "myriad-replay", "version": list(version), **fields,
              "payload_bytes": len(payload), "scene": scene, "arrays": specs}
    hbytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    zbytes = zlib.compress(bytes(payload), level)
    prefix = magic + struct.pack("<HHIQ", version[0], version[1], len(hbytes), len(zbytes))
    return prefix + hbytes + zbytes


def _header_len(data: bytes) -> int:
    return struct.unpack_from("<I", data, 12)[0]


def variant_truncated(data: bytes, keep_fraction=0.6) -> bytes:
    """Cut inside the payload (the prefix still says the full length)."""
    h = _header_len(data)
    return data[: 24 + h + int((len(data) - 24 - h) * keep_fraction)]


def variant_corrupt(data: bytes) -> bytes:
    """Overwrite bytes in the middle of the zlib stream; inflate or Adler-32 then fails."""
    h = _header_len(data)
    out = bytearray(data)
    mid = 24 + h + (len(data) - 24 - h) // 2
    for i in range(mid, min(mid + 64, len(out) - 4)):
        out[i] ^= 0xA5
    return bytes(out)


def variant_version(data: bytes, major=2, minor=0) -> bytes:
    return data[:8] + struct.pack("<HH", major, minor) + data[12:]


def variant_bad_magic(data: bytes) -> bytes:
    return b"NOTAREPL" + data[8:]


VARIANTS = {"truncated": variant_truncated, "corrupt": variant_corrupt, "v2": variant_version,
            "badmagic": variant_bad_magic}


# ---------------------------------------------------------------------------------------------
# Episodes: shared bookkeeping of the per-frame arrays
# ---------------------------------------------------------------------------------------------

def _quat_axis_angle(axis, angle):
    """w, x, y, z arrays for rotations by `angle` (array) about a fixed unit `axis`."""
    s = np.sin(angle / 2)
    return np.stack([np.cos(angle / 2), axis[0] * s, axis[1] * s, axis[2] * s], -1)


def _quat_mul(a, b):
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], -1)


class _Recorder:
    """Collects M envs' frames into the padded [M, F, ...] arrays of the format."""

    def __init__(self, num_envs, num_bodies, action_dim):
        self.envs = [dict(pose=[], reward=[], value=[], action=[], episode=[], flags=[])
                     for _ in range(num_envs)]
        self.B, self.A = num_bodies, action_dim

    def add(self, e, pose, reward, value, action, episode, flags):
        env = self.envs[e]
        env["pose"].append(np.asarray(pose, np.float32).reshape(self.B, 7))
        env["reward"].append(reward)
        env["value"].append(value)
        env["action"].append(np.asarray(action, np.float32).reshape(self.A))
        env["episode"].append(episode)
        env["flags"].append(flags)

    def arrays(self):
        M = len(self.envs)
        F = max(len(e["pose"]) for e in self.envs)
        out = {"body_pose": np.zeros((M, F, self.B, 7), np.float32),
               "reward": np.zeros((M, F), np.float32),
               "value": np.full((M, F), np.nan, np.float32),
               "action": np.full((M, F, self.A), np.nan, np.float32),
               "episode": np.full((M, F), -1, np.int32),
               "flags": np.zeros((M, F), np.uint8),
               "num_frames": np.zeros(M, np.int32)}
        for i, env in enumerate(self.envs):
            n = len(env["pose"])
            out["num_frames"][i] = n
            out["body_pose"][i, :n] = np.stack(env["pose"])
            out["body_pose"][i, n:] = env["pose"][-1]  # padding repeats the last pose
            for k in ("reward", "value", "action", "episode", "flags"):
                out[k][i, :n] = np.asarray(env[k])
        return out


# ---------------------------------------------------------------------------------------------
# CartPole: world, cart, pole
# ---------------------------------------------------------------------------------------------

def cartpole(num_envs=4, num_frames=300, seed=0):
    """Returns (fields, scene, arrays). Env i records about num_frames frames (ragged ends), a
    few episodes each: a noisy balancing controller, terminated when the pole falls or the
    cart leaves the track, truncated at 200 steps."""
    rng = np.random.default_rng(seed)
    dt, g, mc, mp, l = 0.02, 9.8, 1.0, 0.1, 0.5
    scene = {
        "bodies": ["world", "cart", "pole"],
        "geoms": [
            {"name": "rail", "type": "box", "body": 0, "size": [2.6, 0.02, 0.02],
             "pos": [0, 0, 0.98], "quat": [1, 0, 0, 0], "rgba": [0.45, 0.45, 0.5, 1]},
            {"name": "cart", "type": "box", "body": 1, "size": [0.2, 0.12, 0.08],
             "pos": [0, 0, 0], "quat": [1, 0, 0, 0], "rgba": [0.25, 0.45, 0.8, 1]},
            {"name": "pole", "type": "capsule", "body": 2, "size": [0.03, 0.5, 0],
             "pos": [0, 0, 0.5], "quat": [1, 0, 0, 0], "rgba": [0.85, 0.6, 0.35, 1]},
        ],
        "lines": [{"body": 0, "points": [[-2.4, 0, 0.9], [-2.4, 0, 1.1]], "rgba": [0.8, 0.1, 0.1, 1]},
                  {"body": 0, "points": [[2.4, 0, 0.9], [2.4, 0, 1.1]], "rgba": [0.8, 0.1, 0.1, 1]}],
        "ground": {"z": 0},
        "camera": {"target": [0, 0, 1.0], "distance": 5},
    }
    rec = _Recorder(num_envs, 3, 1)
    for e in range(num_envs):
        n_target = max(2, num_frames - (e * num_frames) // (4 * max(num_envs, 1)))
        episode = 0
        while len(rec.envs[e]["pose"]) < n_target:
            x, xd, th, thd = rng.uniform(-0.05, 0.05, 4)
            t = 0
            while True:
                first = t == 0
                fell = abs(x) > 2.4 or abs(th) > 0.2095
                truncated = not fell and t == 200
                full = len(rec.envs[e]["pose"]) + 1 >= n_target
                last = fell or truncated or full
                flags = (FLAG_FIRST if first else 0) | (FLAG_TERMINATED if fell else 0) | \
                        (FLAG_TRUNCATED if (truncated or (full and not fell)) else 0)
                force = 10.0 if (th * 12 + thd * 1.5 + x * 0.1 + xd * 0.4 + rng.normal(0, 1.2)) > 0 else -10.0
                pose = [[0, 0, 0, 1, 0, 0, 0],
                        [x, 0, 1.0, 1, 0, 0, 0],
                        [x, 0, 1.08, math.cos(th / 2), 0, math.sin(th / 2), 0]]
                value = (1 - 0.99 ** (200 - t)) / 0.01 * (1 - 3 * abs(th)) + rng.normal(0, 0.5)
                rec.add(e, pose, 0.0 if first else 1.0, value,
                        [np.nan] if last else [1.0 if force > 0 else 0.0], episode, flags)
                if last:
                    break
                # Gymnasium's CartPole Euler step.
                temp = (force + mp * l * thd ** 2 * math.sin(th)) / (mc + mp)
                tha = (g * math.sin(th) - math.cos(th) * temp) / (
                    l * (4 / 3 - mp * math.cos(th) ** 2 / (mc + mp)))
                xa = temp - mp * l * tha * math.cos(th) / (mc + mp)
                x, xd, th, thd = x + dt * xd, xd + dt * xa, th + dt * thd, thd + dt * tha
                t += 1
            episode += 1
    arrays = rec.arrays()
    fields = {"env": "CartPole-v1", "checkpoint": "runs/sample/checkpoints/last.pt", "seed": seed,
              "num_envs": num_envs, "num_frames": int(arrays["body_pose"].shape[1]),
              "frame_dt": dt, "discrete_actions": True, "action_dim": 1}
    return fields, scene, arrays


# ---------------------------------------------------------------------------------------------
# 3D: a torso walking along x with satellites of every geom type
# ---------------------------------------------------------------------------------------------

GEOM_CYCLE = [
    ("capsule", [0.06, 0.18, 0], [0.9, 0.45, 0.2, 1]),
    ("sphere", [0.12, 0, 0], [0.3, 0.7, 0.35, 1]),
    ("box", [0.1, 0.07, 0.05], [0.35, 0.45, 0.85, 1]),
    ("cylinder", [0.08, 0.1, 0], [0.8, 0.75, 0.25, 1]),
    ("ellipsoid", [0.14, 0.08, 0.06], [0.7, 0.35, 0.75, 0.75]),
]


def scene3d(num_envs=4, num_frames=400, num_bodies=14, seed=0):
    """Returns (fields, scene, arrays) with num_bodies bodies (world + torso + satellites)."""
    assert num_bodies >= 3
    rng = np.random.default_rng(seed)
    dt, A = 0.01, 6
    bodies = ["world", "torso"] + [f"sat{i}" for i in range(num_bodies - 2)]
    geoms = [
        {"name": "floor", "type": "plane", "body": 0, "size": [0, 0, 0], "pos": [0, 0, 0],
         "quat": [1, 0, 0, 0], "rgba": [0.82, 0.84, 0.86, 1]},
        {"name": "post", "type": "cylinder", "body": 0, "size": [0.05, 0.5, 0], "pos": [-1.5, 1.2, 0.5],
         "quat": [1, 0, 0, 0], "rgba": [0.5, 0.5, 0.55, 1]},
        {"name": "torso", "type": "box", "body": 1, "size": [0.25, 0.15, 0.08], "pos": [0, 0, 0],
         "quat": [1, 0, 0, 0], "rgba": [0.75, 0.3, 0.3, 1]},
        {"name": "head", "type": "ellipsoid", "body": 1, "size": [0.1, 0.1, 0.13], "pos": [0.3, 0, 0.12],
         "quat": [1, 0, 0, 0], "rgba": [0.95, 0.8, 0.65, 1]},
    ]
    for i in range(num_bodies - 2):
        kind, size, rgba = GEOM_CYCLE[i % len(GEOM_CYCLE)]
        # Tilt every other geom so local frames (pos/quat composition) get exercised.
        q = [math.cos(0.4), math.sin(0.4), 0, 0] if i % 2 else [1, 0, 0, 0]
        geoms.append({"name": f"sat{i}", "type": kind, "body": i + 2, "size": size,
                      "pos": [0, 0, 0.02 * (i % 3)], "quat": q, "rgba": rgba})
    path = [[x, 0.6 * math.sin(x), 0.01] for x in np.linspace(-1, 4, 40)]
    scene = {"bodies": bodies, "geoms": geoms,
             "lines": [{"body": 0, "points": path, "rgba": [0.1, 0.3, 0.9, 1]},
                       {"body": 1, "points": [[0, 0, 0.08], [0, 0, 0.45]], "rgba": [0, 0, 0, 1]}],
             "ground": {"z": 0}, "camera": {"target": [0, 0, 0.5], "distance": 4}}

    M, S = num_envs, num_bodies - 2
    arrays = {"body_pose": np.zeros((M, num_frames, num_bodies, 7), np.float32)}
    arrays["body_pose"][..., 3] = 1
    reward = np.zeros((M, num_frames), np.float32)
    value = np.full((M, num_frames), np.nan, np.float32)
    action = np.full((M, num_frames, A), np.nan, np.float32)
    episode = np.full((M, num_frames), -1, np.int32)
    flags = np.zeros((M, num_frames), np.uint8)
    nframes = np.zeros(M, np.int32)
    for e in range(M):
        n = num_frames - (e * num_frames) // (3 * M)  # ragged: later envs stop earlier
        nframes[e] = n
        # Episodes of random length; t restarts at each.
        starts = [0]
        while starts[-1] < n:
            starts.append(starts[-1] + int(rng.integers(num_frames // 4 + 1, num_frames // 2 + 2)))
        starts[-1] = n
        ep = np.zeros(n, np.int32)
        t = np.zeros(n)
        for k in range(len(starts) - 1):
            a, b = starts[k], starts[k + 1]
            ep[a:b] = k
            t[a:b] = np.arange(b - a) * dt
            flags[e, a] |= FLAG_FIRST
            flags[e, b - 1] |= FLAG_TRUNCATED if (b - a) % 2 else FLAG_TERMINATED
        phase = rng.uniform(0, 2 * math.pi)
        tx = 0.8 * t + 0.05 * e
        torso = np.stack([tx, 0.6 * np.sin(tx), 0.55 + 0.08 * np.sin(6 * t + phase)], -1)
        yaw = np.arctan2(0.6 * np.cos(tx), 1.0)
        P = arrays["body_pose"][e]
        P[:n, 1, :3] = torso
        P[:n, 1, 3:] = _quat_axis_angle((0, 0, 1), yaw)
        for s in range(S):
            ang = 2 * math.pi * s / S + 1.5 * t + phase
            radius = 0.55 + 0.1 * math.sin(s)
            P[:n, s + 2, 0] = torso[:, 0] + radius * np.cos(ang)
            P[:n, s + 2, 1] = torso[:, 1] + radius * np.sin(ang)
            P[:n, s + 2, 2] = 0.35 + 0.25 * np.sin(3 * t + s) ** 2
            spin = _quat_axis_angle((0, 0, 1), ang)
            tilt = _quat_axis_angle((1, 0, 0), 2.0 * t + s)
            P[:n, s + 2, 3:] = _quat_mul(spin, tilt)
        P[n:] = P[n - 1]
        reward[e, :n] = np.where(t == 0, 0, 0.8 + 0.2 * np.cos(6 * t + phase))
        value[e, :n] = 60 * np.exp(-t / 3) + rng.normal(0, 1, n)
        action[e, :n] = np.tanh(np.sin(np.arange(A)[None] + 5 * t[:, None]))
        last = (flags[e, :n] & (FLAG_TERMINATED | FLAG_TRUNCATED)) != 0
        action[e, :n][last] = np.nan
        episode[e, :n] = ep
    arrays.update(reward=reward, value=value, action=action, episode=episode, flags=flags,
                  num_frames=nframes)
    fields = {"env": "Sample3D-v0", "checkpoint": "runs/sample3d/checkpoints/last.pt",
              "seed": seed, "num_envs": M, "num_frames": num_frames, "frame_dt": dt,
              "discrete_actions": False, "action_dim": A}
    return fields, scene, arrays


# ---------------------------------------------------------------------------------------------
# Terrain (format 1.2): a shared height field, envs at their own places, plotted series
# ---------------------------------------------------------------------------------------------

TERRAIN_ROWS, TERRAIN_COLS = 30, 40
TERRAIN_SIZE = [4.0, 3.0, 0.6, 0.2]  # half x, half y, z_top, z_base
TERRAIN_POS = [0.5, -0.25, 0.0]      # the geom's place in the world
TERRAIN_SERIES = ["lin_vel_x", "lin_vel_x_command", "yaw_rate", "yaw_rate_command"]


def terrain_elevation(x, y):
    """Elevation in [0, 1] at (x, y) in the height field's frame: a slope with a bump."""
    bump = np.exp(-((x - 1.0) ** 2 + (y - 0.5) ** 2) / 0.8)
    return np.clip(0.1 + 0.03 * (x + TERRAIN_SIZE[0]) + 0.6 * bump, 0, 1)


def terrain_vertex(r, c):
    """Where sample (r, c) lies in the height field's frame (docs/replay-format.md, Scene)."""
    sx, sy, sz, _ = TERRAIN_SIZE
    x = -sx + 2 * sx * c / (TERRAIN_COLS - 1)
    y = -sy + 2 * sy * r / (TERRAIN_ROWS - 1)
    return x, y, float(np.float32(terrain_elevation(x, y))) * sz


def terrain(num_envs=4, num_frames=200, seed=0):
    """Returns (fields, scene, arrays): a 1.2 replay whose world holds a 40 x 30 height field
    (row 1 of scene.hfields, after a 2 x 2 one that no geom uses, so its samples start at an
    offset) and a marker box; each env's walker (a box and a sphere) crosses it at its own y,
    over the bump; series: the walker's forward speed and yaw rate with their commands."""
    rng = np.random.default_rng(seed)
    dt, A = 0.02, 2
    sx, sy, sz, _ = TERRAIN_SIZE
    cols = np.linspace(-sx, sx, TERRAIN_COLS)
    rows = np.linspace(-sy, sy, TERRAIN_ROWS)
    field = terrain_elevation(cols[None, :], rows[:, None]).astype(np.float32)  # [nrow, ncol]
    pad = np.zeros(4, np.float32)
    scene = {
        # "anchor" is welded to the world: recorded with no geoms of its own (as a terrain's
        # body is), so the viewer must follow "base", the first body that holds a geom.
        "bodies": ["world", "anchor", "base", "foot"],
        "geoms": [
            {"name": "terrain", "type": "hfield", "hfield": 1, "body": 0, "size": TERRAIN_SIZE,
             "pos": TERRAIN_POS, "quat": [1, 0, 0, 0], "rgba": [0.55, 0.62, 0.5, 1]},
            {"name": "marker", "type": "box", "body": 0, "size": [0.1, 0.1, 0.4],
             "pos": [-3.0, 2.0, 0.4], "quat": [1, 0, 0, 0], "rgba": [0.8, 0.3, 0.2, 1]},
            {"name": "base", "type": "box", "body": 2, "size": [0.2, 0.1, 0.06], "pos": [0, 0, 0],
             "quat": [1, 0, 0, 0], "rgba": [0.25, 0.45, 0.8, 1]},
            {"name": "foot", "type": "sphere", "body": 3, "size": [0.06, 0, 0], "pos": [0, 0, 0],
             "quat": [1, 0, 0, 0], "rgba": [0.9, 0.6, 0.2, 1]},
        ],
        "hfields": [
            {"name": "unused", "nrow": 2, "ncol": 2, "size": [1, 1, 1, 0.1], "offset": 0},
            {"name": "terrain", "nrow": TERRAIN_ROWS, "ncol": TERRAIN_COLS, "size": TERRAIN_SIZE,
             "offset": pad.size},
        ],
        "lines": [{"body": 0, "points": [[-3, -2.5, 0.7], [3, -2.5, 0.7]], "rgba": [0.1, 0.3, 0.9, 1]}],
        "ground": None,
        "camera": {"target": [0, 0, 0.4], "distance": 2.5},
    }
    M, F = num_envs, num_frames
    rec = _Recorder(M, 4, A)
    series = np.full((M, F, len(TERRAIN_SERIES)), np.nan, np.float32)
    for e in range(M):
        n = F - (e * F) // (4 * M)  # ragged ends
        lane = -2.0 + 4.0 * (e + 0.5) / M  # each env's own lane (world y) across the field
        speed_cmd, yaw_cmd = 0.5 + 0.1 * e, 0.2 * (-1) ** e
        x = -3.0
        episode, t = 0, 0
        for f in range(n):
            first, last = t == 0, f == n - 1 or t == n // 2
            speed = speed_cmd + 0.1 * math.sin(0.3 * f) + rng.normal(0, 0.02)
            yaw_rate = yaw_cmd + 0.05 * math.cos(0.2 * f)
            ground = TERRAIN_POS[2] + sz * float(terrain_elevation(x - TERRAIN_POS[0], lane - TERRAIN_POS[1]))
            yaw = 0.3 * math.sin(0.05 * f)
            pose = [[0, 0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0, 0],
                    [x, lane, ground + 0.3, math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)],
                    [x + 0.1 * math.sin(0.5 * f), lane, ground + 0.06, 1, 0, 0, 0]]
            flags = (FLAG_FIRST if first else 0) | (FLAG_TRUNCATED if last else 0)
            rec.add(e, pose, 0.0 if first else 1.0 - abs(speed - speed_cmd), 10.0 - 0.02 * t,
                    [np.nan] * A if last else [speed, yaw_rate], episode, flags)
            series[e, f] = [speed, speed_cmd, yaw_rate, yaw_cmd]
            x = -3.0 if last else min(3.0, x + speed * dt * 4)
            t = 0 if last else t + 1
            episode += 1 if last else 0
    arrays = rec.arrays()
    arrays["hfield_elevation"] = np.concatenate([pad, field.ravel()])
    arrays["series"] = series
    fields = {"env": "SampleTerrain-v0", "checkpoint": "runs/terrain/checkpoints/last.pt",
              "seed": seed, "num_envs": M, "num_frames": int(arrays["body_pose"].shape[1]),
              "frame_dt": dt, "discrete_actions": False, "action_dim": A,
              "series": list(TERRAIN_SERIES)}
    return fields, scene, arrays


def _set(path, value):
    """A damage that sets scene[path...] (a tuple of keys) to value."""
    def damage(fields, scene, arrays):
        node = scene
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
    return damage


def _series_columns(fields, scene, arrays):
    arrays["series"] = np.concatenate([arrays["series"], arrays["series"][..., :1]], -1)


# Damages of a terrain replay each reader refuses ("corrupt replay: ..."): they change
# (fields, scene, arrays) in place before encoding.
DAMAGES = {
    "hfield_nrow_1": _set(("hfields", 1, "nrow"), 1),
    "hfield_ncol_float": _set(("hfields", 1, "ncol"), 40.5),
    "hfield_offset_outside": _set(("hfields", 1, "offset"), 5),
    "hfield_offset_negative": _set(("hfields", 1, "offset"), -1),
    "hfield_index_outside": _set(("geoms", 0, "hfield"), 2),
    "hfield_index_missing": lambda f, s, a: s["geoms"][0].pop("hfield"),
    "series_array_missing": lambda f, s, a: a.pop("series"),
    "series_names_missing": lambda f, s, a: f.pop("series"),
    "series_names_not_strings": lambda f, s, a: f.__setitem__("series", ["a", 1, "b", "c"]),
    "series_columns": _series_columns,
    "series_dtype": lambda f, s, a: a.__setitem__("series", np.nan_to_num(a["series"]).astype(np.int32)),
}

KINDS = {"cartpole": cartpole, "3d": scene3d, "terrain": terrain}
VERSIONS = {"terrain": (1, 2)}  # the format version each kind needs (default 1.0)


def make_replay(kind="cartpole", num_envs=4, num_frames=300, shuffle=True, variant=None, damage=None,
                **kw):
    """Bytes of a sample replay; variant: None or a key of VARIANTS; damage: None or a key of
    DAMAGES (terrain only)."""
    fields, scene, arrays = KINDS[kind](num_envs=num_envs, num_frames=num_frames, **kw)
    if damage:
        DAMAGES[damage](fields, scene, arrays)
    data = encode(fields, scene, arrays, shuffle=shuffle, version=VERSIONS.get(kind, (1, 0)))
    return VARIANTS[variant](data) if variant else data


def write_replay(path, **kw):
    data = make_replay(**kw)
    with open(path, "wb") as f:
        f.write(data)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--kind", choices=sorted(KINDS), default="cartpole")
    ap.add_argument("--envs", type=int, default=4)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--bodies", type=int, default=None, help="3d only")
    ap.add_argument("--no-shuffle", action="store_true")
    ap.add_argument("--variant", choices=sorted(VARIANTS))
    ap.add_argument("--damage", choices=sorted(DAMAGES), help="terrain only")
    a = ap.parse_args()
    kw = {"num_bodies": a.bodies} if a.bodies else {}
    write_replay(a.out, kind=a.kind, num_envs=a.envs, num_frames=a.frames,
                 shuffle=not a.no_shuffle, variant=a.variant, damage=a.damage, **kw)


if __name__ == "__main__":
    main()
