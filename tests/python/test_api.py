"""The Python API of Myriad: spaces, Gymnasium vector-env conventions, determinism, auto-reset,
parity with Gymnasium's own transitions, zero-copy buffers, errors, async stepping, training and
trained policies.

Run: cd /work/main && PYTHONPATH=build/python .venv/bin/python -m pytest -q tests/python/test_api.py
"""

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium import spaces as gspaces
from gymnasium.vector import AutoresetMode

import myriad

# The classic envs (MJCF-v0 needs a model file; tests/python/test_mjcf.py covers it; the
# multi-agent envs are in tests/python/test_multi_agent.py).
MULTI_AGENT_IDS = {"Spread-v0", "Tag-v0", "Sumo-v0"}
# The locomotion envs (Gymnasium's MuJoCo v5 suite): test_locomotion_parity.py compares them
# with Gymnasium's own; here only their registrations.
LOCOMOTION_IDS = {"Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Ant-v5", "Humanoid-v5",
                  "InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Reacher-v5"}
# The task envs (mjlab's tasks; tests/envs/test_velocity_task.cc): here only their registrations.
TASK_IDS = {"Go1-Velocity-Flat-v0", "Go1-Velocity-Rough-v0", "G1-Velocity-Flat-v0",
            "G1-Velocity-Rough-v0"}
ENV_IDS = [env_id for env_id in myriad.list_envs()
           if env_id != "MJCF-v0" and env_id not in MULTI_AGENT_IDS | LOCOMOTION_IDS | TASK_IDS]
EXPECTED_IDS = {
    "Acrobot-v1",
    "CartPole-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
}
SPEC_KEYS = {
    "id",
    "observation_space",
    "action_space",
    "max_episode_steps",
    "reward_threshold",
    "state_names",
    "option_names",
    "physics_env",
}
CARTPOLE_THETA_THRESHOLD = 12 * 2 * math.pi / 360


def make_stats(*args, **kwargs):
    """myriad.make with Myriad's own episode statistics on (info["episode"])."""
    return myriad.make(*args, episode_statistics=True, **kwargs)


# -- Helpers ----------------------------------------------------------------------------------


def is_discrete(env) -> bool:
    return isinstance(env.single_action_space, gspaces.Discrete)


def random_actions(env, rng, steps):
    """`steps` batches of actions for env, from numpy generator rng."""
    n = env.num_envs
    if is_discrete(env):
        return [rng.integers(0, env.single_action_space.n, n) for _ in range(steps)]
    space = env.single_action_space
    return [
        rng.uniform(space.low, space.high, (n, *space.shape)).astype(np.float32)
        for _ in range(steps)
    ]


def rollout(env, actions, reset_seed=None, do_reset=True):
    """Copies of everything reset/step return over the given actions."""
    out = []
    if do_reset:
        obs, _ = env.reset(seed=reset_seed)
        out.append(np.array(obs))
    for a in actions:
        obs, reward, terminated, truncated, info = env.step(a)
        done = terminated | truncated
        out += [
            np.array(obs),
            np.array(reward),
            np.array(terminated),
            np.array(truncated),
            np.where(done[:, None], info["final_obs"], 0),
            np.where(done, info["episode"]["r"], 0),
            np.where(done, info["episode"]["l"], 0),
        ]
    return out


def assert_rollouts_equal(a, b):
    assert len(a) == len(b)
    for k, (x, y) in enumerate(zip(a, b)):
        np.testing.assert_array_equal(x, y, err_msg=f"array {k} differs")


def rollouts_equal(a, b) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def gym_unwrapped(env_id, **kwargs):
    env = gymnasium.make(env_id, **kwargs).unwrapped
    env.reset(seed=0)
    return env


def gym_transition(genv, state, action):
    """Gymnasium's own step from `state` (float64 of the float32 values Myriad got)."""
    genv.reset()
    genv.state = np.asarray(state, dtype=np.float64).copy()
    if hasattr(genv, "steps_beyond_terminated"):
        genv.steps_beyond_terminated = None
    if isinstance(genv.action_space, gspaces.Discrete):
        action = int(action)
    else:
        action = np.asarray(action, dtype=np.float32).reshape(genv.action_space.shape)
    obs, reward, terminated, _, _ = genv.step(action)
    return np.asarray(obs, dtype=np.float64), float(reward), bool(terminated)


# -- 1. Spaces, registry, shapes and dtypes -----------------------------------------------------


def test_registry_lists_every_env():
    assert set(ENV_IDS) == EXPECTED_IDS
    reg = myriad.registry()
    assert set(reg) == set(ENV_IDS) | {"MJCF-v0"} | MULTI_AGENT_IDS | LOCOMOTION_IDS | TASK_IDS
    for env_id, spec in reg.items():
        # physics_env: runs on an engine, takes the options physics, precision, frame_skip
        assert spec["physics_env"] is (env_id == "MJCF-v0" or env_id in LOCOMOTION_IDS | TASK_IDS), env_id
        # actor_obs_dim: a task env's observation is [actor | critic]
        assert (spec["actor_obs_dim"] > 0) is (env_id in TASK_IDS), env_id
        if env_id == "MJCF-v0" or env_id in MULTI_AGENT_IDS | LOCOMOTION_IDS | TASK_IDS:
            continue  # its spaces come from the model file; multi-agent: test_multi_agent.py
        assert SPEC_KEYS <= set(spec), env_id
        assert spec["id"] == env_id
        assert spec["physics_env"] is False  # classic control: no physics engine
        assert spec["observation_space"]["kind"] == "box"
        assert spec["action_space"]["kind"] in ("box", "discrete")
        assert isinstance(spec["max_episode_steps"], int) and spec["max_episode_steps"] > 0
        assert all(isinstance(s, str) for s in spec["state_names"])
        assert all(isinstance(s, str) for s in spec["option_names"])


