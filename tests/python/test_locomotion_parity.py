"""Gymnasium's MuJoCo v5 locomotion envs: Myriad's batched versions against Gymnasium's own.

tests/envs/locomotion_reference.py runs Gymnasium's envs (MuJoCo's Python package, `mujoco`)
in a subprocess, so that MuJoCo's Python module and Myriad's never share a process, and writes
per env: metadata, K state-given transitions (a_*) and one free-running segment (b_*); see
its docstring. These tests skip, naming the reason, when that recorder cannot run (no mujoco
or Gymnasium in the venv; scripts/install-deps.sh installs them).

Both of Myriad's backends are tested: physics="mujoco" (Debian's libmujoco 2.2.2) and
physics="myriad" at precision=64.

Tolerances. An element a of Myriad's output passes against Gymnasium's r when
    |a - r| <= rtol * |r| + scale * S + atol,
where S is the largest |r| of the same quantity (the same observation component or info key,
over all samples / steps), so that a component that is near 0 in one sample but large in
others is judged on its own scale (Ant's and Humanoid's cfrc_ext observations share one S,
see obs_scale). Measured (mujoco 2.3.3 recording; Myriad's MJCF-v0 loading
Gymnasium's XML files, the same engines that back these envs, and Gymnasium re-run with the
solver changes below):
  - libmujoco 2.2.2 against mujoco 2.3.3 (and 2.3.1, 2.3.2): the free segments are bit
    identical for all 8 envs; a state-given step differs by <= 1e-13 relative (the
    constraint solver's warm start differs), except Humanoid, below.
  - physics="myriad" at 64 bits: <= 1e-12 of S in every state-given step but Humanoid's.
  - Humanoid uses MuJoCo's PGS solver, which stops before it converges, so its result depends
    on where it starts (qacc_warmstart, which set_state does not set): between a cold start
    and a warm one, its contact forces (cfrc_ext in the obs, up to ~2.4e3) move by 1e-4 (4e-8
    of S) and qvel by 6e-7 (2e-8 of S). Myriad's own physics solves PGS models with Newton
    (converged): cfrc_ext then differs by 7.6e-3 (3e-6 of S), qvel by 3.4e-5 (1.3e-6 of S),
    the reward by 1.4e-6 relative.
Hence rtol = 1e-6 everywhere (Myriad returns obs and rewards as float32: rounding is 6e-8 of
the value), scale = 1e-8 (>= 1e4 times what was measured), and for Humanoid scale = 1e-6 with
physics="mujoco" (25x its warm-start spread) and 2e-5 with physics="myriad" (6x the Newton/PGS
gap). atol = 1e-9 for quantities that are 0 everywhere.

The free-running segment sets the state once and then steps; differences grow (contacts make
the dynamics chaotic: 1e-15 at step 1 grew to 1e-8 by step 50 in HalfCheetah), so at step t
(1-based) the tolerance above is multiplied by 10 ** (t / 20): 3.2x at step 10, 316x at step
50. Ant's and Humanoid's forward rewards use body positions that lag qpos by one physics
substep after mj_step (see docs/architecture.md, "Physics envs"); the state-given steps set the
state (mj_forward: current positions) before every step on both sides, and the free segment
keeps the lag on both sides, so both must agree without special cases.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import myriad

SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", Path(__file__).resolve().parents[2]))
RECORDER = SRC / "tests/envs/locomotion_reference.py"

ENV_IDS = [
    "Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Ant-v5", "Humanoid-v5",
    "InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Reacher-v5",
]
PHYSICS = ["mujoco", "myriad"]
SAMPLES = 64  # state-given transitions per env
STEPS = 50  # free-running steps
SEED = 0

# Envs with a floor, where the sampled states must include contacts.
FLOOR = {"Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Ant-v5", "Humanoid-v5"}
# Where the obs holds cfrc_ext (Ant: 27 + 13 x 6 = 105; Humanoid: last 13 x 6 of 348).
CFRC_EXT = {"Ant-v5": slice(27, 105), "Humanoid-v5": slice(270, 348)}
# Per-env reset noise (Gymnasium 1.4's defaults) and the law of qvel's noise (each
# reset_model read: HalfCheetah, Ant and InvertedDoublePendulum draw standard normals).
RESET_NOISE = {
    "Hopper-v5": (5e-3, "uniform"),
    "HalfCheetah-v5": (0.1, "normal"),
    "Walker2d-v5": (5e-3, "uniform"),
    "Ant-v5": (0.1, "normal"),
    "Humanoid-v5": (1e-2, "uniform"),
    "InvertedPendulum-v5": (0.01, "uniform"),
    "InvertedDoublePendulum-v5": (0.1, "normal"),
    # Reacher-v5: special (see test_reset_distribution).
}
MAX_EPISODE_STEPS = {env_id: 1000 for env_id in ENV_IDS} | {"Reacher-v5": 50}

RTOL = 1e-6
ATOL = 1e-9
SCALE = {"mujoco": 1e-8, "myriad": 1e-8}
SCALE_HUMANOID = {"mujoco": 1e-6, "myriad": 2e-5}
GROWTH_STEPS = 20  # the free segment's tolerance grows 10x every GROWTH_STEPS steps


def make_env(env_id, physics, num_envs, copy=True):
    options = {"precision": 64} if physics == "myriad" else {}
    return myriad.make(env_id, num_envs=num_envs, seed=SEED, copy=copy, physics=physics,
                       **options)


def scale_of(env_id, physics):
    return (SCALE_HUMANOID if env_id == "Humanoid-v5" else SCALE)[physics]


# -- The reference -----------------------------------------------------------------------------

_cache = {}


@pytest.fixture(scope="session")
def reference(tmp_path_factory, plain_subprocess_env):
    """reference(env_id): the recorder's arrays for env_id (recorded once per session)."""
    def get(env_id):
        if env_id not in _cache:
            out = tmp_path_factory.mktemp("locomotion") / f"{env_id}.npz"
            cmd = [sys.executable, str(RECORDER), env_id, str(out), "--samples", str(SAMPLES),
                   "--steps", str(STEPS), "--seed", str(SEED)]
            # No path to myriad in the recorder's process: Gymnasium + mujoco only.
            proc = subprocess.run(cmd, env=plain_subprocess_env, capture_output=True, text=True,
                                  timeout=600)
            if proc.returncode == 77:
                _cache[env_id] = ("skip", proc.stderr.strip())
            elif proc.returncode != 0:
                _cache[env_id] = ("fail", f"{' '.join(cmd)} exited {proc.returncode}:\n"
                                          f"{proc.stderr[-4000:]}")
            else:
                with np.load(out) as f:
                    _cache[env_id] = ("ok", {k: f[k] for k in f.files})
        status, value = _cache[env_id]
        if status == "skip":
            pytest.skip(f"Gymnasium's MuJoCo envs cannot run (the recorder exited 77): {value}")
        if status == "fail":
            pytest.fail(f"the reference recorder failed: {value}")
        return value
    return get


