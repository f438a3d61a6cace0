"""Records Gymnasium's MuJoCo v5 locomotion envs for tests/python/test_locomotion_parity.py.

Usage: locomotion_reference.py ENV_ID OUT.npz [--samples K] [--steps N] [--seed S]

Runs gymnasium.make(ENV_ID) with its default options (MuJoCo's Python package, `mujoco`) and
writes one .npz with three parts:

  meta_*   what the env is: obs shape, action bounds, dt, frame_skip, timestep, nq, nv,
           max_episode_steps (env.spec), init_qpos/init_qvel (the model's qpos0 and zero qvel,
           which reset_model adds its noise to), reset_noise_scale, the info keys of a step,
           and the versions of mujoco and gymnasium that made the file.
  a_*      K state-given transitions. The states are the ones visited by episodes under
           uniform random actions (float32, drawn from [low, high] by a seeded numpy
           Generator), taken every few steps so that they spread over whole episodes. For each:
           a_time, a_qpos, a_qvel (before), a_action; then, on a second env,
           env.unwrapped.set_state(qpos, qvel) and env.step(action), and a_obs, a_reward,
           a_terminated, a_info_<key> (every key of Gymnasium's info dict; [K] for scalars,
           [K, k] for arrays), a_qpos_after, a_qvel_after, a_ncon (contacts after the step).
  b_*      one free-running segment: after env.reset(seed=S), b_reset_time/qpos/qvel/obs,
           then up to N steps of random actions (b_actions [n, nu]) with b_obs, b_reward,
           b_terminated, b_truncated, b_info_<key>, b_qpos_after, b_qvel_after per step. The
           segment stops early at the first terminated or truncated step (that step is kept),
           so n = len(b_reward) <= N.

The warm start of MuJoCo's constraint solver (qacc_warmstart) is cleared before each a_
sample's set_state, so that a sample depends on (qpos, qvel, action) alone and not on the
samples recorded before it; set_state's mj_forward then warms the solver at that state, as in
any state-given step.

Exit status 77 (and the reason on stderr) when mujoco or gymnasium's MuJoCo envs are missing.
"""

import argparse
import sys

try:
    import numpy as np

    import gymnasium
    import mujoco
    from gymnasium.envs.mujoco.mujoco_env import MujocoEnv  # noqa: F401 (needs mujoco & co.)
except ImportError as e:  # the test skips, naming the reason
    print(f"Gymnasium's MuJoCo envs are not importable with {sys.executable}: {e}",
          file=sys.stderr)
    sys.exit(77)

# Steps between two recorded states of a rollout (so that samples spread over an episode).
STRIDE = 3


def random_action(rng, space):
    return rng.uniform(space.low, space.high).astype(np.float32)


def info_arrays(infos, prefix):
    """{prefix + "info_" + key: stacked values} for a list of Gymnasium info dicts."""
    keys = list(infos[0])
    for i, info in enumerate(infos):
        if list(info) != keys:
            raise RuntimeError(f"info keys change between steps: {keys} vs {list(info)} ({i})")
    return {f"{prefix}info_{k}": np.asarray([np.asarray(d[k], dtype=np.float64) for d in infos])
            for k in keys}


def visited_states(env_id, rng, count, seed):
    """count (time, qpos, qvel) states visited by random-action episodes."""
    env = gymnasium.make(env_id)
    u = env.unwrapped
    states = []
    episode = 0
    env.reset(seed=seed)
    step = 0
    while len(states) < count:
        if step % STRIDE == STRIDE - 1:
            states.append((float(u.data.time), u.data.qpos.copy(), u.data.qvel.copy()))
        _, _, terminated, truncated, _ = env.step(random_action(rng, env.action_space))
        step += 1
        if terminated or truncated:
            episode += 1
            env.reset(seed=seed + episode)
            step = 0
    env.close()
    return states


