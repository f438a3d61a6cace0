"""End-to-end training throughput: runs `myriad train` commands in interleaved rounds (A, B, A,
B, ...) so that a busy or throttling machine affects each alike, and prints per round and median
the env steps per second (env_steps / wall_seconds from summary.json) and the time to solve.

Run: .venv/bin/python scripts/bench_train.py --rounds 3 \
        "new=build/tools/myriad train configs/cartpole_ppo.yaml" \
        "old=/path/to/old/myriad train /path/to/old/configs/cartpole_ppo.yaml"
Each command gets `--out <tmp> run.eval_episodes=0 eval.record=false` appended.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import tempfile


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", help="NAME=COMMAND (a `myriad train ...` command line)")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    runs = [r.split("=", 1) for r in a.runs]
    out = tempfile.mkdtemp(prefix="myriad-bench-train-")
    results = {name: [] for name, _ in runs}
    for rnd in range(a.rounds):
        order = runs if rnd % 2 == 0 else runs[::-1]
        for name, cmd in order:
            run_dir = os.path.join(out, f"{name}-{rnd}")
            args = shlex.split(cmd) + ["--out", run_dir, "run.eval_episodes=0",
                                       "eval.record=false"]
            subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(run_dir, "summary.json")) as f:
                s = json.load(f)
            sps = s["env_steps"] / s["wall_seconds"]
            results[name].append((sps, s.get("solved_seconds"), s["wall_seconds"]))
            solved = s.get("solved_seconds")
            print(f"round {rnd} {name:>12}: {sps:>9.0f} env steps/s, wall {s['wall_seconds']:.2f} s,"
                  f" solved {'n/a' if solved is None else f'{solved:.2f} s'}", flush=True)
    for name, rows in results.items():
        solved = [r[1] for r in rows if r[1] is not None]
        print(f"{name:>12}: median {statistics.median(r[0] for r in rows):.0f} env steps/s, "
              f"wall {statistics.median(r[2] for r in rows):.2f} s, solved "
              f"{statistics.median(solved) if solved else float('nan'):.2f} s "
              f"({len(solved)}/{len(rows)} solved)")


if __name__ == "__main__":
    main()
