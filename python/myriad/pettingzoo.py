"""ParallelView: a multi-agent Myriad env seen through PettingZoo's parallel API, over the batch.

A multi-agent VectorEnv (e.g. myriad.make("Tag-v0", num_envs=N)) returns arrays with the agent
axis after the batch axis: obs [N, A, D], reward [N, A]. ParallelView offers the same data the
way PettingZoo's ParallelEnv does, as dicts keyed by agent name, each value an array over the
batch:

    view = myriad.pettingzoo.ParallelView(myriad.make("Tag-v0", num_envs=1024, seed=0))
    obs, infos = view.reset(seed=0)             # obs["agent_0"]: [N, 14]
    actions = {a: np.random.randint(0, 5, view.num_envs) for a in view.agents}  # [N] each
    obs, rewards, terminations, truncations, infos = view.step(actions)

- obs[agent] is [N, obs_size] with the agent's own (unpadded) size; rewards[agent] is [N];
  terminations[agent] and truncations[agent] are [N] (episodes end per env, for all its agents
  at once, so every agent gets the same flags); infos[agent] holds "final_obs" [N, obs_size]
  (valid where "_final_obs", i.e. where the episode ended) and, with episode_statistics on,
  "episode" {"r": [N], "l": [N], ...}.
- Episodes restart in the same step (Myriad's same-step auto-reset), so `agents` is always every
  agent: PettingZoo's "agents leave when done" never happens in a batch.
- Values are views of the env's buffers (numpy on CPU, torch on CUDA), valid until the next
  step, as with VectorEnv; make the env with copy=True for fresh arrays.
"""
from __future__ import annotations

import numpy as np

from .spaces import make_space


def _torch():
    import torch  # noqa: PLC0415 (only for torch inputs and CUDA envs)

    return torch


class ParallelView:
    """PettingZoo-parallel-style dicts over a multi-agent VectorEnv (see the module docstring)."""

    def __init__(self, env):
        spec = env.spec
        if spec.get("num_agents", 1) < 2:
            raise ValueError(f"ParallelView needs a multi-agent env; {spec['id']} has one agent")
        self.env = env
        self.num_envs = env.num_envs
        self.possible_agents = list(spec["agent_names"])
        self.agents = list(self.possible_agents)
        self.teams = dict(zip(self.possible_agents, spec["team_ids"]))
        self.obs_sizes = dict(zip(self.possible_agents, spec["agent_obs_sizes"]))
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self._action_space = make_space(spec["action_space"])
        padded = make_space(spec["observation_space"])
        self._observation_spaces = {}
        for agent, size in self.obs_sizes.items():
            desc = dict(spec["observation_space"])
            desc["shape"] = [size]
            desc["low"] = list(np.asarray(padded.low).reshape(-1)[:size])
            desc["high"] = list(np.asarray(padded.high).reshape(-1)[:size])
            self._observation_spaces[agent] = make_space(desc)

    @property
    def num_agents(self) -> int:
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        return len(self.possible_agents)

    def observation_space(self, agent):
        """One agent's observation space in one env (its own size, without padding)."""
        return self._observation_spaces[self._check_agent(agent)]

    def action_space(self, agent):
        """One agent's action space in one env (Discrete(5) or Box(0, 1, (5,)) for envs/mpe/)."""
        self._check_agent(agent)
        return self._action_space

    def reset(self, seed=None, options=None):
        obs, _ = self.env.reset(seed=seed, options=options)
        return self._split_obs(obs), {a: {} for a in self.possible_agents}

    def step(self, actions: dict):
        """actions: agent -> [N] integers (discrete) or [N, K] floats (continuous), one entry
        for every agent."""
        missing = [a for a in self.possible_agents if a not in actions]
        unknown = [a for a in actions if a not in self._index]
        if missing or unknown:
            raise KeyError(f"actions must name every agent exactly: missing {missing}, unknown "
                           f"{unknown} (agents: {self.possible_agents})")
        per_agent = [actions[a] for a in self.possible_agents]
        if any(type(x).__module__.startswith("torch") for x in per_agent):
            torch = _torch()
            stacked = torch.stack([torch.as_tensor(x) for x in per_agent], dim=1)
        else:
            stacked = np.stack([np.asarray(x) for x in per_agent], axis=1)
        obs, reward, terminated, truncated, info = self.env.step(stacked)
        rewards = {a: reward[:, i] for a, i in self._index.items()}
        terminations = {a: terminated for a in self.possible_agents}
        truncations = {a: truncated for a in self.possible_agents}
        return self._split_obs(obs), rewards, terminations, truncations, self._split_info(info)

    def close(self):
        self.env.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"myriad.pettingzoo.ParallelView({self.env!r})"

    # -- Internals -------------------------------------------------------------------------------

    def _check_agent(self, agent):
        if agent not in self._index:
            raise KeyError(f"unknown agent {agent!r} (agents: {self.possible_agents})")
        return agent

    def _split_obs(self, obs):
        return {a: obs[:, i, : self.obs_sizes[a]] for a, i in self._index.items()}

    def _split_info(self, info):
        out = {}
        for a, i in self._index.items():
            d = {}
            for key, value in info.items():
                if key == "final_obs":
                    d[key] = value[:, i, : self.obs_sizes[a]]
                elif isinstance(value, dict):  # episode statistics: r is [N, A], l is [N]
                    d[key] = {k: (v[:, i] if k == "r" else v) for k, v in value.items()}
                else:
                    d[key] = value  # per-env masks
            out[a] = d
        return out
