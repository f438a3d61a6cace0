"""Wrappers that give a Myriad vector env the info layout other code reads.

CleanRLInfo: Gymnasium 0.29's `infos["final_info"]`, which CleanRL's scripts (`ppo.py`,
`ppo_continuous_action.py`, `dqn.py`, ...) read for episode returns:

    envs = myriad.wrappers.CleanRLInfo(myriad.make("CartPole-v1", num_envs=4, seed=1))
    next_obs, reward, terminations, truncations, infos = envs.step(actions)
    if "final_info" in infos:
        for info in infos["final_info"]:
            if info and "episode" in info:
                print(info["episode"]["r"])

TransformObservation and NormalizeObservation: Gymnasium's vector observation wrappers refuse
same-step envs (they would not transform `final_obs`); these apply to `obs` and to `final_obs`
alike, so that a value bootstrapped from the final observation sees what the policy sees.

Needs Gymnasium (the wrappers are gymnasium.vector.VectorWrapper subclasses).
"""
from __future__ import annotations

import time

import numpy as np

try:
    from gymnasium.spaces import Box
    from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper
    from gymnasium.vector.utils import batch_space
    from gymnasium.wrappers.utils import RunningMeanStd
except ImportError as e:  # pragma: no cover - depends on the installed packages
    raise ImportError("myriad.wrappers needs gymnasium (pip install gymnasium)") from e


def _numpy(x):
    """x as a numpy array (torch tensors, also on a GPU, are copied to the host)."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _require_same_step(env, who):
    mode = env.metadata.get("autoreset_mode")
    if mode != AutoresetMode.SAME_STEP:
        raise ValueError(f"{who} needs a vector env with same-step auto-reset "
                         f"(metadata['autoreset_mode'] = AutoresetMode.SAME_STEP), got {mode!r}")


class CleanRLInfo(VectorWrapper):
    """Adds Gymnasium 0.29's per-env episode infos to a same-step auto-resetting vector env.

    On a step where some envs finish an episode, info gains:

    - "final_info": object array [N]; None for envs that did not finish, else a dict
      {"episode": {"r": float32 [1], "l": int32 [1], "t": float32 [1]}}: the episode's return
      (sum of the rewards this wrapper saw), length in steps and wall-clock seconds, shaped as
      Gymnasium 0.29's RecordEpisodeStatistics wrote them for one env. "_final_info" is the mask.
    - "final_observation" (the env's final_obs [N, ...]) and its mask "_final_observation":
      the last observation of each finished episode, under Gymnasium 0.29's name.

    Put it directly on the Myriad env so that the returns are the env's own rewards (reward
    wrappers go outside it). The env's other info keys pass through unchanged.
    """

    def __init__(self, env: VectorEnv):
        super().__init__(env)
        _require_same_step(env, "CleanRLInfo")
        self._returns = np.zeros(self.num_envs, np.float64)
        self._lengths = np.zeros(self.num_envs, np.int64)
        self._starts = np.full(self.num_envs, time.perf_counter())

    def reset(self, *, seed=None, options=None):
        """Resets the env and restarts every env's episode statistics."""
        obs, info = self.env.reset(seed=seed, options=options)
        self._returns[:] = 0
        self._lengths[:] = 0
        self._starts[:] = time.perf_counter()
        return obs, info

    def step(self, actions):
        """Steps the env; adds final_info / final_observation for the envs that finished."""
        obs, reward, terminated, truncated, info = self.env.step(actions)
        self._returns += _numpy(reward)
        self._lengths += 1
        done = np.logical_or(_numpy(terminated), _numpy(truncated))
        if done.any():
            now = time.perf_counter()
            final_info = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                final_info[i] = {"episode": {
                    "r": np.array([self._returns[i]], np.float32),
                    "l": np.array([self._lengths[i]], np.int32),
                    "t": np.array([round(now - self._starts[i], 6)], np.float32),
                }}
            info = dict(info)
            info["final_info"] = final_info
            info["_final_info"] = done
            if "final_obs" in info:
                info["final_observation"] = info["final_obs"]
                info["_final_observation"] = done
            # Same-step auto-reset: the next step already belongs to the new episode.
            self._returns[done] = 0
            self._lengths[done] = 0
            self._starts[done] = now
        return obs, reward, terminated, truncated, info


class TransformObservation(VectorWrapper):
    """Applies func to the batched obs [N, ...] of reset/step and to info["final_obs"].

    func maps a batch to a new batch (numpy arrays on CPU envs); single_observation_space
    (default: the env's) describes one transformed observation. info["final_obs"] (and
    CleanRLInfo's "final_observation") become func of the env's final observations, a new
    array; the rows of envs that did not finish hold func of whatever the env's buffer held.
    """

    def __init__(self, env: VectorEnv, func, single_observation_space=None):
        super().__init__(env)
        _require_same_step(env, type(self).__name__)
        if not callable(func):
            raise TypeError(f"func must be callable, got {func!r}")
        self.func = func
        if single_observation_space is not None:
            self.single_observation_space = single_observation_space
            self.observation_space = batch_space(single_observation_space, self.num_envs)

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._observed(obs)
        return self.func(obs), info

    def step(self, actions):
        obs, reward, terminated, truncated, info = self.env.step(actions)
        self._observed(obs)
        obs = self.func(obs)
        if "final_obs" in info:
            info = dict(info)
            info["final_obs"] = self.func(info["final_obs"])
            if "final_observation" in info:
                info["final_observation"] = info["final_obs"]
        return obs, reward, terminated, truncated, info

    def _observed(self, obs):
        """Called with each batch of observations from reset/step before func (a hook)."""


class NormalizeObservation(TransformObservation):
    """Normalizes observations to zero mean and unit variance per coordinate, same-step aware.

    As Gymnasium's NormalizeObservation: the running mean and variance (obs_rms) are updated
    with every batch of observations from reset and step (unless update_running_mean is False),
    then obs -> (obs - mean) / sqrt(var + epsilon), as float32. info["final_obs"] is normalized
    with the same statistics and does not update them. Needs a Box observation space.
    """

    def __init__(self, env: VectorEnv, epsilon: float = 1e-8):
        if not epsilon > 0:
            raise ValueError(f"epsilon must be positive, got {epsilon}")
        space = env.single_observation_space
        if not isinstance(space, Box):
            raise TypeError(f"NormalizeObservation needs a Box observation space, got {space}")
        self.obs_rms = RunningMeanStd(shape=space.shape)
        self.epsilon = epsilon
        self.update_running_mean = True
        super().__init__(env, self.normalize,
                         Box(-np.inf, np.inf, shape=space.shape, dtype=np.float32))

    def normalize(self, obs):
        """obs [N, ...] normalized with the current statistics (which it does not change)."""
        obs = np.asarray(obs)
        return ((obs - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + self.epsilon)).astype(
            np.float32)

    def _observed(self, obs):
        if self.update_running_mean:
            self.obs_rms.update(np.asarray(obs))
