"""Stable-Baselines3 adapter: a Myriad vector env as an SB3 `VecEnv`.

    import myriad, myriad.sb3
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    venv = VecNormalize(VecMonitor(myriad.sb3.VecEnv(myriad.make("CartPole-v1", num_envs=8))))
    PPO("MlpPolicy", venv).learn(50_000)

Stable-Baselines3 is optional: importing this module without it raises ImportError saying so.
"""
from __future__ import annotations

import numpy as np

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv as _SB3VecEnv
except ImportError as e:
    raise ImportError("myriad.sb3 needs Stable-Baselines3, which is not installed "
                      "(pip install stable-baselines3)") from e


def _host_copy(x):
    """A fresh numpy array holding x (numpy array, or torch tensor on any device)."""
    if hasattr(x, "detach"):  # a torch tensor (CUDA envs)
        return x.detach().cpu().numpy().copy()
    return np.array(x, copy=True)


class VecEnv(_SB3VecEnv):
    """SB3's VecEnv API over a Myriad vector env (optionally inside Gymnasium vector wrappers).

    step returns SB3's 4-tuple (obs, rewards, dones, infos): fresh numpy arrays obs [N, ...],
    rewards float32 [N], dones bool [N] (terminated or truncated), and a list of N dicts. The
    dict of an env whose episode ended holds "terminal_observation" (its last observation; obs
    already holds the next episode's first, as Myriad resets in the same step), and every dict
    holds "TimeLimit.truncated" (truncated and not terminated), as SB3's DummyVecEnv writes them.

    The batch is one object: get_attr/set_attr/env_method reach the wrapped env itself, the same
    for every index. seed(s) makes the next reset() call env.reset(seed=s), which seeds all N
    envs from s (Myriad keys each env's random stream by (seed, env index), not by s + index).
    """

    def __init__(self, env):
        for name in ("num_envs", "single_observation_space", "single_action_space", "step",
                     "reset"):
            if not hasattr(env, name):
                raise TypeError("myriad.sb3.VecEnv expects a Myriad vector env (myriad.make(...), "
                                f"possibly wrapped), got {type(env).__name__} without {name!r}")
        self.env = env
        self._actions = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    def reset(self):
        """Resets every env (with the seed and options set since the last reset) -> obs [N, ...]."""
        seed = self._seeds[0]
        options = self._options[0] or None
        obs, _ = self.env.reset(seed=seed, options=options)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return _host_copy(obs)

    def step_async(self, actions):
        """Keeps the actions [N, ...] for step_wait (which steps the env)."""
        self._actions = actions

    def step_wait(self):
        """Steps the env with the kept actions -> (obs, rewards, dones, infos)."""
        if self._actions is None:
            raise RuntimeError("step_wait() called without a step_async(actions) before it")
        actions, self._actions = self._actions, None
        obs, reward, terminated, truncated, info = self.env.step(actions)
        terminated = _host_copy(terminated).astype(bool)
        truncated = _host_copy(truncated).astype(bool)
        dones = terminated | truncated
        infos = [{"TimeLimit.truncated": t} for t in (truncated & ~terminated).tolist()]
        ended = np.flatnonzero(dones)
        if ended.size:
            final_obs = _host_copy(info["final_obs"])
            for i in ended:
                infos[i]["terminal_observation"] = final_obs[i]
        return _host_copy(obs), _host_copy(reward).astype(np.float32), dones, infos

    def close(self):
        self.env.close()

    @property
    def spec(self):
        """Gymnasium's EnvSpec of the env id (VecMonitor logs spec.id)."""
        from gymnasium.envs.registration import EnvSpec  # noqa: PLC0415

        spec = self.env.unwrapped.spec
        return EnvSpec(spec["id"], max_episode_steps=spec["max_episode_steps"])

    def get_images(self):
        return [None] * self.num_envs

    def get_attr(self, attr_name, indices=None):
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name, value, indices=None):
        setattr(self.env, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        # No single-env gymnasium.Wrapper sits inside a Myriad batch.
        return [False for _ in self._get_indices(indices)]