def info_keys(ref):
    return [str(k) for k in ref["meta_info_keys"]]


def check_reference(env_id, ref):
    """The recording itself is what the test needs (nothing compared vacuously)."""
    k = len(ref["a_reward"])
    assert k == SAMPLES, f"{env_id}: the recorder wrote {k} state-given samples, not {SAMPLES}"
    nq, nv, nu = int(ref["meta_nq"]), int(ref["meta_nv"]), int(ref["meta_nu"])
    assert ref["a_qpos"].shape == (k, nq) and ref["a_qvel"].shape == (k, nv)
    assert ref["a_action"].shape == (k, nu)
    assert ref["a_obs"].shape == (k, *ref["meta_obs_shape"])
    assert info_keys(ref), f"{env_id}: Gymnasium's step info is empty"
    for key in info_keys(ref):
        assert ref[f"a_info_{key}"].shape[0] == k, key
        assert ref[f"b_info_{key}"].shape[0] == len(ref["b_reward"]), key
    # The states must be varied (not k copies of the reset state).
    assert np.ptp(ref["a_qvel"], axis=0).max() > 0.1, f"{env_id}: the sampled states hardly vary"
    if env_id in FLOOR:
        # Random actions keep Ant hopping and Humanoid falling: with the recorder's seed 0,
        # 12 (Ant) and 16 (Humanoid) of 64 steps end in contact, 25 to 50 in the others.
        with_contacts = int((ref["a_ncon"] > 0).sum())
        assert with_contacts >= k // 8, \
            f"{env_id}: only {with_contacts} of {k} sampled steps end with contacts"
    if env_id in CFRC_EXT:
        nonzero = int(np.count_nonzero(ref["a_obs"][:, CFRC_EXT[env_id]]))
        assert nonzero >= k, \
            f"{env_id}: only {nonzero} nonzero contact-force entries in {k} sampled observations"
    n = len(ref["b_reward"])
    assert n >= 5, f"{env_id}: the free segment ended after {n} steps"


