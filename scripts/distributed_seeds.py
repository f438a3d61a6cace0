"""A config trained by 1 rank of N envs and by K ranks of N/K envs each (env.num_envs=N, the
job's count, split over the ranks; the same total env steps), over seeds, on this machine over
loopback (Gloo): evaluation return, when the last 100 episodes first reached the env's
threshold, wall seconds. Median and worst.

Usage: .venv/bin/python scripts/distributed_seeds.py [--config configs/cartpole_ppo.yaml]
       [--envs 64] [--ranks 2] [--seeds 1-5]
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MYRIAD = ROOT / "build" / "tools" / "myriad"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train(config, ranks, envs, seed, out):
    port = free_port()
    procs = []
    for rank in range(ranks):
        env = dict(os.environ, OMP_NUM_THREADS="1")
        if ranks > 1:
            env.update(RANK=str(rank), WORLD_SIZE=str(ranks), LOCAL_RANK=str(rank),
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        threads = max(1, (os.cpu_count() or 1) // ranks)
        procs.append(subprocess.Popen(
            [str(MYRIAD), "train", str(config), "--out", str(out), "--overwrite",
             f"env.num_envs={envs}", f"run.seed={seed}", f"run.threads={threads}",
             "env.device=cpu", "eval.record=false"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(err)
    return json.loads((Path(out) / "summary.json").read_text())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default=str(ROOT / "configs/cartpole_ppo.yaml"))
    p.add_argument("--envs", type=int, default=64)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--seeds", default="1-5")
    args = p.parse_args()
    lo, _, hi = args.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    with tempfile.TemporaryDirectory() as tmp:
        for ranks in (1, args.ranks):
            evals, solved, walls = [], [], []
            for seed in seeds:
                s = train(args.config, ranks, args.envs, seed, Path(tmp) / f"r{ranks}-{seed}")
                evals.append(s["eval_return_mean"])
                solved.append(s["solved_seconds"])
                walls.append(s["wall_seconds"])
                print(f"{ranks} rank(s) x {args.envs // ranks} envs, seed {seed}: eval "
                      f"{s['eval_return_mean']:.1f}, solved at {s['solved_seconds']} s, "
                      f"{s['env_steps']} env steps in {s['wall_seconds']:.1f} s", flush=True)
            done = [x for x in solved if x is not None]
            print(f"{ranks} rank(s): eval median {statistics.median(evals):.1f}, worst "
                  f"{min(evals):.1f}; solved {len(done)}/{len(solved)}"
                  + (f", median {statistics.median(done):.2f} s" if done else "")
                  + f"; wall median {statistics.median(walls):.1f} s", flush=True)


if __name__ == "__main__":
    main()
