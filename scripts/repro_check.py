#!/usr/bin/env python3
"""Does this machine give the same training run, bit for bit, as the reference machine?

Trains CartPole for 40K env steps (seed 1, one env thread, one learner thread, no evaluation)
once per PPO math path (`run.learner_math`: fused and libtorch) and compares each run's
fingerprint with the one recorded below: `params_crc32c` of summary.json (CRC-32C of every
final parameter's bytes) decides; the first update's policy loss is printed beside it, for a
reader comparing with older 6-digit records. Same CRC: this CPU reproduces the reference's runs. Run it on each new kind of machine (an AMD EPYC, another
Intel Xeon, a GPU host's CPU) and record the answer in docs/lab-notebook.md ("Same seed, same run
on another CPU"). The fingerprint belongs to the code, the config and the torch version it was
recorded with (commit 3e0f1b9, torch 2.11.0): a change to the envs, the learner or
configs/cartpole_ppo.yaml changes it, and then it is recorded again, on a machine of the
reference's kind.

Usage: scripts/repro_check.py [--bin build/tools/myriad] [--json] [-- extra overrides]
Exit status: 0 when every run matches the reference, 1 when one does not, 2 on a failed run.
"""
import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Recorded 2026-12-02 on an Intel Xeon (AVX-512, 2 cores, Debian 12, GCC 12.2, torch 2.11.0 CPU
# wheel) with `myriad`'s default pinning (MKL_CBWR=COMPATIBLE,STRICT, ATEN_CPU_CAPABILITY=avx2).
REFERENCE_MACHINE = "Intel Xeon (AVX-512), Debian 12, 2026-12-02"
REFERENCE = {
    "fused": {"params_crc32c": "bac8ab7c", "policy_loss_update_1": "-0.00586103"},
    "libtorch": {"params_crc32c": "45e5970b", "policy_loss_update_1": "-0.005861"},
}
OVERRIDES = ["env.device=cpu", "run.total_env_steps=40000", "run.eval_episodes=0",
             "eval.record=false", "run.seed=1", "run.threads=1", "run.learner_threads=1"]


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def fingerprint(binary, math, extra):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        # The pinning under test is myriad's own: drop any the caller's shell set.
        env = {k: v for k, v in os.environ.items()
               if k not in ("MKL_CBWR", "ATEN_CPU_CAPABILITY", "MYRIAD_NATIVE_MATH")}
        cmd = [binary, "train", str(ROOT / "configs/cartpole_ppo.yaml"), "--out", str(out),
               *OVERRIDES, f"run.learner_math={math}", *extra]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            sys.stderr.write(f"repro_check: {' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
            sys.exit(2)
        summary = json.loads((out / "summary.json").read_text())
        with open(out / "metrics.csv") as f:
            first = next(csv.DictReader(f))
        return {"params_crc32c": summary["params_crc32c"], "ppo_math": summary["ppo_math"],
                "policy_loss_update_1": first["losses/policy_loss"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "build/tools/myriad"))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("extra", nargs="*", help="more key.path=value overrides")
    a = ap.parse_args()
    result = {"cpu": cpu_model(), "reference_machine": REFERENCE_MACHINE, "runs": {}}
    same = True
    for math, ref in REFERENCE.items():
        got = fingerprint(a.bin, math, a.extra)
        match = got["params_crc32c"] == ref["params_crc32c"]
        same = same and match
        result["runs"][math] = {**got, "reference": ref, "same_as_reference": match}
    result["same_as_reference"] = same
    if a.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"this CPU: {result['cpu']}; reference: {REFERENCE_MACHINE}")
        for math, r in result["runs"].items():
            ref = r["reference"]
            print(f"  {math:8s} params_crc32c {r['params_crc32c']} (reference {ref['params_crc32c']}),"
                  f" update 1 policy loss {r['policy_loss_update_1']}"
                  f" (reference {ref['policy_loss_update_1']}): "
                  f"{'same run' if r['same_as_reference'] else 'ANOTHER RUN'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
