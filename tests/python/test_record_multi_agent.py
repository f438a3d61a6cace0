"""Replays of the multi-agent envs from Python: myriad.record drives Tag-v0 and Sumo-v0 with a
user's action function (random, scripted) and myriad.load_replay reads the file back: frames per
episode, one body per entity placed where the env's state puts it, every agent's actions and
rewards (docs/replay-format.md, "Multi-agent envs").

Run: PYTHONPATH=build/python .venv/bin/python -m pytest -q tests/python/test_record_multi_agent.py
"""
import subprocess

import numpy as np
import pytest

import myriad
from conftest import BUILD_DIR

CHECK = BUILD_DIR / "tests" / "replay" / "replay_check"  # the C++ reader (target replay_check)

# id: (agents, bodies: the world + agents + landmarks, episode limit)
ENVS = {"Tag-v0": (4, 7, 25), "Sumo-v0": (2, 3, 100)}


def random_policy(envs, seed):
    rng = np.random.default_rng(seed)
    return lambda obs: rng.integers(0, 5, (envs.num_envs, envs.num_agents))


def charge_and_flee(obs):
    """Sumo: wrestler 0 moves toward the other along the larger axis of their offset (obs[4:6]),
    wrestler 1 away from it, out of the ring."""
    dx, dy = obs[..., 4], obs[..., 5]
    along_x = np.abs(dx) >= np.abs(dy)
    toward = np.where(along_x, np.where(dx < 0, 1, 2), np.where(dy < 0, 3, 4)).astype(np.int64)
    away = np.array([0, 2, 1, 4, 3])[toward]
    return np.stack([toward[:, 0], away[:, 1]], axis=1)


def episode_frames(r, env):
    """The [start, end) frame ranges of env's episodes."""
    starts = np.flatnonzero(r.flags[env] & 1)
    return list(zip(starts, list(starts[1:]) + [int(r.num_frames[env])]))


@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_random_actions_record_every_entity(tmp_path, env_id):
    agents, bodies, limit = ENVS[env_id]
    M, K = 3, 2
    envs = myriad.make(env_id, num_envs=M, seed=1)
    path = tmp_path / "random.replay"
    stats = myriad.record(envs, random_policy(envs, 0), path, episodes=K, seed=5)
    r = myriad.load_replay(path)
    F = r.header["num_frames"]
    assert r.header["env"] == env_id and r.num_envs == M
    assert r.header["num_agents"] == agents and r.header["agent_names"] == envs.spec["agent_names"]
    assert r.header["frame_dt"] == pytest.approx(0.1)
    assert r.body_pose.shape == (M, F, bodies, 7) and r.body_pose.dtype == np.float32
    assert len(r.scene["bodies"]) == bodies and len(r.scene["geoms"]) == bodies - 1
    assert r.action.shape == (M, F, agents) and r.agent_reward.shape == (M, F, agents)
    assert r.reward.shape == r.value.shape == r.episode.shape == (M, F)
    assert stats["episodes"] == M * K
    assert [t["name"] for t in stats["teams"]] == envs.spec["team_names"]
    assert all("learns" not in t for t in stats["teams"])  # a Python driver, not a learner
    # Frames: K episodes per env, each its reset frame plus one per step (at most the limit).
    assert r.num_frames.max() == F
    for env in range(M):
        episodes = episode_frames(r, env)
        assert len(episodes) == K
        for k, (start, end) in enumerate(episodes):
            assert 2 <= end - start <= limit + 1
            assert (r.episode[env, start:end] == k).all()
            assert r.flags[env, end - 1] & 6  # the last frame: terminated or truncated
            assert np.isnan(r.action[env, end - 1]).all()
            returns = r.agent_reward[env, start:end].sum(0)
            np.testing.assert_allclose(returns, r.header["episode_returns"][env][k], rtol=1e-5,
                                       atol=1e-5)
        assert (r.episode[env, r.num_frames[env]:] == -1).all()
    np.testing.assert_array_equal(r.reward, r.agent_reward[:, :, 0])
    assert np.isnan(r.value).all()
    # Every body on the plane z = 0, the world at the origin.
    assert (r.body_pose[..., 2] == 0).all()
    assert (r.body_pose[:, :, 0, :3] == 0).all()
    # The first frame is the reset state that the same seed gives.
    check = myriad.make(env_id, num_envs=M, seed=1)
    check.reset(seed=5)
    pos = check.get_state()[:, : 2 * (bodies - 1)].reshape(M, bodies - 1, 2)
    np.testing.assert_allclose(r.body_pose[:, 0, 1:, :2], pos, atol=1e-5)