@pytest.mark.parametrize("env_id", ENV_IDS + sorted(LOCOMOTION_IDS))
def test_registry_spec_matches_gymnasium(env_id):
    spec = myriad.registry()[env_id]
    gspec = gymnasium.spec(env_id)
    assert spec["max_episode_steps"] == gspec.max_episode_steps
    if gspec.reward_threshold is None:
        assert spec["reward_threshold"] is None
    else:
        assert spec["reward_threshold"] == pytest.approx(gspec.reward_threshold)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_single_spaces_match_gymnasium(env_id):
    n = 5
    with make_stats(env_id, num_envs=n, seed=0) as env:
        genv = gymnasium.make(env_id)
        obs_space, act_space = env.single_observation_space, env.single_action_space
        assert isinstance(obs_space, gspaces.Box)
        assert obs_space.dtype == np.float32
        assert obs_space.shape == genv.observation_space.shape
        np.testing.assert_array_equal(obs_space.low, genv.observation_space.low)
        np.testing.assert_array_equal(obs_space.high, genv.observation_space.high)
        assert type(act_space) is type(genv.action_space)
        if isinstance(act_space, gspaces.Discrete):
            assert act_space.n == genv.action_space.n
            assert act_space.start == 0
            assert np.issubdtype(act_space.dtype, np.integer)
        else:
            assert isinstance(act_space, gspaces.Box)
            assert act_space.dtype == np.float32
            assert act_space.shape == genv.action_space.shape == (1,)
            np.testing.assert_array_equal(act_space.low, genv.action_space.low)
            np.testing.assert_array_equal(act_space.high, genv.action_space.high)
        genv.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_batched_spaces(env_id):
    n = 6
    with make_stats(env_id, num_envs=n, seed=0) as env:
        single_obs, single_act = env.single_observation_space, env.single_action_space
        assert isinstance(env.observation_space, gspaces.Box)
        assert env.observation_space.shape == (n, *single_obs.shape)
        assert env.observation_space.dtype == np.float32
        np.testing.assert_array_equal(
            env.observation_space.low, np.broadcast_to(single_obs.low, (n, *single_obs.shape))
        )
        np.testing.assert_array_equal(
            env.observation_space.high, np.broadcast_to(single_obs.high, (n, *single_obs.shape))
        )
        if isinstance(single_act, gspaces.Discrete):
            assert isinstance(env.action_space, gspaces.MultiDiscrete)
            assert env.action_space.shape == (n,)
            np.testing.assert_array_equal(env.action_space.nvec, np.full(n, single_act.n))
        else:
            assert isinstance(env.action_space, gspaces.Box)
            assert env.action_space.shape == (n, *single_act.shape)
            assert env.action_space.dtype == np.float32
            np.testing.assert_array_equal(
                env.action_space.low, np.broadcast_to(single_act.low, (n, *single_act.shape))
            )
        # sample()/contains() work on single and batched spaces.
        for space in (single_obs, single_act, env.observation_space, env.action_space):
            space.seed(0)
            assert space.contains(space.sample())
        assert env.num_envs == n
        assert env.device == "cpu"
        assert env.unwrapped is env
        assert env_id in repr(env)
        assert env.spec["id"] == env_id


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_and_step_shapes_dtypes(env_id):
    n = 7
    with make_stats(env_id, num_envs=n, seed=1) as env:
        assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
        obs_dim = env.single_observation_space.shape
        obs, info = env.reset(seed=3)
        assert isinstance(obs, np.ndarray) and isinstance(info, dict)
        assert obs.shape == (n, *obs_dim) and obs.dtype == np.float32
        assert env.observation_space.contains(obs)
        assert all(env.single_observation_space.contains(o) for o in obs)
        env.action_space.seed(0)
        for _ in range(20):
            actions = env.action_space.sample()
            assert env.action_space.contains(actions)
            obs, reward, terminated, truncated, info = env.step(actions)
            assert obs.shape == (n, *obs_dim) and obs.dtype == np.float32
            assert reward.shape == (n,) and reward.dtype == np.float32
            assert terminated.shape == (n,) and terminated.dtype == np.bool_
            assert truncated.shape == (n,) and truncated.dtype == np.bool_
            assert env.observation_space.contains(obs)
            assert np.all(np.isfinite(reward))
            assert info["final_obs"].shape == (n, *obs_dim)
            assert info["final_obs"].dtype == np.float32
            for key in ("_final_obs", "_episode"):
                assert info[key].shape == (n,) and info[key].dtype == np.bool_
            ep = info["episode"]
            assert ep["r"].shape == (n,) and ep["r"].dtype == np.float32
            assert ep["l"].shape == (n,) and np.issubdtype(ep["l"].dtype, np.integer)
            assert ep["_r"].shape == (n,) and ep["_l"].shape == (n,)
        state = env.get_state()
        assert state.shape == (n, len(env.spec["state_names"]))
        assert state.dtype == np.float32


def test_make_aliases_and_cuda_flag():
    assert isinstance(myriad.cuda_available(), bool)
    assert isinstance(myriad.__version__, str)
    env = myriad.make("CartPole-v1")
    assert isinstance(env, myriad.VectorEnv)
    assert env.num_envs == 1
    env.close()


# -- 2. Determinism ---------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_identical_rollouts(env_id):
    n = 8
    a = make_stats(env_id, num_envs=n, seed=123)
    b = make_stats(env_id, num_envs=n, seed=123)
    actions = random_actions(a, np.random.default_rng(7), 100)
    ra = rollout(a, actions)
    rb = rollout(b, actions)
    assert_rollouts_equal(ra, rb)
    # Different seeds give different episodes (every env here has a random start).
    c = make_stats(env_id, num_envs=n, seed=124)
    rc = rollout(c, actions)
    assert not np.array_equal(ra[0], rc[0])
    assert not rollouts_equal(ra, rc)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_with_seed_restarts_identically(env_id):
    n = 8
    env = make_stats(env_id, num_envs=n, seed=5)
    actions = random_actions(env, np.random.default_rng(1), 60)
    rollout(env, actions[:30])  # move away from the start, across some auto-resets
    r1 = rollout(env, actions, reset_seed=123)
    r2 = rollout(env, actions, reset_seed=123)
    assert_rollouts_equal(r1, r2)
    # Another env, made with another seed, reset with that seed gives the same.
    r3 = rollout(make_stats(env_id, num_envs=n, seed=999), actions, reset_seed=123)
    assert_rollouts_equal(r1, r3)
    # An unseeded reset moves on to new episodes instead of repeating.
    r4 = rollout(env, actions, reset_seed=None)
    assert not np.array_equal(r1[0], r4[0])


