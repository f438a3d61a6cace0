"""Reference values of mjlab's velocity-task terms for tests/envs/test_velocity_terms.cc.

envs/legged/velocity_terms.h re-implements in C++ the reward, observation, termination and
command terms of mjlab 1.6.0's velocity-tracking task. This script evaluates mjlab's own code
on hand-made batches of states (B = 8 envs, float64, fixed seeds) and prints what it gives, so
that the C++ test compares against mjlab itself and not against a second transcription.

Why the script exec's extracted source: `import mjlab` fails in this venv, because the
package's __init__ needs tyro and warp, which are not installed (and must not be: the terms do
not need them). So the script finds the installed package without importing it
(importlib.util.find_spec does not run __init__), reads the .py files as text, takes out the
top-level functions, classes and methods it needs with `ast` (ast.get_source_segment), and
exec's each one, after a `from __future__ import annotations` line, in a namespace it controls:
  - torch, as _Float64Torch: the real torch with torch.float32 read as torch.float64, so that
    the buffers mjlab's term classes allocate as float32 hold doubles;
  - math, numpy as np, re;
  - the mjlab helpers a term calls (quat_apply, quat_apply_inverse, wrap_to_pi,
    resolve_matching_names_values), themselves extracted the same way;
  - stand-ins for what a term only names: _DEFAULT_ASSET_CFG (a default argument) and
    TerrainHeightSensor (an isinstance check).
Decorators (@torch.jit.script, @property) lie outside a def's source segment and so are
dropped: the helpers run eagerly, and the EntityData properties (projected_gravity_b,
heading_w, joint_pos_biased) are re-wrapped with property() on a stand-in EntityData.
The env, the entity and the sensors are types.SimpleNamespace objects with just the attributes
the terms read. Nothing of mjlab's code is copied here; configuration values (the Go1 std
tables excepted, which are read from mjlab's Go1 config) are written out with their origin.

Output: one JSON object (stdout, or --out FILE):
  {"mjlab_version": "1.6.0",
   "cases": [{"term": NAME, "source": "mjlab/FILE: FUNCTION", "params": {...},
              "inputs": {NAME: nested lists, batch first}, "expected": nested lists or
              {NAME: nested lists}}, ...]}
Floats are written with full precision (repr); boolean tensors as true/false; contact counts
as integers; bad_orientation's terminations as 0/1.

Usage: mjlab_velocity_reference.py [--out FILE]
Exit status 77 (and the reason on stderr) when mjlab (or torch/numpy) is not installed.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import json
import math
import re
import sys
import textwrap
import types
import zlib
from pathlib import Path
from types import SimpleNamespace

try:
    import numpy as np
    import torch
except ImportError as e:  # the test skips, naming the reason
    print(f"torch and numpy are needed with {sys.executable}: {e}", file=sys.stderr)
    sys.exit(77)

B = 8  # envs per case
STEP_DT = 0.02  # the velocity task's policy step: decimation 4 x timestep 0.005 s
SEED = 35
GO1_JOINTS = [f"{leg}_{part}_joint" for leg in ("FR", "FL", "RR", "RL")
              for part in ("hip", "thigh", "calf")]
# The first-contact window of ContactSensor.compute_first_contact is 0 < t < dt + abs_tol,
# abs_tol = 1e-6: contact times on both sides of both ends.
CONTACT_TIMES = [0.0, 0.005, 0.01, 0.02, 0.0200005, STEP_DT + 1.0e-6, 0.0200011, 0.04, 0.3]

F64 = torch.float64
torch.set_default_dtype(F64)


def tensor(x, dtype=F64):
    return torch.tensor(x, dtype=dtype)


def rng_for(term: str) -> np.random.Generator:
    """A generator per term, so that a case's numbers do not depend on the other cases."""
    return np.random.default_rng([SEED, zlib.crc32(term.encode())])


