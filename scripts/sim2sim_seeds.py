"""Sim-to-sim over seeds: each run's last checkpoint evaluated on Myriad's engine and on
libmujoco (`myriad eval --physics myriad|mujoco --json`: the env's evaluation mode, for the
legged tasks mjlab's play mode; the same episodes' seed), and the share of the tracking reward
(the two tracking terms' sum) the policy keeps on libmujoco; then the median and the worst over
the runs. The bar it is read against: at least 80% kept.

Run: .venv/bin/python scripts/sim2sim_seeds.py RUN_DIR [RUN_DIR ...] [--episodes 64]
         [--myriad build/tools/myriad] [--json OUT.json]
Each RUN_DIR is a `myriad train` run folder holding checkpoints/last.pt.
"""
import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACKING = ("reward_track_linear_velocity", "reward_track_angular_velocity")


def evaluate(myriad: str, checkpoint: Path, physics: str, episodes: int) -> dict:
    cmd = [myriad, "eval", str(checkpoint), "--episodes", str(episodes), "--physics", physics,
           "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    if out.get("physics") != physics:
        sys.exit(f"{checkpoint}: evaluated on {out.get('physics')!r}, not {physics!r}")
    missing = [k for k in TRACKING if k not in out]
    if missing:
        sys.exit(f"{checkpoint}: the evaluation reports no {', '.join(missing)} (an env without "
                 "the velocity task's reward terms, or a myriad build older than per-term "
                 "evaluation)")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+")
    p.add_argument("--episodes", type=int, default=64)
    p.add_argument("--myriad", default=str(ROOT / "build" / "tools" / "myriad"))
    p.add_argument("--json", help="also write every evaluation to this file")
    a = p.parse_args()
    rows = []
    for run in a.runs:
        ckpt = Path(run) / "checkpoints" / "last.pt"
        engine = evaluate(a.myriad, ckpt, "myriad", a.episodes)
        mujoco = evaluate(a.myriad, ckpt, "mujoco", a.episodes)
        tracking = [sum(e[k] for k in TRACKING) for e in (engine, mujoco)]
        if tracking[0] <= 0:
            sys.exit(f"{run}: no tracking reward on the engine ({tracking[0]}); nothing to keep")
        rows.append({"run": str(run), "myriad": engine, "mujoco": mujoco,
                     "kept": tracking[1] / tracking[0]})
        print(f"{run}: return {engine['return_mean']:.2f} / {mujoco['return_mean']:.2f}; "
              f"tracking reward {tracking[0]:.2f} / {tracking[1]:.2f} "
              f"({100 * rows[-1]['kept']:.1f}% kept); xy error {engine['error_vel_xy']:.4f} / "
              f"{mujoco['error_vel_xy']:.4f}; yaw error {engine['error_vel_yaw']:.4f} / "
              f"{mujoco['error_vel_yaw']:.4f}; diverged {engine['diverged_episodes']} / "
              f"{mujoco['diverged_episodes']}   (engine / libmujoco)", flush=True)
    kept = [r["kept"] for r in rows]
    print(f"\ntracking reward kept on libmujoco over {len(rows)} runs: median "
          f"{100 * statistics.median(kept):.1f}%, worst {100 * min(kept):.1f}%")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