def test_seed_in_make_equals_seeded_reset():
    actions = [np.ones(4, np.int64)] * 10
    made = make_stats("CartPole-v1", num_envs=4, seed=42)
    obs0 = np.array(made.get_state())
    reset = make_stats("CartPole-v1", num_envs=4, seed=0)
    obs1, _ = reset.reset(seed=42)
    np.testing.assert_array_equal(obs0, obs1)
    assert_rollouts_equal(
        rollout(made, actions, do_reset=False), rollout(reset, actions, do_reset=False)
    )


def test_rollout_independent_of_threads_and_batch_size():
    rng = np.random.default_rng(3)
    actions = [rng.integers(0, 2, 64) for _ in range(100)]
    one = rollout(make_stats("CartPole-v1", 64, seed=9, threads=1), actions)
    two = rollout(make_stats("CartPole-v1", 64, seed=9, threads=2), actions)
    assert_rollouts_equal(one, two)
    # Each env has its own random stream: the first 16 envs of a batch of 64 behave like a batch
    # of 16 given the same actions.
    small = rollout(make_stats("CartPole-v1", 16, seed=9), [a[:16] for a in actions])
    assert_rollouts_equal([x[:16] for x in one], small)


def test_each_env_keeps_its_own_threads(tmp_path):
    # An env's calls run on its own thread count and leave the caller's as it was, so an env
    # made later (threads=0: the default) does not change how an earlier one steps. Counts
    # other than the caller's, so that a call that leaked its count would be seen.
    from myriad import _core

    before = _core.cpu_threads()
    envs = {}
    for threads in (before + 1, 0, before + 2):
        envs[threads] = myriad.make("CartPole-v1", 8, seed=1, threads=threads)
        assert _core.cpu_threads() == before
    for threads, env in envs.items():
        env.reset(seed=2)
        env.step(np.ones(8, np.int64))
        env.step_async(np.zeros(8, np.int64))
        env.step_wait()
        env.set_state(env.get_state())
        assert _core.cpu_threads() == before
        # record's policy is called inside the env's call: the env's own count is on.
        seen = []

        def policy(obs, seen=seen):
            seen.append(_core.cpu_threads())
            return np.zeros(8, np.int64)

        myriad.record(env, policy, tmp_path / f"{threads}.replay")
        if threads > 0:
            assert set(seen) == {threads}
        assert _core.cpu_threads() == before
    with pytest.raises(ValueError, match="threads"):
        myriad.make("CartPole-v1", 8, threads=-1)
    assert _core.cpu_threads() == before
    # A training run sets run.threads on the calling thread while it runs, not after.
    config = {"env": {"id": "CartPole-v1", "num_envs": 4, "device": "cpu"},
              "ppo": {"num_steps": 4, "hidden_sizes": [8]},
              "run": {"total_env_steps": 16, "threads": before + 1, "eval_episodes": 0,
                      "checkpoint_every": 0},
              "eval": {"record": False}}
    myriad.train(config, out=tmp_path / "run")
    assert _core.cpu_threads() == before


# -- 3. Auto-reset, final_obs, episode statistics, truncation ---------------------------------


def test_cartpole_termination_final_obs_and_autoreset():
    env = make_stats("CartPole-v1", num_envs=4, seed=0)
    env.reset(seed=0)
    for _ in range(3):
        _, _, terminated, truncated, _ = env.step(np.array([0, 1, 0, 1]))
        assert not (terminated | truncated).any()
    near_edge = np.array([[2.39, 1.0, 0.01, 0.1]], dtype=np.float32)
    env.set_state(near_edge, env_ids=[2])
    np.testing.assert_array_equal(env.get_state()[2], near_edge[0])
    obs, reward, terminated, truncated, info = env.step(np.array([1, 1, 1, 1]))
    expected_done = np.array([False, False, True, False])
    np.testing.assert_array_equal(terminated, expected_done)
    np.testing.assert_array_equal(truncated, np.zeros(4, bool))
    np.testing.assert_array_equal(info["_final_obs"], expected_done)
    np.testing.assert_array_equal(info["_episode"], expected_done)
    np.testing.assert_array_equal(info["episode"]["_r"], expected_done)
    assert reward[2] == 1.0
    # final_obs is Gymnasium's own transition from that state.
    g_obs, g_reward, g_term = gym_transition(gym_unwrapped("CartPole-v1"), near_edge[0], 1)
    assert g_term and g_reward == 1.0
    np.testing.assert_allclose(info["final_obs"][2], g_obs, rtol=1e-6, atol=1e-6)
    # obs is a fresh start (CartPole: uniform in +-0.05), which the state continues from.
    assert np.all(np.abs(obs[2]) <= 0.05)
    np.testing.assert_array_equal(env.get_state()[2], obs[2])
    assert not np.allclose(obs[2], info["final_obs"][2])
    # Episode statistics: 3 steps before plus the terminating one, reward 1 each.
    assert info["episode"]["r"][2] == 4.0
    assert info["episode"]["l"][2] == 4


def test_terminated_and_truncated_together():
    env = make_stats("CartPole-v1", num_envs=2, seed=0, max_episode_steps=1)
    env.set_state(np.array([[2.39, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]], np.float32))
    _, _, terminated, truncated, info = env.step(np.array([1, 1]))
    np.testing.assert_array_equal(terminated, [True, False])
    np.testing.assert_array_equal(truncated, [True, True])
    np.testing.assert_array_equal(info["_final_obs"], [True, True])
    np.testing.assert_array_equal(info["episode"]["l"], [1, 1])


