"""The hostile-input suite: every case of tests/python/hostile_cases.py is refused with a clear
error of an allowed type. It runs in a child process, so a crash or a hang is seen and named
(the last case started) instead of taking pytest down; the counts are printed (pytest -s) and
recorded in docs/lab-notebook.md."""

import collections
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import myriad

RUNNER = Path(__file__).with_name("hostile_cases.py")
TIMEOUT_SECONDS = 300


def run_category(category):
    env = dict(os.environ, PYTHONPATH=str(Path(myriad.__file__).resolve().parents[1]))
    try:
        p = subprocess.run([sys.executable, str(RUNNER), category], capture_output=True,
                           text=True, timeout=TIMEOUT_SECONDS, env=env)
        stdout, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        rc = "timeout"
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    started = [x["start"] for x in lines if "start" in x]
    results = [x for x in lines if "case" in x]
    return started, results, rc, (p.stderr if rc not in ("timeout",) else "")


@pytest.mark.parametrize("category", ["config", "api", "file", "checkpoint", "mjcf_numbers"])
def test_every_hostile_case_is_refused_clearly(category):
    started, results, rc, stderr = run_category(category)
    unfinished = started[len(results):]
    # A crash (signal) or a hang ends the child before its last case reports.
    assert rc == 0, f"child ended with {rc} during case {unfinished[:1]}; stderr: {stderr[-2000:]}"
    assert not unfinished, f"cases started and never finished: {unfinished}"
    counts = collections.Counter(r["verdict"] for r in results)
    print(f"\nhostile {category}: {len(results)} cases, {dict(counts)}")
    bad = [r for r in results if r["verdict"] != "refused"]
    assert not bad, "\n".join(json.dumps(r) for r in bad[:20])
    assert len(results) >= {"config": 400, "api": 80, "file": 10, "checkpoint": 200,
                            "mjcf_numbers": 75}[category]
