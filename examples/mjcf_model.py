"""MJCF-v0: your own MuJoCo model as a batched env, on Myriad's engine and on libmujoco, with
reward terms chosen by options. Uses the project's Hopper model unless --xml names another.

Run: PYTHONPATH=build/python .venv/bin/python examples/mjcf_model.py [--xml my_robot.xml]
Check a model first with `build/tools/myriad physics-check my_robot.xml`.
"""
import argparse
from pathlib import Path

import numpy as np

import myriad

ROOT = Path(__file__).resolve().parent.parent
p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("--xml", default=str(ROOT / "envs" / "locomotion" / "models" / "hopper.xml"))
p.add_argument("--envs", type=int, default=64)
p.add_argument("--steps", type=int, default=200)
a = p.parse_args()

options = dict(frame_skip=4, reset_noise_scale=5e-3, max_episode_steps=1000,
               forward_body="torso", forward_reward_weight=1.0, ctrl_cost_weight=1e-3,
               healthy_reward=1.0, healthy_z_range=(0.7, 10.0), terminate_when_unhealthy=1)
for physics in ("myriad", "mujoco"):
    envs = myriad.make("MJCF-v0", num_envs=a.envs, xml=a.xml, physics=physics, seed=0, **options)
    obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    low, high = envs.single_action_space.low, envs.single_action_space.high
    total, ended = 0.0, 0
    for _ in range(a.steps):
        actions = rng.uniform(low, high, (a.envs,) + low.shape).astype(np.float32)
        obs, reward, terminated, truncated, info = envs.step(actions)
        total += float(reward.sum())
        ended += int((terminated | truncated).sum())
    print(f"physics={physics:6s} obs {obs.shape}, actions {envs.single_action_space.shape}, "
          f"mean reward {total / (a.steps * a.envs):.3f}, episodes ended {ended}")