# -- Comparison --------------------------------------------------------------------------------

def obs_scale(env_id, expected):
    """S per obs component; one S for all of cfrc_ext (Ant, Humanoid): the contact forces are
    solved together, so a solver's error scales with the largest of them, not with each body's
    own (Humanoid with physics="myriad", Newton for PGS: 3.6e-3 on a component whose largest
    value is 6.2, while cfrc_ext reaches 2.4e3)."""
    s = np.abs(expected).max(axis=0, keepdims=True)
    if env_id in CFRC_EXT:
        block = CFRC_EXT[env_id]
        s[:, block] = s[:, block].max()
    return s


def reward_term_rounding(ref, prefix):
    """Per step: float32 rounding of the reward's terms. Gymnasium computes the control cost
    from the float32 action in float32 (numpy keeps float32 * Python float in float32), so a
    reward near 0 made of terms near 1 carries ~1e-7 of their size (Ant, seed 0, sample 40:
    reward -0.0073, terms ~1, |diff| 1.1e-7). 2**-21 (4.8e-7) of the sum of |terms| bounds
    the rounding of a float32 sum of up to 17 squares (Humanoid's actuators)."""
    keys = [k for k in info_keys(ref) if k.startswith("reward_")]
    assert keys, "Gymnasium's info has no reward_* terms"
    return 2.0 ** -21 * sum(np.abs(ref[prefix + k]) for k in keys)


