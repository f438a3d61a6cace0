"""Python overhead: stepping from Python against `myriad bench`, same env, envs, threads, in one
run. Prints both JSON lines and the ratio (docs/benchmarks.md records it).

Run: PYTHONPATH=build/python .venv/bin/python scripts/bench_python.py [--num-envs N] [--threads K]
"""
import argparse
import json
import os
import subprocess
import time

import numpy as np

import myriad


def python_steps_per_second(env_id, n, threads, steps):
    envs = myriad.make(env_id, num_envs=n, seed=0, threads=threads)
    rng = np.random.default_rng(12345)
    # The same ring of 16 pre-sampled action batches as `myriad bench`.
    ring = [rng.integers(0, envs.single_action_space.n, n, dtype=np.int32) for _ in range(16)]
    for t in range(min(steps // 10 + 1, 50)):
        envs.step(ring[t % 16])
    start = time.perf_counter()
    for t in range(steps):
        envs.step(ring[t % 16])
    return n * steps / (time.perf_counter() - start)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env", default="CartPole-v1")
    p.add_argument("--num-envs", type=int, default=65536)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--myriad", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                    "tools", "myriad"))
    a = p.parse_args()
    cli = json.loads(subprocess.check_output(
        [a.myriad, "bench", "--env", a.env, "--num-envs", str(a.num_envs), "--steps",
         str(a.steps), "--threads", str(a.threads), "--device", "cpu", "--json"]))
    py = python_steps_per_second(a.env, a.num_envs, a.threads, a.steps)
    print(json.dumps(cli))
    print(json.dumps({"env": a.env, "num_envs": a.num_envs, "threads": a.threads,
                      "impl": "python myriad.make(...).step", "steps_per_second": py}))
    print(f"Python / myriad bench: {py / cli['steps_per_second']:.2f}")


if __name__ == "__main__":
    main()
