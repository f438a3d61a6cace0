"""Hostile inputs for Myriad's Python API and trainer: bad configs, API misuse, damaged files.

Every case is an input that must be refused. Run as a script, this module runs the cases named
on the command line (a category, or all) in this process and prints one JSON line per case,
preceded by a "start" line, so a parent (tests/python/test_hostile.py) can tell a crash or a
hang (the last case started and never finished) from a refusal:

    {"start": "config/ppo.gamma=1.5"}
    {"case": "config/ppo.gamma=1.5", "verdict": "refused", "type": "ValueError", "message": ...}

Verdicts: "refused" (an allowed error type whose message names what was wrong), "unclear" (an
allowed type, but the message does not name it), "wrong_type" (an exception of another type,
e.g. OverflowError or IndexError leaking out), "accepted" (no error: a silent accept).
"""
from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

import myriad

ALLOWED = (ValueError, TypeError, RuntimeError, FileNotFoundError, IsADirectoryError)

# A tiny valid run: a case mutates one thing of it.
BASE = {
    "env": {"id": "CartPole-v1", "num_envs": 2, "device": "cpu", "options": {},
            "physics": "myriad"},
    "ppo": {"num_steps": 8, "learning_rate": 0.001, "lr_schedule": "linear", "target_kl": 0.01,
            "gamma": 0.99, "gae_lambda": 0.95, "num_minibatches": 2, "update_epochs": 1,
            "clip_coef": 0.2, "clip_vloss": False, "ent_coef": 0.0, "vf_coef": 0.5,
            "max_grad_norm": 0.5, "norm_adv": True, "normalize_obs": True,
            "normalize_reward": False, "obs_clip": 10.0, "reward_clip": 10.0,
            "hidden_sizes": [8], "activation": "tanh", "init_log_std": 0.0},
    "run": {"total_env_steps": 16, "seed": 1, "threads": 1, "learner_threads": 1,
            "eval_episodes": 0, "checkpoint_every": 0, "log_every_seconds": 1.0,
            "stop_when_solved": False, "resume": ""},
    "eval": {"record": False, "record_envs": 1, "record_episodes": 1},
}

NOT_NUMBERS = ['"abc"', "[1, 2]", "{a: 1}", "null", ".nan", ".inf", "-.inf", "1e400", '""',
               "true"]
NOT_INTEGERS = NOT_NUMBERS + ["2.5", "18446744073709551616", "-9223372036854775809", "1e30"]
KEY_VALUES = {}
for key in ("env.num_envs", "ppo.num_steps", "ppo.num_minibatches", "ppo.update_epochs",
            "run.total_env_steps", "eval.record_envs", "eval.record_episodes"):
    KEY_VALUES[key] = NOT_INTEGERS + ["0", "-1"]
for key in ("run.threads", "run.learner_threads", "run.eval_episodes", "run.checkpoint_every"):
    KEY_VALUES[key] = NOT_INTEGERS + ["-1"]
KEY_VALUES["run.seed"] = NOT_INTEGERS + ["-1", "9223372036854775808"]
for key in ("ppo.learning_rate", "ppo.target_kl", "ppo.clip_coef", "ppo.max_grad_norm",
            "ppo.obs_clip", "ppo.reward_clip", "run.log_every_seconds"):
    KEY_VALUES[key] = NOT_NUMBERS + ["0", "-1e-9"]
for key in ("ppo.ent_coef", "ppo.vf_coef"):
    KEY_VALUES[key] = NOT_NUMBERS + ["-0.5"]
for key in ("ppo.gamma", "ppo.gae_lambda"):
    KEY_VALUES[key] = NOT_NUMBERS + ["1.5", "-0.1"]
KEY_VALUES["ppo.init_log_std"] = NOT_NUMBERS
for key in ("ppo.clip_vloss", "ppo.norm_adv", "ppo.normalize_obs", "ppo.normalize_reward",
            "run.stop_when_solved", "eval.record"):
    KEY_VALUES[key] = ['"maybe"', "2", "[true]", "null", "{}", '""']