@pytest.mark.parametrize("env_id", ["Pendulum-v1", "CartPole-v1", "MountainCarContinuous-v0"])
def test_truncation_at_max_episode_steps(env_id):
    n = 3
    env = make_stats(env_id, num_envs=n, seed=11, max_episode_steps=5)
    ref = make_stats(env_id, num_envs=n, seed=11, copy=True)  # default limit
    assert env.spec["max_episode_steps"] == 5
    actions = random_actions(env, np.random.default_rng(0), 10)
    env.reset(seed=11)
    ref.reset(seed=11)
    ref_rewards = []
    for t, a in enumerate(actions[:5], start=1):
        obs, reward, terminated, truncated, info = env.step(a)
        r_obs, r_reward, r_term, r_trunc, _ = ref.step(a)
        assert not r_term.any() and not r_trunc.any()
        ref_rewards.append(r_reward)
        assert not terminated.any()
        if t < 5:
            assert not truncated.any()
            assert not info["_final_obs"].any()
            np.testing.assert_array_equal(obs, r_obs)
        else:
            assert truncated.all()
            np.testing.assert_array_equal(info["_final_obs"], np.ones(n, bool))
            np.testing.assert_array_equal(info["final_obs"], r_obs)
            np.testing.assert_array_equal(info["episode"]["l"], np.full(n, 5))
            np.testing.assert_allclose(
                info["episode"]["r"], np.sum(ref_rewards, axis=0), rtol=1e-5, atol=1e-5
            )
            assert not np.array_equal(obs, r_obs)  # a new episode started
            assert env.single_observation_space.contains(obs[0])
    for t, a in enumerate(actions[5:], start=6):
        _, _, _, truncated, info = env.step(a)
        assert truncated.all() == (t == 10)
        assert not truncated.any() or t == 10
    np.testing.assert_array_equal(info["episode"]["l"], np.full(n, 5))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_episode_statistics_match_accumulated_rewards(env_id):
    n = 16
    env = make_stats(env_id, num_envs=n, seed=2, max_episode_steps=40)
    actions = random_actions(env, np.random.default_rng(5), 150)
    env.reset(seed=2)
    ret = np.zeros(n, np.float64)
    length = np.zeros(n, np.int64)
    finished = 0
    for a in actions:
        obs, reward, terminated, truncated, info = env.step(a)
        ret += reward
        length += 1
        done = terminated | truncated
        np.testing.assert_array_equal(info["_final_obs"], done)
        np.testing.assert_array_equal(info["_episode"], done)
        np.testing.assert_array_equal(truncated, length == 40)
        if done.any():
            np.testing.assert_allclose(info["episode"]["r"][done], ret[done], rtol=1e-5, atol=1e-4)
            np.testing.assert_array_equal(info["episode"]["l"][done], length[done])
            assert env.observation_space.contains(obs)
            finished += int(done.sum())
            ret[done] = 0
            length[done] = 0
    assert finished >= n  # every env finished at least one episode (limit 40, 150 steps)


# -- 4. Parity with Gymnasium's transitions -----------------------------------------------------


def _parity_samples(env_id, rng, n):
    """Random states within the observation bounds, and actions (some outside Box bounds)."""
    u = rng.uniform
    if env_id == "CartPole-v1":
        th = CARTPOLE_THETA_THRESHOLD
        state = np.stack([u(-2.4, 2.4, n), u(-3, 3, n), u(-th, th, n), u(-3, 3, n)], 1)
        actions = rng.integers(0, 2, n)
    elif env_id == "Pendulum-v1":
        state = np.stack([u(-2 * np.pi, 2 * np.pi, n), u(-8, 8, n)], 1)
        actions = u(-2.5, 2.5, (n, 1))
    elif env_id == "Acrobot-v1":
        pi = np.pi
        state = np.stack(
            [u(-pi, pi, n), u(-pi, pi, n), u(-4 * pi, 4 * pi, n), u(-9 * pi, 9 * pi, n)], 1
        )
        actions = rng.integers(0, 3, n)
    else:  # MountainCar-v0 / MountainCarContinuous-v0
        state = np.stack([u(-1.2, 0.6, n), u(-0.07, 0.07, n)], 1)
        # A few rows against the left wall, moving left (velocity is zeroed there).
        state[:8, 0] = u(-1.2, -1.19, 8)
        state[:8, 1] = u(-0.07, -0.02, 8)
        if env_id == "MountainCar-v0":
            actions = rng.integers(0, 3, n)
        else:
            actions = u(-1.5, 1.5, (n, 1))
    state = state.astype(np.float32)
    if actions.dtype.kind == "f":
        actions = actions.astype(np.float32)
    return state, actions


def _near_boundary(env_id, genv) -> bool:
    """Whether Gymnasium's next state lies within rounding of a termination/clip boundary."""
    s = np.asarray(genv.state, dtype=np.float64)
    if env_id == "CartPole-v1":
        return abs(abs(s[0]) - 2.4) < 1e-5 or abs(abs(s[2]) - CARTPOLE_THETA_THRESHOLD) < 1e-6
    if env_id == "Acrobot-v1":
        return abs(-np.cos(s[0]) - np.cos(s[0] + s[1]) - 1.0) < 1e-3
    if env_id.startswith("MountainCar"):
        goal = 0.5 if env_id == "MountainCar-v0" else 0.45
        return (
            abs(s[0] - goal) < 1e-6
            or (s[0] >= goal - 1e-6 and abs(s[1]) < 1e-7)
            or abs(s[0] + 1.2) < 1e-6
        )
    return False


def _parity_tolerance(env_id, state_row):
    """(rtol, atol) for one row: float32 rounding, wider for Acrobot's RK4 at high speed."""
    if env_id == "Acrobot-v1":
        fast = np.max(np.abs(state_row[2:])) > 15.0
        return (1e-3, 1e-3) if fast else (1e-4, 1e-4)
    return 1e-5, 1e-5


