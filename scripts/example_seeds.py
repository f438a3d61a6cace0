"""Runs examples/cleanrl_ppo_cartpole.py over seeds on Myriad's and on Gymnasium's vector env
(the same loop; only the env construction differs) and prints, per backend, how many seeds
solved CartPole (mean of the last 100 episodes >= 475) and the env steps it took (median and
worst). Usage: PYTHONPATH=build/python .venv/bin/python scripts/example_seeds.py --seeds 1-5
"""
import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cleanrl_ppo_cartpole.py"


def seeds(text):
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", default="1-5")
    p.add_argument("--envs", default="myriad,gymnasium")
    args = p.parse_args()
    for backend in args.envs.split(","):
        steps, seconds, unsolved = [], [], []
        for seed in seeds(args.seeds):
            out = subprocess.run([sys.executable, str(EXAMPLE), "--envs", backend, "--seed",
                                  str(seed)], capture_output=True, text=True).stdout
            m = re.search(r"SOLVED mean return ([\d.]+) at step (\d+) in ([\d.]+) s", out)
            print(f"{backend} seed {seed}: " + (m.group(0) if m else "not solved"), flush=True)
            if m:
                steps.append(int(m.group(2)))
                seconds.append(float(m.group(3)))
            else:
                unsolved.append(seed)
        n = len(steps) + len(unsolved)
        if steps:
            print(f"{backend}: solved {len(steps)}/{n}; env steps to solve median "
                  f"{statistics.median(steps):.0f}, worst {max(steps)}; wall s median "
                  f"{statistics.median(seconds):.1f}" + (f"; unsolved seeds {unsolved}"
                                                         if unsolved else ""))
        else:
            print(f"{backend}: solved 0/{n}")


if __name__ == "__main__":
    main()