for key in ("env.device", "ppo.lr_schedule", "ppo.activation", "env.physics"):
    KEY_VALUES[key] = ['"nope"', "[cpu]", "3", "null", '""', "{a: 1}"]
KEY_VALUES["ppo.hidden_sizes"] = ["[]", "[0]", "[-1]", "[2.5]", '["a"]', "64", "[[1]]",
                                  "[1e30]", "null", "{a: 1}"]
KEY_VALUES["env.id"] = ['"NoSuchEnv-v0"', '""', "[1]", "null", "{a: 1}", '"cartpole-v1"']
KEY_VALUES["run.resume"] = ['"/nonexistent/last.pt"', "[1]", "{a: 1}"]
KEY_VALUES["env.options"] = ["{max_episode_steps: 0}", "{max_episode_steps: -1}",
                             "{max_episode_steps: .inf}", "{max_episode_steps: 2.5}",
                             "{max_episode_steps: 1e30}", "{nosuch: 1}", "[1]", '"x"',
                             "{max_episode_steps: .nan}", "{max_episode_steps: abc}"]

# Whole-file damage: YAML syntax, shapes of the document, keys.
TEXTS = {
    "unbalanced_bracket": "env: {id: CartPole-v1\n",
    "tab_indent": "env:\n\tid: CartPole-v1\n",
    "binary_garbage": "\x00\x01\x02\xff\xfe",
    "top_level_list": "- env\n- ppo\n",
    "top_level_scalar": "42\n",
    "group_is_scalar": "env: 3\n",
    "group_is_list": "ppo: [1, 2]\n",
    "unknown_group": "envs: {id: CartPole-v1}\n",
    "unknown_key": "ppo: {gama: 0.9}\n",
    "duplicate_key": "ppo: {gamma: 0.9, gamma: 0.5}\n",
    "duplicate_group": "ppo: {gamma: 0.9}\nppo: {gae_lambda: 0.5}\n",
    "duplicate_option": "env: {options: {max_episode_steps: 5, max_episode_steps: 6}}\n",
    "deep_nesting": "env: " + "[" * 2000 + "]" * 2000 + "\n",
    "deep_mapping": "env: " + "{a: " * 500 + "1" + "}" * 500 + "\n",
    "anchor_bomb": "a: &a [1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\n"
                   "c: &c [*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c]\n"
                   "e: [*d,*d,*d,*d,*d,*d,*d,*d]\n",
    "huge_key": "ppo: {" + "k" * 100000 + ": 1}\n",
    "minibatch_of_one": "env: {num_envs: 2}\nppo: {num_steps: 1, num_minibatches: 2}\n",
    "minibatches_not_dividing": "env: {num_envs: 2}\nppo: {num_steps: 3, num_minibatches: 4}\n",
    "overflowing_batch": "env: {num_envs: 4611686018427387904}\n",
    "batch_beyond_memory": "env: {num_envs: 1000000000}\n",
    "continuous_env_nan_option": "env: {id: Pendulum-v1, options: {g: .nan}}\n",
}


def to_yaml(value) -> str:
    return json.dumps(value)  # JSON is YAML


def config_text(mutated_key=None, literal=None, base=BASE) -> str:
    lines = []
    for group, fields in base.items():
        lines.append(f"{group}:")
        for key, value in fields.items():
            text = literal if f"{group}.{key}" == mutated_key else to_yaml(value)
            lines.append(f"  {key}: {text}")
    return "\n".join(lines) + "\n"


class Case:
    def __init__(self, name, fn, expect):
        self.name, self.fn, self.expect = name, fn, expect


def train_text(text, work: Path):
    path = work / "config.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    return myriad.train(str(path), out=str(work / "run"))


