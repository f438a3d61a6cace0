"""Stable-Baselines3's PPO on a Myriad vector env (CartPole-v1, 8 envs in one batch).

Run: PYTHONPATH=build/python .venv/bin/python examples/sb3_ppo_cartpole.py [--steps 100000]
Needs stable-baselines3 (scripts/install-deps.sh installs it for the tests).
"""
import argparse

from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import VecMonitor

import myriad
import myriad.sb3

p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("--steps", type=int, default=100_000)
p.add_argument("--seed", type=int, default=0)
a = p.parse_args()

venv = VecMonitor(myriad.sb3.VecEnv(myriad.make("CartPole-v1", num_envs=8, seed=a.seed)))
model = PPO("MlpPolicy", venv, seed=a.seed, device="cpu", verbose=0).learn(a.steps)
mean, std = evaluate_policy(model, venv, n_eval_episodes=16)
print(f"SB3 PPO on Myriad's CartPole-v1 after {a.steps} steps: mean return {mean:.1f} +- {std:.1f}")
