"""Myriad: batched RL environments at the speed of the hardware, with a Gymnasium-style API.

    import myriad
    envs = myriad.make("CartPole-v1", num_envs=4096, device="cpu", seed=0)
    obs, info = envs.reset(seed=0)
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())
"""
from . import _core
from .recording import record
from .replay import Replay, ReplayError, load_replay
from .training import Policy, load_policy, train
from .vector_env import VectorEnv, list_envs, make, registry

__version__ = "0.1.0"


def cuda_available() -> bool:
    """True when this build has the CUDA backend and a GPU answers."""
    return _core.cuda_available()


__all__ = ["VectorEnv", "make", "registry", "list_envs", "train", "load_policy", "Policy",
           "cuda_available", "load_replay", "record", "Replay", "ReplayError", "__version__"]
