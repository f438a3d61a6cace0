"""myriad._core and torch live in one Python process, in either import order.

pybind11 modules of one internals version share one registry per interpreter, so `_core` must be
built with the pybind11 that torch itself was built with. On the first GPU host (Python 3.12,
pip's pybind11 3.1 against torch's 3.0.1) the second module to use that registry crashed:
`import myriad; import torch.nn` segfaulted in torch, and `import torch; myriad.train(...)`
segfaulted in the trainer. Each order runs in its own interpreter here.
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import torch

import myriad


def torch_pybind11_version():
    header = Path(torch.__file__).parent / "include" / "pybind11" / "detail" / "common.h"
    if not header.is_file():
        return None
    text = header.read_text()
    parts = [re.search(rf"#define PYBIND11_VERSION_{p} (\d+)", text) for p in
             ("MAJOR", "MINOR", "MICRO")]
    return ".".join(m.group(1) for m in parts) if all(parts) else None


def test_core_is_built_with_torchs_pybind11():
    expected = torch_pybind11_version()
    if expected is None:
        return  # this torch ships no pybind11 headers; the build warned about it
    assert myriad._core.pybind11_version == expected


def run_python(code, tmp_path):
    # The child imports the same myriad package as this process, from any working directory.
    env = dict(os.environ, PYTHONPATH=str(Path(myriad.__file__).resolve().parents[1]))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"rc={result.returncode}\n{result.stderr[-2000:]}"
    return result.stdout


def test_myriad_then_torch_python(tmp_path):
    out = run_python("""
        import myriad
        import torch.nn
        envs = myriad.make("CartPole-v1", num_envs=4, seed=0)
        obs, _ = envs.reset(seed=0)
        print(torch.nn.Linear(4, 2)(torch.as_tensor(obs)).shape, torch.device("cpu"))
    """, tmp_path)
    assert "torch.Size([4, 2]) cpu" in out


def test_torch_then_myriad_train(tmp_path):
    out = run_python("""
        import torch
        import myriad
        summary = myriad.train("CONFIG", out="run", run__total_env_steps=4096,
                               run__eval_episodes=0, eval__record=False,
                               run__checkpoint_every=0)
        print("env_steps", summary["env_steps"], torch.zeros(1).device)
    """.replace("CONFIG", str(Path(__file__).resolve().parents[2] / "configs" /
                                  "cartpole_ppo.yaml")), tmp_path)
    assert "env_steps 4096 cpu" in out
