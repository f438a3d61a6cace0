"""VectorEnv: Myriad's batched envs behind Gymnasium's vector-env conventions.

Arrays are not copied. On CPU, `obs`, `reward`, `terminated`, `truncated` and
`info["final_obs"]` are numpy arrays that view the env's own buffers: they stay valid until the
next `step`/`reset`/`set_state` of this env, which overwrites them in place (pass `copy=True` to
`make` to get fresh arrays instead). On CUDA they are torch tensors on the GPU (through DLPack),
with the same lifetime.
"""
from __future__ import annotations

import json
import numbers
import os
import operator
import secrets
import warnings

import numpy as np

from . import _core
from .spaces import agent_axis_space, batch_space, make_space

try:  # With Gymnasium installed, a Myriad env is a gymnasium.vector.VectorEnv.
    from gymnasium.vector import VectorEnv as _GymVectorEnv
except ImportError:  # pragma: no cover - depends on the installed packages
    _GymVectorEnv = object
try:  # Gymnasium >= 1.1 names the auto-reset modes; Myriad's is same-step.
    from gymnasium.vector import AutoresetMode

    _SAME_STEP = AutoresetMode.SAME_STEP
except ImportError:  # pragma: no cover - depends on the installed gymnasium
    _SAME_STEP = "SameStep"



