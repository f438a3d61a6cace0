"""What bench_envpool.py and bench_gymnasium.py share with `myriad bench`: the command line,
a ring of 16 pre-sampled random actions, the warm-up, the timed loop, and one JSON line with
the keys of `myriad bench --json`."""
import argparse
import json
import time

import numpy as np


def arguments(env: str, num_envs: int, steps: int, threads: int) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--env", default=env)
    p.add_argument("--num-envs", type=int, default=num_envs)
    p.add_argument("--steps", type=int, default=steps)
    p.add_argument("--threads", type=int, default=threads)
    return p.parse_args()


def action_ring(space, num_envs: int, size: int = 16) -> list:
    """Discrete: uniform integers; Box: uniform in [low, high] clipped to [-1, 1], as
    `myriad bench` samples them (unbounded controls in [-1, 1])."""
    rng = np.random.default_rng(0)
    if hasattr(space, "n"):
        return [rng.integers(0, space.n, num_envs, dtype=np.int32) for _ in range(size)]
    low, high = np.clip(space.low, -1, 1), np.clip(space.high, -1, 1)
    return [rng.uniform(low, high, (num_envs, *space.shape)).astype(np.float32)
            for _ in range(size)]


def timed_steps(step, ring: list, steps: int) -> float:
    """Seconds for `steps` calls of step(action) after min(steps/10 + 1, 50) warm-up calls."""
    for t in range(min(steps // 10 + 1, 50)):
        step(ring[t % len(ring)])
    start = time.perf_counter()
    for t in range(steps):
        step(ring[t % len(ring)])
    return time.perf_counter() - start


def report(a: argparse.Namespace, seconds: float, impl: str) -> None:
    print(json.dumps({"env": a.env, "num_envs": a.num_envs, "device": "cpu",
                      "threads": a.threads, "steps": a.steps, "seconds": seconds, "impl": impl,
                      "steps_per_second": a.num_envs * a.steps / seconds}))
