"""A PettingZoo-style parallel loop over a batch of multi-agent envs (Tag-v0: 3 adversaries
chase 1 good agent), with every agent acting at random.

Run: PYTHONPATH=build/python .venv/bin/python examples/pettingzoo_parallel.py [--envs 1024]
Each value of the dicts is an array over the batch: obs[agent] is [N, obs_size].
"""
import argparse

import numpy as np

import myriad

p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("--envs", type=int, default=1024)
p.add_argument("--steps", type=int, default=200)
a = p.parse_args()

view = myriad.pettingzoo.ParallelView(myriad.make("Tag-v0", num_envs=a.envs, seed=0,
                                                  episode_statistics=True))
obs, infos = view.reset(seed=0)
rng = np.random.default_rng(0)
totals = {agent: 0.0 for agent in view.agents}
for _ in range(a.steps):
    actions = {agent: rng.integers(0, view.action_space(agent).n, a.envs) for agent in view.agents}
    obs, rewards, terminations, truncations, infos = view.step(actions)
    for agent in view.agents:
        totals[agent] += float(np.asarray(rewards[agent]).sum())
for agent in view.agents:
    print(f"{agent:12s} team {view.teams[agent]}  "
          f"obs {tuple(obs[agent].shape)}  mean reward per env step "
          f"{totals[agent] / (a.steps * a.envs):+.4f}")