PARITY_CASES = [
    ("CartPole-v1", {}),
    ("Pendulum-v1", {}),
    ("Pendulum-v1", {"g": 9.81}),
    ("Acrobot-v1", {}),
    ("MountainCarContinuous-v0", {}),
    ("MountainCar-v0", {}),
]


@pytest.mark.parametrize(
    "env_id,options",
    PARITY_CASES,
    ids=["-".join([i] + [f"{k}={v}" for k, v in o.items()]) for i, o in PARITY_CASES],
)
def test_set_state_step_matches_gymnasium(env_id, options):
    n = 256
    rng = np.random.default_rng(2024)
    env = myriad.make(env_id, num_envs=n, seed=0, max_episode_steps=1_000_000, **options)
    genv = gym_unwrapped(env_id, **options)
    compared = terminated_compared = 0
    for _ in range(2):  # two batches of random states
        state, actions = _parity_samples(env_id, rng, n)
        env.set_state(state)
        np.testing.assert_array_equal(env.get_state(), state)
        obs, reward, terminated, truncated, info = env.step(actions)
        assert not truncated.any()
        np.testing.assert_array_equal(info["_final_obs"], terminated)
        for i in range(n):
            g_obs, g_reward, g_term = gym_transition(genv, state[i], actions[i])
            if _near_boundary(env_id, genv):
                continue
            rtol, atol = _parity_tolerance(env_id, state[i])
            assert bool(terminated[i]) == g_term, f"row {i}: state {state[i]}, action {actions[i]}"
            mine = info["final_obs"][i] if terminated[i] else obs[i]
            np.testing.assert_allclose(
                mine,
                g_obs,
                rtol=rtol,
                atol=atol,
                err_msg=f"row {i}: state {state[i]}, action {actions[i]}",
            )
            np.testing.assert_allclose(
                reward[i],
                g_reward,
                rtol=rtol,
                atol=atol,
                err_msg=f"row {i}: state {state[i]}, action {actions[i]}",
            )
            compared += 1
            terminated_compared += int(g_term)
    assert compared >= 2 * n * 0.9
    if env_id != "Pendulum-v1":
        assert terminated_compared > 0, "no terminating transition was exercised"


def test_set_state_subset_torch_and_copy_semantics():
    env = myriad.make("Pendulum-v1", num_envs=4, seed=0)
    obs, _ = env.reset(seed=0)
    before = env.get_state()
    new = np.array([[0.5, -1.0], [1.5, 2.0]], np.float32)
    env.set_state(new, env_ids=[3, 1])
    after = env.get_state()
    np.testing.assert_array_equal(after[[0, 2]], before[[0, 2]])
    np.testing.assert_array_equal(after[3], new[0])
    np.testing.assert_array_equal(after[1], new[1])
    # set_state recomputes the observations, in the buffer `obs` views.
    expected = np.stack([np.cos(new[:, 0]), np.sin(new[:, 0]), new[:, 1]], 1)
    np.testing.assert_allclose(obs[[3, 1]], expected, rtol=1e-6, atol=1e-6)
    # get_state returns a copy.
    after[:] = 99
    assert not np.any(env.get_state() == 99)
    # Torch tensors work too.
    t = torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [0.7, 0.8]], dtype=torch.float64)
    env.set_state(t)
    np.testing.assert_allclose(env.get_state(), t.numpy().astype(np.float32))
    env.set_state(torch.tensor([[1.0, 1.0]]), env_ids=torch.tensor([0]))
    np.testing.assert_array_equal(env.get_state()[0], [1.0, 1.0])


# -- 5. Zero-copy buffers and action inputs ---------------------------------------------------


def test_outputs_are_views_overwritten_by_next_step():
    env = make_stats("CartPole-v1", num_envs=8, seed=0)
    obs0, _ = env.reset(seed=0)
    a = np.ones(8, np.int64)
    obs1, rew1, term1, trunc1, info1 = env.step(a)
    assert obs1.base is not None
    assert np.shares_memory(obs0, obs1)
    snap = obs1.copy()
    obs2, rew2, term2, trunc2, info2 = env.step(a)
    for x, y in [(obs1, obs2), (rew1, rew2), (term1, term2), (trunc1, trunc2)]:
        assert np.shares_memory(x, y)
    assert np.shares_memory(info1["final_obs"], info2["final_obs"])
    assert np.shares_memory(info1["episode"]["r"], info2["episode"]["r"])
    # The earlier obs now shows the new step's values.
    assert not np.array_equal(obs1, snap)
    np.testing.assert_array_equal(obs1, obs2)


def test_copy_true_returns_fresh_arrays():
    env = myriad.make("CartPole-v1", num_envs=8, seed=0, copy=True)
    ref = myriad.make("CartPole-v1", num_envs=8, seed=0)
    obs0, _ = env.reset(seed=0)
    a = np.ones(8, np.int64)
    obs1, rew1, term1, trunc1, info1 = env.step(a)
    snap = obs1.copy()
    obs2, rew2, term2, trunc2, info2 = env.step(a)
    for x, y in [(obs0, obs1), (obs1, obs2), (rew1, rew2), (term1, term2), (trunc1, trunc2)]:
        assert not np.shares_memory(x, y)
    assert not np.shares_memory(info1["final_obs"], info2["final_obs"])
    np.testing.assert_array_equal(obs1, snap)
    # Same values as without copies.
    ref.reset(seed=0)
    ref.step(a)
    np.testing.assert_array_equal(ref.step(a)[0], obs2)


