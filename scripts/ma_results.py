"""Multi-agent PPO over seeds: trains configs/<name>_ppo.yaml with `myriad train` for each seed
and compares each trained team's evaluation (1,000 episodes, deterministic policy; teams in
agents.random_teams stay random) with uniformly random actions for every team in the same
number of fresh episodes. Prints per seed and the median and worst over seeds.

  spread: Spread-v0, the agents' return per agent (higher is better)
  tag:    Tag-v0, the adversaries against a random prey; catches per episode = adversary
          return / 10 (every (adversary, prey) overlap in a step pays each adversary 10)
  sumo:   Sumo-v0, wrestler_0 trained against a random wrestler_1 (win rates)

Usage: PYTHONPATH=build/python .venv/bin/python scripts/ma_results.py --runs spread,tag,sumo
       --seeds 1-5 [--out /tmp/ma-runs]
"""
import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

import myriad

ROOT = Path(__file__).resolve().parents[1]
MYRIAD = ROOT / "build" / "tools" / "myriad"
RUNS = {  # name: (config, overrides, team reported, what is reported)
    "spread": ("configs/spread_ppo.yaml", [], "agents", "return"),
    "tag": ("configs/tag_ppo.yaml", [], "adversaries", "catches"),
    "sumo": ("configs/sumo_ppo.yaml", ["agents.random_teams=[wrestler_1]"], "wrestler_0", "win"),
}

ENV_IDS = {"spread": "Spread-v0", "tag": "Tag-v0", "sumo": "Sumo-v0"}


def seeds(text):
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def figure(team, kind):
    if kind == "catches":
        return team["return_mean"] / 10
    if kind == "win":
        return team["win_rate"]
    return team["return_mean"]


def random_baseline(env_id, team_name, kind, episodes, seed):
    """Every team acting uniformly at random, one episode in each of `episodes` envs."""
    env = myriad.make(env_id, num_envs=episodes, seed=seed, episode_statistics=True)
    spec = env.spec
    team = spec["team_names"].index(team_name)
    agents = [i for i, t in enumerate(spec["team_ids"]) if t == team]
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    returns = np.full(episodes, np.nan)
    winners = np.full(episodes, -2)
    for _ in range(spec["max_episode_steps"]):
        actions = rng.integers(0, 5, size=(episodes, spec["num_agents"]))
        _, _, _, _, info = env.step(actions)
        done = info["_episode"] & np.isnan(returns)
        returns[done] = info["episode"]["r"][done][:, agents].mean(1)
        if "winner" in info:
            winners[done] = info["winner"][done]
    env.close()
    if kind == "win":
        return float(np.mean(winners == team))
    return float(np.mean(returns) / (10 if kind == "catches" else 1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", default="spread,tag,sumo")
    p.add_argument("--seeds", default="1-5")
    p.add_argument("--out", default="/tmp/ma-runs")
    args = p.parse_args()
    for name in args.runs.split(","):
        config, overrides, team_name, kind = RUNS[name]
        trained, random, walls = [], [], []
        for seed in seeds(args.seeds):
            out = Path(args.out) / f"{name}-{seed}"
            cmd = [str(MYRIAD), "train", str(ROOT / config), "--out", str(out), "--overwrite",
                   f"run.seed={seed}", *overrides]
            subprocess.run(cmd, check=True, capture_output=True, text=True)
            summary = json.loads((out / "summary.json").read_text())
            team = next(t for t in summary["eval_teams"] if t["name"] == team_name)
            base = random_baseline(ENV_IDS[name], team_name, kind, summary["eval_episodes"],
                                   12345 + seed)
            trained.append(figure(team, kind))
            random.append(base)
            walls.append(summary["wall_seconds"])
            print(f"{name} seed {seed}: trained {figure(team, kind):.3f}, random {base:.3f} "
                  f"({kind}), {summary['env_steps']} env steps in "
                  f"{summary['wall_seconds']:.1f} s", flush=True)
        # Higher is better for every figure here: the worst seed is the lowest.
        print(f"{name}: {kind} trained median {statistics.median(trained):.3f}, worst "
              f"{min(trained):.3f}; random median {statistics.median(random):.3f}; wall s median "
              f"{statistics.median(walls):.1f}, worst {max(walls):.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