class UnknownEnvError(ValueError, KeyError):
    """An env id that is not registered: a ValueError (bad input), and a KeyError as before."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""

def registry() -> dict:
    """Every registered env id with its spec (spaces, episode limit, threshold, state names).

    An env whose files cannot be loaded here (a task env's robot needs the ``mjlab`` package)
    is left out with a warning naming why; ``myriad.make`` on it raises that error.
    """
    specs = {}
    for env_id in _core.registered_ids():
        try:
            specs[env_id] = _core.spec(env_id)
        except ValueError as e:
            warnings.warn(f"myriad.registry: {env_id} unavailable: {e}", stacklevel=2)
    return specs


def list_envs() -> list:
    return list(_core.registered_ids())


def _torch():
    import torch  # noqa: PLC0415 (only needed for CUDA envs and tensor inputs)

    return torch


def _is_torch_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "__dlpack__")


def _copy_of(x):
    return x.copy() if isinstance(x, np.ndarray) else x.clone()


def _dlpack(t):
    """A DLPack capsule of torch tensor t (dtype, shape and device are checked in C++)."""
    return _torch().utils.dlpack.to_dlpack(t.detach())


def _stats_key(episode_statistics):
    """The info key of Myriad's own episode statistics (None: off), checked."""
    if episode_statistics is False or episode_statistics is None:
        return None
    if episode_statistics is True:
        return "episode"
    if isinstance(episode_statistics, str) and episode_statistics and \
            episode_statistics != "final_obs":
        return episode_statistics
    raise TypeError("episode_statistics must be True, False or an info key name (a non-empty "
                    f"string other than 'final_obs'), got {episode_statistics!r}")


class VectorEnv(_GymVectorEnv):
    """num_envs instances of one env, stepped as one batch (see myriad.make).

    Multi-agent envs (num_agents = A > 1, e.g. Tag-v0) put the agent axis after the batch axis:
    obs [N, A, D] (each agent's row zero-padded to the largest agent's size D; spec
    "agent_obs_sizes" gives each agent's own), reward [N, A], terminated/truncated [N] (episodes
    end per env), info["final_obs"] [N, A, D], info["episode"]["r"] [N, A]; actions are [N, A]
    integers or [N, A, K] floats. single_observation_space is Box (A, D) and
    single_action_space MultiDiscrete([n] * A) or Box (A, K); agent_observation_space and
    agent_action_space are one agent's. myriad.pettingzoo.ParallelView gives the same data as
    PettingZoo-style dicts keyed by agent. Envs that decide matches (spec "decides_winner",
    e.g. Sumo-v0) add info["winner"] [N] int32: the team (index into spec "team_names") that
    won the episode that ended, -1 for a draw, valid where info["_winner"].

    A subclass of gymnasium.vector.VectorEnv when Gymnasium is installed, so Gymnasium's vector
    wrappers accept it; `metadata["autoreset_mode"]` is AutoresetMode.SAME_STEP.
    """

    metadata = {"autoreset_mode": _SAME_STEP, "render_modes": []}
    render_mode = None  # Myriad envs draw through replays (myriad.record), not render()

    def __init__(self, env_id, num_envs=1, device="cpu", seed=None, copy=False, threads=0,
                 episode_statistics=False, **env_options):
        ids = _core.registered_ids()
        if env_id not in ids:
            raise UnknownEnvError(f"unknown env id {env_id!r}; registered: {', '.join(ids)}")
        self._stats_key = _stats_key(episode_statistics)
        if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral):
            raise TypeError(f"num_envs must be an integer, got {type(num_envs).__name__}")
        if not isinstance(device, str):  # the names ("cpu", "cuda", "cuda:K", "auto") checked in C++
            raise TypeError(f"device must be a string such as 'cpu' or 'cuda:0', got {device!r}")
        numbers_, texts = {}, {}
        for key, value in env_options.items():
            if isinstance(value, (str, os.PathLike)):
                texts[key] = os.fspath(value)  # e.g. physics="mujoco", MJCF-v0's xml
            elif isinstance(value, dict):
                # Structured options (the physics envs' randomize terms) travel as JSON.
                try:
                    texts[key] = json.dumps(value, allow_nan=False)
                except (TypeError, ValueError) as e:
                    raise ValueError(f"env option {key!r} must be JSON-serializable with finite "
                                     f"numbers: {e}") from None
            elif isinstance(value, (tuple, list)):
                # Ranges, as Gymnasium's keyword arguments: healthy_z_range=(0.7, float("inf")).
                if len(value) != 2 or not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                                              for v in value):
                    raise TypeError(f"env option {key!r} must be a (low, high) pair of numbers, "
                                    f"got {value!r}")
                texts[key] = f"{float(value[0])!r},{float(value[1])!r}"
            elif isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"env option {key!r} must be a number or a string, got {value!r}")
            else:
                numbers_[key] = float(value)
        # _core checks the seed (an integer in [0, 2**63-1]; int() would truncate 2.7 to 2).
        self._seed = secrets.randbits(63) if seed is None else seed
        self._env = _core.Env(env_id, operator.index(num_envs), device, self._seed, numbers_,
                              texts, operator.index(threads))
        self._seed = int(self._seed)
        self._copy = copy
        self.spec = self._env.spec
        self.num_envs = self._env.num_envs
        self.device = self._env.device
        self.num_agents = self.spec["num_agents"]
        # Multi-agent envs: per-agent spaces (observations padded to the largest agent's size),
        # and per-env spaces with the agent axis first: obs (A, D), actions (A,) or (A, K).
        self.agent_observation_space = make_space(self.spec["observation_space"])
        self.agent_action_space = make_space(self.spec["action_space"])
        if self.num_agents > 1:
            self.single_observation_space = agent_axis_space(self.agent_observation_space,
                                                             self.num_agents)
            self.single_action_space = agent_axis_space(self.agent_action_space, self.num_agents)
        else:
            self.single_observation_space = self.agent_observation_space
            self.single_action_space = self.agent_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # The C++ buffers never move, so their views are made once.
        self._views = {k: self._tensor(v) for k, v in self._env.buffers().items()}
        # The mask of an info key every env fills on every step (the physics envs' keys).
        done = self._views["done"]
        self._all_true = (np.ones(self.num_envs, dtype=bool) if isinstance(done, np.ndarray)
                          else _torch().ones(self.num_envs, dtype=_torch().bool, device=done.device))
        self.closed = False

    # -- Gymnasium API -------------------------------------------------------------------------

    def reset(self, seed=None, options=None):
        """Starts a new episode everywhere. A seed restarts every env's random stream."""
        self._check_open()
        if options:
            raise ValueError("reset options are not supported; pass env options to make()")
        self._env.reset(seed)  # checks the seed as make does
        if seed is not None:
            self._seed = int(seed)
        if seed is not None and _GymVectorEnv is not object:
            super().reset(seed=self._seed)  # seeds Gymnasium's np_random, as its envs do
        obs = self._views["obs"]
        return (_copy_of(obs) if self._copy else obs), {}

    def step(self, actions):
        """Steps every env (the GIL is released meanwhile) and returns Gymnasium's 5-tuple."""
        self._check_open()
        self._env.step(_dlpack(actions) if _is_torch_tensor(actions) else actions)
        return self._results()

    def step_async(self, actions):
        """Starts a step in the background (on a copy of actions); collect it with step_wait()."""
        self._check_open()
        self._env.step_async(_dlpack(actions) if _is_torch_tensor(actions) else actions)

    def step_wait(self):
        self._check_open()
        self._env.step_wait()
        return self._results()

    send = step_async  # EnvPool's names
    recv = step_wait

    def close(self, **kwargs):
        """Frees the env's buffers; later calls raise. Closing twice is harmless."""
        if not self.closed:
            self._env = self._views = None
            self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- State access ----------------------------------------------------------------------------

    def get_state(self):
        """Per-env physical state [N, S] (spec["state_names"]), as a copy."""
        self._check_open()
        return self._tensor(self._env.get_state())

    def set_state(self, state, env_ids=None):
        """Sets the state of env_ids (all when None); the next step continues from it."""
        self._check_open()
        if _is_torch_tensor(state):
            torch = _torch()
            dtype = torch.float64 if self.spec["state_dtype"] == "float64" else torch.float32
            state = state.detach().to(dtype).contiguous()
            ids = None
            if env_ids is not None:
                ids = torch.as_tensor(env_ids, dtype=torch.int64, device=state.device)
                ids = torch.utils.dlpack.to_dlpack(ids.contiguous())
            self._env.set_state(torch.utils.dlpack.to_dlpack(state), ids)
            return
        # Physics env states are float64 (time, qpos, qvel); classic env states float32.
        dtype = np.float64 if self.spec["state_dtype"] == "float64" else np.float32
        state = np.ascontiguousarray(state, dtype=dtype)
        ids = None
        if env_ids is not None:
            ids = np.asarray(env_ids)
            if ids.ndim != 1 or not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
                raise TypeError(f"env_ids must be a 1-D array of integers, got shape {ids.shape} "
                                f"and dtype {ids.dtype}")
            ids = np.ascontiguousarray(ids, dtype=np.int64)
        self._env.set_state(state, ids)

    @property
    def diverged_count(self) -> int:
        """Episodes cut because the state became non-finite (reset and counted)."""
        return self._env.diverged_count

    @property
    def unwrapped(self):
        return self

    def __repr__(self):
        return f"myriad.VectorEnv({self.spec['id']!r}, num_envs={self.num_envs}, device={self.device!r})"

    # -- Internals -------------------------------------------------------------------------------

    def _check_open(self):
        if self.closed:
            raise RuntimeError("this env is closed")

    def _tensor(self, x):
        if isinstance(x, np.ndarray):
            return x
        return _torch().from_dlpack(x)

    def _results(self):
        # The done mask and the views come from C++ (made once); only the dicts are new.
        v = self._views
        if self._copy:
            v = {k: _copy_of(x) for k, x in v.items()}
        done = v["done"]
        info = {"final_obs": v["final_obs"], "_final_obs": done}
        if "winner" in v:  # envs that decide matches (Sumo-v0): the winning team, -1 a draw
            info["winner"] = v["winner"]
            info["_winner"] = done
        for name, value in v.items():  # physics envs: Gymnasium's info keys, valid in every env
            if name.startswith("info."):
                info[name[5:]] = value
                info["_" + name[5:]] = self._all_true
        if self._stats_key is not None:
            key = self._stats_key
            info[key] = {"r": v["episode_return"], "l": v["episode_length"], "_r": done,
                         "_l": done}
            info["_" + key] = done
        return v["obs"], v["reward"], v["terminated"], v["truncated"], info


def make(env_id, num_envs=1, device="cpu", seed=None, copy=False, threads=0,
         episode_statistics=False, **env_options):
    """Creates a vector env: myriad.make("CartPole-v1", num_envs=4096, device="cuda", seed=0).

    device: "cpu", "cuda" (the current GPU), "cuda:K" or "auto". env_options are the env's own
    options (e.g. max_episode_steps, Pendulum's g). threads: the env's own OpenMP threads on CPU
    (0: OMP_NUM_THREADS, else every core); its calls run on them and leave the caller's and every
    other env's count as they were. episode_statistics=True adds the returns and lengths of the
    episodes that ended, computed in C++, as info["episode"] = {"r", "l", "_r", "_l"} with mask
    info["_episode"] (a string names another key); it is off by default so that Gymnasium's
    RecordEpisodeStatistics, which writes the same key, can wrap the env.
    """
    return VectorEnv(env_id, num_envs=num_envs, device=device, seed=seed, copy=copy,
                     threads=threads, episode_statistics=episode_statistics, **env_options)