def assert_close(what, actual, expected, scale, growth=None, s=None, extra=0.0):
    """Elementwise |a - r| <= RTOL |r| + scale S + ATOL + extra (S: the quantity's largest |r|
    over axis 0, unless given); growth [len] multiplies the tolerance of each row (the free
    segment)."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, \
        f"{what}: shape {actual.shape}, Gymnasium's {expected.shape}"
    assert np.isfinite(actual).all(), f"{what}: non-finite values {actual}"
    if s is not None:
        pass
    elif expected.ndim <= 1:  # one value per sample / step
        s = np.abs(expected).max(initial=0.0)
    else:  # per component
        s = np.abs(expected).max(axis=0, keepdims=True, initial=0.0)
    tol = RTOL * np.abs(expected) + scale * s + ATOL + extra
    if growth is not None:
        tol = tol * growth.reshape((-1,) + (1,) * (expected.ndim - 1))
    err = np.abs(actual - expected)
    bad = err > tol
    if bad.any():
        idx = np.unravel_index(np.argmax(err / tol), err.shape)
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {bad.size} values off; worst at {idx}: myriad "
            f"{actual[idx]!r}, gymnasium {expected[idx]!r}, |diff| {err[idx]:.3g} > tol "
            f"{tol[idx]:.3g} (rtol {RTOL}, scale {scale} x {np.broadcast_to(s, err.shape)[idx]:.3g}"
            f", atol {ATOL})")


def state_rows(time, qpos, qvel):
    return np.concatenate([np.reshape(time, (-1, 1)), qpos, qvel], axis=1).astype(np.float64)


def check_info(what, info, ref, prefix, rows, scale, growth=None):
    missing = [k for k in info_keys(ref) if k not in info]
    assert not missing, f"{what}: info lacks Gymnasium's keys {missing} (has {sorted(info)})"
    for key in info_keys(ref):
        assert_close(f"{what} info[{key!r}]", np.asarray(info[key])[rows], ref[prefix + key],
                     scale, growth)


# -- Tests -------------------------------------------------------------------------------------

@pytest.mark.parametrize("physics", PHYSICS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_metadata(env_id, physics, reference):
    ref = reference(env_id)
    env = make_env(env_id, physics, 2)
    obs_shape = tuple(int(x) for x in ref["meta_obs_shape"])
    assert env.single_observation_space.shape == obs_shape
    assert env.spec["observation_space"]["shape"] == list(obs_shape)
    assert env.single_action_space.shape == ref["meta_action_low"].shape
    np.testing.assert_array_equal(env.single_action_space.low, ref["meta_action_low"])
    np.testing.assert_array_equal(env.single_action_space.high, ref["meta_action_high"])
    assert int(ref["meta_max_episode_steps"]) == MAX_EPISODE_STEPS[env_id]
    assert env.spec["max_episode_steps"] == MAX_EPISODE_STEPS[env_id]
    assert env.spec["physics_env"] is True
    obs, _ = env.reset(seed=0)
    assert obs.shape == (2, *obs_shape) and obs.dtype == np.float32
    state = env.get_state()
    nq, nv = int(ref["meta_nq"]), int(ref["meta_nv"])
    assert state.shape == (2, 1 + nq + nv) and state.dtype == np.float64
    assert env.spec["dt"] == pytest.approx(float(ref["meta_dt"]), rel=1e-12)


@pytest.mark.parametrize("physics", PHYSICS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_state_given_steps(env_id, physics, reference):
    """Set each recorded state, step the recorded action: obs, reward, terminated, info."""
    ref = reference(env_id)
    check_reference(env_id, ref)
    k = SAMPLES
    nq = int(ref["meta_nq"])
    scale = scale_of(env_id, physics)
    env = make_env(env_id, physics, k)
    env.reset(seed=0)
    env.set_state(state_rows(ref["a_time"], ref["a_qpos"], ref["a_qvel"]))
    obs, reward, terminated, truncated, info = env.step(ref["a_action"])
    what = f"{env_id} ({physics}) state-given step"
    np.testing.assert_array_equal(terminated, ref["a_terminated"], err_msg=f"{what}: terminated")
    assert not np.asarray(truncated).any(), f"{what}: truncated after one step"
    done = np.asarray(terminated, dtype=bool)
    # Myriad resets ended episodes in the same step: their obs is in final_obs.
    step_obs = np.where(done[:, None], info["final_obs"], obs)
    assert_close(f"{what} obs", step_obs, ref["a_obs"], scale,
                 s=obs_scale(env_id, ref["a_obs"]))
    assert_close(f"{what} reward", reward, ref["a_reward"], scale,
                 extra=reward_term_rounding(ref, "a_info_"))
    check_info(what, info, ref, "a_info_", slice(None), scale)
    # The state after the step, where the env was not reset.
    live = ~done
    state = env.get_state()
    assert_close(f"{what} qpos after", state[live, 1:1 + nq], ref["a_qpos_after"][live], scale)
    assert_close(f"{what} qvel after", state[live, 1 + nq:], ref["a_qvel_after"][live], scale)


@pytest.mark.parametrize("physics", PHYSICS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_free_running_segment(env_id, physics, reference):
    """Set the state after Gymnasium's reset once, then step the recorded actions."""
    ref = reference(env_id)
    check_reference(env_id, ref)
    nq = int(ref["meta_nq"])
    scale = scale_of(env_id, physics)
    what = f"{env_id} ({physics}) free segment"
    env = make_env(env_id, physics, 1, copy=False)
    obs_view, _ = env.reset(seed=0)
    env.set_state(state_rows(ref["b_reset_time"], ref["b_reset_qpos"][None],
                             ref["b_reset_qvel"][None]))
    # set_state recomputes the observation in place (the view reset returned).
    assert_close(f"{what} obs after set_state", np.array(obs_view[0]), ref["b_reset_obs"], scale,
                 s=obs_scale(env_id, ref["b_obs"])[0])
    rows = {k: [] for k in ("obs", "reward", "terminated", "truncated", "qpos", "qvel")}
    infos = {k: [] for k in info_keys(ref)}
    n = len(ref["b_reward"])
    for t in range(n):
        obs, reward, terminated, truncated, info = env.step(ref["b_actions"][t][None])
        done = bool(terminated[0]) or bool(truncated[0])
        rows["obs"].append(np.array(info["final_obs"][0] if done else obs[0], dtype=np.float64))
        rows["reward"].append(float(reward[0]))
        rows["terminated"].append(bool(terminated[0]))
        rows["truncated"].append(bool(truncated[0]))
        state = env.get_state()[0]
        rows["qpos"].append(state[1:1 + nq].copy())
        rows["qvel"].append(state[1 + nq:].copy())
        missing = [k for k in infos if k not in info]
        assert not missing, f"{what}: info lacks Gymnasium's keys {missing} (has {sorted(info)})"
        for key in infos:
            infos[key].append(np.array(np.asarray(info[key])[0], dtype=np.float64))
    growth = 10.0 ** (np.arange(1, n + 1) / GROWTH_STEPS)
    np.testing.assert_array_equal(rows["terminated"], ref["b_terminated"],
                                  err_msg=f"{what}: terminated per step")
    np.testing.assert_array_equal(rows["truncated"], ref["b_truncated"],
                                  err_msg=f"{what}: truncated per step")
    assert_close(f"{what} obs", np.array(rows["obs"]), ref["b_obs"], scale, growth,
                 s=obs_scale(env_id, ref["b_obs"]))
    assert_close(f"{what} reward", np.array(rows["reward"]), ref["b_reward"], scale, growth,
                 extra=reward_term_rounding(ref, "b_info_")[:n])
    for key, values in infos.items():
        assert_close(f"{what} info[{key!r}]", np.array(values), ref[f"b_info_{key}"], scale,
                     growth)
    # The state after each step, but the last if the episode ended there (reset by then).
    live = n - 1 if ref["b_terminated"][-1] or ref["b_truncated"][-1] else n
    assert_close(f"{what} qpos", np.array(rows["qpos"])[:live], ref["b_qpos_after"][:live], scale,
                 growth[:live])
    assert_close(f"{what} qvel", np.array(rows["qvel"])[:live], ref["b_qvel_after"][:live], scale,
                 growth[:live])


