"""What data parallelism costs each shipped config on this machine: every config trained by 2
ranks over loopback (Gloo, CPU) for a few updates; from rank 0's metrics.csv, per update: the
collective calls, their payload bytes, the host seconds spent in them, and the update's wall
seconds. Medians over the updates after the first.

Usage: .venv/bin/python scripts/allreduce_per_config.py [--ranks 2] [--updates 8] [configs/*.yaml]
"""
import argparse
import csv
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

import yaml

from distributed_seeds import MYRIAD, ROOT, free_port  # scripts/distributed_seeds.py


def run(config, ranks, updates, out):
    c = yaml.safe_load(Path(config).read_text())
    # env.num_envs is the job's count (split over the ranks): one update is num_envs * num_steps
    steps = c["env"]["num_envs"] * c["ppo"]["num_steps"] * updates
    port = free_port()
    procs = []
    for rank in range(ranks):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(ranks), LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen(
            [str(MYRIAD), "train", str(config), "--out", str(out), "--overwrite",
             f"run.total_env_steps={steps}", "run.eval_episodes=0", "eval.record=false",
             "env.device=cpu", "run.threads=1", "run.checkpoint_every=0"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(err)
    with open(Path(out) / "metrics.csv") as f:
        rows = list(csv.DictReader(f))[1:]  # the first update includes start-up
    wall = [float(b["charts/wall_seconds"]) - float(a["charts/wall_seconds"])
            for a, b in zip(rows, rows[1:])]
    med = lambda key: statistics.median(float(r[key]) for r in rows)  # noqa: E731
    return (med("perf/allreduce_calls"), med("perf/allreduce_bytes"),
            med("perf/allreduce_seconds"), statistics.median(wall))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--updates", type=int, default=8)
    p.add_argument("configs", nargs="*")
    args = p.parse_args()
    configs = args.configs or sorted(str(c) for c in (ROOT / "configs").glob("*.yaml"))
    print("| config | calls/update | bytes/update | all-reduce s/update | update s | share |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for config in configs:
            calls, size, secs, wall = run(config, args.ranks, args.updates,
                                          Path(tmp) / Path(config).stem)
            print(f"| {Path(config).name} | {calls:.0f} | {size:,.0f} | {secs:.4f} | "
                  f"{wall:.4f} | {secs / wall:.0%} |", flush=True)


if __name__ == "__main__":
    main()