def test_sumo_scripted_wrestlers_with_values(tmp_path):
    M, K = 4, 3
    envs = myriad.make("Sumo-v0", num_envs=M, seed=2)
    seen = []

    def value(obs):
        seen.append(obs.shape)
        return np.hypot(obs[:, :, 2], obs[:, :, 3])  # [N, A]: each wrestler's distance out

    path = tmp_path / "sumo.replay"
    stats = myriad.record(envs, charge_and_flee, path, episodes=K, value=value, seed=9)
    r = myriad.load_replay(path)
    assert set(seen) == {(M, 2, 8)}
    assert r.body_pose.shape[2] == 3 and stats["episodes"] == M * K
    # The two wrestlers in two colours, the ring drawn as a closed circle of radius 1.
    geoms = r.scene["geoms"]
    assert geoms[0]["rgba"] != geoms[1]["rgba"]
    ring = np.array(r.scene["lines"][0]["points"])
    np.testing.assert_allclose(np.hypot(ring[:, 0], ring[:, 1]), 1.0, atol=1e-5)
    for env in range(M):
        for start, end in episode_frames(r, env):
            # Each agent's value is its distance from the centre, read from its own pose.
            for a in range(2):
                dist = np.hypot(r.body_pose[env, start:end, 1 + a, 0],
                                r.body_pose[env, start:end, 1 + a, 1])
                np.testing.assert_allclose(r.agent_value[env, start:end, a], dist, atol=1e-5)
            # Wrestler 1 leaves the ring: terminated, drawn from final_obs outside the ring
            # (the env has already reset), wrestler 0 wins.
            assert r.flags[env, end - 1] == 2
            np.testing.assert_array_equal(r.agent_reward[env, end - 1], [1, -1])
            assert (r.agent_reward[env, start:end - 1] == 0).all()
            pose = r.body_pose[env, start:end, 1:]
            radius = np.hypot(pose[..., 0], pose[..., 1])
            assert (radius[:-1] <= 1).all() and radius[-1, 1] > 1 and radius[-1, 0] <= 1
    assert [t["return_mean"] for t in stats["teams"]] == [1.0, -1.0]
    assert stats["return_mean"] == 1.0
    np.testing.assert_array_equal(r.value, r.agent_value[:, :, 0])


def test_wrong_action_shape_is_refused(tmp_path):
    envs = myriad.make("Tag-v0", num_envs=2, seed=0)
    with pytest.raises(ValueError, match=r"expected actions of shape \[2, 4\], got \[2\]"):
        myriad.record(envs, lambda obs: np.zeros(2, np.int64), tmp_path / "x.replay")


@pytest.mark.skipif(not CHECK.exists(), reason=f"{CHECK} is not built (target replay_check)")
def test_the_cpp_reader_accepts_the_file(tmp_path):
    envs = myriad.make("Sumo-v0", num_envs=2, seed=0, continuous=1)
    path = tmp_path / "sumo.replay"
    myriad.record(envs, lambda obs: envs.action_space.sample(), path, episodes=1)
    out = subprocess.run([str(CHECK)], input=f"{path}\n", capture_output=True, text=True,
                         timeout=60).stdout
    assert " ok " in out and "agent_reward:float32:2x" in out, out  # "SECONDS ok ARRAYS"
