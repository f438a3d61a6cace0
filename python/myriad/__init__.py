"""Myriad: batched RL environments at the speed of the hardware, with a Gymnasium-style API.

    import myriad
    envs = myriad.make("CartPole-v1", num_envs=4096, device="cpu", seed=0)
    obs, info = envs.reset(seed=0)
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())
"""
from . import _core

# The same seed gives the same training run on Intel and AMD CPUs: LibTorch's CPU math is pinned
# to one code path (MKL_CBWR, ATEN_CPU_CAPABILITY; see the README) before its first op. Variables
# already set win; MYRIAD_NATIVE_MATH=1 keeps each CPU's own path. A LibTorch op run before
# `import myriad` fixes the path early, so import myriad first when reproducing a run.
_core.pin_cpu_math()
# Freed tensor memory stays in the heap instead of faulting in fresh pages every minibatch.
_core.keep_freed_memory()
from .recording import record
from .replay import Replay, ReplayError, load_replay
from .training import Policy, load_policy, train
from .vector_env import UnknownEnvError, VectorEnv, list_envs, make, registry

# From the repository's VERSION file, compiled into the extension.
__version__ = _core.__version__


def __getattr__(name):
    # myriad.wrappers (needs gymnasium), myriad.sb3 (needs stable-baselines3) and
    # myriad.pettingzoo (the multi-agent ParallelView) load on first use.
    if name in ("wrappers", "sb3", "pettingzoo"):
        import importlib  # noqa: PLC0415

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'myriad' has no attribute {name!r}")


def cuda_available() -> bool:
    """True when this build has the CUDA backend and a GPU answers."""
    return _core.cuda_available()


__all__ = ["VectorEnv", "make", "registry", "list_envs", "train", "load_policy", "Policy",
           "cuda_available", "load_replay", "record", "Replay", "ReplayError", "UnknownEnvError",
           "__version__"]
