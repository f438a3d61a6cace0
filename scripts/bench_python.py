"""Python overhead: stepping from Python against `myriad bench`, same env, envs and threads.

The machine's speed drifts (other work, clocks), so one pair of runs says little. The script runs
interleaved rounds: in each, one `myriad bench` process and one Python process (this script with
--python-only), in alternating order, and prints every round's figures, its ratio Python / C++ and
the median ratio (docs/lab-notebook.md records it).

Run: PYTHONPATH=build/python .venv/bin/python scripts/bench_python.py [--rounds 5]
     [--repeats 1] [--num-envs 65536] [--threads 2] [--myriad build/tools/myriad]
     [--wait-idle SECONDS]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def python_steps_per_second(env_id, n, threads, steps):
    import myriad  # noqa: PLC0415 (only the Python child needs it)

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


def cpu_idle_fraction(seconds=0.5):
    """Share of all cores' time left idle over `seconds` (Linux /proc/stat)."""
    def sample():
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        return fields[3] + fields[4], sum(fields)  # idle + iowait, total
    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return (idle1 - idle0) / max(total1 - total0, 1)


def wait_until_idle(a):
    """With --wait-idle, waits (up to --wait-idle seconds) for a moment when other work leaves the
    cores at least 90% idle, so that both sides of a round run on a quiet machine."""
    deadline = time.monotonic() + a.wait_idle
    while time.monotonic() < deadline and cpu_idle_fraction() < 0.9:
        pass


def cli_round(a):
    wait_until_idle(a)
    out = subprocess.check_output(
        [a.myriad, "bench", "--env", a.env, "--num-envs", str(a.num_envs), "--steps",
         str(a.steps), "--threads", str(a.threads), "--device", "cpu", "--json"])
    return json.loads(out)["steps_per_second"]


def python_round(a):
    wait_until_idle(a)
    out = subprocess.check_output(
        [sys.executable, os.path.abspath(__file__), "--python-only", "--env", a.env,
         "--num-envs", str(a.num_envs), "--steps", str(a.steps), "--threads", str(a.threads)])
    return json.loads(out)["steps_per_second"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env", default="CartPole-v1")
    p.add_argument("--num-envs", type=int, default=65536)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeats", type=int, default=1, help="processes per side per round (best)")
    build = os.environ.get("MYRIAD_BUILD_DIR", os.path.join(HERE, "..", "build"))
    p.add_argument("--myriad", default=os.path.join(build, "tools", "myriad"))
    p.add_argument("--wait-idle", type=float, default=0,
                   help="seconds to wait at most, before each run, for idle cores (shared hosts)")
    p.add_argument("--python-only", action="store_true", help="one Python measurement, as JSON")
    a = p.parse_args()
    if a.python_only:
        sps = python_steps_per_second(a.env, a.num_envs, a.threads, a.steps)
        print(json.dumps({"env": a.env, "num_envs": a.num_envs, "threads": a.threads,
                          "impl": "python myriad.make(...).step", "steps_per_second": sps}))
        return
    print(f"{a.env}, {a.num_envs} envs, {a.threads} threads, {a.steps} steps; "
          f"{a.rounds} interleaved rounds of {a.repeats} process(es) per side (best kept)")
    ratios = []
    for r in range(a.rounds):
        # Alternate which side goes first, so that a drift favours neither; with --repeats K each
        # side runs K processes (alternating) and keeps its best, which load from elsewhere
        # cannot raise.
        cli = py = 0.0
        for k in range(a.repeats):
            if (r + k) % 2 == 0:
                cli, py = max(cli, cli_round(a)), max(py, python_round(a))
            else:
                py, cli = max(py, python_round(a)), max(cli, cli_round(a))
        ratios.append(py / cli)
        print(f"round {r + 1}: myriad bench {cli / 1e6:7.1f} M/s  Python {py / 1e6:7.1f} M/s  "
              f"ratio {py / cli:.2f}", flush=True)
    print(f"ratios: {' '.join(f'{x:.2f}' for x in ratios)}")
    print(f"median Python / myriad bench: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
