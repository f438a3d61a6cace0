"""simple_tag throughput in one run: Myriad Tag-v0 beside VMAS and PettingZoo (mpe2).

All three run simple_tag with 3 adversaries, 1 good agent, 2 obstacles, discrete actions
(5 per agent), uniformly random actions pre-sampled outside the timed loop, and a
25-step episode:
  myriad     `myriad bench --json --env Tag-v0` (subprocess; auto-reset inside the env)
  vmas       vmas.make_env("simple_tag", device="cpu", continuous_actions=False,
             max_steps=25); simple_tag never terminates early, so every env is done at the
             same step and the loop calls env.reset() on the whole batch when done.any()
  pettingzoo mpe2.simple_tag_v3.parallel_env() (one env, max_cycles=25); reset when
             env.agents is empty. Each env step counts once (not once per agent).
  vmas_1sub  the same VMAS env with World substeps set from 10 to 1 after construction
             (supplementary: PettingZoo and Myriad integrate once per env step)
Measurements are interleaved over --rounds rounds, with the order reversed every other
round, at 1 and 2 threads (torch.set_num_threads / OMP_NUM_THREADS / --threads).
Prints one JSON line per measurement, then a table of medians and the ratios.

  PYTHONPATH=/work/main/build/python OMP_NUM_THREADS=1 \\
    .venv/bin/python scripts/bench_tag.py --myriad /work/main/build/tools/myriad
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np
import torch


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().strip()


def myriad_bench(binary, n, threads, steps):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([binary, "bench", "--json", "--env", "Tag-v0", "--num-envs", str(n),
                          "--threads", str(threads), "--steps", str(steps)],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


class Myriad:
    def __init__(self, binary, n, seconds):
        self.binary, self.n, self.seconds = binary, n, seconds
        self.steps = {}

    def measure(self, threads):
        if threads not in self.steps:  # calibrate once so the timed part lasts ~seconds
            r = myriad_bench(self.binary, self.n, threads, 20)
            per_step = r["seconds"] / 20
            self.steps[threads] = max(20, int(self.seconds / max(per_step, 1e-9)))
        r = myriad_bench(self.binary, self.n, threads, self.steps[threads])
        return r["steps_per_second"], r["steps"], r["seconds"]


class Vmas:
    def __init__(self, n, seconds, substeps=None):
        import vmas
        self.n, self.seconds = n, seconds
        t = time.perf_counter()
        self.env = vmas.make_env("simple_tag", num_envs=n, device="cpu", continuous_actions=False,
                                 max_steps=25, seed=0, num_good_agents=1, num_adversaries=3,
                                 num_landmarks=2)
        self.build_s = time.perf_counter() - t
        if substeps is not None:  # VMAS's simple_tag hard-codes World(substeps=10)
            w = self.env.world
            w._substeps, w._sub_dt = substeps, w._dt / substeps
        self.env.reset()
        g = torch.Generator().manual_seed(0)
        self.ring = [[torch.randint(0, 5, (n,), generator=g) for _ in self.env.agents]
                     for _ in range(8)]

    def _run(self, max_steps, budget):
        env, ring = self.env, self.ring
        start = time.perf_counter()
        t = 0
        while t < max_steps:
            _, _, dones, _ = env.step(ring[t % len(ring)])
            if dones.any():
                env.reset()
            t += 1
            if time.perf_counter() - start > budget:
                break
        return t, time.perf_counter() - start

    def measure(self, threads):
        torch.set_num_threads(threads)
        self._run(2, 1e9)  # warm-up after a thread change
        t, s = self._run(10 ** 9, self.seconds)
        return self.n * t / s, t, s


class PettingZoo:
    def __init__(self, seconds):
        from mpe2 import simple_tag_v3
        self.seconds = seconds
        self.env = simple_tag_v3.parallel_env(num_good=1, num_adversaries=3, num_obstacles=2,
                                              max_cycles=25, continuous_actions=False)
        self.env.reset(seed=0)
        rng = np.random.default_rng(0)
        agents = list(self.env.possible_agents)
        self.ring = [{a: int(rng.integers(0, 5)) for a in agents} for _ in range(64)]

    def measure(self, threads):
        env, ring = self.env, self.ring
        start = time.perf_counter()
        t = 0
        while True:
            env.step(ring[t % len(ring)])
            if not env.agents:
                env.reset()
            t += 1
            if t % 256 == 0 and time.perf_counter() - start > self.seconds:
                break
        s = time.perf_counter() - start
        return t / s, t, s


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--myriad", default="/work/main/build/tools/myriad")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--myriad-envs", type=int, nargs="+", default=[4096, 65536])
    p.add_argument("--vmas-envs", type=int, nargs="+", default=[4096, 65536])
    p.add_argument("--vmas-1sub-envs", type=int, nargs="*", default=[4096],
                   help="also VMAS with World substeps forced from 10 to 1 (PettingZoo's count)")
    p.add_argument("--seconds", type=float, default=1.5, help="timed seconds per measurement")
    a = p.parse_args()

    import vmas
    import mpe2
    import pettingzoo
    print(json.dumps({"loadavg_before": loadavg(), "cpus": os.cpu_count(),
                      "torch": torch.__version__, "vmas": vmas.__version__,
                      "pettingzoo": pettingzoo.__version__,
                      "mpe2": getattr(mpe2, "__version__", "?")}), flush=True)
    runners = {}
    for n in a.myriad_envs:
        runners[("myriad", n)] = Myriad(a.myriad, n, a.seconds)
    for n in a.vmas_envs:
        r = Vmas(n, a.seconds)
        print(json.dumps({"vmas_build_seconds": r.build_s, "num_envs": n}), flush=True)
        runners[("vmas", n)] = r
    for n in a.vmas_1sub_envs:
        runners[("vmas_1sub", n)] = Vmas(n, a.seconds, substeps=1)
    runners[("pettingzoo", 1)] = PettingZoo(a.seconds)

    configs = [(impl, n, th) for th in a.threads for (impl, n) in runners]
    results = {c: [] for c in configs}
    for rnd in range(a.rounds):
        order = configs if rnd % 2 == 0 else configs[::-1]
        for impl, n, th in order:
            sps, steps, secs = runners[(impl, n)].measure(th)
            results[(impl, n, th)].append(sps)
            print(json.dumps({"round": rnd, "impl": impl, "num_envs": n, "threads": th,
                              "steps": steps, "seconds": round(secs, 4),
                              "steps_per_second": sps}), flush=True)
    print(json.dumps({"loadavg_after": loadavg()}), flush=True)

    med = {c: statistics.median(v) for c, v in results.items()}
    print("\n| impl | envs | threads | median env steps/s | min | max |")
    print("|---|---:|---:|---:|---:|---:|")
    for c in configs:
        v = results[c]
        print(f"| {c[0]} | {c[1]:,} | {c[2]} | {med[c]:,.0f} | {min(v):,.0f} | {max(v):,.0f} |")
    print("\n| threads | envs | Myriad/VMAS | Myriad/VMAS (1 substep) | Myriad/PettingZoo |")
    print("|---:|---:|---:|---:|---:|")
    for th in a.threads:
        for n in a.myriad_envs:
            m = med[("myriad", n, th)]
            v = med.get(("vmas", n, th))
            pz = med[("pettingzoo", 1, th)]
            v1 = med.get(("vmas_1sub", n, th))
            vs = f"{m / v:,.1f}x" if v else "n/a"
            v1s = f"{m / v1:,.1f}x" if v1 else "n/a"
            print(f"| {th} | {n:,} | {vs} | {v1s} | {m / pz:,.0f}x |")


if __name__ == "__main__":
    main()
