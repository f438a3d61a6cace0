"""Myriad in the tools researchers already use: a real gymnasium.vector.VectorEnv that
Gymnasium's vector wrappers accept, CleanRL's `infos["final_info"]` (myriad.wrappers.CleanRLInfo)
and Stable-Baselines3 (myriad.sb3.VecEnv, skipped without SB3).

Run: cd /work/main && PYTHONPATH=build/python .venv/bin/python -m pytest -q tests/python/test_ecosystem.py
"""

import subprocess
import sys
import textwrap

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from gymnasium.wrappers import vector as gw

import myriad
import myriad.wrappers

N = 8


def make(env_id="CartPole-v1", n=N, seed=0, **kwargs):
    """A small single-threaded CPU env (the machine running the tests is shared)."""
    return myriad.make(env_id, num_envs=n, seed=seed, threads=1, **kwargs)


def random_actions(env, steps, seed=0):
    """`steps` batches of valid actions for env."""
    rng = np.random.default_rng(seed)
    space = env.single_action_space
    if isinstance(space, gymnasium.spaces.Discrete):
        return [rng.integers(0, space.n, env.num_envs) for _ in range(steps)]
    return [rng.uniform(space.low, space.high, (env.num_envs, *space.shape)).astype(np.float32)
            for _ in range(steps)]


def episodes_by_hand(env, actions):
    """(returns, lengths) of every episode that ended, summed here from the raw rewards."""
    ret, length = np.zeros(env.num_envs), np.zeros(env.num_envs, int)
    returns, lengths = [], []
    for a in actions:
        _, reward, terminated, truncated, _ = env.step(a)
        ret += reward
        length += 1
        done = terminated | truncated
        returns += ret[done].tolist()
        lengths += length[done].tolist()
        ret[done], length[done] = 0, 0
    return returns, lengths


@pytest.fixture(autouse=True)
def one_torch_thread():
    # Torch's own thread pool fights the env for the 2 cores of a shared test machine.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# -- 1. A gymnasium.vector.VectorEnv ---------------------------------------------------------


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_make_returns_a_gymnasium_vector_env(env_id):
    env = make(env_id)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.num_envs == N
    assert isinstance(env.single_observation_space, gymnasium.spaces.Box)
    assert env.observation_space == batch_space(env.single_observation_space, N)
    assert env.action_space == batch_space(env.single_action_space, N)
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert env.render_mode is None and env.unwrapped is env and not env.closed
    obs, info = env.reset(seed=3)
    assert env.np_random_seed == 3 and isinstance(env.np_random, np.random.Generator)
    assert env.observation_space.contains(obs) and info == {}
    env.close()
    assert env.closed
    env.close()  # twice is harmless


def test_episode_statistics_are_opt_in():
    a = random_actions(make(), 1)[0]
    info = make().step(a)[4]
    assert set(info) == {"final_obs", "_final_obs"}
    info = make(episode_statistics=True).step(a)[4]
    assert {"episode", "_episode"} <= set(info) and {"r", "l", "_r", "_l"} == set(info["episode"])
    info = make(episode_statistics="myriad_episode").step(a)[4]
    assert "myriad_episode" in info and "episode" not in info
    for bad in ("", "final_obs", 1):
        with pytest.raises(TypeError, match=r"episode_statistics must be .* got"):
            make(episode_statistics=bad)


