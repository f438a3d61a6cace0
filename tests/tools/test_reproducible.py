"""The same seed gives the same training run whichever CPU math path the machine would pick by
itself: `myriad` pins MKL (MKL_CBWR=AVX2,STRICT) and ATen (ATEN_CPU_CAPABILITY=avx2) before its
first LibTorch op, so an AVX-512 Intel Xeon and an AMD EPYC run the same kernels. Here the other
machine's choice is imitated by asking for the AVX-512 paths explicitly."""
import csv
import os
import subprocess

import pytest

BIN = os.environ.get("MYRIAD_BIN", "build/tools/myriad")
SRC = os.environ.get("MYRIAD_SOURCE_DIR", ".")
COLUMNS = ["charts/episode_return", "losses/policy_loss", "losses/value_loss",
           "losses/approx_kl", "losses/entropy"]


def train(tmp_path, name, **env):
    out = tmp_path / name
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("MKL_CBWR", "ATEN_CPU_CAPABILITY", "MYRIAD_NATIVE_MATH")}
    full_env.update(env)
    p = subprocess.run([BIN, "train", f"{SRC}/configs/cartpole_ppo.yaml", "--out", str(out),
                        "env.device=cpu", "run.total_env_steps=40000", "run.eval_episodes=0",
                        "eval.record=false"], env=full_env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    with open(out / "metrics.csv") as f:
        return [[row[c] for c in COLUMNS] for row in csv.DictReader(f)]


def has_avx2():
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
        return " avx2" in flags and " fma" in flags
    except OSError:
        return False


@pytest.mark.skipif(not has_avx2(), reason="pinning applies to CPUs with AVX2 and FMA")
def test_pinned_math_ignores_the_paths_another_cpu_would_pick(tmp_path):
    pinned = train(tmp_path, "pinned")
    assert len(pinned) > 5
    # What an AVX-512 Intel machine would pick for itself, pinned the same way by MKL's CNR.
    other = train(tmp_path, "other", MKL_CBWR="AVX512,STRICT", ATEN_CPU_CAPABILITY="avx512")
    assert other == pinned
    # And the run repeats bitwise.
    assert train(tmp_path, "again") == pinned
