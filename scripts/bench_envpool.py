"""EnvPool beside `myriad bench`: the same env, env count and threads, random actions.

Prints one JSON line with the same keys as `myriad bench --json`.
"""
import argparse
import json
import time

import envpool
import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env", default="CartPole-v1")
    p.add_argument("--num-envs", type=int, default=65536)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    env = envpool.make_gym(a.env, num_envs=a.num_envs, batch_size=a.num_envs,
                           num_threads=a.threads, seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    space = env.action_space
    # The same kind of action ring as `myriad bench`: pre-sampled, outside the timed loop.
    if hasattr(space, "n"):
        ring = [rng.integers(0, space.n, a.num_envs, dtype=np.int32) for _ in range(16)]
    else:  # Box: uniform in [low, high] (clipped to [-1, 1] as myriad bench does)
        low, high = np.clip(space.low, -1, 1), np.clip(space.high, -1, 1)
        ring = [rng.uniform(low, high, (a.num_envs, *space.shape)).astype(np.float32)
                for _ in range(16)]
    for t in range(min(a.steps // 10 + 1, 50)):
        env.step(ring[t % 16])
    start = time.perf_counter()
    for t in range(a.steps):
        env.step(ring[t % 16])
    seconds = time.perf_counter() - start
    print(json.dumps({"env": a.env, "num_envs": a.num_envs, "device": "cpu", "threads": a.threads,
                      "steps": a.steps, "seconds": seconds, "impl": f"envpool {envpool.__version__}",
                      "steps_per_second": a.num_envs * a.steps / seconds}))


if __name__ == "__main__":
    main()
