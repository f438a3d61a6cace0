"""Recording replays of any policy written in Python (a CleanRL agent, a scripted controller)
on a Myriad vector env; myriad.load_policy(...).record(...) covers Myriad's own checkpoints.
Single-agent envs are recorded by the C++ recorder; multi-agent envs (Tag-v0, Sumo-v0, ...) by
_record_agents here, in the layout docs/replay-format.md gives under "Multi-agent envs"."""
import json

import numpy as np

from . import _core


def _as_numpy(x):
    if type(x).__module__.startswith("torch"):
        x = x.detach().cpu().numpy()
    return np.ascontiguousarray(x)


def record(envs, policy, path, episodes=1, value=None, seed=0) -> dict:
    """Records `episodes` episodes in each of envs.num_envs envs and writes a replay file.

    envs: a myriad vector env (myriad.make); it is reset with `seed` first and left where the
        recording ends.
    policy: obs -> actions, for the batch (numpy in, numpy or torch out on CPU envs; torch
        tensors in on CUDA envs). Deterministic actions make the replay show the policy itself.
        Multi-agent envs: obs [N, A, D] -> actions [N, A] (Discrete) or [N, A, K] (Box), e.g.
        random actions `lambda obs: envs.action_space.sample()`.
    value: optional obs -> [num_envs] value estimates, plotted beside the reward (multi-agent
        envs: [N, A] per agent, or [N] shared by the agents).

    Returns the recorded episodes' statistics (return_mean, return_std, length_mean, episodes).
    Watch the file with `myriad view PATH`; read it with myriad.load_replay(PATH).
    """
    if not hasattr(envs, "_env") or envs._env is None:
        raise TypeError("record: envs must be an open myriad vector env (myriad.make(...))")
    if int(episodes) <= 0:
        raise ValueError(f"record: episodes must be positive, got {episodes}")
    if envs.num_agents > 1:
        return _record_agents(envs, policy, str(path), int(episodes), value, seed)
    wrap = envs._tensor  # numpy views on CPU, torch tensors (DLPack) on CUDA

    def act(obs):
        return _as_numpy(policy(wrap(obs)))

    def val(obs):
        return _as_numpy(value(wrap(obs))).astype(np.float32, copy=False)

    return envs._env.record(str(path), act, None if value is None else val, int(episodes),
                            seed)


_FIRST, _TERMINATED, _TRUNCATED = 1, 2, 4


