"""The multi-agent envs from Python: the agent axis in arrays and spaces, the spec's agents, and
myriad.pettingzoo.ParallelView (PettingZoo-parallel-style dicts over the batch).

Run: PYTHONPATH=build/python .venv/bin/python -m pytest -q tests/python/test_multi_agent.py
"""
import numpy as np
import pytest
import torch
from gymnasium import spaces as gspaces

import myriad
from myriad.pettingzoo import ParallelView

# id: (agents, padded obs size, per-agent obs sizes, agent names)
EXPECTED = {
    "Spread-v0": (3, 18, [18, 18, 18], ["agent_0", "agent_1", "agent_2"]),
    "Tag-v0": (4, 16, [16, 16, 16, 14], ["adversary_0", "adversary_1", "adversary_2", "agent_0"]),
    "Sumo-v0": (2, 8, [8, 8], ["wrestler_0", "wrestler_1"]),
}


def random_actions(env, rng):
    if isinstance(env.agent_action_space, gspaces.Discrete):
        return rng.integers(0, 5, (env.num_envs, env.num_agents))
    return rng.uniform(0, 1, (env.num_envs, env.num_agents, 5)).astype(np.float32)


@pytest.mark.parametrize("env_id", sorted(EXPECTED))
def test_spec_lists_agents_teams_and_sizes(env_id):
    agents, width, sizes, names = EXPECTED[env_id]
    spec = myriad.registry()[env_id]
    assert spec["num_agents"] == agents
    assert spec["agent_names"] == names
    assert spec["agent_obs_sizes"] == sizes
    assert len(spec["team_ids"]) == agents
    assert spec["observation_space"]["shape"] == [width]
    assert "continuous" in spec["option_names"]
    # Single-agent envs: one agent, empty lists.
    cartpole = myriad.registry()["CartPole-v1"]
    assert cartpole["num_agents"] == 1 and cartpole["agent_names"] == []


@pytest.mark.parametrize("continuous", [0, 1])
@pytest.mark.parametrize("env_id", sorted(EXPECTED))
def test_arrays_and_spaces_have_the_agent_axis(env_id, continuous):
    agents, width, _, _ = EXPECTED[env_id]
    n = 7
    with myriad.make(env_id, num_envs=n, seed=0, continuous=continuous,
                     episode_statistics=True) as env:
        assert env.num_agents == agents
        assert env.single_observation_space.shape == (agents, width)
        assert env.observation_space.shape == (n, agents, width)
        if continuous:
            assert env.agent_action_space == gspaces.Box(0, 1, (5,), np.float32)
            assert env.single_action_space.shape == (agents, 5)
            assert env.action_space.shape == (n, agents, 5)
        else:
            assert env.agent_action_space == gspaces.Discrete(5)
            assert isinstance(env.single_action_space, gspaces.MultiDiscrete)
            assert env.single_action_space.shape == (agents,)
            assert env.action_space.shape == (n, agents)
        obs, _ = env.reset(seed=3)
        assert obs.shape == (n, agents, width) and obs.dtype == np.float32
        assert env.observation_space.contains(obs)
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert obs.shape == (n, agents, width)
        assert reward.shape == (n, agents) and reward.dtype == np.float32
        assert terminated.shape == (n,) and truncated.shape == (n,)
        assert info["final_obs"].shape == (n, agents, width)
        assert info["episode"]["r"].shape == (n, agents)
        assert info["episode"]["l"].shape == (n,)
        assert env.get_state().shape == (n, len(env.spec["state_names"]))


def test_torch_actions_and_wrong_shapes():
    with myriad.make("Tag-v0", num_envs=4, seed=0) as env:
        env.step(torch.zeros(4, 4, dtype=torch.int64))
        with pytest.raises(ValueError, match=r"\[4, 4\].*got \[4\]"):
            env.step(np.zeros(4, dtype=np.int64))
        with pytest.raises(ValueError, match="agent agent_0"):
            env.step(np.array([[0, 0, 0, 5]] * 4))
    with pytest.raises(ValueError, match="'local_ratio'"):
        myriad.make("Tag-v0", num_envs=2, local_ratio=0.3)


