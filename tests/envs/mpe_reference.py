"""Records PettingZoo MPE transitions (the `mpe2` package) for tests/envs/test_mpe.cc.

For simple_spread_v3 (N=3) and simple_tag_v3 (3 adversaries, 1 good agent, 2 obstacles), with
discrete and continuous actions, drives the parallel env and writes, per step, the world state
before it (positions then velocities of world.entities, float32-representable), the actions,
the step counter before it, and what PettingZoo returns: the next state, observations,
rewards, terminations and truncations. Two kinds of steps:
  - single: a random state (set into the world) and random actions, one step;
  - trajectory: seeded episodes of 25 steps from reset_world with random actions.

Usage: mpe_reference.py OUT.json [--config spread-discrete,tag-continuous,...] [--single N]
       [--episodes M] [--seed S]
Exit status 77 (and the reason on stderr) when mpe2 is not installed.
"""

import argparse
import json
import sys

try:
    import numpy as np

    import mpe2
    from mpe2 import simple_spread_v3, simple_tag_v3
    from pettingzoo.utils.env_logger import EnvLogger
except ImportError as e:  # the test skips, naming the reason
    print(f"mpe2 (PettingZoo's MPE) is not installed for {sys.executable}: {e}", file=sys.stderr)
    sys.exit(77)

# A reward's collision test whose distance lies this close to the threshold may go either way in
# float32: the row is marked ambiguous and its rewards are not compared.
BRANCH_EPS = 1e-5


def make(scenario, continuous):
    if scenario == "spread":
        return simple_spread_v3.parallel_env(N=3, continuous_actions=continuous)
    return simple_tag_v3.parallel_env(
        num_good=1, num_adversaries=3, num_obstacles=2, continuous_actions=continuous
    )


def get_state(world):
    ents = world.entities
    pos = [float(x) for e in ents for x in e.state.p_pos]
    vel = [float(x) for e in ents for x in e.state.p_vel]
    return pos + vel


def set_state(world, state):
    ents = world.entities
    n = len(ents)
    for k, e in enumerate(ents):
        e.state.p_pos = np.array(state[2 * k : 2 * k + 2], dtype=np.float64)
        e.state.p_vel = np.array(state[2 * n + 2 * k : 2 * n + 2 * k + 2], dtype=np.float64)


def ambiguous(world):
    agents = world.agents
    for i, a in enumerate(agents):
        for b in agents[i + 1 :]:
            dist = np.sqrt(np.sum(np.square(a.state.p_pos - b.state.p_pos)))
            if abs(dist - (a.size + b.size)) < BRANCH_EPS:
                return True
    return False


def random_state(rng, world):
    """Positions packed at one of three scales (many contacts, or near the boundary)."""
    n = len(world.entities)
    scale = rng.choice([0.3, 0.7, 1.3])
    pos = rng.uniform(-scale, scale, 2 * n)
    vel = rng.uniform(-1.5, 1.5, 2 * n)
    vel[2 * len(world.agents) :] = 0.0  # landmarks do not move
    return [float(x) for x in np.concatenate([pos, vel]).astype(np.float32)]


def random_actions(rng, env, continuous):
    if continuous:
        # Beyond [0, 1] on purpose: PettingZoo clips.
        return {a: rng.uniform(-0.25, 1.25, 5).astype(np.float32) for a in env.agents}
    return {a: int(rng.integers(0, 5)) for a in env.agents}


def step_record(env, world, actions, t, trajectory, step):
    before = get_state(world)
    obs, rewards, terms, truncs, _ = env.step(actions)
    names = env.possible_agents
    return {
        "state": before,
        "actions": [np.asarray(actions[a], dtype=np.float64).ravel().tolist() for a in names],
        "t": t,
        "trajectory": trajectory,
        "step": step,
        "next_state": get_state(world),
        "obs": [np.asarray(obs[a], dtype=np.float64).tolist() for a in names],
        "rewards": [float(rewards[a]) for a in names],
        "terminated": [bool(terms[a]) for a in names],
        "truncated": [bool(truncs[a]) for a in names],
        "ambiguous": ambiguous(world),
    }


def record(scenario, continuous, singles, episodes, seed):
    env = make(scenario, continuous)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    world = env.unwrapped.world
    rows = []
    for _ in range(singles):
        if not env.agents:
            env.reset()
        state = random_state(rng, world)
        set_state(world, state)
        t = int(rng.integers(0, 25))
        env.unwrapped.steps = t
        rows.append(step_record(env, world, random_actions(rng, env, continuous), t, -1, 0))
    for e in range(episodes):
        obs, _ = env.reset(seed=seed + 1 + e)
        first = {
            "state": get_state(world),
            "obs": [np.asarray(obs[a], dtype=np.float64).tolist() for a in env.possible_agents],
        }
        rows.append({"reset": first, "trajectory": e})
        step = 0
        while env.agents:
            actions = random_actions(rng, env, continuous)
            rows.append(step_record(env, world, actions, step, e, step))
            step += 1
    return {
        "scenario": scenario,
        "continuous": continuous,
        "agents": list(env.possible_agents),
        "rows": rows,
    }


CONFIGS = ["spread-discrete", "spread-continuous", "tag-discrete", "tag-continuous"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--single", type=int, default=1500)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--config", default=",".join(CONFIGS))
    args = parser.parse_args()
    EnvLogger.suppress_output()  # continuous actions out of [0, 1] warn on every clip
    configs = []
    for name in args.config.split(","):
        scenario, kind = name.split("-")
        seed = args.seed + 1000 * CONFIGS.index(name)
        configs.append(record(scenario, kind == "continuous", args.single, args.episodes, seed))
    with open(args.out, "w") as f:
        json.dump({"mpe2_version": mpe2.__version__, "configs": configs}, f)


if __name__ == "__main__":
    main()
