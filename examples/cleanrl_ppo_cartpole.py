"""PPO on CartPole-v1 in plain PyTorch (CleanRL's ppo.py style), on Myriad's vector env.

Run: PYTHONPATH=build/python .venv/bin/python examples/cleanrl_ppo_cartpole.py
Stops when the mean return of the last 100 finished episodes reaches 475. `--envs gymnasium`
runs the same loop on Gymnasium's own SyncVectorEnv (same-step autoreset): only the line that
makes the envs differs, and both are wrapped in Gymnasium's RecordEpisodeStatistics.
"""
import argparse
import time
from collections import deque

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import myriad


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(),
                                    layer_init(nn.Linear(64, 64)), nn.Tanh(),
                                    layer_init(nn.Linear(64, 1), std=1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(),
                                   layer_init(nn.Linear(64, 64)), nn.Tanh(),
                                   layer_init(nn.Linear(64, n_actions), std=0.01))

    def get_value(self, x):
        return self.critic(x).squeeze(-1)

    def get_action_and_value(self, x, action=None):
        dist = torch.distributions.Categorical(logits=self.actor(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.get_value(x)


@torch.no_grad()
def record(agent, path):
    """A replay of the greedy policy with the critic's values (watch: myriad view PATH)."""
    def obs_tensor(obs):
        return torch.as_tensor(obs, dtype=torch.float32)

    stats = myriad.record(myriad.make("CartPole-v1", num_envs=4),
                          lambda obs: agent.actor(obs_tensor(obs)).argmax(-1),
                          path, value=lambda obs: agent.get_value(obs_tensor(obs)))
    print(f"replay of {stats['episodes']} greedy episodes (mean return "
          f"{stats['return_mean']:.1f}) written to {path}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--num-envs", type=int, default=32)
    p.add_argument("--num-steps", type=int, default=64)
    p.add_argument("--total-timesteps", type=int, default=400_000)
    p.add_argument("--learning-rate", type=float, default=2.5e-3)
    p.add_argument("--target", type=float, default=475.0)
    p.add_argument("--record", help="write a replay of 4 greedy episodes here when solved")
    p.add_argument("--envs", choices=["myriad", "gymnasium"], default="myriad")
    args = p.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    gamma, gae_lambda, clip_coef, epochs, minibatches = 0.99, 0.95, 0.2, 4, 4

    if args.envs == "myriad":
        envs = myriad.make("CartPole-v1", num_envs=args.num_envs, seed=args.seed, threads=1)
    else:
        envs = gym.make_vec("CartPole-v1", num_envs=args.num_envs, vectorization_mode="sync",
                            vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP})
    envs = RecordEpisodeStatistics(envs)  # info["episode"], info["_episode"]
    agent = Agent(envs.single_observation_space.shape[0], envs.single_action_space.n)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    T, N = args.num_steps, args.num_envs
    obs_b = torch.zeros((T, N, 4))
    act_b = torch.zeros((T, N), dtype=torch.long)
    logp_b, rew_b, done_b, val_b = (torch.zeros((T, N)) for _ in range(4))

    next_obs = torch.tensor(envs.reset(seed=args.seed)[0], dtype=torch.float32)
    returns, step, start = deque(maxlen=100), 0, time.time()
    num_updates = args.total_timesteps // (T * N)
    for update in range(num_updates):
        optimizer.param_groups[0]["lr"] = args.learning_rate * (1 - update / num_updates)
        for t in range(T):
            obs_b[t] = next_obs
            with torch.no_grad():
                action, logp, _, value = agent.get_action_and_value(next_obs)
            act_b[t], logp_b[t], val_b[t] = action, logp, value
            obs, reward, term, trunc, info = envs.step(action.numpy())
            reward = torch.tensor(reward)
            # Truncation is not termination: bootstrap from the final observation's value.
            cut = trunc & ~term
            if cut.any():
                with torch.no_grad():
                    # Gymnasium's final_obs is an object array, Myriad's an [N, 4] array.
                    final = torch.tensor(np.stack(info["final_obs"][cut]))
                    reward[torch.from_numpy(cut)] += gamma * agent.get_value(final)
            rew_b[t] = reward
            done_b[t] = torch.tensor(term | trunc, dtype=torch.float32)
            if "episode" in info:  # only in steps where an episode ended
                returns.extend(info["episode"]["r"][info["_episode"]].tolist())
            next_obs = torch.tensor(obs, dtype=torch.float32)  # a copy: Myriad's buffer changes
            step += N
        with torch.no_grad():
            next_value = agent.get_value(next_obs)
            adv = torch.zeros_like(rew_b)
            last = 0
            for t in reversed(range(T)):
                nv = next_value if t == T - 1 else val_b[t + 1]
                nonterminal = 1.0 - done_b[t]
                delta = rew_b[t] + gamma * nv * nonterminal - val_b[t]
                adv[t] = last = delta + gamma * gae_lambda * nonterminal * last
            ret_b = adv + val_b
        b_obs, b_act, b_logp = obs_b.reshape(-1, 4), act_b.reshape(-1), logp_b.reshape(-1)
        b_adv, b_ret, B = adv.reshape(-1), ret_b.reshape(-1), T * N
        for _ in range(epochs):
            perm = torch.randperm(B)
            for mb in perm.split(B // minibatches):
                _, logp, ent, value = agent.get_action_and_value(b_obs[mb], b_act[mb])
                ratio = (logp - b_logp[mb]).exp()
                a = b_adv[mb]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()
                v_loss = 0.5 * ((value - b_ret[mb]) ** 2).mean()
                loss = pg + 0.5 * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
        mean = float(np.mean(returns)) if returns else float("nan")
        print(f"step {step} | mean return (last 100) {mean:.1f} | {time.time() - start:.1f} s",
              flush=True)
        if len(returns) == 100 and mean >= args.target:
            print(f"SOLVED mean return {mean:.1f} at step {step} in {time.time() - start:.1f} s")
            if args.record:
                record(agent, args.record)
            return 0
    print("not solved")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