def test_discrete_actions_accept_numpy_torch_and_lists():
    n = 4
    rng = np.random.default_rng(0)
    actions = [rng.integers(0, 2, n) for _ in range(20)]
    converters = [
        lambda a: a,  # numpy int64
        lambda a: a.astype(np.int32),
        lambda a: a.astype(np.uint8),
        lambda a: a.tolist(),
        lambda a: [int(x) for x in a],
        lambda a: torch.from_numpy(a),
        lambda a: torch.from_numpy(a).to(torch.int32),
        lambda a: a.reshape(n, 1),  # [N, 1] is accepted as well
    ]
    results = []
    for convert in converters:
        env = myriad.make("CartPole-v1", num_envs=n, seed=4)
        env.reset(seed=4)
        out = []
        for a in actions:
            obs, reward, *_ = env.step(convert(a))
            out += [np.array(obs), np.array(reward)]
        results.append(out)
    for r in results[1:]:
        assert_rollouts_equal(results[0], r)


def test_box_actions_accept_numpy_torch_and_lists():
    n = 3
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-2, 2, (n, 1)).astype(np.float32) for _ in range(20)]
    converters = [
        lambda a: a,
        lambda a: a.astype(np.float64),
        lambda a: a.reshape(n),  # [N] for a one-dimensional action
        lambda a: a.tolist(),
        lambda a: [float(x) for x in a[:, 0]],
        lambda a: torch.from_numpy(a),
        lambda a: torch.from_numpy(a).to(torch.float64).reshape(n),
    ]
    results = []
    for convert in converters:
        env = myriad.make("Pendulum-v1", num_envs=n, seed=4)
        env.reset(seed=4)
        out = []
        for a in actions:
            obs, reward, *_ = env.step(convert(a))
            out += [np.array(obs), np.array(reward)]
        results.append(out)
    for r in results[1:]:
        assert_rollouts_equal(results[0], r)


# -- 6. Errors ----------------------------------------------------------------------------------


def test_wrong_action_shape_names_expected_and_given():
    env = myriad.make("CartPole-v1", num_envs=4, seed=0)
    with pytest.raises(ValueError) as e:
        env.step(np.zeros(3, np.int64))
    assert "[4]" in str(e.value) and "[3]" in str(e.value)
    with pytest.raises(ValueError) as e:
        env.step(torch.zeros(5, dtype=torch.int64))
    assert "[4]" in str(e.value) and "[5]" in str(e.value)
    box = myriad.make("Pendulum-v1", num_envs=4, seed=0)
    with pytest.raises(ValueError) as e:
        box.step(np.zeros((4, 2), np.float32))
    assert "[4, 1]" in str(e.value) and "[4, 2]" in str(e.value)
    # The envs still work afterwards.
    env.step(np.zeros(4, np.int64))
    box.step(np.zeros((4, 1), np.float32))


def test_action_type_and_range_errors():
    env = myriad.make("CartPole-v1", num_envs=4, seed=0)
    with pytest.raises(TypeError):
        env.step(np.zeros(4, np.float32))
    with pytest.raises(TypeError):
        env.step(torch.zeros(4))
    with pytest.raises(TypeError):
        env.step(np.zeros(4, bool))
    with pytest.raises(ValueError, match="2"):
        env.step(np.array([0, 1, 2, 0]))
    with pytest.raises(ValueError):
        env.step(np.array([0, -1, 0, 0]))
    box = myriad.make("Pendulum-v1", num_envs=2, seed=0)
    with pytest.raises(TypeError):
        box.step(np.zeros((2, 1), np.int64))
    env.step(np.zeros(4, np.int64))


def test_make_errors():
    with pytest.raises(KeyError) as e:
        myriad.make("NoSuchEnv-v9")
    for env_id in ENV_IDS:
        assert env_id in str(e.value)
    with pytest.raises(ValueError, match="no_such_option"):
        myriad.make("CartPole-v1", no_such_option=1)
    with pytest.raises(ValueError, match=r"gravity.*valid options: max_episode_steps, g\b"):
        myriad.make("Pendulum-v1", gravity=9.8)
    with pytest.raises(ValueError, match="option g takes a number, got 'ten'"):
        myriad.make("Pendulum-v1", g="ten")
    with pytest.raises(TypeError):
        myriad.make("Pendulum-v1", g=None)
    with pytest.raises(ValueError, match="tpu"):
        myriad.make("CartPole-v1", device="tpu")
    with pytest.raises(ValueError, match="cuda:99"):
        myriad.make("CartPole-v1", device="cuda:99")
    with pytest.raises(TypeError):
        myriad.make("CartPole-v1", device=0)
    with pytest.raises(ValueError):
        myriad.make("CartPole-v1", max_episode_steps=0)
    with pytest.raises(ValueError):
        myriad.make("CartPole-v1", max_episode_steps=2.5)
    with pytest.raises(ValueError):
        myriad.make("CartPole-v1", num_envs=0)
    with pytest.raises(TypeError):
        myriad.make("CartPole-v1", num_envs=2.0)


@pytest.mark.skipif(myriad.cuda_available(), reason="a CUDA GPU is available")
def test_cuda_without_gpu_is_value_error():
    with pytest.raises(ValueError, match="cuda"):
        myriad.make("CartPole-v1", device="cuda")
    env = myriad.make("CartPole-v1", device="auto")
    assert env.device == "cpu"


def test_set_state_errors():
    env = myriad.make("CartPole-v1", num_envs=4, seed=0)
    with pytest.raises(ValueError, match=r"\[4, 4\]"):
        env.set_state(np.zeros((3, 4)))
    with pytest.raises(ValueError):
        env.set_state(np.zeros((4, 2)))
    with pytest.raises(ValueError):
        env.set_state(np.zeros(4))
    with pytest.raises(ValueError):
        env.set_state(np.zeros((2, 4)), env_ids=[0])
    with pytest.raises(ValueError):
        env.set_state(np.zeros((1, 4)), env_ids=[4])
    with pytest.raises(ValueError):
        env.set_state(np.full((4, 4), np.nan))
    env.step(np.zeros(4, np.int64))


