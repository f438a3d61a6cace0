"""Multi-agent PPO from Python: Tag-v0's adversaries learn to catch a prey that acts at random
(configs/tag_ppo.yaml), one policy per team; then the trained checkpoint is evaluated.

Run: PYTHONPATH=build/python .venv/bin/python examples/multi_agent_train.py [--steps 200000]
The shipped recipe trains 1M env steps (about a minute on 2 cores); --steps shortens it.
"""
import argparse
import tempfile
from pathlib import Path

import myriad

ROOT = Path(__file__).resolve().parent.parent
p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("--steps", type=int, default=200_000)
p.add_argument("--out", default="")
a = p.parse_args()

out = Path(a.out or tempfile.mkdtemp(prefix="myriad-tag-")) / "run"
summary = myriad.train(ROOT / "configs" / "tag_ppo.yaml", out=out, env__device="cpu",
                       run__total_env_steps=a.steps, run__eval_episodes=100)
print(f"trained {summary['env_steps']} env steps in {summary['wall_seconds']:.1f} s")
for team in summary.get("eval_teams", []):
    role = "trained" if team["learns"] else "random"
    print(f"  {team['name']} ({role}): mean return per agent {team['return_mean']:.2f}")
print(f"run folder: {summary['run_dir']}")
