"""EnvPool beside `myriad bench`: the same env, env count and threads, random actions.

Prints one JSON line with the same keys as `myriad bench --json`.
"""
import envpool

from peer_bench import action_ring, arguments, report, timed_steps


def main():
    a = arguments(env="CartPole-v1", num_envs=65536, steps=200, threads=2)
    env = envpool.make_gym(a.env, num_envs=a.num_envs, batch_size=a.num_envs,
                           num_threads=a.threads, seed=0)
    env.reset()
    seconds = timed_steps(env.step, action_ring(env.action_space, a.num_envs), a.steps)
    report(a, seconds, f"envpool {envpool.__version__}")


if __name__ == "__main__":
    main()
