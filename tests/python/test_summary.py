"""summary.json has one writer (learner/summary.cc): `myriad train` and myriad.train() write the
same keys, atomically (no temporary file is left behind)."""

import json
import os
import subprocess

import pytest

from conftest import BUILD_DIR, SOURCE_DIR

MYRIAD_BIN = BUILD_DIR / "tools" / "myriad"
# The keys learner/summary.h documents.
SUMMARY_KEYS = {
    "myriad_version",
    "env_steps",
    "updates",
    "wall_seconds",
    "solved_seconds",
    "eval_return_mean",
    "eval_return_std",
    "eval_length_mean",
    "eval_episodes",
    "diverged_episodes",
    "world_size",
    "ppo_math",
    "params_crc32c",
    "checkpoint",
    "run_dir",
    "replay",
}


@pytest.mark.skipif(not MYRIAD_BIN.is_file(), reason=f"{MYRIAD_BIN} is not built")
def test_cli_and_python_write_the_same_summary_keys(trained_run, tmp_path):
    py_out, py_summary = trained_run
    cli_out = tmp_path / "cli"
    subprocess.run(
        [
            str(MYRIAD_BIN),
            "train",
            str(SOURCE_DIR / "configs" / "cartpole_ppo.yaml"),
            "--out",
            str(cli_out),
            "env.device=cpu",
            "env.num_envs=16",
            "ppo.num_steps=32",
            "run.total_env_steps=4096",
            "run.eval_episodes=5",
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    cli_summary = json.loads((cli_out / "summary.json").read_text())
    py_on_disk = json.loads((py_out / "summary.json").read_text())
    assert set(cli_summary) == set(py_on_disk) == set(py_summary) == SUMMARY_KEYS
    assert cli_summary["run_dir"] == str(cli_out)
    assert py_on_disk["run_dir"] == os.fspath(py_out)
    for out in (cli_out, py_out):
        assert not (out / "summary.json.tmp").exists()