def check_uniform(what, x, c):
    """x [N, k]: each column uniform on [-c, c]."""
    assert np.abs(x).max() <= c * (1 + 1e-9), f"{what}: |noise| {np.abs(x).max()} > {c}"
    assert np.abs(x).max(axis=0).min() > 0.95 * c, f"{what}: noise does not reach +-{c}"
    n = x.shape[0]
    std = c / np.sqrt(3)
    np.testing.assert_array_less(np.abs(x.mean(axis=0)), 5 * std / np.sqrt(n),
                                 err_msg=f"{what}: mean")
    np.testing.assert_allclose(x.std(axis=0), std, rtol=0.05, err_msg=f"{what}: std (uniform)")


def check_normal(what, x, c):
    """x [N, k]: each column c times a standard normal."""
    n = x.shape[0]
    np.testing.assert_array_less(np.abs(x.mean(axis=0)), 5 * c / np.sqrt(n),
                                 err_msg=f"{what}: mean")
    np.testing.assert_allclose(x.std(axis=0), c, rtol=0.05, err_msg=f"{what}: std (normal)")
    # Unlike a uniform law, about 31.7% of the draws lie beyond one std.
    beyond = (np.abs(x) > c).mean(axis=0)
    assert ((beyond > 0.28) & (beyond < 0.36)).all(), \
        f"{what}: share beyond {c}: {beyond} (a normal law gives 0.317)"


