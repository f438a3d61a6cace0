"""Runs one config over several seeds and prints a table: per seed the evaluation return, the
time to solve, wall time, env steps and throughput; then how many seeds reached the threshold,
and the median and worst seed. docs/lab-notebook.md records its output.

Run: .venv/bin/python scripts/seeds.py configs/cartpole_ppo.yaml [--seeds 1-10] [key=value ...]
     [--nproc-per-node K]

--nproc-per-node K trains each seed as a data-parallel job of K ranks on this machine (`myriad
launch --nproc-per-node K -- train ...`, Gloo over loopback; run.threads=1 per rank unless an
override says otherwise). The recipe is the same at every world size (env.num_envs is the job's
count, split over the ranks), so the table compares directly with a 1-rank sweep.

The threshold is the env's (CartPole 475, Acrobot -100, MountainCarContinuous 90) or
--threshold; Pendulum has none registered and the project's bar is -200. A seed "holds" when its
deterministic evaluation (100 episodes) reaches the threshold.
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

THRESHOLDS = {"CartPole-v1": 475.0, "Acrobot-v1": -100.0, "MountainCarContinuous-v0": 90.0,
              "Pendulum-v1": -200.0, "MountainCar-v0": -110.0,
              # The locomotion suite: the project's bars within 15 minutes on 2 CPU cores (below
              # Gymnasium's registered thresholds, which PPO reaches only with far more steps).
              "Hopper-v5": 2500.0, "Walker2d-v5": 2500.0, "HalfCheetah-v5": 2500.0,
              "Ant-v5": 2000.0}


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            seeds.extend(range(int(lo), int(hi) + 1))
        else:
            seeds.append(int(part))
    return seeds


def env_id_of(config, overrides):
    for o in overrides:
        if o.startswith("env.id="):
            return o.split("=", 1)[1]
    with open(config) as f:
        in_env = False
        for line in f:
            if line.startswith("env:"):
                in_env = True
            elif in_env and line.strip().startswith("id:"):
                return line.split(":", 1)[1].split("#")[0].strip()
    return None


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("config")
    p.add_argument("overrides", nargs="*", help="key.path=value overrides for every seed")
    p.add_argument("--seeds", default="1-10", help="e.g. 1-10 or 1,4,7")
    p.add_argument("--threshold", type=float, default=None)
    p.add_argument("--myriad", default=os.path.join(root, "build", "tools", "myriad"))
    p.add_argument("--out", default=None, help="folder for the runs (default: a temp folder)")
    p.add_argument("--json", action="store_true", help="also print one JSON line per seed")
    p.add_argument("--parallel", type=int, default=1,
                   help="seeds run at once; each gets run.threads=1 (one core) when > 1")
    p.add_argument("--nproc-per-node", type=int, default=1,
                   help="ranks per seed (a data-parallel job through `myriad launch`)")
    a = p.parse_args()
    env_id = env_id_of(a.config, a.overrides)
    threshold = a.threshold if a.threshold is not None else THRESHOLDS.get(env_id)
    out = a.out or tempfile.mkdtemp(prefix="myriad-seeds-")
    rows = []
    print(f"{a.config} ({env_id}), threshold {threshold if threshold is not None else 'none'}, "
          f"runs in {out}")
    print(f"{'seed':>4} {'eval':>9} {'solved_s':>9} {'wall_s':>7} {'env_steps':>10} {'SPS':>9}")
    extra = ["run.threads=1"] if a.parallel > 1 or a.nproc_per_node > 1 else []
    launch = ([a.myriad, "launch", "--nproc-per-node", str(a.nproc_per_node), "--"]
              if a.nproc_per_node > 1 else [a.myriad])
    if a.nproc_per_node > 1:
        print(f"{a.nproc_per_node} ranks per seed (myriad launch, Gloo over loopback)")

    def train(seed):
        run = os.path.join(out, f"seed{seed}")
        cmd = [*launch, "train", a.config, "--out", run, f"run.seed={seed}",
               "eval.record=false", *extra, *a.overrides]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            print(proc.stdout[-2000:])
            sys.exit(f"seed {seed}: myriad train failed ({proc.returncode})")
        with open(os.path.join(run, "summary.json")) as f:
            s = json.load(f)
        if s.get("world_size", 1) != a.nproc_per_node:
            sys.exit(f"seed {seed}: ran as {s.get('world_size')} ranks, not {a.nproc_per_node}")
        s["seed"], s["process_seconds"] = seed, time.perf_counter() - t0
        return s

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.parallel)) as pool:
        futures = [pool.submit(train, seed) for seed in parse_seeds(a.seeds)]
        for f in concurrent.futures.as_completed(futures):
            s = f.result()
            seed = s["seed"]
            rows.append(s)
            solved = s.get("solved_seconds")
            print(f"{seed:>4} {s['eval_return_mean']:>9.1f} "
                  f"{(f'{solved:.2f}' if solved is not None else 'n/a'):>9} "
                  f"{s['wall_seconds']:>7.1f} {s['env_steps']:>10} "
                  f"{s['env_steps'] / s['wall_seconds']:>9.0f}", flush=True)
            if a.json:
                print(json.dumps(s))
    evals = [r["eval_return_mean"] for r in rows]
    solved = [r["solved_seconds"] for r in rows if r.get("solved_seconds") is not None]
    walls = [r["wall_seconds"] for r in rows]
    sps = [r["env_steps"] / r["wall_seconds"] for r in rows]
    if threshold is not None:  # Humanoid-v5 has none: its bar is that the return improves
        held = sum(e >= threshold for e in evals)
        print(f"reached {threshold}: {held}/{len(rows)} seeds")
    print(f"eval return: median {statistics.median(evals):.1f}, worst {min(evals):.1f}")
    if solved:
        print(f"time to solve (training window): median {statistics.median(solved):.2f} s, "
              f"worst {max(solved):.2f} s over {len(solved)}/{len(rows)} seeds that solved")
    print(f"wall time: median {statistics.median(walls):.1f} s, worst {max(walls):.1f} s; "
          f"SPS median {statistics.median(sps):.0f}")


if __name__ == "__main__":
    main()
