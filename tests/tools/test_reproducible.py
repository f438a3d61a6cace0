"""The same seed gives the same training run, bitwise, and `myriad` pins LibTorch's CPU math
(MKL_CBWR=COMPATIBLE,STRICT, ATEN_CPU_CAPABILITY=avx2) before its first op by default.

What this does not show: the same run on another machine, which one machine cannot test.
`scripts/repro_check.py` compares a machine's run with a recorded reference; what it found is
in docs/lab-notebook.md ("Same seed, same run on another CPU")."""
import csv
import json
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
        rows = [[row[c] for c in COLUMNS] for row in csv.DictReader(f)]
    # Every update's metrics (6 digits), then the final parameters' CRC-32C (every bit).
    return rows + [json.loads((out / "summary.json").read_text())["params_crc32c"]]


def has_avx2():
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
        return " avx2" in flags and " fma" in flags
    except OSError:
        return False


@pytest.mark.skipif(not has_avx2(), reason="pinning applies to CPUs with AVX2 and FMA")
def test_default_run_is_pinned_and_repeats_bitwise(tmp_path):
    pinned = train(tmp_path, "pinned")
    assert len(pinned) > 6
    # The default pins the paths that setting the two variables by hand selects.
    explicit = train(tmp_path, "explicit", MKL_CBWR="COMPATIBLE,STRICT",
                     ATEN_CPU_CAPABILITY="avx2")
    assert explicit == pinned
    # And the run repeats bitwise.
    assert train(tmp_path, "again") == pinned
