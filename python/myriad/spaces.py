"""Box and Discrete spaces that behave like Gymnasium's.

When the `gymnasium` package is importable, `make_space` returns real `gymnasium.spaces`
objects; Myriad itself never requires it.
"""
from __future__ import annotations

import numpy as np


class Box:
    """A bounded float32 array space (shape, dtype, low, high, sample, contains, seed)."""

    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        self.dtype = np.dtype(dtype)
        shape = tuple(shape) if shape is not None else np.shape(low)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), shape).copy()
        self.shape = shape
        self.seed(seed)

    def seed(self, seed=None):
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def sample(self):
        low = np.where(np.isfinite(self.low), self.low, -1e3)
        high = np.where(np.isfinite(self.high), self.high, 1e3)
        unbounded = ~np.isfinite(self.low) & ~np.isfinite(self.high)
        x = self.np_random.uniform(low, high, self.shape)
        x[unbounded] = self.np_random.normal(size=self.shape)[unbounded]
        return x.astype(self.dtype)

    def contains(self, x) -> bool:
        x = np.asarray(x)
        return (x.shape == self.shape and np.can_cast(x.dtype, self.dtype, "same_kind")
                and bool(np.all(x >= self.low)) and bool(np.all(x <= self.high)))

    __contains__ = contains

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


class Discrete:
    """Integers 0..n-1 (n, dtype, sample, contains, seed)."""

    def __init__(self, n: int, seed=None, start: int = 0):
        self.n = int(n)
        self.start = start
        self.shape = ()
        self.dtype = np.dtype(np.int64)
        self.seed(seed)

    def seed(self, seed=None):
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def sample(self):
        return np.int64(self.start + self.np_random.integers(self.n))

    def contains(self, x) -> bool:
        if isinstance(x, (int, np.integer)) or (isinstance(x, np.ndarray) and x.shape == ()
                                                and np.issubdtype(x.dtype, np.integer)):
            return self.start <= int(x) < self.start + self.n
        return False

    __contains__ = contains

    def __repr__(self):
        return f"Discrete({self.n})"


class MultiDiscrete:
    """A batch of Discrete(n) (the batched action space of a discrete vector env)."""

    def __init__(self, nvec, seed=None):
        self.nvec = np.asarray(nvec, dtype=np.int64)
        self.shape = self.nvec.shape
        self.dtype = np.dtype(np.int64)
        self.seed(seed)

    def seed(self, seed=None):
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def sample(self):
        return (self.np_random.random(self.shape) * self.nvec).astype(np.int64)

    def contains(self, x) -> bool:
        x = np.asarray(x)
        return (x.shape == self.shape and np.issubdtype(x.dtype, np.integer)
                and bool(np.all((x >= 0) & (x < self.nvec))))

    __contains__ = contains


def _gymnasium_spaces():
    try:
        import gymnasium.spaces as spaces  # noqa: PLC0415 (optional dependency)
        return spaces
    except ImportError:
        return None


def make_space(desc: dict):
    """A single-env space from the C++ spec description."""
    gym = _gymnasium_spaces()
    if desc["kind"] == "discrete":
        return gym.Discrete(desc["n"]) if gym else Discrete(desc["n"])
    low = np.asarray(desc["low"], dtype=np.float32).reshape(desc["shape"])
    high = np.asarray(desc["high"], dtype=np.float32).reshape(desc["shape"])
    return gym.Box(low, high, dtype=np.float32) if gym else Box(low, high, dtype=np.float32)


def agent_axis_space(agent_space, num_agents: int):
    """One env's space of a multi-agent env: num_agents copies of agent_space along a leading
    agent axis. Discrete(n) becomes MultiDiscrete([n] * A); Box of shape S becomes Box (A, *S)."""
    gym = _gymnasium_spaces()
    if isinstance(agent_space, Discrete) or (gym and isinstance(agent_space, gym.Discrete)):
        nvec = np.full(num_agents, int(agent_space.n))
        return gym.MultiDiscrete(nvec) if gym else MultiDiscrete(nvec)
    shape = (num_agents, *agent_space.shape)
    low = np.broadcast_to(agent_space.low, shape)
    high = np.broadcast_to(agent_space.high, shape)
    return gym.Box(low, high, dtype=np.float32) if gym else Box(low, high, dtype=np.float32)


def batch_space(single, n: int):
    """The batched space of n copies, as Gymnasium's vector envs define it."""
    gym = _gymnasium_spaces()
    if gym is not None:
        from gymnasium.vector.utils import batch_space as gym_batch  # noqa: PLC0415
        return gym_batch(single, n)
    if isinstance(single, Discrete):
        return MultiDiscrete(np.full(n, single.n))
    return Box(np.broadcast_to(single.low, (n, *single.shape)),
               np.broadcast_to(single.high, (n, *single.shape)), dtype=single.dtype)
