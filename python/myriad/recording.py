"""Recording replays of any policy written in Python (a CleanRL agent, a scripted controller)
on a Myriad vector env; myriad.load_policy(...).record(...) covers Myriad's own checkpoints.
Multi-agent envs (Tag-v0, Sumo-v0, ...) are recorded in the layout docs/replay-format.md gives
under "Multi-agent envs"."""
import numpy as np


def _as_numpy(x):
    if type(x).__module__.startswith("torch"):
        x = x.detach().cpu().numpy()
    return np.ascontiguousarray(x)


def record(envs, policy, path, episodes=1, value=None, seed=0) -> dict:
    """Records `episodes` episodes in each of envs.num_envs envs and writes a replay file.

    envs: a myriad vector env (myriad.make); it is reset with `seed` first and left where the
        recording ends.
    policy: obs -> actions, for the batch (numpy in, numpy or torch out on CPU envs; torch
        tensors in on CUDA envs). Deterministic actions make the replay show the policy itself.
        Multi-agent envs: obs [N, A, D] -> actions [N, A] (Discrete) or [N, A, K] (Box), e.g.
        random actions `lambda obs: envs.action_space.sample()`.
    value: optional obs -> [num_envs] value estimates, plotted beside the reward (multi-agent
        envs: [N, A] per agent, or [N] shared by the agents).

    Returns the recorded episodes' statistics (return_mean, return_std, length_mean, episodes;
    multi-agent envs add "teams": each team's name and per-agent return_mean and return_std,
    with return_mean and return_std those of team 0).
    Watch the file with `myriad view PATH`; read it with myriad.load_replay(PATH).
    """
    if not hasattr(envs, "_env") or envs._env is None:
        raise TypeError("record: envs must be an open myriad vector env (myriad.make(...))")
    if int(episodes) <= 0:
        raise ValueError(f"record: episodes must be positive, got {episodes}")
    wrap = envs._tensor  # numpy views on CPU, torch tensors (DLPack) on CUDA

    def act(obs):
        return _as_numpy(policy(wrap(obs)))

    def val(obs):
        return _as_numpy(value(wrap(obs))).astype(np.float32, copy=False)

    return envs._env.record(str(path), act, None if value is None else val, int(episodes),
                            seed)