def config_cases():
    cases = []
    for key, literals in KEY_VALUES.items():
        group, field = key.split(".")
        for literal in literals:
            text = config_text(key, literal)
            # The message names the key path (an unknown env id names the valid ones instead).
            expect = re.escape(key) if key != "env.id" else r"env\.id|CartPole-v1"
            if key == "run.resume":
                expect = r"run\.resume|last\.pt|checkpoint"
            if key == "env.options":
                expect = r"env\.options|max_episode_steps|nosuch|option"
            cases.append(Case(f"config/{key}={literal}",
                              lambda work, t=text: train_text(t, work), expect))
    for name, text in TEXTS.items():
        base = config_text()
        # Whole-file texts replace the base, except those that only add to it.
        full = text if name in ("binary_garbage", "top_level_list", "top_level_scalar",
                                "unbalanced_bracket", "tab_indent") else base + text
        cases.append(Case(f"config_text/{name}", lambda work, t=full: train_text(t, work),
                          r"config|YAML|key|twice|env|ppo|must|bytes|overflows|valid|option|g\b"))
    for override, expect in [({"nosuch__key": 1}, "nosuch"), ({"ppo__gamma": "x"}, "ppo.gamma"),
                             ({"run__seed": -5}, "run.seed"), ({"env__num_envs": 0},
                                                               "env.num_envs")]:
        def fn(work, o=override):
            return myriad.train(str(write_base(work)), out=str(work / "run"), **o)
        cases.append(Case(f"override/{override}", fn, re.escape(expect)))
    return cases


def write_base(work: Path) -> Path:
    path = work / "base.yaml"
    path.write_text(config_text())
    return path


