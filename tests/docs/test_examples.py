"""Every script in examples/ runs (with short budgets) and exits 0.

Run: PYTHONPATH=build/python .venv/bin/python -m pytest -q tests/docs/test_examples.py
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", Path(__file__).resolve().parents[2]))

# Arguments that keep each example short; the cleanrl example runs in tests/python already.
QUICK = {
    "sb3_ppo_cartpole.py": ["--steps", "4096"],
    "pettingzoo_parallel.py": ["--envs", "64", "--steps", "50"],
    "mjcf_model.py": ["--envs", "8", "--steps", "50"],
    "multi_agent_train.py": ["--steps", "20000"],
    "export_policy.py": [],
}


def test_every_example_is_listed():
    names = {p.name for p in (SRC / "examples").glob("*.py")} - {"cleanrl_ppo_cartpole.py"}
    assert names == set(QUICK), "add the new example to QUICK in tests/docs/test_examples.py"


@pytest.mark.parametrize("name", sorted(QUICK))
def test_example_runs(name, tmp_path):
    args = list(QUICK[name])
    if name in ("multi_agent_train.py", "export_policy.py"):
        args += ["--out", str(tmp_path)]
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join(
        str(Path(p).resolve()) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)
    r = subprocess.run([sys.executable, str(SRC / "examples" / name), *args], cwd=tmp_path,
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, f"{name} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