def test_closed_env_raises():
    env = myriad.make("CartPole-v1", num_envs=2, seed=0)
    env.close()
    assert env.closed
    env.close()  # idempotent
    with pytest.raises(RuntimeError):
        env.step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError):
        env.reset()
    with pytest.raises(RuntimeError):
        env.get_state()
    with pytest.raises(RuntimeError):
        env.step_async(np.zeros(2, np.int64))


def test_step_wait_without_step_async_raises():
    env = myriad.make("CartPole-v1", num_envs=2, seed=0)
    with pytest.raises(RuntimeError):
        env.step_wait()
    env.step_async(np.zeros(2, np.int64))
    env.step_wait()
    with pytest.raises(RuntimeError):
        env.step_wait()  # the pending step was collected already


def test_bad_async_step_raises_and_env_recovers():
    env = myriad.make("CartPole-v1", num_envs=2, seed=0)
    with pytest.raises(ValueError):  # at step_async or, from the worker, at step_wait
        env.step_async(np.zeros(3, np.int64))
        env.step_wait()
    env.step(np.zeros(2, np.int64))


ERRORS_SCRIPT = """
import numpy as np
import myriad

env = myriad.make("CartPole-v1", num_envs=4, seed=0)
calls = [
    lambda: env.step(np.zeros(3, np.int64)),
    lambda: env.step(np.zeros(4, np.float32)),
    lambda: env.step(np.array([0, 1, 7, 0])),
    lambda: myriad.make("NoSuchEnv-v9"),
    lambda: myriad.make("CartPole-v1", bogus=1),
    lambda: myriad.make("Pendulum-v1", g="x"),
    lambda: myriad.make("CartPole-v1", device="tpu"),
    lambda: env.set_state(np.zeros((3, 4))),
    lambda: env.step_wait(),
    lambda: (env.step_async(np.zeros(9, np.int64)), env.step_wait()),
    lambda: myriad.load_policy("/nonexistent/checkpoint.pt"),
    lambda: myriad.train({"ppo": {"learning_rat": 1.0}}, out=None),
]
if not myriad.cuda_available():
    calls.append(lambda: myriad.make("CartPole-v1", device="cuda"))
raised = 0
for call in calls:
    try:
        call()
    except Exception:
        raised += 1
env.step(np.zeros(4, np.int64))
env.close()
try:
    env.step(np.zeros(4, np.int64))
except RuntimeError:
    raised += 1
print("raised", raised, "of", len(calls) + 1)
"""