def state_given(env_id, rng, count, seed):
    states = visited_states(env_id, rng, count, seed)
    env = gymnasium.make(env_id)
    u = env.unwrapped
    env.reset(seed=seed)
    rows = {k: [] for k in ("time", "qpos", "qvel", "action", "obs", "reward", "terminated",
                            "qpos_after", "qvel_after", "ncon")}
    infos = []
    for time, qpos, qvel in states:
        action = random_action(rng, env.action_space)
        u.data.qacc_warmstart[:] = 0
        u.data.time = time
        u.set_state(qpos, qvel)
        obs, reward, terminated, truncated, info = env.step(action)
        for k, v in (("time", time), ("qpos", qpos), ("qvel", qvel), ("action", action),
                     ("obs", obs), ("reward", reward), ("terminated", terminated),
                     ("qpos_after", u.data.qpos.copy()), ("qvel_after", u.data.qvel.copy()),
                     ("ncon", u.data.ncon)):
            rows[k].append(v)
        infos.append(info)
        if truncated:  # Reacher-v5's TimeLimit (50 steps) ends the evaluating env's episode
            env.reset()
    env.close()
    out = {f"a_{k}": np.asarray(v) for k, v in rows.items()}
    out["a_action"] = out["a_action"].astype(np.float32)
    out["a_obs"] = out["a_obs"].astype(np.float64)
    out["a_reward"] = out["a_reward"].astype(np.float64)
    out["a_terminated"] = out["a_terminated"].astype(bool)
    out.update(info_arrays(infos, "a_"))
    return out


def free_running(env_id, rng, steps, seed):
    env = gymnasium.make(env_id)
    u = env.unwrapped
    obs, _ = env.reset(seed=seed)
    out = {"b_reset_time": np.float64(u.data.time), "b_reset_qpos": u.data.qpos.copy(),
           "b_reset_qvel": u.data.qvel.copy(), "b_reset_obs": np.asarray(obs, np.float64)}
    rows = {k: [] for k in ("actions", "obs", "reward", "terminated", "truncated",
                            "qpos_after", "qvel_after")}
    infos = []
    for _ in range(steps):
        action = random_action(rng, env.action_space)
        obs, reward, terminated, truncated, info = env.step(action)
        for k, v in (("actions", action), ("obs", obs), ("reward", reward),
                     ("terminated", terminated), ("truncated", truncated),
                     ("qpos_after", u.data.qpos.copy()), ("qvel_after", u.data.qvel.copy())):
            rows[k].append(v)
        infos.append(info)
        if terminated or truncated:
            break
    env.close()
    out.update({f"b_{k}": np.asarray(v) for k, v in rows.items()})
    out["b_actions"] = out["b_actions"].astype(np.float32)
    out["b_obs"] = out["b_obs"].astype(np.float64)
    out["b_reward"] = out["b_reward"].astype(np.float64)
    out["b_terminated"] = out["b_terminated"].astype(bool)
    out["b_truncated"] = out["b_truncated"].astype(bool)
    out.update(info_arrays(infos, "b_"))
    return out


def metadata(env_id):
    env = gymnasium.make(env_id)
    u = env.unwrapped
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.zeros(env.action_space.shape, np.float32))
    meta = {
        "meta_env_id": np.str_(env_id),
        "meta_obs_shape": np.asarray(env.observation_space.shape, np.int64),
        "meta_action_low": np.asarray(env.action_space.low, np.float32),
        "meta_action_high": np.asarray(env.action_space.high, np.float32),
        "meta_dt": np.float64(u.dt),
        "meta_frame_skip": np.int64(u.frame_skip),
        "meta_timestep": np.float64(u.model.opt.timestep),
        "meta_nq": np.int64(u.model.nq),
        "meta_nv": np.int64(u.model.nv),
        "meta_nu": np.int64(u.model.nu),
        "meta_max_episode_steps": np.int64(env.spec.max_episode_steps),
        "meta_init_qpos": u.init_qpos.copy(),
        "meta_init_qvel": u.init_qvel.copy(),
        "meta_qpos0": u.model.qpos0.copy(),
        # Reacher-v5 has no reset_noise_scale option (its reset is fixed): NaN.
        "meta_reset_noise_scale": np.float64(getattr(u, "_reset_noise_scale", np.nan)),
        "meta_info_keys": np.asarray(sorted(info), dtype=np.str_),
        "meta_mujoco_version": np.str_(mujoco.__version__),
        "meta_gymnasium_version": np.str_(gymnasium.__version__),
    }
    env.close()
    return meta


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env_id")
    parser.add_argument("out")
    parser.add_argument("--samples", type=int, default=64, help="state-given transitions (K)")
    parser.add_argument("--steps", type=int, default=50, help="steps of the free segment")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.samples < 1 or args.steps < 1:
        parser.error("--samples and --steps must be positive")
    rng = np.random.default_rng(args.seed)
    data = metadata(args.env_id)
    data.update(state_given(args.env_id, rng, args.samples, args.seed + 1000))
    data.update(free_running(args.env_id, rng, args.steps, args.seed))
    np.savez(args.out, **data)


if __name__ == "__main__":
    main()