@pytest.mark.parametrize("physics", PHYSICS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_distribution(env_id, physics, reference):
    ref = reference(env_id)
    if physics == "mujoco":
        # Resets are drawn by the env code both sims share (Philox per env index), so
        # physics="mujoco" must start where physics="myriad" does; the law itself is checked
        # on "myriad". Few envs: one libmujoco mjData holds its whole arena (Humanoid's
        # ~5.7 MB: 4096 of them took 23 GB and the OOM killer ended the suite).
        n = 64
        env = make_env(env_id, "mujoco", n)
        env.reset(seed=1)
        mine = make_env(env_id, "myriad", n)
        mine.reset(seed=1)
        np.testing.assert_allclose(env.get_state(), mine.get_state(), rtol=0, atol=1e-12,
                                   err_msg=f"{env_id}: reset(seed=1) on mujoco and myriad")
        return
    n = 4096
    env = make_env(env_id, physics, n)
    env.reset(seed=1)
    state = env.get_state()
    nq, nv = int(ref["meta_nq"]), int(ref["meta_nv"])
    assert state.shape == (n, 1 + nq + nv) and state.dtype == np.float64
    init_qpos, init_qvel = ref["meta_init_qpos"], ref["meta_init_qvel"]
    np.testing.assert_array_equal(init_qpos, ref["meta_qpos0"])
    assert not init_qvel.any()
    dq = state[:, 1:1 + nq] - init_qpos
    dv = state[:, 1 + nq:] - init_qvel
    what = f"{env_id} ({physics}) reset(seed=1)"
    if env_id == "Reacher-v5":
        # Arm angles uniform +-0.1; the goal (the last 2 qpos) uniform in the disk of radius
        # 0.2 (rejection sampling); arm velocities uniform +-0.005; the goal's velocity 0.
        check_uniform(f"{what} qpos[:2]", dq[:, :2], 0.1)
        goal = state[:, 1 + nq - 2:1 + nq]
        r2 = (goal ** 2).sum(axis=1)
        assert r2.max() < 0.04, f"{what}: goal outside the disk of radius 0.2"
        # Uniform in a disk: E[r^2] = R^2 / 2, and each coordinate has mean 0, std R / 2.
        assert abs(r2.mean() - 0.02) < 0.02 * 0.05, f"{what}: E|goal|^2 {r2.mean()} != 0.02"
        np.testing.assert_allclose(goal.std(axis=0), 0.1, rtol=0.05, err_msg=f"{what}: goal")
        assert r2.max() > 0.04 * 0.95, f"{what}: goals do not reach the disk's edge"
        check_uniform(f"{what} qvel[:2]", dv[:, :2], 0.005)
        assert not dv[:, 2:].any(), f"{what}: the goal's velocity is not 0"
        return
    c, qvel_law = RESET_NOISE[env_id]
    assert float(ref["meta_reset_noise_scale"]) == c, \
        f"{env_id}: Gymnasium's reset_noise_scale is {float(ref['meta_reset_noise_scale'])}"
    if env_id in ("Ant-v5", "Humanoid-v5"):
        # The free joint's quaternion (qpos[3:7]) gets the noise like every other coordinate
        # and keeps it in qpos, as in Gymnasium on MuJoCo 3 (whose mj_forward no longer
        # normalizes qpos; kinematics uses a normalized copy and the first step's integration
        # normalizes it): not a unit quaternion.
        quat = state[:, 1 + 3:1 + 7]
        assert np.abs(np.linalg.norm(quat, axis=1) - 1).max() > c / 10, f"{what}: quaternion"
    check_uniform(f"{what} qpos - init_qpos", dq, c)
    if qvel_law == "uniform":
        check_uniform(f"{what} qvel", dv, c)
    else:
        check_normal(f"{what} qvel", dv, c)
    # Different seeds, different starts.
    env.reset(seed=2)
    assert not np.array_equal(env.get_state()[:, 1:], state[:, 1:]), f"{what}: seed ignored"