def _record_agents(envs, policy, path, episodes, value, seed):
    """record() for a multi-agent env: the frames of learner/record.cc's recorder (reset frame,
    one per step, the terminal frame drawn from final_obs), with every agent's action, reward
    and value. Returns per-agent return_mean and return_std lists."""
    core, views = envs._env, envs._views
    M, A = envs.num_envs, envs.num_agents
    space = envs.spec["action_space"]
    discrete = space["kind"] == "discrete"
    K = 1 if discrete else int(np.prod(space["shape"]))
    drawing = core.scene()
    envs.reset(seed=seed)

    def poses(name):  # fresh buffers: a CUDA buffer's DLPack capsule can be used once
        return np.array(core.body_poses(core.buffers()[name]), dtype=np.float32)

    def values(name):
        if value is None:
            return np.full((M, A), np.nan, np.float32)
        v = _as_numpy(value(views[name])).astype(np.float32)
        if v.shape not in ((M,), (M, A)):
            raise ValueError(f"record: expected value estimates of shape ({M},) or ({M}, {A}), "
                             f"got {v.shape}")
        return np.broadcast_to(v.reshape(M, -1), (M, A))

    frames = [[] for _ in range(M)]  # (pose, reward [A], value [A], action [A*K], episode, flags)
    returns = [[] for _ in range(M)]
    done_count = [0] * M
    reward_in = np.zeros((M, A), np.float32)
    first = [True] * M
    no_action = np.full(A * K, np.nan, np.float32)
    max_steps = episodes * max(envs.spec["max_episode_steps"], 1) + 1
    for _ in range(max_steps):
        if min(done_count) >= episodes:
            break
        actions = policy(views["obs"])
        acts = _as_numpy(actions).astype(np.float32)
        if acts.size != M * A * K:
            want = f"({M}, {A})" if discrete else f"({M}, {A}, {K})"
            raise ValueError(f"record: expected actions of shape {want}, got {acts.shape}")
        acts = acts.reshape(M, A * K)
        pose, val = poses("obs"), values("obs")
        for i in range(M):
            if done_count[i] < episodes:
                frames[i].append((pose[i], reward_in[i].copy(), val[i], acts[i], done_count[i],
                                  _FIRST if first[i] else 0))
                first[i] = False
        envs.step(actions)
        term = _as_numpy(views["terminated"]).astype(bool)
        trunc = _as_numpy(views["truncated"]).astype(bool)
        reward = _as_numpy(views["reward"]).astype(np.float32)
        ended = term | trunc
        if ended.any():  # the env has auto-reset: the terminal frame comes from final_obs
            final_pose, final_val = poses("final_obs"), values("final_obs")
            episode_return = _as_numpy(views["episode_return"]).astype(np.float32)
        for i in range(M):
            if done_count[i] >= episodes:
                continue
            if not ended[i]:
                reward_in[i] = reward[i]
                continue
            flags = (_TERMINATED if term[i] else 0) | (_TRUNCATED if trunc[i] else 0)
            frames[i].append((final_pose[i], reward[i], final_val[i], no_action, done_count[i],
                              flags))
            returns[i].append(episode_return[i].tolist())
            done_count[i] += 1
            reward_in[i] = 0
            first[i] = True

    # Pad every env to F frames: last pose held, reward 0, value NaN, episode -1, flags 0.
    F = max(len(f) for f in frames)
    B = frames[0][0][0].shape[0]
    arrays = {"body_pose": np.zeros((M, F, B, 7), np.float32),
              "agent_reward": np.zeros((M, F, A), np.float32),
              "agent_value": np.full((M, F, A), np.nan, np.float32),
              "action": np.full((M, F, A * K), np.nan, np.float32),
              "episode": np.full((M, F), -1, np.int32),
              "flags": np.zeros((M, F), np.uint8),
              "num_frames": np.array([len(f) for f in frames], np.int32)}
    for i, env_frames in enumerate(frames):
        for f, (pose, r, v, a, ep, fl) in enumerate(env_frames):
            arrays["body_pose"][i, f], arrays["agent_reward"][i, f] = pose, r
            arrays["agent_value"][i, f], arrays["action"][i, f] = v, a
            arrays["episode"][i, f], arrays["flags"][i, f] = ep, fl
        arrays["body_pose"][i, len(env_frames):] = env_frames[-1][0]
    # The single-series arrays every reader knows hold agent 0's reward and value.
    arrays["reward"] = np.ascontiguousarray(arrays["agent_reward"][:, :, 0])
    arrays["value"] = np.ascontiguousarray(arrays["agent_value"][:, :, 0])
    arrays.update(drawing["arrays"])
    header = {"env": envs.spec["id"], "env_options": {}, "checkpoint": "", "seed": int(seed),
              "num_envs": M, "num_frames": F, "frame_dt": drawing["frame_dt"],
              "discrete_actions": discrete, "action_dim": A * K, "episode_returns": returns,
              "num_agents": A, "agent_names": envs.spec["agent_names"],
              "team_ids": envs.spec["team_ids"], "agent_action_dim": K,
              "scene": json.loads(drawing["scene"])}
    _core.write_replay(path, json.dumps(header), arrays)

    # Statistics per agent over the M * K episodes.
    ended_returns = np.array([r for env_returns in returns for r in env_returns],
                             np.float64).reshape(-1, A)
    count = ended_returns.shape[0]
    lengths = (arrays["episode"] >= 0).sum() - count  # frames minus each episode's reset frame
    return {"return_mean": ended_returns.mean(0).tolist() if count else [0.0] * A,
            "return_std": ended_returns.std(0).tolist() if count else [0.0] * A,
            "length_mean": float(lengths / count) if count else 0.0, "episodes": count,
            "path": path}
