"""Export a checkpoint's policy to TorchScript for plain PyTorch."""
from __future__ import annotations

import torch


_ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "elu": torch.nn.ELU}


class ExportedPolicy(torch.nn.Module):
    """Observation normalization, the actor MLP and the deterministic action head."""

    def __init__(self, layers, activation: str, mean, var, clip: float, normalize: bool,
                 discrete: bool, low, high):
        super().__init__()
        modules = []
        for k, (w, b) in enumerate(layers):
            lin = torch.nn.Linear(w.shape[1], w.shape[0])
            with torch.no_grad():
                lin.weight.copy_(w)
                lin.bias.copy_(b)
            modules.append(lin)
            if k + 1 < len(layers):
                if activation not in _ACTIVATIONS:
                    raise ValueError(f"export: unknown activation '{activation}' "
                                     f"(valid: {', '.join(_ACTIVATIONS)})")
                modules.append(_ACTIVATIONS[activation]())
        self.actor = torch.nn.Sequential(*modules)
        self.width = int(mean.shape[-1])  # the actor's columns (a task env's row holds more)
        self.register_buffer("obs_mean", mean.to(torch.float32))
        self.register_buffer("obs_std", (var + 1e-8).sqrt().to(torch.float32))
        self.register_buffer("low", torch.as_tensor(low, dtype=torch.float32))
        self.register_buffer("high", torch.as_tensor(high, dtype=torch.float32))
        self.clip = float(clip)
        self.normalize = bool(normalize)
        self.discrete = bool(discrete)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = obs.to(torch.float32)[..., : self.width]
        if self.normalize:
            x = ((x - self.obs_mean) / self.obs_std).clamp(-self.clip, self.clip)
        h = self.actor(x)
        if self.discrete:
            return h.argmax(-1).to(torch.int32)
        return torch.max(torch.min(h, self.high), self.low)


def export_torchscript(checkpoint: str, info: dict, path) -> str:
    spec = info["spec"]
    if spec.get("num_agents", 1) > 1:
        raise ValueError(f"export: {spec['id']} is a multi-agent env; exporting its per-team "
                         "policies is not implemented (use myriad.load_policy to act)")
    # Myriad's checkpoints are TorchScript archives: plain torch.jit.load reads them.
    ckpt = torch.jit.load(checkpoint, map_location="cpu")
    params = dict(ckpt.policy.named_parameters())
    buffers = dict(ckpt.named_buffers())
    count = len([k for k in params if k.startswith("actor.") and k.endswith(".weight")])
    layers = [(params[f"actor.{2 * k}.weight"], params[f"actor.{2 * k}.bias"])
              for k in range(count)]
    space = info["spec"]["action_space"]
    # A task env's observation is [actor | critic]: the exported actor takes the actor's columns.
    width = spec.get("actor_obs_dim", 0) or buffers["obs_rms.mean"].shape[-1]
    module = ExportedPolicy(layers, info["activation"], buffers["obs_rms.mean"][..., :width],
                            buffers["obs_rms.var"][..., :width], info["obs_clip"],
                            info["normalize_obs"],
                            space["kind"] == "discrete", space["low"] or [0.0],
                            space["high"] or [0.0])
    scripted = torch.jit.script(module)
    scripted.save(str(path))
    return str(path)
