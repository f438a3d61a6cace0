"""Gymnasium's own vector env beside `myriad bench`: the same env id, env count and random
actions; SyncVectorEnv with 1 thread, AsyncVectorEnv (one process per env) otherwise.

Prints one JSON line with the same keys as `myriad bench --json`.
"""
import gymnasium as gym

from peer_bench import action_ring, arguments, report, timed_steps


def main():
    a = arguments(env="Ant-v5", num_envs=64, steps=100, threads=1)
    kind = "sync" if a.threads == 1 else "async"
    env = gym.make_vec(a.env, num_envs=a.num_envs, vectorization_mode=kind)
    env.reset(seed=0)
    seconds = timed_steps(env.step, action_ring(env.single_action_space, a.num_envs), a.steps)
    env.close()
    report(a, seconds, f"gymnasium {gym.__version__} {kind} vector env")


if __name__ == "__main__":
    main()