def as_json(x):
    """Tensors (and dicts and lists of them) as nested Python lists."""
    if isinstance(x, torch.Tensor):
        return x.tolist()
    if isinstance(x, dict):
        return {k: as_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [as_json(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    return x


def case(term, source, params, inputs, expected):
    return {"term": term, "source": source, "params": as_json(params),
            "inputs": as_json(inputs), "expected": as_json(expected)}


# ---- Running mjlab's source --------------------------------------------------------------


class _Float64Torch:
    """torch for the exec'd mjlab code, with torch.float32 read as torch.float64.

    variable_posture's std tables and feet_swing_height's peak heights are allocated with
    dtype=torch.float32 in mjlab; read as float64 the reference stays in double precision.
    """

    float32 = torch.float64

    def __getattr__(self, name):
        return getattr(torch, name)


class _ScriptedUniformTorch(_Float64Torch):
    """torch whose empty(n) gives a tensor stand-in that draws pre-chosen uniforms.

    UniformVelocityCommand._resample_command draws with `r = torch.empty(n)` then
    `r.uniform_(lo, hi)` several times; each uniform_ here returns lo + (hi - lo) * u for the
    next row u [n] of `rows`, in the order mjlab calls it.
    """

    def __init__(self, rows):
        self.rows = [tensor(row) for row in rows]
        self.used = 0

    def empty(self, *size, **kwargs):
        return _ScriptedUniform(self)


class _ScriptedUniform:
    def __init__(self, source: _ScriptedUniformTorch):
        self.source = source

    def uniform_(self, lo, hi):
        u = self.source.rows[self.source.used]
        self.source.used += 1
        return lo + (hi - lo) * u


class TerrainHeightSensor(SimpleNamespace):
    """Stand-in for mjlab.sensor.terrain_height_sensor.TerrainHeightSensor (isinstance)."""


def asset_cfg(**ids):
    """A SceneEntityCfg stand-in: the robot, with the id lists the terms index with."""
    cfg = dict(name="robot", joint_names=(".*",), joint_ids=slice(None), body_ids=[0],
               site_ids=[0, 1, 2, 3])
    cfg.update(ids)
    return SimpleNamespace(**cfg)


class Mjlab:
    """mjlab's functions, classes and methods, extracted from its sources and exec'd."""

    def __init__(self, root: Path):
        self.root = root
        self._parsed: dict[str, tuple[str, ast.Module]] = {}
        self.helpers: dict[str, object] = {}
        for name in ("quat_apply", "quat_apply_inverse", "wrap_to_pi", "quat_from_euler_xyz",
                     "quat_mul"):
            self.helpers[name] = self.get("utils/lab_api/math.py", name)
        self.helpers["resolve_matching_names_values"] = self.get(
            "utils/lab_api/string.py", "resolve_matching_names_values")

    def parsed(self, rel: str) -> tuple[str, ast.Module]:
        if rel not in self._parsed:
            text = (self.root / rel).read_text()
            self._parsed[rel] = (text, ast.parse(text))
        return self._parsed[rel]

    def node(self, rel: str, name: str, cls: str | None = None):
        """The def or class `name` at the top level of mjlab/rel (or in its class `cls`)."""
        _, tree = self.parsed(rel)
        body = tree.body
        if cls is not None:
            body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
        for n in body:
            if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name:
                return n
        raise LookupError(f"{name} not found in mjlab/{rel}" + (f" ({cls})" if cls else ""))

    def source(self, rel: str, name: str, cls: str | None = None) -> str:
        """The source of a def or class, without its decorators, dedented."""
        text, _ = self.parsed(rel)
        node = self.node(rel, name, cls)
        return textwrap.dedent(ast.get_source_segment(text, node, padded=True))

    def get(self, rel: str, name: str, cls: str | None = None, torch_module=None, extra=None):
        """Exec's mjlab's `name` (from mjlab/rel, class `cls` for a method) and returns it."""
        code = "from __future__ import annotations\n" + self.source(rel, name, cls)
        namespace = {
            "__name__": "mjlab_extracted",
            "torch": torch_module if torch_module is not None else _Float64Torch(),
            "math": math, "np": np, "re": re,
            "_DEFAULT_ASSET_CFG": asset_cfg(),
            "TerrainHeightSensor": TerrainHeightSensor,
            **self.helpers,
            **(extra or {}),
        }
        exec(compile(code, str(self.root / rel), "exec"), namespace)
        return namespace[name]

    def entity_data_type(self):
        """A stand-in EntityData whose derived properties are mjlab's (entity/data.py)."""
        names = ("projected_gravity_b", "heading_w", "joint_pos_biased")
        props = {n: property(self.get("entity/data.py", n, cls="EntityData")) for n in names}
        return type("EntityData", (SimpleNamespace,), props)


def gravity_and_forward():
    """gravity_vec_w and forward_vec_b as Entity builds them (entity/entity.py)."""
    return (tensor([0.0, 0.0, -1.0]).repeat(B, 1), tensor([1.0, 0.0, 0.0]).repeat(B, 1))


def make_env(scene, command=None, action=None, prev_action=None):
    """The env attributes the terms read."""
    return SimpleNamespace(
        scene=scene,
        command_manager=SimpleNamespace(get_command=lambda name: command),
        action_manager=SimpleNamespace(action=action, prev_action=prev_action),
        extras={"log": {}}, step_dt=STEP_DT, num_envs=B, device="cpu")


def robot(**data):
    return {"robot": SimpleNamespace(data=SimpleNamespace(**data))}


def contact_sensor(m: Mjlab, **data):
    """A ContactSensor stand-in with mjlab's compute_first_contact bound to it.

    As ContactSensor._compute_data does, data.current_*_time and the air-time state share
    their tensors; compute_first_contact reads the latter.
    """
    fields = ("found", "force", "current_air_time", "current_contact_time", "force_history")
    sensor_data = SimpleNamespace(**{f: data.get(f) for f in fields})
    sensor = SimpleNamespace(
        cfg=SimpleNamespace(name="feet_ground_contact"), data=sensor_data,
        _air_time_state=SimpleNamespace(current_air_time=sensor_data.current_air_time,
                                        current_contact_time=sensor_data.current_contact_time))
    first_contact = m.get("sensor/contact_sensor.py", "compute_first_contact",
                          cls="ContactSensor")
    sensor.compute_first_contact = types.MethodType(first_contact, sensor)
    return sensor


def height_sensor(heights):
    return TerrainHeightSensor(data=SimpleNamespace(heights=heights),
                               num_frames=heights.shape[1])


# ---- Hand-made states ----------------------------------------------------------------------


def quat_axis_angle(axis, angle):
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    return [math.cos(angle / 2)] + list(a * math.sin(angle / 2))


def orientations(rng):
    """[B, 4] quaternions (w, x, y, z): upright, tilts, yaw only, on its side, upside down, a
    w < 0 one, and a random one left 3% off unit norm (mjlab's quat_apply(_inverse) do not
    normalize; neither do the C++ closed forms, which expand to the same polynomials)."""
    q = np.asarray([
        [1.0, 0.0, 0.0, 0.0],
        quat_axis_angle([1, 0, 0], 0.3),
        quat_axis_angle([0, 1, 0], -0.5),
        quat_axis_angle([0, 0, 1], 2.0),
        quat_axis_angle([1, 0, 0], math.pi / 2),
        quat_axis_angle([1, 0, 0], math.pi),
        [-c for c in quat_axis_angle([1, 1, 0.5], 1.1)],
        list(rng.normal(size=4)),
    ])
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    q[-1] *= 1.03
    return tensor(q)


def gated_commands(threshold):
    """[B, 3] twist commands whose speed |c_xy| + |c_z| is 0, exactly the threshold (by x and
    by z), just above it, and well above."""
    t = threshold
    return tensor([[0.0, 0.0, 0.0], [t, 0.0, 0.0], [0.0, 0.0, -t], [0.6 * t, 0.0, 0.4 * t + 1e-9],
                   [0.5, 0.3, 0.2], [1.2, -0.4, 0.0], [0.0, 0.0, 0.5], [-0.8, 0.6, -0.3]])


def go1_posture_stds(m: Mjlab) -> dict:
    """The Go1 std tables of the pose reward, read from mjlab's Go1 config as literals."""
    _, tree = m.parsed("tasks/velocity/config/go1/env_cfgs.py")
    stds = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = ast.unparse(node.targets[0])
            for key in ("std_standing", "std_walking", "std_running"):
                if target == f"cfg.rewards['pose'].params['{key}']":
                    stds[key] = ast.literal_eval(node.value)
    if len(stds) != 3:
        raise LookupError(f"Go1 pose std tables not found (found {sorted(stds)})")
    return stds


def go1_default_joint_pos():
    """Go1's standing pose (go1_constants.py): .*R_hip 0.1, .*L_hip -0.1, thigh 0.9, calf -1.8."""
    def pose(joint):
        leg, part, _ = joint.split("_")
        if part == "hip":
            return 0.1 if leg.endswith("R") else -0.1
        return {"thigh": 0.9, "calf": -1.8}[part]
    return [pose(joint) for joint in GO1_JOINTS]


# ---- Rewards -------------------------------------------------------------------------------

TASK_REWARDS = "tasks/velocity/mdp/rewards.py"
ENV_REWARDS = "envs/mdp/rewards.py"


def track_linear_velocity(m):
    rng = rng_for("track_linear_velocity")
    command = tensor(rng.uniform(-1.0, 1.0, size=(B, 3)))
    lin_vel_b = command + tensor(rng.normal(0.0, 0.4, size=(B, 3)))
    lin_vel_b[0] = command[0]  # xy tracked, z velocity equal to the command's ignored z
    lin_vel_b[1, :2] = command[1, :2]  # only a vertical velocity
    std = math.sqrt(0.25)
    fn = m.get(TASK_REWARDS, "track_linear_velocity")
    env = make_env(robot(root_link_lin_vel_b=lin_vel_b), command=command)
    out = fn(env, std=std, command_name="twist", asset_cfg=asset_cfg())
    return case("track_linear_velocity", f"mjlab/{TASK_REWARDS}: track_linear_velocity",
                {"std": std}, {"command": command, "lin_vel_b": lin_vel_b}, out)


def track_angular_velocity(m):
    rng = rng_for("track_angular_velocity")
    command = tensor(rng.uniform(-1.0, 1.0, size=(B, 3)))
    ang_vel_b = command + tensor(rng.normal(0.0, 0.4, size=(B, 3)))
    ang_vel_b[0] = tensor([0.0, 0.0, command[0, 2].item()])  # perfect tracking
    ang_vel_b[1, 2] = command[1, 2]  # only roll/pitch rates
    std = math.sqrt(0.5)
    fn = m.get(TASK_REWARDS, "track_angular_velocity")
    env = make_env(robot(root_link_ang_vel_b=ang_vel_b), command=command)
    out = fn(env, std=std, command_name="twist", asset_cfg=asset_cfg())
    return case("track_angular_velocity", f"mjlab/{TASK_REWARDS}: track_angular_velocity",
                {"std": std}, {"command": command, "ang_vel_b": ang_vel_b}, out)


def upright(m):
    # Flat ground: no terrain_sensor_names; the reward body is Go1's trunk (body_ids [0]).
    body_quat_w = orientations(rng_for("upright"))
    gravity_vec_w, _ = gravity_and_forward()
    std = math.sqrt(0.2)
    cls = m.get(TASK_REWARDS, "upright")
    cfg = asset_cfg(body_ids=[0])
    # upright.__init__ only keeps the env for its debug drawing: None will do.
    term = cls(SimpleNamespace(params={"std": std, "asset_cfg": cfg}), None)
    env = make_env(robot(body_link_quat_w=body_quat_w.unsqueeze(1), gravity_vec_w=gravity_vec_w))
    out = term(env, std=std, asset_cfg=cfg)
    return case("upright", f"mjlab/{TASK_REWARDS}: upright.__call__ (no terrain sensor)",
                {"std": std}, {"body_quat_w": body_quat_w}, out)


def variable_posture(m):
    rng = rng_for("variable_posture")
    stds = go1_posture_stds(m)
    default = tensor([go1_default_joint_pos()] * B)
    joint_pos = default + tensor(rng.normal(0.0, 0.15, size=(B, 12)))
    joint_pos[0] = default[0]
    # Speeds: 0, below walking, exactly walking (>= walks), between, just below running,
    # exactly running (>= runs, by x and by z), above.
    command = tensor([[0.0, 0.0, 0.0], [0.03, 0.0, 0.01], [0.05, 0.0, 0.0], [0.3, -0.2, 0.1],
                      [1.0, 0.0, 0.49], [1.5, 0.0, 0.0], [0.0, 0.0, -1.5], [1.5, 1.0, 0.5]])
    walking_threshold, running_threshold = 0.05, 1.5
    cfg = asset_cfg(joint_names=(".*",))
    asset = SimpleNamespace(data=SimpleNamespace(default_joint_pos=default, joint_pos=joint_pos),
                            find_joints=lambda names: (list(range(12)), list(GO1_JOINTS)))
    env = make_env({"robot": asset}, command=command)
    params = {"asset_cfg": cfg, "command_name": "twist", **stds,
              "walking_threshold": walking_threshold, "running_threshold": running_threshold}
    term = m.get(TASK_REWARDS, "variable_posture")(SimpleNamespace(params=params), env)
    out = term(env, **params)
    return case("variable_posture", f"mjlab/{TASK_REWARDS}: variable_posture",
                {"walking_threshold": walking_threshold, "running_threshold": running_threshold,
                 "joint_names": GO1_JOINTS, "std_standing": term.std_standing,
                 "std_walking": term.std_walking, "std_running": term.std_running},
                {"joint_pos": joint_pos, "default_joint_pos": default, "command": command}, out)


def joint_pos_limits(m):
    rng = rng_for("joint_pos_limits")
    # Go1-like limits (hip, thigh, calf), narrowed as soft limits.
    soft_lo = tensor(np.tile([-0.78, -0.42, -2.62], (B, 4)))
    soft_hi = tensor(np.tile([0.78, 3.92, -1.08], (B, 4)))
    joint_pos = soft_lo + (soft_hi - soft_lo) * tensor(rng.uniform(-0.25, 1.25, size=(B, 12)))
    joint_pos[0] = (soft_lo[0] + soft_hi[0]) / 2  # inside
    joint_pos[1, :6] = soft_lo[1, :6]  # exactly on the limits
    joint_pos[1, 6:] = soft_hi[1, 6:]
    soft_limits = torch.stack([soft_lo, soft_hi], dim=-1)  # [B, J, 2] as EntityData holds them
    fn = m.get(ENV_REWARDS, "joint_pos_limits")
    env = make_env(robot(joint_pos=joint_pos, soft_joint_pos_limits=soft_limits))
    out = fn(env, asset_cfg=asset_cfg())
    return case("joint_pos_limits", f"mjlab/{ENV_REWARDS}: joint_pos_limits", {},
                {"joint_pos": joint_pos, "soft_lo": soft_lo, "soft_hi": soft_hi}, out)


def action_rate_l2(m):
    rng = rng_for("action_rate_l2")
    action = tensor(rng.normal(0.0, 1.0, size=(B, 12)))
    prev_action = action + tensor(rng.normal(0.0, 0.5, size=(B, 12)))
    prev_action[0] = action[0]
    fn = m.get(ENV_REWARDS, "action_rate_l2")
    out = fn(make_env({}, action=action, prev_action=prev_action))
    return case("action_rate_l2", f"mjlab/{ENV_REWARDS}: action_rate_l2", {},
                {"action": action, "prev_action": prev_action}, out)


def feet_air_time(m):
    rng = rng_for("feet_air_time")
    # Both ends of the open interval (0.05, 0.5), and values on either side of them.
    special = [0.0, 0.05, 0.0500001, 0.3, 0.4999999, 0.5, 0.7, 0.02]
    current_air_time = tensor(rng.choice(special, size=(B, 4)))
    current_air_time[1] = tensor([0.05, 0.0500001, 0.4999999, 0.5])
    command = gated_commands(0.5)
    params = {"threshold_min": 0.05, "threshold_max": 0.5, "command_threshold": 0.5}
    fn = m.get(TASK_REWARDS, "feet_air_time")
    env = make_env({"feet_ground_contact": contact_sensor(m, current_air_time=current_air_time)},
                   command=command)
    out = fn(env, sensor_name="feet_ground_contact", command_name="twist", **params)
    return case("feet_air_time", f"mjlab/{TASK_REWARDS}: feet_air_time", params,
                {"current_air_time": current_air_time, "command": command}, out)


def feet_clearance(m):
    rng = rng_for("feet_clearance")
    heights = tensor(rng.uniform(-0.02, 0.25, size=(B, 4)))
    heights[4, 0] = 0.1  # on target
    site_lin_vel_w = tensor(rng.normal(0.0, 0.8, size=(B, 4, 3)))
    site_lin_vel_w[5, 1] = 0.0  # a foot at rest
    command = gated_commands(0.05)
    params = {"target_height": 0.1, "command_threshold": 0.05}
    fn = m.get(TASK_REWARDS, "feet_clearance")
    scene = {**robot(site_lin_vel_w=site_lin_vel_w), "foot_height_scan": height_sensor(heights)}
    out = fn(make_env(scene, command=command), height_sensor_name="foot_height_scan",
             command_name="twist", asset_cfg=asset_cfg(site_ids=[0, 1, 2, 3]), **params)
    return case("feet_clearance", f"mjlab/{TASK_REWARDS}: feet_clearance", params,
                {"heights": heights, "site_lin_vel_w": site_lin_vel_w, "command": command}, out)


def feet_swing_height(m):
    """T policy steps of the stateful term on one instance (its peak heights carry over)."""
    rng = rng_for("feet_swing_height")
    steps = 12
    found = torch.tensor(rng.choice([0, 0, 1, 2], size=(steps, B, 4)), dtype=torch.int64)
    heights = tensor(rng.uniform(-0.02, 0.22, size=(steps, B, 4)))
    contact_time = tensor(rng.choice(CONTACT_TIMES, size=(steps, B, 4)))
    command = gated_commands(0.05)
    params = {"target_height": 0.1, "command_threshold": 0.05, "step_dt": STEP_DT}
    cls = m.get(TASK_REWARDS, "feet_swing_height")
    init_env = make_env({"foot_height_scan": height_sensor(heights[0])})
    term = cls(SimpleNamespace(params={"height_sensor_name": "foot_height_scan"}), init_env)
    costs, peaks = [], []
    for t in range(steps):
        scene = {"feet_ground_contact": contact_sensor(m, found=found[t],
                                                       current_contact_time=contact_time[t]),
                 "foot_height_scan": height_sensor(heights[t])}
        cost = term(make_env(scene, command=command), sensor_name="feet_ground_contact",
                    height_sensor_name="foot_height_scan", command_name="twist",
                    target_height=params["target_height"],
                    command_threshold=params["command_threshold"])
        costs.append(cost)
        peaks.append(term.peak_heights.clone())
    return case("feet_swing_height", f"mjlab/{TASK_REWARDS}: feet_swing_height "
                "(with mjlab/sensor/contact_sensor.py: ContactSensor.compute_first_contact)",
                params,
                {"found": found, "heights": heights, "current_contact_time": contact_time,
                 "command": command},
                {"cost": torch.stack(costs), "peak_heights": torch.stack(peaks)})


def feet_slip(m):
    rng = rng_for("feet_slip")
    found = torch.tensor(rng.choice([0, 1, 2, 3], size=(B, 4)), dtype=torch.int64)
    found[4] = torch.tensor([0, 1, 2, 0])
    site_lin_vel_w = tensor(rng.normal(0.0, 0.5, size=(B, 4, 3)))
    command = gated_commands(0.05)
    params = {"command_threshold": 0.05}
    fn = m.get(TASK_REWARDS, "feet_slip")
    scene = {**robot(site_lin_vel_w=site_lin_vel_w),
             "feet_ground_contact": contact_sensor(m, found=found)}
    out = fn(make_env(scene, command=command), sensor_name="feet_ground_contact",
             command_name="twist", asset_cfg=asset_cfg(site_ids=[0, 1, 2, 3]), **params)
    return case("feet_slip", f"mjlab/{TASK_REWARDS}: feet_slip", params,
                {"found": found, "site_lin_vel_w": site_lin_vel_w, "command": command}, out)


def soft_landing(m):
    rng = rng_for("soft_landing")
    force = tensor(rng.normal(0.0, 80.0, size=(B, 4, 3)))
    force[4] = 0.0  # no force at all
    contact_time = tensor(rng.choice(CONTACT_TIMES, size=(B, 4)))
    contact_time[4] = tensor([0.005, 0.02, 0.0200005, STEP_DT + 1.0e-6])
    command = gated_commands(0.05)
    params = {"command_threshold": 0.05, "step_dt": STEP_DT}
    fn = m.get(TASK_REWARDS, "soft_landing")
    sensor = contact_sensor(m, force=force, current_contact_time=contact_time)
    out = fn(make_env({"feet_ground_contact": sensor}, command=command),
             sensor_name="feet_ground_contact", command_name="twist",
             command_threshold=params["command_threshold"])
    return case("soft_landing", f"mjlab/{TASK_REWARDS}: soft_landing "
                "(with mjlab/sensor/contact_sensor.py: ContactSensor.compute_first_contact)",
                params, {"force": force, "current_contact_time": contact_time,
                         "command": command}, out)


def self_collision_cost(m):
    rng = rng_for("self_collision_cost")
    force_history = tensor(rng.normal(0.0, 6.0, size=(B, 3, 4, 3)))  # [B, N, H, 3]
    force_history[0] = 0.0
    force_history[1] = 0.0
    force_history[1, 0, 0] = tensor([6.0, 8.0, 0.0])  # |F| == threshold: not above
    force_history[1, 2, 3] = tensor([0.0, 0.0, 10.000001])  # just above
    force_history[2] = 0.0
    force_history[2, 1, 1] = tensor([-10.0, 0.0, 0.0])
    force_history[2, 0, 1] = tensor([0.0, 0.0, 50.0])  # two primaries in one substep: 1
    params = {"force_threshold": 10.0}
    fn = m.get(TASK_REWARDS, "self_collision_cost")
    sensor = contact_sensor(m, force_history=force_history)
    out = fn(make_env({"self_collision": sensor}), sensor_name="self_collision", **params)
    return case("self_collision_cost", f"mjlab/{TASK_REWARDS}: self_collision_cost", params,
                {"force_history": force_history}, out)


def body_angular_velocity_penalty(m):
    ang_vel_w = tensor(rng_for("body_angular_velocity_penalty").normal(0.0, 1.0, size=(B, 3)))
    ang_vel_w[0] = tensor([0.0, 0.0, 3.0])  # yaw rate only: 0
    fn = m.get(TASK_REWARDS, "body_angular_velocity_penalty")
    out = fn(make_env(robot(body_link_ang_vel_w=ang_vel_w.unsqueeze(1))),
             asset_cfg=asset_cfg(body_ids=[0]))
    return case("body_angular_velocity_penalty",
                f"mjlab/{TASK_REWARDS}: body_angular_velocity_penalty", {},
                {"ang_vel_w": ang_vel_w}, out)


def angular_momentum_penalty(m):
    angmom = tensor(rng_for("angular_momentum_penalty").normal(0.0, 2.0, size=(B, 3)))
    angmom[0] = 0.0
    fn = m.get(TASK_REWARDS, "angular_momentum_penalty")
    env = make_env({"robot/root_angmom": SimpleNamespace(data=angmom)})
    out = fn(env, sensor_name="robot/root_angmom")
    return case("angular_momentum_penalty", f"mjlab/{TASK_REWARDS}: angular_momentum_penalty",
                {}, {"angmom": angmom}, out)


# ---- Observations and terminations ------------------------------------------------------------

ENV_OBS = "envs/mdp/observations.py"
TASK_OBS = "tasks/velocity/mdp/observations.py"


def projected_gravity(m):
    root_quat_w = orientations(rng_for("projected_gravity"))
    gravity_vec_w, _ = gravity_and_forward()
    data = m.entity_data_type()(root_link_quat_w=root_quat_w, gravity_vec_w=gravity_vec_w)
    fn = m.get(ENV_OBS, "projected_gravity")
    out = fn(make_env({"robot": SimpleNamespace(data=data)}), asset_cfg=asset_cfg())
    return case("projected_gravity", f"mjlab/{ENV_OBS}: projected_gravity "
                "(mjlab/entity/data.py: EntityData.projected_gravity_b)", {},
                {"root_quat_w": root_quat_w}, out)


def joint_pos_rel(m):
    rng = rng_for("joint_pos_rel")
    default = tensor([go1_default_joint_pos()] * B)
    joint_pos = default + tensor(rng.normal(0.0, 0.2, size=(B, 12)))
    encoder_bias = tensor(rng.uniform(-0.015, 0.015, size=(B, 12)))  # the task's bias_range
    data = m.entity_data_type()(joint_pos=joint_pos, default_joint_pos=default,
                                encoder_bias=encoder_bias)
    fn = m.get(ENV_OBS, "joint_pos_rel")
    env = make_env({"robot": SimpleNamespace(data=data)})
    out = {"unbiased": fn(env, biased=False, asset_cfg=asset_cfg()),
           "biased": fn(env, biased=True, asset_cfg=asset_cfg())}
    return case("joint_pos_rel", f"mjlab/{ENV_OBS}: joint_pos_rel "
                "(mjlab/entity/data.py: EntityData.joint_pos_biased)", {},
                {"joint_pos": joint_pos, "default_joint_pos": default,
                 "encoder_bias": encoder_bias}, out)


def foot_contact_forces(m):
    force = tensor(rng_for("foot_contact_forces").normal(0.0, 60.0, size=(B, 4, 3)))
    force[0] = 0.0
    force[1, 0] = tensor([1e-12, -1e-12, 1e4])
    force[1, 1] = tensor([-0.0, 0.5, -250.0])
    fn = m.get(TASK_OBS, "foot_contact_forces")
    out = fn(make_env({"feet_ground_contact": contact_sensor(m, force=force)}),
             sensor_name="feet_ground_contact")
    return case("foot_contact_forces", f"mjlab/{TASK_OBS}: foot_contact_forces", {},
                {"force": force}, out)


def foot_contact(m):
    found = torch.tensor(rng_for("foot_contact").choice([0, 0, 1, 2, 3], size=(B, 4)),
                         dtype=torch.int64)
    fn = m.get(TASK_OBS, "foot_contact")
    out = fn(make_env({"feet_ground_contact": contact_sensor(m, found=found)}),
             sensor_name="feet_ground_contact")
    return case("foot_contact", f"mjlab/{TASK_OBS}: foot_contact", {}, {"found": found}, out)


def height_scan(m):
    """One frame of N rays; a miss (distance < 0) reads the sensor's max_distance."""
    rng = rng_for("height_scan")
    n_rays = 6
    max_distance = 5.0  # terrain_scan's max_distance (tasks/velocity/velocity_env_cfg.py)
    frame_z = tensor(rng.uniform(0.25, 0.4, size=(B, 1)))
    hit_z = tensor(rng.uniform(-0.1, 0.1, size=(B, n_rays)))
    distances = frame_z - hit_z
    distances[rng.uniform(size=(B, n_rays)) < 0.2] = -1.0
    distances[0, 0] = -1.0
    frame_pos_w = torch.zeros(B, 1, 3)
    frame_pos_w[:, :, 2] = frame_z
    hit_pos_w = torch.zeros(B, n_rays, 3)
    hit_pos_w[:, :, 2] = hit_z
    sensor = SimpleNamespace(
        cfg=SimpleNamespace(max_distance=max_distance), num_frames=1, num_rays_per_frame=n_rays,
        data=SimpleNamespace(frame_pos_w=frame_pos_w, hit_pos_w=hit_pos_w, distances=distances))
    fn = m.get(ENV_OBS, "height_scan")
    out = fn(make_env({"terrain_scan": sensor}), sensor_name="terrain_scan", offset=0.0)
    return case("height_scan", f"mjlab/{ENV_OBS}: height_scan",
                {"offset": 0.0, "max_distance": max_distance, "num_frames": 1,
                 "num_rays_per_frame": n_rays},
                {"frame_z": frame_z, "hit_z": hit_z, "distances": distances}, out)


def bad_orientation(m):
    limit = math.radians(70.0)
    c = math.cos(limit)
    projected_gravity_b = tensor([
        [0.0, 0.0, -1.0],  # upright
        [0.0, -math.sin(limit), -c],  # exactly at the limit
        [0.0, 0.0, -(c + 1e-12)],  # just inside
        [0.0, 0.0, -(c - 1e-12)],  # just beyond
        [0.0, 0.0, -1.0000001],  # clamped to 1: angle 0
        [0.0, 0.0, 1.0000001],  # clamped to -1: upside down
        [0.0, 0.0, 0.0],  # on its side (90 degrees)
        [0.3, 0.2, -0.5],  # 60 degrees
    ])
    fn = m.get("envs/mdp/terminations.py", "bad_orientation")
    out = fn(make_env(robot(projected_gravity_b=projected_gravity_b)), limit_angle=limit,
             asset_cfg=asset_cfg())
    return case("bad_orientation", "mjlab/envs/mdp/terminations.py: bad_orientation",
                {"limit_angle": limit}, {"projected_gravity": projected_gravity_b},
                out.to(torch.int64))


def wrap_to_pi(m):
    pi = math.pi
    angles = tensor([0.0, pi, -pi, 3 * pi, -3 * pi, 2 * pi, -2 * pi, 7.5, -7.5, 1e-9, -1e-9,
                     5 * pi, pi / 2, -pi / 2, 100.0, -100.0, 2 * pi + 1e-9, -pi - 1e-12])
    out = m.helpers["wrap_to_pi"](angles)
    return case("wrap_to_pi", "mjlab/utils/lab_api/math.py: wrap_to_pi (run eagerly)", {},
                {"angles": angles}, out)


# ---- The twist command ---------------------------------------------------------------------

COMMAND = "tasks/velocity/mdp/velocity_command.py"


def twist_cfg():
    """The "twist" UniformVelocityCommandCfg of make_velocity_env_cfg (velocity_env_cfg.py)."""
    return SimpleNamespace(
        heading_command=True, heading_control_stiffness=0.5, rel_standing_envs=0.1,
        rel_heading_envs=0.3, rel_forward_envs=0.2, rel_world_envs=0.0,
        resampling_time_range=(3.0, 8.0),
        ranges=SimpleNamespace(lin_vel_x=(-1.0, 1.0), lin_vel_y=(-1.0, 1.0),
                               ang_vel_z=(-0.5, 0.5), heading=(-math.pi, math.pi)))


def twist_params(cfg):
    r = cfg.ranges
    return {"lin_vel_x": r.lin_vel_x, "lin_vel_y": r.lin_vel_y, "ang_vel_z": r.ang_vel_z,
            "heading": r.heading, "heading_command": cfg.heading_command,
            "heading_control_stiffness": cfg.heading_control_stiffness,
            "rel_standing_envs": cfg.rel_standing_envs, "rel_heading_envs": cfg.rel_heading_envs,
            "rel_forward_envs": cfg.rel_forward_envs, "rel_world_envs": cfg.rel_world_envs,
            "resampling_time_range": cfg.resampling_time_range}


def command_self(data=None):
    """The UniformVelocityCommand attributes its methods read, as its __init__ makes them."""
    flags = lambda: torch.zeros(B, dtype=torch.bool)  # noqa: E731
    return SimpleNamespace(
        cfg=twist_cfg(), robot=SimpleNamespace(data=data), num_envs=B, device="cpu",
        vel_command_b=torch.zeros(B, 3), vel_command_w=torch.zeros(B, 3),
        heading_target=torch.zeros(B), heading_error=torch.zeros(B),
        is_heading_env=flags(), is_standing_env=flags(), is_world_env=flags(),
        is_forward_env=flags())


def update_command(m):
    """_update_command on a stand-in self; heading_w by mjlab's EntityData.heading_w."""
    yaw_only = lambda yaw: quat_axis_angle([0, 0, 1], yaw)  # noqa: E731
    q = np.asarray([yaw_only(0.0), yaw_only(-3.0), yaw_only(-0.5), yaw_only(0.5), yaw_only(1.0),
                    yaw_only(2.0), quat_axis_angle([0.3, -0.2, 1.0], 2.5),
                    quat_axis_angle([1.0, 0.2, 1.0], 1.4)])
    root_quat_w = tensor(q / np.linalg.norm(q, axis=1, keepdims=True))
    _, forward_vec_b = gravity_and_forward()
    data = m.entity_data_type()(root_link_quat_w=root_quat_w, forward_vec_b=forward_vec_b)
    me = command_self(data)
    # Turning (unclipped), across +-pi, clipped high and low, neither, heading and standing,
    # standing only, tilted heading env.
    me.heading_target = tensor([0.4, 3.0, 2.0, -2.0, 0.3, 1.0, -2.9, -1.0])
    me.is_heading_env = torch.tensor([1, 1, 1, 1, 0, 1, 0, 1], dtype=torch.bool)
    me.is_standing_env = torch.tensor([0, 0, 0, 0, 0, 1, 1, 0], dtype=torch.bool)
    me.vel_command_b = tensor(rng_for("update_command").uniform(-1.0, 1.0, size=(B, 3)))
    inputs = {"vel_command_b": me.vel_command_b.clone(), "heading_target": me.heading_target,
              "is_heading_env": me.is_heading_env, "is_standing_env": me.is_standing_env,
              "is_world_env": me.is_world_env, "root_quat_w": root_quat_w}
    m.get(COMMAND, "_update_command", cls="UniformVelocityCommand")(me)
    return case("update_command", f"mjlab/{COMMAND}: UniformVelocityCommand._update_command "
                "(mjlab/entity/data.py: EntityData.heading_w)", twist_params(me.cfg), inputs,
                {"vel_command_b": me.vel_command_b, "heading_w": data.heading_w,
                 "heading_error": me.heading_error})


def resample_draw_names(m) -> list[str]:
    """What each r.uniform_ call of _resample_command is assigned to, in source order: the
    range it draws from (lin_vel_x, ...) or the flag it sets (is_heading, ...)."""
    fn = m.node(COMMAND, "_resample_command", cls="UniformVelocityCommand")
    draws = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Assign):
            continue
        calls = [c for c in ast.walk(node.value) if isinstance(c, ast.Call)
                 and isinstance(c.func, ast.Attribute) and c.func.attr == "uniform_"]
        if not calls:
            continue
        starred = [a for a in calls[0].args if isinstance(a, ast.Starred)]
        if starred:  # r.uniform_(*self.cfg.ranges.NAME)
            name = starred[0].value.attr
        else:  # self.is_NAME_env[env_ids] = r.uniform_(0.0, 1.0) <= ...
            name = node.targets[0].value.attr.removesuffix("_env")
        draws.append((node.lineno, node.col_offset, name))
    return [name for *_, name in sorted(draws)]


def resample_command(m):
    """_resample_command with scripted uniforms (see _ScriptedUniformTorch)."""
    names = resample_draw_names(m)
    # Per env, the uniforms by draw; float32-representable, or exactly a rel_* threshold
    # (mjlab compares with <=): env 1 forward at u == 0.2 with |vx| < 0.3, env 2 forward with
    # |vx| > 0.3, env 3 a world env at u == 0.0, env 4 a heading env at u == 0 and forward,
    # env 5 forward with vx = 0, env 0 heading at u == 0.3, env 1 standing at u == 0.1.
    by_name = {
        "lin_vel_x": [0.75, 0.5625, 0.125, 0.9375, 0.25, 0.5, 0.65625, 0.0],
        "lin_vel_y": [0.25, 0.875, 0.5, 0.0625, 0.75, 0.34375, 0.5, 0.96875],
        "ang_vel_z": [0.5, 0.125, 0.875, 0.25, 0.0, 0.75, 0.9375, 0.375],
        "heading": [0.25, 0.5, 0.75, 0.125, 0.0, 0.875, 0.625, 0.96875],
        "is_heading": [0.3, 0.3125, 0.125, 0.75, 0.0, 0.5, 0.28125, 0.90625],
        "is_standing": [0.5, 0.1, 0.0625, 0.75, 0.125, 0.09375, 0.5, 0.25],
        "is_world": [0.5, 0.25, 0.75, 0.0, 0.5, 0.625, 0.125, 0.875],
        "is_forward": [0.5, 0.2, 0.125, 0.5, 0.1875, 0.0, 0.25, 0.21875],
    }
    if sorted(names) != sorted(by_name):
        raise LookupError(f"_resample_command draws {names}, expected {sorted(by_name)}")
    scripted = _ScriptedUniformTorch([by_name[n] for n in names])
    me = command_self()
    fn = m.get(COMMAND, "_resample_command", cls="UniformVelocityCommand",
               torch_module=scripted)
    fn(me, torch.arange(B))
    if scripted.used != len(names):
        raise RuntimeError(f"_resample_command drew {scripted.used} times, not {len(names)}")
    params = {**twist_params(me.cfg), "draw_order": names}
    uniforms = [[by_name[n][i] for n in names] for i in range(B)]  # [B, draws]
    return case("resample_command", f"mjlab/{COMMAND}: UniformVelocityCommand._resample_command",
                params, {"uniforms": uniforms},
                {"vel_command_b": me.vel_command_b, "heading_target": me.heading_target,
                 "is_heading_env": me.is_heading_env, "is_standing_env": me.is_standing_env,
                 "is_world_env": me.is_world_env, "is_forward_env": me.is_forward_env})



# ---- Events ------------------------------------------------------------------------------------

EVENTS = "envs/mdp/events.py"


def scripted_sample_uniform(u):
    """sample_uniform(lower, upper, size, device) giving lower + (upper - lower) * u."""
    def sample_uniform(lower, upper, size, device=None):
        assert tuple(size) == tuple(u.shape), (size, u.shape)
        return lower + (upper - lower) * u
    return sample_uniform


def free_base_asset(m, qpos, qvel, default_root_state=None):
    """A floating-base Entity stand-in whose root writes are mjlab's EntityData.write_root_pose
    and write_root_velocity on a qpos [B, 7] / qvel [B, 6] of the free joint alone."""
    data = SimpleNamespace(
        is_fixed_base=False, ROOT_POSE_DIM=7, ROOT_VEL_DIM=6,
        data=SimpleNamespace(qpos=qpos, qvel=qvel),
        indexing=SimpleNamespace(free_joint_q_adr=torch.arange(7),
                                 free_joint_v_adr=torch.arange(6)))
    for name in ("_resolve_env_ids", "write_root_pose", "write_root_velocity"):
        setattr(data, name, types.MethodType(m.get("entity/data.py", name, cls="EntityData"), data))
    # The root link's world-frame velocity as the free joint holds it: linear as is, angular
    # turned from the body frame to the world's. (mjlab computes it from cvel, which at an
    # interval event is one substep older than qvel; the task adds to the current qvel, a
    # difference docs/envs.md lists. This case checks the arithmetic on a given velocity.)
    quat = qpos[:, 3:7]
    vel_w = torch.cat([qvel[:, :3], m.helpers["quat_apply"](quat, qvel[:, 3:6])], dim=-1)
    return SimpleNamespace(
        is_fixed_base=False, is_mocap=False,
        data=SimpleNamespace(default_root_state=default_root_state, root_link_vel_w=vel_w),
        write_root_link_pose_to_sim=lambda pose, env_ids=None: data.write_root_pose(pose, env_ids),
        write_root_link_velocity_to_sim=lambda v, env_ids=None: data.write_root_velocity(v, env_ids))


def event_namespace(m, u):
    """What the exec'd event functions read besides torch: the range sampler (scripted) and
    mjlab's resolve_env_ids and _sample_se3_range, themselves exec'd with it."""
    extra = {"sample_uniform": scripted_sample_uniform(u),
             "_SE3_KEYS": ("x", "y", "z", "roll", "pitch", "yaw")}
    extra["_sample_se3_range"] = m.get(EVENTS, "_sample_se3_range", extra=extra)
    extra["resolve_env_ids"] = m.get(EVENTS, "resolve_env_ids", extra=extra)
    return extra


def reset_root_state_uniform(m):
    """reset_root_state_uniform (mode reset) on a floating base, its draws scripted: the root at
    its default pose offset by (x, y, z) and turned by quat_from_euler_xyz(roll, pitch, yaw) on
    the right, plus the env's origin; the velocity the default's (zero) plus velocity_range's."""
    rng = rng_for("reset_root_state_uniform")
    q = rng.normal(size=(B, 4))
    default_root_state = tensor(np.concatenate(
        [rng.uniform(-0.2, 0.2, size=(B, 2)), rng.uniform(0.25, 0.45, size=(B, 1)),
         q / np.linalg.norm(q, axis=1, keepdims=True), np.zeros((B, 6))], axis=1))
    default_root_state[0, 3:7] = tensor([1.0, 0.0, 0.0, 0.0])  # Go1's default: upright
    origins = tensor(rng.uniform(-20.0, 20.0, size=(B, 3)))
    u = tensor(rng.uniform(0.0, 1.0, size=(B, 6)))
    # mjlab's reset_base range, with a roll and a pitch range added to reach every column.
    pose_range = {"x": (-0.5, 0.5), "y": (-0.5, 0.5), "z": (0.01, 0.05), "roll": (-0.3, 0.2),
                  "pitch": (-0.1, 0.4), "yaw": (-3.14, 3.14)}
    qpos, qvel = torch.zeros(B, 7, dtype=F64), torch.full((B, 6), 7.0, dtype=F64)
    asset = free_base_asset(m, qpos, qvel, default_root_state)
    # Both _sample_se3_range calls (pose, then velocity) draw through the scripted sampler; the
    # velocity range is empty (mjlab's reset_base), so its draw gives zeros whatever u is.
    scene = type("Scene", (SimpleNamespace,), {"__getitem__": lambda self, k: asset})
    env = SimpleNamespace(scene=scene(env_origins=origins), device="cpu", num_envs=B)
    fn = m.get(EVENTS, "reset_root_state_uniform", extra=event_namespace(m, u))
    fn(env, torch.arange(B), pose_range, {})
    return case("reset_root_state_uniform", f"mjlab/{EVENTS}: reset_root_state_uniform "
                "(entity/data.py: EntityData.write_root_pose, write_root_velocity)",
                {"pose_range": pose_range},
                {"default_root_pose": default_root_state[:, :7], "env_origins": origins,
                 "uniforms": u},
                {"qpos": qpos, "qvel": qvel})


def push_by_setting_velocity(m):
    """push_by_setting_velocity (mjlab's push_robot, mode interval), its draws scripted: the root
    link's world-frame velocity plus U(velocity_range), written back (angular in the body
    frame, as a free joint holds it)."""
    rng = rng_for("push_by_setting_velocity")
    q = rng.normal(size=(B, 4))
    qpos = tensor(np.concatenate([rng.uniform(-3.0, 3.0, size=(B, 3)),
                                  q / np.linalg.norm(q, axis=1, keepdims=True)], axis=1))
    qvel = tensor(rng.uniform(-1.5, 1.5, size=(B, 6)))
    u = tensor(rng.uniform(0.0, 1.0, size=(B, 6)))
    velocity_range = {"x": (-0.5, 0.5), "y": (-0.5, 0.5), "z": (-0.4, 0.4),
                      "roll": (-0.52, 0.52), "pitch": (-0.52, 0.52), "yaw": (-0.78, 0.78)}
    inputs = {"root_quat": qpos[:, 3:7].clone(), "qvel": qvel.clone(), "uniforms": u}
    asset = free_base_asset(m, qpos, qvel)
    scene = type("Scene", (SimpleNamespace,), {"__getitem__": lambda self, k: asset})
    env = SimpleNamespace(scene=scene(), device="cpu", num_envs=B)
    fn = m.get(EVENTS, "push_by_setting_velocity", extra=event_namespace(m, u))
    fn(env, torch.arange(B), velocity_range)
    return case("push_by_setting_velocity", f"mjlab/{EVENTS}: push_by_setting_velocity "
                "(entity/data.py: EntityData.write_root_velocity)",
                {"velocity_range": velocity_range}, inputs, {"qvel": qvel})


# ---- The command curriculum ---------------------------------------------------------------

CURRICULUMS = "tasks/velocity/mdp/curriculums.py"
CURRICULUM_STEPS = [0, 1, 49, 50, 99, 100, 119999, 120000, 120001, 239999, 240000, 240001,
                    10**7]


def mjlab_velocity_stages(m) -> list[dict]:
    """The velocity_stages of the "command_vel" curriculum term in make_velocity_env_cfg
    (velocity_env_cfg.py), evaluated from its source (its steps are products like 5000 * 24)."""
    _, tree = m.parsed("tasks/velocity/velocity_env_cfg.py")
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "velocity_stages":
                    return eval(compile(ast.Expression(value), "velocity_stages", "eval"),
                                {"__builtins__": {}})
    raise LookupError("velocity_stages not found in mjlab's velocity_env_cfg.py")


def run_commands_vel(m, stages) -> list[dict]:
    """commands_vel on a stand-in env at each of CURRICULUM_STEPS in turn (its common step
    counter), on one command cfg as mjlab's curriculum manager mutates it: the ranges after."""
    fn = m.get(CURRICULUMS, "commands_vel",
               extra={"cast": lambda _, value: value, "UniformVelocityCommandCfg": object})
    cfg = twist_cfg()
    term = SimpleNamespace(cfg=cfg)
    env = SimpleNamespace(common_step_counter=0,
                          command_manager=SimpleNamespace(get_term=lambda name: term))
    out = []
    for step in CURRICULUM_STEPS:
        env.common_step_counter = step
        fn(env, torch.arange(B), "twist", stages)
        r = cfg.ranges
        out.append({"lin_vel_x": r.lin_vel_x, "lin_vel_y": r.lin_vel_y, "ang_vel_z": r.ang_vel_z})
    return out


def commands_vel(m):
    """mjlab's own stages (its first, at step 0, sets the command's own ranges again)."""
    stages = mjlab_velocity_stages(m)
    return case("commands_vel", f"mjlab/{CURRICULUMS}: commands_vel (stages: "
                "tasks/velocity/velocity_env_cfg.py)",
                {"base": twist_params(twist_cfg()), "stages": stages, "steps": CURRICULUM_STEPS},
                {}, run_commands_vel(m, stages))


def commands_vel_stages(m):
    """Hand-made stages: lin_vel_y set, ranges left None or absent, stages out of step order
    (applied in list order, so the later one wins where both are reached)."""
    stages = [{"step": 100, "lin_vel_x": (-3.0, 3.0), "lin_vel_y": None, "ang_vel_z": (-1.0, 1.0)},
              {"step": 50, "lin_vel_x": (-2.0, 2.5), "lin_vel_y": (-0.25, 0.75)},
              {"step": 120000, "ang_vel_z": (-0.125, 0.25), "lin_vel_x": None}]
    return case("commands_vel_stages", f"mjlab/{CURRICULUMS}: commands_vel",
                {"base": twist_params(twist_cfg()), "stages": stages, "steps": CURRICULUM_STEPS},
                {}, run_commands_vel(m, stages))


CASES = [track_linear_velocity, track_angular_velocity, upright, variable_posture,
         joint_pos_limits, action_rate_l2, feet_air_time, feet_clearance, feet_swing_height,
         feet_slip, soft_landing, self_collision_cost, body_angular_velocity_penalty,
         angular_momentum_penalty, projected_gravity, joint_pos_rel, foot_contact_forces,
         foot_contact, height_scan, bad_orientation, wrap_to_pi, update_command,
         resample_command, reset_root_state_uniform, push_by_setting_velocity, commands_vel,
         commands_vel_stages]


def find_mjlab() -> Path:
    """The installed mjlab package's directory, found without importing it."""
    spec = importlib.util.find_spec("mjlab")
    if spec is None or not spec.submodule_search_locations:
        print(f"mjlab is not installed for {sys.executable}", file=sys.stderr)
        sys.exit(77)
    return Path(list(spec.submodule_search_locations)[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write the JSON here instead of stdout")
    args = parser.parse_args()
    root = find_mjlab()
    try:
        version = importlib.metadata.version("mjlab")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    if version != "1.6.0":
        print(f"warning: mjlab {version} installed; the C++ terms follow 1.6.0", file=sys.stderr)
    m = Mjlab(root)
    doc = {"mjlab_version": version, "cases": [build(m) for build in CASES]}
    text = json.dumps(doc)
    if args.out:
        Path(args.out).write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