def test_same_seed_same_rollout_and_truncation_per_env():
    def run():
        with myriad.make("Spread-v0", num_envs=16, seed=9, copy=True, max_episode_steps=4,
                         episode_statistics=True) as env:
            rng = np.random.default_rng(0)
            out = [env.reset(seed=9)[0]]
            for t in range(1, 9):
                obs, reward, terminated, truncated, info = env.step(random_actions(env, rng))
                assert truncated.all() == (t % 4 == 0) and not terminated.any()
                out += [obs, reward]
                if t % 4 == 0:
                    assert (info["episode"]["l"] == 4).all()
            return out

    a, b = run(), run()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_parallel_view_dicts_over_the_batch():
    n = 6
    env = myriad.make("Tag-v0", num_envs=n, seed=1, max_episode_steps=3, episode_statistics=True)
    with ParallelView(env) as view:
        names = EXPECTED["Tag-v0"][3]
        assert view.possible_agents == names and view.agents == names
        assert view.num_agents == view.max_num_agents == 4
        assert view.teams == {"adversary_0": 0, "adversary_1": 0, "adversary_2": 0, "agent_0": 1}
        assert view.observation_space("agent_0").shape == (14,)
        assert view.observation_space("adversary_1").shape == (16,)
        assert view.action_space("agent_0") == gspaces.Discrete(5)
        with pytest.raises(KeyError, match="unknown agent"):
            view.observation_space("agent_9")
        obs, infos = view.reset(seed=2)
        assert set(obs) == set(infos) == set(names)
        assert obs["agent_0"].shape == (n, 14) and obs["adversary_0"].shape == (n, 16)
        np.testing.assert_array_equal(obs["agent_0"], env._views["obs"][:, 3, :14])
        rng = np.random.default_rng(0)
        for t in range(1, 4):
            actions = {a: rng.integers(0, 5, n) for a in names}
            obs, rewards, terms, truncs, infos = view.step(actions)
            assert rewards["adversary_0"].shape == (n,)
            # Adversaries share their reward; the good agent's is its own.
            np.testing.assert_array_equal(rewards["adversary_0"], rewards["adversary_2"])
            assert all(truncs[a].all() == (t == 3) for a in names)
            assert all(not terms[a].any() for a in names)
        assert infos["agent_0"]["final_obs"].shape == (n, 14)
        assert infos["agent_0"]["_final_obs"].all()
        assert infos["adversary_0"]["episode"]["r"].shape == (n,)
        assert (infos["adversary_0"]["episode"]["l"] == 3).all()
        with pytest.raises(KeyError, match="missing"):
            view.step({"agent_0": np.zeros(n, dtype=np.int64)})
    assert env.closed


def test_parallel_view_continuous_and_torch_actions():
    env = myriad.make("Spread-v0", num_envs=3, seed=0, continuous=1)
    view = ParallelView(env)
    actions = {a: torch.rand(3, 5) for a in view.agents}
    obs, rewards, _, _, _ = view.step(actions)
    assert obs["agent_1"].shape == (3, 18) and rewards["agent_1"].shape == (3,)
    view.close()
    with pytest.raises(ValueError, match="multi-agent"):
        ParallelView(myriad.make("CartPole-v1", num_envs=2))


def test_training_a_multi_agent_env_reports_every_team(tmp_path):
    summary = myriad.train({"env": {"id": "Tag-v0", "num_envs": 8},
                        "ppo": {"num_steps": 25, "num_minibatches": 2, "update_epochs": 1},
                        "agents": {"random_teams": ["good"]},
                        "run": {"total_env_steps": 400, "eval_episodes": 4},
                        "eval": {"record": True, "record_envs": 2}},
                       out=tmp_path / "run")
    replay = myriad.load_replay(summary["replay"])  # recorded by the trained adversaries
    assert replay.header["num_agents"] == 4 and replay.header["team_ids"] == [0, 0, 0, 1]
    assert replay.agent_reward.shape[::2] == (2, 4) and np.isnan(replay.value).all()
    teams = summary["eval_teams"]
    assert [t["name"] for t in teams] == ["adversaries", "good"]
    assert [t["learns"] for t in teams] == [True, False]
    assert summary["eval_return_mean"] == teams[0]["return_mean"]
    policy = myriad.load_policy(summary["checkpoint"])
    actions = policy(np.zeros((5, 4, 16), np.float32))
    assert actions.shape == (5, 4)
    assert [t["name"] for t in policy.evaluate(episodes=4)["teams"]] == ["adversaries", "good"]
    stats = policy.record(tmp_path / "again.replay", envs=2, episodes=1)
    assert [(t["name"], t["learns"]) for t in stats["teams"]] == [("adversaries", True),
                                                                  ("good", False)]
    with pytest.raises(ValueError, match="multi-agent"):
        policy.export(tmp_path / "policy.pt")
    header = (tmp_path / "run" / "metrics.csv").read_text().splitlines()[0].split(",")
    assert "charts/adversaries/episode_return" in header and "losses/good/policy_loss" not in header
    with pytest.raises(ValueError, match="Tag-v0 has no team 'prey'"):
        myriad.train({"env": {"id": "Tag-v0"}, "agents": {"random_teams": ["prey"]}},
                     out=tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


def test_sumo_reports_the_winner_in_info():
    env = myriad.make("Sumo-v0", num_envs=2, seed=0)
    assert env.spec["decides_winner"] and env.spec["team_names"] == ["wrestler_0", "wrestler_1"]
    env.reset(seed=0)
    state = env.get_state()
    state[1] = [-0.5, 0.0, 0.99, 0.0, 0.0, 0.0, 1.0, 0.0]  # wrestler 1 leaves the ring
    env.set_state(state)
    _, reward, terminated, _, info = env.step(np.zeros((2, 2), dtype=np.int64))
    assert terminated.tolist() == [False, True] and info["_winner"].tolist() == [False, True]
    assert info["winner"][1] == 0 and reward[1].tolist() == [1.0, -1.0]
    assert "winner" not in myriad.make("Tag-v0", num_envs=1).step(np.zeros((1, 4), int))[4]