def test_importable_and_usable_without_gymnasium(myriad_subprocess_env):
    code = textwrap.dedent("""
        import sys
        sys.modules["gymnasium"] = None  # as if it were not installed
        import numpy as np, myriad
        env = myriad.make("CartPole-v1", num_envs=3, seed=0, threads=1)
        assert type(env).__mro__[1] is object
        env.reset(seed=0)
        obs, *_ = env.step(env.action_space.sample())
        assert obs.shape == (3, 4)
        try:
            import myriad.wrappers
        except ImportError as e:
            assert "needs gymnasium" in str(e)
        else:
            raise AssertionError("myriad.wrappers imported without gymnasium")
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], env=myriad_subprocess_env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


# -- 2. Gymnasium's vector wrappers ----------------------------------------------------------


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_record_episode_statistics_returns_equal_summed_rewards(env_id):
    # Myriad's own C++ statistics ride along under another key: they must agree too.
    env = gw.RecordEpisodeStatistics(make(env_id, max_episode_steps=30,
                                          episode_statistics="myriad_episode"))
    twin = make(env_id, max_episode_steps=30)
    actions = random_actions(env, 100)
    env.reset(seed=1)
    twin.reset(seed=1)
    expected_returns, expected_lengths = episodes_by_hand(twin, actions)
    returns, lengths = [], []
    for a in actions:
        *_, info = env.step(a)
        if "episode" in info:
            done = info["_episode"]
            returns += info["episode"]["r"][done].tolist()
            lengths += info["episode"]["l"][done].tolist()
            np.testing.assert_allclose(info["myriad_episode"]["r"][done],
                                       info["episode"]["r"][done], rtol=1e-5, atol=1e-4)
            np.testing.assert_array_equal(info["myriad_episode"]["l"][done],
                                          info["episode"]["l"][done])
    assert len(returns) >= N  # every env ended at least once (limit 30, 100 steps)
    np.testing.assert_allclose(returns, expected_returns, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(lengths, expected_lengths)
    assert env.episode_count == len(returns)


def test_record_episode_statistics_refuses_myriads_own_key():
    env = gw.RecordEpisodeStatistics(make(max_episode_steps=2, episode_statistics=True))
    env.reset(seed=0)
    env.step(np.zeros(N, np.int64))
    with pytest.raises(ValueError, match="key 'episode' but this key already exists"):
        env.step(np.zeros(N, np.int64))


def test_normalize_reward_same_step_semantics():
    gamma, eps = 0.9, 1e-8
    env = gw.NormalizeReward(make("Pendulum-v1", max_episode_steps=7), gamma=gamma, epsilon=eps)
    twin = make("Pendulum-v1", max_episode_steps=7)
    env.reset(seed=2)
    twin.reset(seed=2)
    acc = np.zeros(N)
    for a in random_actions(env, 30):
        _, reward, terminated, truncated, _ = env.step(a)
        _, raw, t_term, t_trunc, _ = twin.step(a)
        np.testing.assert_array_equal(terminated, t_term)
        # The discounted return it normalizes by restarts in the step an episode ends.
        acc = acc * gamma * (1 - t_term) + raw
        np.testing.assert_allclose(env.accumulated_reward, np.where(t_term | t_trunc, 0, acc),
                                   rtol=1e-5)
        acc[t_term | t_trunc] = 0
        np.testing.assert_allclose(reward, raw / np.sqrt(env.return_rms.var + eps), rtol=1e-5)
    assert env.return_rms.count > 30 * N


def test_clip_rescale_and_transform_action_reach_the_env():
    clipped = gw.ClipAction(make("Pendulum-v1"))
    scaled = gw.TransformAction(make("Pendulum-v1"), lambda a: 0.5 * a)
    twin = make("Pendulum-v1")
    for env in (clipped, scaled, twin):
        env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.uniform(-5, 5, (N, 1)).astype(np.float32)  # beyond Pendulum's [-2, 2]
        obs_c, rew_c, *_ = clipped.step(a)
        obs_c, rew_c = obs_c.copy(), rew_c.copy()
        obs_t, rew_t, *_ = twin.step(np.clip(a, -2, 2))
        np.testing.assert_array_equal(obs_c, obs_t)
        np.testing.assert_array_equal(rew_c, rew_t)
    rescaled = gw.RescaleAction(make("Pendulum-v1"), np.float32(-1), np.float32(1))
    rescaled.reset(seed=4)
    twin.reset(seed=4)
    for a in random_actions(twin, 20):
        obs_r = rescaled.step(a / 2)[0].copy()  # [-1, 1] -> Pendulum's [-2, 2]
        np.testing.assert_allclose(obs_r, twin.step(a)[0], rtol=1e-5, atol=1e-6)
    twin.reset(seed=4)
    for a in random_actions(twin, 20):
        obs_s, rew_s, *_ = scaled.step(a)
        obs_s, rew_s = obs_s.copy(), rew_s.copy()
        obs_t, rew_t, *_ = twin.step(0.5 * a)
        np.testing.assert_array_equal(obs_s, obs_t)
        np.testing.assert_array_equal(rew_s, rew_t)


def test_reward_wrappers_and_dict_info_to_list():
    env = gw.DictInfoToList(gw.ClipReward(make("Pendulum-v1", max_episode_steps=3), -1.0, -0.5))
    twin = make("Pendulum-v1", max_episode_steps=3)
    env.reset(seed=5)
    twin.reset(seed=5)
    for a in random_actions(twin, 6):
        _, reward, terminated, truncated, infos = env.step(a)
        reward = reward.copy()
        _, raw, *_, twin_info = twin.step(a)
        np.testing.assert_allclose(reward, np.clip(raw, -1.0, -0.5))
        assert isinstance(infos, list) and len(infos) == N
        for i in np.flatnonzero(truncated):
            np.testing.assert_array_equal(infos[i]["final_obs"], twin_info["final_obs"][i])


@pytest.mark.parametrize("wrap", [
    lambda e: gw.NormalizeObservation(e),
    lambda e: gw.TransformObservation(e, lambda o: 2 * o),
    lambda e: gw.FlattenObservation(e),
    lambda e: gw.RescaleObservation(e, -1.0, 1.0),
    lambda e: gw.DtypeObservation(e, np.float64),
])
def test_gymnasium_refuses_its_observation_wrappers_for_same_step_envs(wrap):
    # Gymnasium 1.x: every vector observation wrapper demands next-step auto-reset (the README
    # says so); if a later Gymnasium accepts same-step envs here, update the README.
    with pytest.raises(ValueError, match="autoreset_mode"):
        wrap(make("Pendulum-v1"))


# -- 3. CleanRL: infos["final_info"] ----------------------------------------------------------


def test_cleanrl_final_info_loop_logs_episode_returns():
    envs = myriad.wrappers.CleanRLInfo(make(max_episode_steps=25))
    twin = make(max_episode_steps=25)
    actions = random_actions(twin, 80)
    twin.reset(seed=7)
    expected_returns, expected_lengths = episodes_by_hand(twin, actions)
    twin.reset(seed=7)
    next_obs, _ = envs.reset(seed=7)
    returns, lengths = [], []
    for a in actions:
        # CleanRL's ppo.py, verbatim from here to the returns.
        next_obs, reward, terminations, truncations, infos = envs.step(a)
        next_done = np.logical_or(terminations, truncations)
        if "final_info" in infos:
            for info in infos["final_info"]:
                if info and "episode" in info:
                    returns.extend(info["episode"]["r"])
                    lengths.extend(info["episode"]["l"].tolist())
            assert infos["final_info"].dtype == object and infos["final_info"].shape == (N,)
            np.testing.assert_array_equal(infos["_final_info"], next_done)
            final = twin.step(a)[4]["final_obs"]
            for i in np.flatnonzero(next_done):
                ep = infos["final_info"][i]["episode"]
                assert ep["r"].shape == ep["l"].shape == ep["t"].shape == (1,)
                np.testing.assert_array_equal(infos["final_observation"][i], final[i])
        else:
            assert not next_done.any()
            twin.step(a)
    assert len(returns) >= N
    np.testing.assert_allclose(returns, expected_returns, rtol=1e-5)
    assert lengths == expected_lengths


def test_cleanrl_info_refuses_next_step_envs():
    gym_env = gymnasium.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync")
    with pytest.raises(ValueError, match="same-step auto-reset"):
        myriad.wrappers.CleanRLInfo(gym_env)


# -- 4. Stable-Baselines3 (optional) -----------------------------------------------------------


def _sb3():
    pytest.importorskip("stable_baselines3")
    import myriad.sb3  # noqa: PLC0415

    return myriad.sb3


def test_sb3_vec_env_step_contract():
    sb3 = _sb3()
    venv = sb3.VecEnv(make(max_episode_steps=10))
    twin = make(max_episode_steps=10)
    venv.seed(3)
    obs = venv.reset()
    np.testing.assert_array_equal(obs, twin.reset(seed=3)[0])
    assert venv.render_mode is None and venv.get_attr("num_envs") == [N] * N
    ended = truncated_seen = 0
    for a in random_actions(twin, 25):
        obs, rewards, dones, infos = venv.step(a)
        t_obs, t_rew, t_term, t_trunc, t_info = twin.step(a)
        assert isinstance(infos, list) and len(infos) == N
        assert rewards.dtype == np.float32 and dones.dtype == np.bool_
        np.testing.assert_array_equal(obs, t_obs)
        np.testing.assert_array_equal(rewards, t_rew)
        np.testing.assert_array_equal(dones, t_term | t_trunc)
        for i in range(N):
            assert infos[i]["TimeLimit.truncated"] == bool(t_trunc[i] and not t_term[i])
            if dones[i]:
                np.testing.assert_array_equal(infos[i]["terminal_observation"],
                                              t_info["final_obs"][i])
                ended += 1
                truncated_seen += infos[i]["TimeLimit.truncated"]
            else:
                assert "terminal_observation" not in infos[i]
        # SB3 keeps the last obs across a step (PPO's rollout buffer): it must be a copy.
        assert not np.shares_memory(obs, t_obs)
    assert ended >= N and truncated_seen > 0
    with pytest.raises(RuntimeError, match="without a step_async"):
        venv.step_wait()


def test_sb3_vec_monitor_and_vec_normalize_wrap_it():
    sb3 = _sb3()
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize  # noqa: PLC0415

    venv = VecNormalize(VecMonitor(sb3.VecEnv(make("Pendulum-v1", max_episode_steps=20))))
    twin = make("Pendulum-v1", max_episode_steps=20)
    venv.seed(6)
    venv.reset()
    twin.reset(seed=6)
    actions = random_actions(twin, 50)
    returns = []
    for a in actions:
        obs, rewards, dones, infos = venv.step(a)
        returns += [info["episode"]["r"] for info in infos if "episode" in info]
        np.testing.assert_array_equal(venv.get_original_obs(), twin.step(a)[0])
        assert not np.allclose(obs, venv.get_original_obs())  # normalized
    twin.reset(seed=6)
    expected, _ = episodes_by_hand(twin, actions)
    assert len(returns) == len(expected) == 2 * N
    np.testing.assert_allclose(returns, expected, rtol=1e-5)


def test_sb3_ppo_trains_on_cartpole():
    sb3 = _sb3()
    from stable_baselines3 import PPO  # noqa: PLC0415
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize  # noqa: PLC0415

    venv = VecNormalize(VecMonitor(sb3.VecEnv(make(seed=0))), gamma=0.98)
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=128, n_epochs=10, gamma=0.98,
                gae_lambda=0.8, learning_rate=1e-3, ent_coef=0.0, seed=0, device="cpu")
    model.learn(12_288)
    # Random play scores about 22; this run reaches about 100 (SB3's last 100 episodes).
    mean_return = np.mean([ep["r"] for ep in model.ep_info_buffer])
    assert len(model.ep_info_buffer) == 100 and mean_return > 60, mean_return


def test_sb3_missing_is_a_clear_import_error(monkeypatch):
    monkeypatch.delitem(sys.modules, "myriad.sb3", raising=False)
    monkeypatch.setitem(sys.modules, "stable_baselines3.common.vec_env.base_vec_env", None)
    with pytest.raises(ImportError, match=r"needs Stable-Baselines3.*pip install stable-baselines3"):
        import myriad.sb3  # noqa: F401, PLC0415


# -- Myriad's same-step observation wrappers ---------------------------------------------------


def test_myriad_transform_observation_covers_final_obs():
    env = myriad.wrappers.TransformObservation(make("Pendulum-v1", max_episode_steps=4),
                                               lambda o: np.clip(2 * o, -1.5, 1.5))
    twin = make("Pendulum-v1", max_episode_steps=4)
    np.testing.assert_array_equal(env.reset(seed=1)[0], np.clip(2 * twin.reset(seed=1)[0], -1.5, 1.5))
    for a in random_actions(twin, 8):
        obs, *_, truncated, info = env.step(a)
        t_obs, *_, t_info = twin.step(a)
        np.testing.assert_array_equal(obs, np.clip(2 * t_obs, -1.5, 1.5))
        done = info["_final_obs"]
        np.testing.assert_array_equal(info["final_obs"][done],
                                      np.clip(2 * t_info["final_obs"][done], -1.5, 1.5))


def test_myriad_normalize_observation_matches_running_statistics():
    env = myriad.wrappers.NormalizeObservation(make("Pendulum-v1", max_episode_steps=5))
    assert env.single_observation_space.shape == (3,)
    twin = make("Pendulum-v1", max_episode_steps=5)
    seen = [twin.reset(seed=2)[0].copy()]
    env.reset(seed=2)
    for a in random_actions(twin, 12):
        obs, *_, info = env.step(a)
        t_obs, *_, t_info = twin.step(a)
        seen.append(t_obs.copy())
        history = np.concatenate(seen)
        mean, std = history.mean(0), np.sqrt(history.var(0) + 1e-8)
        np.testing.assert_allclose(obs, (t_obs - mean) / std, rtol=1e-4, atol=1e-4)
        done = info["_final_obs"]
        np.testing.assert_allclose(info["final_obs"][done],
                                   (t_info["final_obs"][done] - mean) / std, rtol=1e-4, atol=1e-4)
    assert env.obs_rms.count == pytest.approx(len(history) + 1e-4)


def test_cleanrl_continuous_recipe_runs_with_raw_episode_returns():
    # ppo_continuous_action.py's per-env wrappers, as a stack on the batch (README).
    envs = myriad.wrappers.CleanRLInfo(make("Pendulum-v1", max_episode_steps=15))
    envs = gw.ClipAction(envs)
    envs = myriad.wrappers.NormalizeObservation(envs)
    envs = myriad.wrappers.TransformObservation(envs, lambda obs: np.clip(obs, -10, 10))
    envs = gw.NormalizeReward(envs, gamma=0.99)
    envs = gw.TransformReward(envs, lambda reward: np.clip(reward, -10, 10))
    twin = make("Pendulum-v1", max_episode_steps=15)
    actions = [3 * a for a in random_actions(twin, 30)]  # partly outside [-2, 2]: clipped
    twin.reset(seed=8)
    expected, _ = episodes_by_hand(twin, [np.clip(a, -2, 2) for a in actions])
    next_obs, _ = envs.reset(seed=8)
    returns = []
    for a in actions:
        next_obs, reward, terminations, truncations, infos = envs.step(a)
        assert np.all(np.abs(next_obs) <= 10) and np.all(np.abs(reward) <= 10)
        if "final_info" in infos:
            for info in infos["final_info"]:
                if info and "episode" in info:
                    returns.extend(info["episode"]["r"])
    assert len(returns) == len(expected) == 2 * N
    np.testing.assert_allclose(returns, expected, rtol=1e-5)
