"""The README's CleanRL-style example trains CartPole-v1 to a mean return of 475 on Myriad's
vector env, in plain PyTorch (not through Myriad's trainer)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def test_cleanrl_style_ppo_solves_cartpole(tmp_path):
    replay = tmp_path / "agent.replay"
    p = subprocess.run([sys.executable, str(SRC / "examples/cleanrl_ppo_cartpole.py"),
                        "--record", str(replay)],
                       capture_output=True, text=True, timeout=600, env=os.environ.copy())
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "SOLVED" in p.stdout
    import myriad
    r = myriad.load_replay(replay)  # the agent's greedy episodes, with its critic's values
    assert r.num_envs == 4 and not np.isnan(r.value[0, 0])
