"""Shared fixtures for the Python API tests.

The `myriad` package is taken from the build tree: $MYRIAD_BUILD_DIR/python when the variable is
set (ctest sets it), else <repo>/build/python.
"""

import os
import sys
from pathlib import Path

import pytest

SOURCE_DIR = Path(os.environ.get("MYRIAD_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("MYRIAD_BUILD_DIR", SOURCE_DIR / "build"))
PACKAGE_DIR = BUILD_DIR / "python"

if str(PACKAGE_DIR) not in sys.path:
    sys.path.insert(0, str(PACKAGE_DIR))


@pytest.fixture(scope="session")
def package_dir() -> Path:
    """The folder that holds the built `myriad` package (for subprocesses' PYTHONPATH)."""
    return PACKAGE_DIR


@pytest.fixture(scope="session")
def myriad_subprocess_env(package_dir):
    """Environment for a subprocess that imports myriad from the build tree."""
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join(
        [str(package_dir)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    return env


@pytest.fixture(scope="session")
def plain_subprocess_env():
    """Environment for a subprocess with no path to myriad (only what the interpreter has)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.pop("MYRIAD_BUILD_DIR", None)
    return env


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory):
    """One short CartPole training run from Python, shared by the training and policy tests."""
    import myriad

    out = tmp_path_factory.mktemp("train") / "run"
    config = {
        "env": {"id": "CartPole-v1", "num_envs": 16, "device": "cpu"},
        "ppo": {"num_steps": 32},
        "run": {"total_env_steps": 4096, "eval_episodes": 5},
    }
    summary = myriad.train(config, out=out)
    return out, summary
