"""Train CartPole-v1 from Python, load the trained policy, act with it, and export it as
TorchScript that plain PyTorch runs without Myriad.

Run: PYTHONPATH=build/python .venv/bin/python examples/export_policy.py
"""
import argparse
import tempfile
from pathlib import Path

import numpy as np
import torch

import myriad

ROOT = Path(__file__).resolve().parent.parent
p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("--out", default="")
a = p.parse_args()
folder = Path(a.out or tempfile.mkdtemp(prefix="myriad-export-"))

summary = myriad.train(ROOT / "configs" / "cartpole_ppo.yaml", out=folder / "run",
                       env__device="cpu", eval__record=False)
print(f"trained: evaluation {summary['eval_return_mean']:.1f} over {summary['eval_episodes']} episodes")

policy = myriad.load_policy(summary["checkpoint"])
envs = myriad.make("CartPole-v1", num_envs=16, seed=1)
obs, info = envs.reset(seed=1)
actions = policy(obs)                      # deterministic actions, numpy [16]
obs, reward, terminated, truncated, info = envs.step(actions)

path = folder / "cartpole_policy.pt"
policy.export(path)                        # TorchScript: obs [B, 4] float32 -> actions [B]
module = torch.jit.load(str(path))
scripted = module(torch.from_numpy(np.array(obs, dtype=np.float32))).numpy()
assert np.array_equal(scripted, policy(obs)), "TorchScript and Myriad's policy disagree"
print(f"exported {path}; TorchScript gives the same actions as the loaded policy")