def api_cases():
    def make(**kw):
        args = {"env_id": "CartPole-v1", "num_envs": 2, "seed": 0}
        args.update(kw)
        return myriad.make(**args)

    cases = []
    add = lambda name, fn, expect: cases.append(Case(f"api/{name}", lambda work: fn(), expect))
    add("make_unknown_id", lambda: make(env_id="NoSuch-v9"), "CartPole-v1")
    for n in (0, -1, 2**31 + 1, 10**9, 10**30):
        add(f"make_num_envs={n}", lambda n=n: make(num_envs=n), "num_envs|bytes|2\\^31|int")
    for n in (2.5, "4", None, [2]):
        add(f"make_num_envs={n!r}", lambda n=n: make(num_envs=n), "integer|int|index")
    for d in ("tpu", "cuda:99", "cpu:1", "", "CUDA"):
        add(f"make_device={d!r}", lambda d=d: make(device=d), "device|cpu|cuda")
    for s in (-1, 2**63, 2**64, 1.5, "1", True, [1]):
        add(f"make_seed={s!r}", lambda s=s: make(seed=s), "seed")
    for opt, val in (("nosuch", 1), ("max_episode_steps", 0), ("max_episode_steps", 2.5),
                     ("max_episode_steps", float("inf")), ("max_episode_steps", float("nan")),
                     ("max_episode_steps", 1e30), ("max_episode_steps", "x")):
        add(f"make_option_{opt}={val!r}", lambda o=opt, v=val: make(**{o: v}),
            "option|max_episode_steps|nosuch|finite|integer|number")
    add("make_pendulum_g_nan", lambda: make(env_id="Pendulum-v1", g=float("nan")), "finite")
    add("make_pendulum_g_inf", lambda: make(env_id="Pendulum-v1", g=float("inf")), "finite")
    add("make_mjcf_without_xml", lambda: make(env_id="MJCF-v0"), "xml")
    add("make_mjcf_missing_file", lambda: make(env_id="MJCF-v0", xml="/nonexistent.xml"),
        "nonexistent|cannot")

    def step(actions, env_id="CartPole-v1"):
        return make(env_id=env_id, num_envs=3).step(actions)

    for name, actions in [("too_many", np.zeros(4, np.int64)), ("too_few", np.zeros(2, np.int64)),
                          ("2d", np.zeros((3, 2), np.int64)), ("scalar", np.int64(0)),
                          ("floats", np.zeros(3, np.float32)), ("complex", np.zeros(3, complex)),
                          ("strings", np.array(["a", "b", "c"])), ("objects", [None, 1, 2]),
                          ("ragged", [[1], [1, 2], []]), ("none", None),
                          ("big_int64", np.full(3, 2**32, np.int64)),
                          ("negative", np.full(3, -1, np.int32)),
                          ("uint64_max", np.full(3, 2**64 - 1, np.uint64)),
                          ("empty", np.zeros(0, np.int64))]:
        add(f"step_cartpole_{name}", lambda a=actions: step(a),
            "shape|integer|action|dtype|numbers|array|outside|expected|sequence|tensor")
    for name, actions in [("nan", np.full((3, 1), np.nan, np.float32)),
                          ("inf", np.full((3, 1), np.inf, np.float32)),
                          ("ints", np.zeros((3, 1), np.int64)),
                          ("shape", np.zeros((3, 2), np.float32)),
                          ("float16_inf", np.full((3, 1), np.inf, np.float16))]:
        add(f"step_pendulum_{name}", lambda a=actions: step(a, "Pendulum-v1"),
            "finite|float|shape|expected")

    def step_tag(actions, **options):
        return myriad.make("Tag-v0", num_envs=3, seed=0, **options).step(actions)

    for name, actions in [("flat", np.zeros(3, np.int64)), ("too_few_agents", np.zeros((3, 3), np.int64)),
                          ("too_many_agents", np.zeros((3, 5), np.int64)),
                          ("action_5", np.full((3, 4), 5, np.int64)),
                          ("action_negative", np.full((3, 4), -1, np.int8)),
                          ("action_2_32", np.full((3, 4), 2**32, np.int64)),
                          ("floats", np.zeros((3, 4), np.float32))]:
        add(f"step_tag_{name}", lambda a=actions: step_tag(a),
            "shape|outside|integer|expected|action")
    for name, actions in [("nan", np.full((3, 4, 5), np.nan, np.float32)),
                          ("inf", np.full((3, 4, 5), np.inf, np.float32)),
                          ("shape", np.zeros((3, 4), np.float32))]:
        add(f"step_tag_continuous_{name}", lambda a=actions: step_tag(a, continuous=1),
            "finite|shape|expected")
    for opt, val in (("continuous", 2), ("continuous", 0.5), ("local_ratio", 1.5),
                     ("local_ratio", float("nan")), ("nosuch", 1)):
        add(f"make_spread_{opt}={val!r}",
            lambda o=opt, v=val: myriad.make("Spread-v0", num_envs=2, **{o: v}),
            "continuous|local_ratio|nosuch|option|finite")
    for env_id, teams, needle in [("Tag-v0", ["prey"], "no team 'prey'.*adversaries, good"),
                                  ("Sumo-v0", ["wrestler_0", "wrestler_1"], "at least one"),
                                  ("CartPole-v1", ["good"], "single-agent env"),
                                  ("Tag-v0", "good", "expected a list"),
                                  ("Tag-v0", [3], "no team '3'"),
                                  ("Tag-v0", ["good", "good"], "appears twice")]:
        add(f"train_{env_id}_random_teams={teams!r}",
            lambda e=env_id, t=teams: myriad.train(
                {"env": {"id": e, "num_envs": 2}, "agents": {"random_teams": t}},
                out=tempfile.mkdtemp() + "/run"),
            needle)

    def closed(call):
        env = make()
        env.close()
        return call(env)

    add("step_after_close", lambda: closed(lambda e: e.step(np.zeros(2, np.int64))), "closed")
    add("reset_after_close", lambda: closed(lambda e: e.reset()), "closed")
    add("get_state_after_close", lambda: closed(lambda e: e.get_state()), "closed")

    def pending(call):
        env = make()
        env.step_async(np.zeros(2, np.int64))
        try:
            return call(env)
        finally:
            try:
                env.step_wait()
            except Exception:
                pass

    add("step_wait_without_async", lambda: make().step_wait(), "step_async")
    add("async_twice", lambda: pending(lambda e: e.step_async(np.zeros(2, np.int64))),
        "step_wait")
    add("step_while_pending", lambda: pending(lambda e: e.step(np.zeros(2, np.int64))),
        "step_wait")
    add("reset_while_pending", lambda: pending(lambda e: e.reset()), "step_wait")
    add("reset_seed_negative", lambda: make().reset(seed=-1), "seed")
    add("reset_seed_float", lambda: make().reset(seed=0.5), "seed")

    def set_state(state_fn, ids=None):
        env = make(num_envs=3)
        return env.set_state(state_fn(np.array(env.get_state())), ids)

    add("set_state_wrong_rows", lambda: set_state(lambda s: s[:2]), "shape|rows|expected")
    add("set_state_wrong_cols", lambda: set_state(lambda s: s[:, :-1]), "shape|expected")
    add("set_state_ids_out_of_range", lambda: set_state(lambda s: s[:1], [5]),
        "env|range|outside|id")
    add("set_state_ids_negative", lambda: set_state(lambda s: s[:1], [-1]),
        "env|range|outside|id")
    add("set_state_nan", lambda: set_state(lambda s: np.full_like(s, np.nan)), "finite|NaN|nan")
    add("set_state_strings", lambda: set_state(lambda s: np.array([["a"]])),
        "numbers|dtype|shape|expected|convert")
    return cases


