"""Training and trained policies from Python: the same trainer as `myriad train`."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from . import _core


def _flatten(prefix, value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out.append(f"{prefix}={json.dumps(value)}")


def train(config, out=None, overwrite=False, **overrides):
    """Trains with PPO and returns the summary dict (as in summary.json).

    config: a YAML file path, or a dict of groups ({"env": {...}, "ppo": {...}, "run": {...}}).
    overrides: key paths with "__" for ".", e.g. ppo__learning_rate=1e-3, or whole groups,
    e.g. run={"total_env_steps": 100000}. out: the run folder (default a new
    runs/<name>-<time>[-k]). An `out` that holds another run raises FileExistsError unless
    run__resume names a checkpoint inside it (continued in place) or overwrite=True.
    Bad keys or values raise ValueError naming the key path.
    """
    if isinstance(config, dict):
        text, name = "", "python"
        items = []
        _flatten("", config, items)
    else:
        path = Path(config)
        if not path.is_file():
            raise FileNotFoundError(f"config file {str(path)!r} does not exist")
        text, name, items = path.read_text(), path.stem, []
    for key, value in overrides.items():
        _flatten(key.replace("__", "."), value, items)
    return json.loads(_core.train(text, items, "" if out is None else str(out), name,
                                  bool(overwrite)))


class Policy:
    """A trained policy: policy(obs) -> deterministic actions (argmax / clipped mean).

    obs: numpy [B, obs_dim] (returns numpy) or a torch tensor (returns a torch tensor on the
    policy's device).
    """

    def __init__(self, checkpoint, device=""):
        self.checkpoint = str(checkpoint)
        if not Path(self.checkpoint).is_file():
            raise FileNotFoundError(f"checkpoint {self.checkpoint!r} does not exist")
        self._p = _core.Policy(self.checkpoint, device)
        self.info = self._p.info
        self.config_yaml = self._p.config_yaml

    def __call__(self, obs):
        if type(obs).__module__.startswith("torch"):
            import torch  # noqa: PLC0415

            t = obs.detach().to(torch.float32).contiguous()
            return torch.from_dlpack(self._p.act_dlpack(torch.utils.dlpack.to_dlpack(t)))
        return self._p.act_numpy(np.ascontiguousarray(obs, dtype=np.float32))

    def evaluate(self, episodes=100, seed=12345) -> dict:
        return self._p.evaluate(int(episodes), seed)

    def record(self, path, envs=4, episodes=1, seed=12345) -> dict:
        """Records `episodes` episodes in each of `envs` envs with the deterministic policy and
        writes a replay file (watch it with `myriad view PATH`, read it with
        myriad.load_replay). Returns the recorded episodes' return statistics."""
        if int(envs) <= 0 or int(episodes) <= 0:
            raise ValueError(f"envs and episodes must be positive, got envs={envs}, "
                             f"episodes={episodes}")
        return self._p.record(str(path), int(envs), int(episodes), seed, self.checkpoint)

    def export(self, path):
        """Writes a TorchScript file that plain PyTorch loads with torch.jit.load(path), no
        Myriad needed: module(obs [B, obs_dim] float32) -> deterministic actions."""
        from .export import export_torchscript  # noqa: PLC0415

        return export_torchscript(self.checkpoint, self.info, path)


def load_policy(checkpoint, device=""):
    return Policy(checkpoint, device)
