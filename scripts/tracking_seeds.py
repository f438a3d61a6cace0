"""Velocity-tracking runs of one task over seeds (Go1-Velocity-Flat-v0's bar): per run, the env
steps and wall time it made, when its training linear-velocity error (env/error_vel_xy in
metrics.csv, under the training conditions) first fell below the bar, its last training errors,
and the play-mode evaluation summary.json holds; then the median and the worst over the runs.

Run: .venv/bin/python scripts/tracking_seeds.py RUN_DIR [RUN_DIR ...] [--bar-xy 0.25]
         [--bar-yaw 0.3]
Each RUN_DIR is a `myriad train` run folder (metrics.csv, config.yaml, summary.json).
"""
import argparse
import csv
import json
import re
import statistics
from pathlib import Path


def seed_of(run: Path) -> str:
    m = re.search(r"^\s*seed:\s*(\S+)", (run / "config.yaml").read_text(), re.MULTILINE)
    return m.group(1) if m else "?"


def summarize(run: Path, bar_xy: float) -> dict:
    rows = list(csv.DictReader((run / "metrics.csv").read_text().splitlines()))
    summary = json.loads((run / "summary.json").read_text())
    crossed = next((r for r in rows if float(r["env/error_vel_xy"]) < bar_xy), None)
    return {
        "seed": seed_of(run),
        "env_steps": summary["env_steps"],
        "minutes": summary["wall_seconds"] / 60,
        "crossed_steps": int(float(crossed["env_steps"])) if crossed else None,
        "crossed_minutes": float(crossed["charts/wall_seconds"]) / 60 if crossed else None,
        "train_xy": float(rows[-1]["env/error_vel_xy"]),
        "train_yaw": float(rows[-1]["env/error_vel_yaw"]),
        "eval_xy": summary.get("eval_error_vel_xy"),
        "eval_yaw": summary.get("eval_error_vel_yaw"),
        "eval_return": summary.get("eval_return_mean"),
        "diverged": summary.get("diverged_episodes"),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+")
    p.add_argument("--bar-xy", type=float, default=0.25)
    p.add_argument("--bar-yaw", type=float, default=0.3)
    a = p.parse_args()
    runs = sorted((summarize(Path(r), a.bar_xy) for r in a.runs), key=lambda s: s["seed"])
    print("seed | env steps | minutes | training xy < bar at | last training xy / yaw | "
          "play eval xy / yaw | return | diverged")
    print("---|---|---|---|---|---|---|---")
    for s in runs:
        crossed = (f"{s['crossed_steps'] / 1e6:.1f}M ({s['crossed_minutes']:.0f} min)"
                   if s["crossed_steps"] is not None else "not reached")
        print(f"{s['seed']} | {s['env_steps'] / 1e6:.1f}M | {s['minutes']:.1f} | {crossed} | "
              f"{s['train_xy']:.3f} / {s['train_yaw']:.3f} | {s['eval_xy']:.3f} / "
              f"{s['eval_yaw']:.3f} | {s['eval_return']:.1f} | {s['diverged']}")
    xy = [s["eval_xy"] for s in runs]
    yaw = [s["eval_yaw"] for s in runs]
    met = sum(1 for s in runs if s["eval_xy"] < a.bar_xy and s["eval_yaw"] < a.bar_yaw)
    print(f"\nplay eval over {len(runs)} seeds: xy median {statistics.median(xy):.3f}, worst "
          f"{max(xy):.3f}; yaw median {statistics.median(yaw):.3f}, worst {max(yaw):.3f}; "
          f"{met} of {len(runs)} under both bars ({a.bar_xy}, {a.bar_yaw})")


if __name__ == "__main__":
    main()