def file_cases():
    cases = []

    def write(work, name, data: bytes):
        p = work / name
        p.write_bytes(data)
        return str(p)

    blobs = {"empty": b"", "text": b"hello\n", "zeros": bytes(4096),
             "random": np.random.default_rng(0).bytes(4096), "zip_magic": b"PK\x03\x04" + bytes(64)}
    for name, data in blobs.items():
        cases.append(Case(f"file/load_policy_{name}",
                          lambda work, d=data: myriad.load_policy(write(work, "c.pt", d)),
                          "checkpoint|c.pt|load|file|zip|archive"))
        cases.append(Case(f"file/load_replay_{name}",
                          lambda work, d=data: myriad.load_replay(write(work, "r.replay", d)),
                          "replay|r.replay|magic|header|truncated|file"))
    cases.append(Case("file/load_policy_missing",
                      lambda work: myriad.load_policy(str(work / "none.pt")), "none.pt"))
    cases.append(Case("file/load_policy_directory", lambda work: myriad.load_policy(str(work)),
                      "directory|checkpoint|load|file"))
    cases.append(Case("file/load_replay_missing",
                      lambda work: myriad.load_replay(str(work / "none.replay")), "none.replay"))
    return cases


def checkpoint_cases():
    """Damaged copies of a real checkpoint: every one must be refused (format 3 carries a CRC32C
    of its contents), none loaded as a policy with altered weights."""
    work = Path(tempfile.mkdtemp(prefix="myriad_hostile_ckpt_"))
    atexit.register(shutil.rmtree, work, True)
    myriad.train(str(write_base(work)), out=str(work / "run"), run__checkpoint_every=1)
    good = (work / "run" / "checkpoints" / "last.pt").read_bytes()
    myriad.load_policy(str(work / "run" / "checkpoints" / "last.pt"))  # the original loads
    size = len(good)
    damaged = {}
    for k in range(160):  # one flipped bit at offsets spread over the whole file
        offset = k * (size - 1) // 159
        data = bytearray(good)
        data[offset] ^= 1 << (k % 8)
        damaged[f"bitflip@{offset}"] = bytes(data)
    for k in range(1, 41):  # truncations
        cut = k * size // 41
        damaged[f"truncated@{cut}"] = good[:cut]
    for k, value in enumerate((0x00, 0xFF, 0x7F) * 5):  # bytes set inside the trailer and body
        offset = size - 1 - k if k < 10 else k * 97
        data = bytearray(good)
        if data[offset] == value:
            value ^= 0x01
        data[offset] = value
        damaged[f"byte@{offset}={value:#x}"] = bytes(data)
    for extra in (1, 24, 4096):
        damaged[f"appended{extra}"] = good + bytes(extra)
    damaged["trailer_only"] = good[-24:]
    damaged["doubled"] = good + good

    def load(work, data):
        path = work / "c.pt"
        path.write_bytes(data)
        return myriad.load_policy(str(path))

    return [Case(f"checkpoint/{name}", lambda w, d=data: load(w, d),
                 r"c\.pt|checkpoint|corrupt|truncated|checksum|CRC|format")
            for name, data in damaged.items()]


