"""`myriad train` stops a run whose training goes non-finite: exit status 1, an error naming
the update and the losses, and no checkpoint or summary of the poisoned policy (before, a NaN
Pendulum policy was evaluated as 0.0 +- 0.0 and the run exited 0)."""
import os
import re
import subprocess
from pathlib import Path

BIN = os.environ.get("MYRIAD_BIN", "build/tools/myriad")
SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", "."))


def test_a_diverging_run_exits_non_zero_naming_the_update(tmp_path):
    out = tmp_path / "run"
    # A learning rate of 1e30 makes the first update's Adam steps overflow the critic.
    p = subprocess.run([BIN, "train", str(SRC / "configs/pendulum_ppo.yaml"), "--out", str(out),
                        "env.device=cpu", "ppo.learning_rate=1e30", "run.total_env_steps=40000",
                        "run.eval_episodes=10", "eval.record=false", "run.checkpoint_every=1"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(r"update \d+ \(env step \d+\) went non-finite", p.stderr), p.stderr
    assert "losses/value_loss" in p.stderr
    assert not (out / "checkpoints" / "last.pt").exists()
    assert not (out / "summary.json").exists()
