"""Gymnasium's own vector env beside `myriad bench`: the same env id, env count and random
actions; SyncVectorEnv with 1 thread, AsyncVectorEnv (one process per env) otherwise.

Prints one JSON line with the same keys as `myriad bench --json`.
"""
import argparse
import json
import time

import gymnasium as gym
import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env", default="Ant-v5")
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    kind = "sync" if a.threads == 1 else "async"
    env = gym.make_vec(a.env, num_envs=a.num_envs, vectorization_mode=kind)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    space = env.single_action_space
    low, high = np.clip(space.low, -1, 1), np.clip(space.high, -1, 1)
    ring = [rng.uniform(low, high, (a.num_envs, *space.shape)).astype(np.float32)
            for _ in range(16)]
    for t in range(min(a.steps // 10 + 1, 50)):
        env.step(ring[t % 16])
    start = time.perf_counter()
    for t in range(a.steps):
        env.step(ring[t % 16])
    seconds = time.perf_counter() - start
    env.close()
    print(json.dumps({"env": a.env, "num_envs": a.num_envs, "device": "cpu", "threads": a.threads,
                      "steps": a.steps, "seconds": seconds,
                      "impl": f"gymnasium {gym.__version__} {kind} vector env",
                      "steps_per_second": a.num_envs * a.steps / seconds}))


if __name__ == "__main__":
    main()