# A small MJCF model with one actuator: each mjcf_numbers case mutates one attribute of it.
MJCF_BASE = """<mujoco model="hostile">
  <option timestep="0.01" gravity="0 0 -9.81"/>
  <asset>
    <hfield name="bumps" nrow="2" ncol="2" size="1 1 0.1 0.1"/>
    <mesh name="tet" vertex="0 0 0  0.1 0 0  0 0.1 0  0 0 0.1"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="ball" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" armature="0.01" damping="0.1"/>
      <geom name="bob" type="sphere" size="0.1" mass="1"/>
      <site name="eye" zaxis="0 0 -1"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="motor" joint="hinge" gear="1" ctrllimited="true" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
"""

# (case, attribute as written, its replacement, what the message must name: element, attribute).
MJCF_MUTATIONS = [
    ("body_pos_nan", 'name="ball" pos="0 0 1"', 'name="ball" pos="nan 0 1"',
     r"body 'ball'.*: pos = \"nan 0 1\" is not finite"),
    ("geom_mass_nan", 'mass="1"', 'mass="nan"', r"geom 'bob'.*: mass = \"nan\""),
    ("inertial_nan", '<geom name="bob"',
     '<inertial pos="0 0 0" mass="1" diaginertia="nan 1 1"/><geom name="bob"',
     r"inertial .*: diaginertia = \"nan 1 1\""),
    ("gravity_nan", 'gravity="0 0 -9.81"', 'gravity="0 0 nan"', r"option.*: gravity = "),
    ("gravity_huge", 'gravity="0 0 -9.81"', 'gravity="0 0 -1e300"', r"option: gravity = "),
    ("timestep_nan", 'timestep="0.01"', 'timestep="nan"', r"option.*: timestep = \"nan\""),
    ("timestep_negative", 'timestep="0.01"', 'timestep="-0.01"',
     r"option: timestep = \"-0.01\" is out of range"),
    ("timestep_zero", 'timestep="0.01"', 'timestep="0"', r"option: timestep = "),
    ("timestep_inf", 'timestep="0.01"', 'timestep="inf"', r"option: timestep = "),
    ("timestep_1e-300", 'timestep="0.01"', 'timestep="1e-300"', r"option: timestep = "),
    ("timestep_10s", 'timestep="0.01"', 'timestep="10"', r"option: timestep = "),
    ("sphere_size_1e308", 'type="sphere" size="0.1"', 'type="sphere" size="1e308"',
     r"geom 'bob' \(sphere, body 'ball'\): size = \"1e\+308 0 0\" is out of range"),
    ("sphere_size_inf", 'type="sphere" size="0.1"', 'type="sphere" size="inf"',
     r"geom 'bob' \(sphere, body 'ball'\): size = "),
    ("armature_1e308", 'armature="0.01"', 'armature="1e308"',
     r"joint 'hinge'.*: armature = \"1e\+308\" is out of range"),
    ("armature_nan", 'armature="0.01"', 'armature="nan"', r"joint 'hinge'.*: armature = "),
    ("damping_inf", 'damping="0.1"', 'damping="inf"', r"joint 'hinge'.*: damping = "),
    ("damping_negative", 'damping="0.1"', 'damping="-5"', r"joint 'hinge'.*: damping = "),
    ("stiffness_nan", 'damping="0.1"', 'damping="0.1" stiffness="nan"',
     r"joint 'hinge'.*: stiffness = "),
    ("joint_range_nan", 'damping="0.1"', 'damping="0.1" limited="true" range="-1 nan"',
     r"joint 'hinge'.*: range = "),
    ("friction_nan", 'mass="1"', 'mass="1" friction="nan 0.005 0.0001"',
     r"geom 'bob'.*: friction = "),
    ("margin_inf", 'mass="1"', 'mass="1" margin="inf"', r"geom 'bob'.*: margin = "),
    ("solref_nan", 'mass="1"', 'mass="1" solref="nan 1"', r"geom 'bob'.*: solref = "),
    ("solimp_inf", 'mass="1"', 'mass="1" solimp="0.9 0.95 inf"', r"geom 'bob'.*: solimp = "),
    ("body_quat_nan", 'name="ball" pos="0 0 1"', 'name="ball" pos="0 0 1" quat="nan 0 0 1"',
     r"body 'ball'.*: quat = "),
    ("ctrlrange_nan", 'ctrlrange="-1 1"', 'ctrlrange="-1 nan"',
     r"(motor|actuator) 'motor'.*: ctrlrange = "),
    ("gear_1e300", 'gear="1"', 'gear="1e300"', r"actuator 'motor': gear = "),
    ("wind_nan", 'gravity="0 0 -9.81"', 'gravity="0 0 -9.81" wind="nan 0 0"',
     r"option.*: wind = "),
    ("magnetic_inf", 'gravity="0 0 -9.81"', 'gravity="0 0 -9.81" magnetic="0 inf 0"',
     r"option: magnetic = "),
    # Files a model names that are not there, and scene edits that do not apply: named.
    ("mesh_missing", '<worldbody>',
     '<asset><mesh name="skin" file="no_such_mesh.stl"/></asset><worldbody>',
     r"no_such_mesh\.stl"),
    ("include_missing", '<worldbody>', '<include file="no_such_part.xml"/><worldbody>',
     r"no_such_part\.xml"),
    ("mjlab_file_missing", '<worldbody>',
     '<asset><model name="r" file="mjlab:asset_zoo/robots/no_such_robot.xml"/></asset><worldbody>',
     r"mjlab:asset_zoo/robots/no_such_robot\.xml"),
    ("scene_edit_matches_nothing", '<worldbody>',
     '<custom><numeric name="myriad:geom condim no_such_geom" data="3"/></custom><worldbody>',
     r"myriad:geom condim no_such_geom.*no geom name matches"),
    ("scene_edit_unknown_attribute", '<worldbody>',
     '<custom><numeric name="myriad:joint mass hinge" data="3"/></custom><worldbody>',
     r"joint attribute 'mass' \(valid: armature"),
    ("implicit_integrator", 'timestep="0.01"', 'timestep="0.01" integrator="implicit"',
     r"implicit integrator \(use implicitfast"),
    ("mesh_colliding", 'type="sphere" size="0.1"', 'type="mesh" mesh="tet"',
     r"mesh collisions \(geom 'bob'"),
    ("hfield_mesh", '<geom name="floor" type="plane" size="5 5 0.1"/>',
     '<geom name="ground" type="hfield" hfield="bumps"/><body name="rock" pos="0 0 0.5">'
     '<freejoint/><geom name="rock" type="mesh" mesh="tet"/></body>',
     r"mesh collisions \(geom 'rock' with height field 'ground'"),
    ("nativeccd_disabled", '<worldbody>',
     '<option><flag nativeccd="disable"/></option><worldbody><body name="drum" pos="0 0 2">'
     '<freejoint/><geom name="drum" type="ellipsoid" size="0.1 0.1 0.2"/></body>',
     r"nativeccd disabled with GJK/EPA collisions \(geoms 'bob' and 'drum'"),
    ("hfield_file_missing", '<worldbody>',
     '<asset><hfield name="terrain" file="no_such_terrain.png" size="1 1 0.1 0.1"/></asset>'
     '<worldbody>', r"no_such_terrain\.png"),
    ("rangefinder_point_normal", '</worldbody>',
     '</worldbody><sensor><rangefinder name="range" site="eye" data="point normal"/></sensor>',
     r"rangefinder data other than dist or depth \(sensor 'range'"),
    ("hfield_one_row", '<hfield name="bumps" nrow="2" ncol="2"',
     '<hfield name="bumps" nrow="1" ncol="3"',
     r"fewer than 2 rows or columns \(hfield 'bumps' is 1 x 3\)"),
    ("rangefinder_sees_mesh", '</worldbody>',
     '<geom name="shell" type="mesh" mesh="tet" contype="0" conaffinity="0"/></worldbody>'
     '<sensor><rangefinder name="range" site="eye"/></sensor>',
     r"rangefinder sensors in a model with visible mesh geoms \(sensor 'range', geom \d+ "
     r"'shell', mesh 'tet'"),
    # Reversed ranges: libmujoco's own compile errors, which name the element, reach the user.
    ("ctrlrange_reversed", 'ctrlrange="-1 1"', 'ctrlrange="1 -1"',
     r"invalid control range for actuator[\s\S]*'motor'"),
    ("joint_range_reversed", 'damping="0.1"', 'damping="0.1" limited="true" range="1 -1"',
     r"range\[0\] should be smaller than range\[1\] in joint[\s\S]*'hinge'"),
]