def test_interpreter_survives_errors(tmp_path, myriad_subprocess_env):
    p = subprocess.run(
        [sys.executable, "-c", ERRORS_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=myriad_subprocess_env,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    counts = p.stdout.split()
    assert counts[0] == "raised" and counts[1] == counts[3], p.stdout + p.stderr


# -- 7. Context manager, async stepping --------------------------------------------------------


def test_context_manager_closes():
    with myriad.make("CartPole-v1", num_envs=2, seed=0) as env:
        assert not env.closed
        env.step(np.zeros(2, np.int64))
    assert env.closed
    with pytest.raises(RuntimeError):
        env.step(np.zeros(2, np.int64))
    # Closes also when the body raises.
    with pytest.raises(ZeroDivisionError):
        with myriad.make("CartPole-v1", num_envs=2, seed=0) as env2:
            1 / 0
    assert env2.closed


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_step_async_equals_step(env_id):
    n = 16
    sync = make_stats(env_id, num_envs=n, seed=8)
    asyn = make_stats(env_id, num_envs=n, seed=8)
    actions = random_actions(sync, np.random.default_rng(2), 60)
    expected = rollout(sync, actions)
    got = [np.array(asyn.reset()[0])]
    for k, a in enumerate(actions):
        if k % 3 == 2:  # the EnvPool aliases
            asyn.send(a)
            obs, reward, terminated, truncated, info = asyn.recv()
        elif k % 3 == 1:  # torch input
            asyn.step_async(torch.from_numpy(np.asarray(a)))
            obs, reward, terminated, truncated, info = asyn.step_wait()
        else:
            asyn.step_async(a)
            obs, reward, terminated, truncated, info = asyn.step_wait()
        done = terminated | truncated
        got += [
            np.array(obs),
            np.array(reward),
            np.array(terminated),
            np.array(truncated),
            np.where(done[:, None], info["final_obs"], 0),
            np.where(done, info["episode"]["r"], 0),
            np.where(done, info["episode"]["l"], 0),
        ]
    # reset() without seed after make(seed) is the same in both.
    assert_rollouts_equal(expected, got)


def test_send_recv_are_aliases():
    assert myriad.VectorEnv.send is myriad.VectorEnv.step_async
    assert myriad.VectorEnv.recv is myriad.VectorEnv.step_wait


def test_step_async_copies_numpy_actions():
    a = np.array([1, 1, 1, 1])
    sync = myriad.make("CartPole-v1", num_envs=4, seed=3)
    expected = np.array(sync.step(a)[0])
    asyn = myriad.make("CartPole-v1", num_envs=4, seed=3)
    buf = a.copy()
    asyn.step_async(buf)
    buf[:] = 0  # the caller may reuse its array at once
    np.testing.assert_array_equal(asyn.step_wait()[0], expected)


# A batch whose CPU step takes ~20 ms on one thread, so that what the caller does right after
# step_async() happens while the step is still in flight.
SLOW_ID, SLOW_N = "Acrobot-v1", 1 << 18


def test_step_async_copies_torch_actions():
    ref = myriad.make(SLOW_ID, SLOW_N, seed=1, threads=1)
    expected = np.array(ref.step(np.ones(SLOW_N, np.int32))[0])
    env = myriad.make(SLOW_ID, SLOW_N, seed=1, threads=1)
    actions = torch.ones(SLOW_N, dtype=torch.int32)
    env.step_async(actions)
    actions.zero_()  # the caller reuses its tensor, as it may with a numpy array
    np.testing.assert_array_equal(env.step_wait()[0], expected)


def test_get_state_while_async_pending_sees_the_step():
    env = myriad.make(SLOW_ID, SLOW_N, seed=1, threads=1)
    env.step_async(np.ones(SLOW_N, np.int32))
    try:
        during = env.get_state()
    except RuntimeError:  # refusing while a step is pending would be fine too
        env.step_wait()
        return
    env.step_wait()
    np.testing.assert_array_equal(during, env.get_state())


def test_calls_while_async_pending_are_errors_not_lost_steps():
    # As Gymnasium's AlreadyPendingCallError: the pending step's results would be lost.
    a = np.ones(4, np.int64)
    ref = myriad.make("CartPole-v1", num_envs=4, seed=3)
    expected = np.array(ref.step(a)[0])
    env = myriad.make("CartPole-v1", num_envs=4, seed=3)
    env.step_async(a)
    for call in (lambda: env.step(a), lambda: env.step_async(a), lambda: env.reset()):
        with pytest.raises(RuntimeError, match="step_wait"):
            call()
    np.testing.assert_array_equal(env.step_wait()[0], expected)  # the one step, not lost
    env.step(a)  # and the env goes on


# -- 8. Training and trained policies ---------------------------------------------------------


def test_train_returns_summary(trained_run):
    out, summary = trained_run
    for key in ("env_steps", "eval_return_mean", "solved_seconds", "checkpoint"):
        assert key in summary
    assert summary["env_steps"] >= 4096
    assert isinstance(summary["eval_return_mean"], float)
    assert math.isfinite(summary["eval_return_mean"]) and summary["eval_return_mean"] > 0
    assert summary["solved_seconds"] is None or summary["solved_seconds"] >= 0
    assert summary["eval_episodes"] == 5
    assert Path(summary["checkpoint"]).is_file()
    assert Path(summary["checkpoint"]).resolve().is_relative_to(out.resolve())
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk == summary


def test_train_bad_key_names_it(tmp_path):
    config = {"env": {"id": "CartPole-v1"}, "ppo": {"learning_rat": 1e-3}}
    with pytest.raises(ValueError, match=r"ppo\.learning_rat"):
        myriad.train(config, out=tmp_path / "bad")
    with pytest.raises(ValueError, match=r"ppo\.learning_rat"):
        myriad.train({"env": {"id": "CartPole-v1"}}, out=tmp_path / "bad2", ppo__learning_rat=1.0)
    with pytest.raises(FileNotFoundError):
        myriad.train(tmp_path / "missing.yaml")


def test_load_policy_acts_on_numpy_and_torch(trained_run):
    _, summary = trained_run
    policy = myriad.load_policy(summary["checkpoint"])
    assert policy.info["env_id"] == "CartPole-v1"
    assert isinstance(policy.config_yaml, str) and "CartPole-v1" in policy.config_yaml
    env = myriad.make("CartPole-v1", num_envs=32, seed=0)
    obs, _ = env.reset(seed=0)
    actions = policy(obs)
    assert isinstance(actions, np.ndarray)
    assert actions.shape == (32,)
    assert np.issubdtype(actions.dtype, np.integer)
    assert np.all((actions >= 0) & (actions < 2))
    np.testing.assert_array_equal(policy(obs), actions)  # deterministic
    t_actions = policy(torch.from_numpy(np.array(obs)))
    assert isinstance(t_actions, torch.Tensor)
    assert t_actions.shape == (32,)
    np.testing.assert_array_equal(t_actions.cpu().numpy(), actions)
    # float64 input converts; the actions drive the env.
    np.testing.assert_array_equal(policy(np.array(obs, np.float64)), actions)
    env.step(actions)
    result = policy.evaluate(episodes=3, seed=1)
    assert result["episodes"] == 3 and result["return_mean"] > 0
    with pytest.raises(FileNotFoundError):
        myriad.load_policy("/nonexistent/last.pt")


def test_evaluate_reports_tracking_errors_and_reward_terms(tmp_path):
    # A legged task's evaluation holds its tracking errors and each reward term's mean episode
    # sum (as `myriad eval --json` prints them); the terms add up to the return.
    config = {"env": {"id": "Go1-Velocity-Flat-v0", "num_envs": 8, "device": "cpu"},
              "ppo": {"num_steps": 8}, "run": {"total_env_steps": 1, "eval_episodes": 0},
              "eval": {"record": False}}
    summary = myriad.train(config, out=tmp_path / "go1")
    result = myriad.load_policy(summary["checkpoint"]).evaluate(episodes=2, seed=3)
    assert result["error_vel_xy"] >= 0 and result["error_vel_yaw"] >= 0
    terms = {k: v for k, v in result.items() if k.startswith("reward_")}
    assert len(terms) == 16 and result["reward_track_linear_velocity"] > 0
    assert sum(terms.values()) == pytest.approx(result["return_mean"], rel=1e-4, abs=1e-4)
    assert result["diverged_episodes"] == 0


EXPORT_SCRIPT = """
import sys
import importlib.util
import numpy as np
import torch

assert importlib.util.find_spec("myriad") is None, "myriad must not be importable here"
module = torch.jit.load(sys.argv[1])
obs = torch.from_numpy(np.load(sys.argv[2]))
np.save(sys.argv[3], module(obs).numpy())
"""


def test_export_torchscript_runs_without_myriad(trained_run, tmp_path, plain_subprocess_env):
    _, summary = trained_run
    policy = myriad.load_policy(summary["checkpoint"])
    path = tmp_path / "policy.pt"
    assert Path(policy.export(path)) == path
    assert path.is_file()
    rng = np.random.default_rng(0)
    obs = rng.uniform(-0.3, 0.3, (64, 4)).astype(np.float32)
    np.save(tmp_path / "obs.npy", obs)
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            EXPORT_SCRIPT,
            str(path),
            str(tmp_path / "obs.npy"),
            str(tmp_path / "act.npy"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=plain_subprocess_env,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    exported = np.load(tmp_path / "act.npy")
    assert exported.shape == (64,)
    np.testing.assert_array_equal(exported, policy(obs))