def mjcf_number_cases():
    """Issue 34's MJCF numbers: non-finite or absurd values are refused at import on both physics
    backends and by train, naming the element and the attribute; a model without actuators is
    refused by train at config time (never SIGFPE)."""
    cases = []

    def write(work, text):
        path = work / "model.xml"
        path.write_text(text)
        return str(path)

    for name, old, new, expect in MJCF_MUTATIONS:
        assert old in MJCF_BASE, name
        text = MJCF_BASE.replace(old, new, 1)
        for physics in ("myriad", "mujoco"):
            cases.append(Case(f"mjcf_numbers/make_{name}_{physics}",
                              lambda work, t=text, p=physics: myriad.make(
                                  "MJCF-v0", num_envs=2, seed=0, xml=write(work, t), physics=p),
                              expect))
    for name in ("timestep_negative", "body_pos_nan", "sphere_size_1e308"):
        old, new, expect = next((o, n, e) for c, o, n, e in MJCF_MUTATIONS if c == name)
        text = MJCF_BASE.replace(old, new, 1)
        cases.append(Case(f"mjcf_numbers/train_{name}",
                          lambda work, t=text: myriad.train(
                              {"env": {"id": "MJCF-v0", "num_envs": 2, "xml": write(work, t)},
                               "run": {"total_env_steps": 64}}, out=str(work / "run")),
                          expect))
    for physics in ("myriad", "mujoco"):
        cases.append(Case(f"mjcf_numbers/make_unknown_keyframe_{physics}",
                          lambda work, p=physics: myriad.make(
                              "MJCF-v0", num_envs=2, seed=0, xml=write(work, MJCF_BASE),
                              physics=p, keyframe="crouch"),
                          r"keyframe.*no keyframe 'crouch' in the model \(it has none\)"))
    no_actuators = MJCF_BASE[:MJCF_BASE.index("  <actuator>")] + "</mujoco>\n"
    for physics in ("myriad", "mujoco"):
        cases.append(Case(f"mjcf_numbers/train_no_actuators_{physics}",
                          lambda work, p=physics: myriad.train(
                              {"env": {"id": "MJCF-v0", "num_envs": 2, "physics": p,
                                       "xml": write(work, no_actuators)},
                               "run": {"total_env_steps": 64}}, out=str(work / "run")),
                          r"model\.xml.*has no actuators"))
    return cases


CATEGORIES = {"config": config_cases, "api": api_cases, "file": file_cases,
              "checkpoint": checkpoint_cases, "mjcf_numbers": mjcf_number_cases}


def classify(case: Case, error: BaseException | None) -> dict:
    if error is None:
        return {"verdict": "accepted"}
    message = str(error)
    allowed = isinstance(error, ALLOWED) or type(error).__name__ == "ReplayError"
    if not allowed:
        return {"verdict": "wrong_type", "type": type(error).__name__, "message": message[:300],
                "trace": traceback.format_exception(error)[-3:]}
    verdict = "refused" if re.search(case.expect, message, re.IGNORECASE) else "unclear"
    return {"verdict": verdict, "type": type(error).__name__, "message": message[:300]}


def main(argv):
    names = argv or list(CATEGORIES)
    for category in names:
        for case in CATEGORIES[category]():
            print(json.dumps({"start": case.name}), flush=True)
            with tempfile.TemporaryDirectory() as tmp:
                start = time.monotonic()
                error = None
                try:
                    case.fn(Path(tmp))
                except BaseException as e:  # noqa: BLE001 (KeyboardInterrupt too: a verdict)
                    error = e
                result = {"case": case.name, **classify(case, error),
                          "seconds": round(time.monotonic() - start, 3)}
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("MYRIAD_QUIET", "1")
    main(sys.argv[1:])
