#include "learner/rollout.h"

#include <cstdint>

namespace myriad::learner {

Rollout::Rollout(int64_t num_steps, int64_t num_envs, int64_t obs_dim, const Space& action_space,
                 torch::Device device)
    : T(num_steps), N(num_envs) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(device);
  obs = torch::zeros({T, N, obs_dim}, f32);
  raw_obs = torch::zeros({T, N, obs_dim}, f32);
  actions = action_space.is_discrete() ? torch::zeros({T, N}, f32.dtype(torch::kLong))
                                       : torch::zeros({T, N, action_space.flat_size()}, f32);
  logprobs = torch::zeros({T, N}, f32);
  values = torch::zeros({T, N}, f32);
  rewards = torch::zeros({T, N}, f32);
  terminated = torch::zeros({T, N}, f32.dtype(torch::kBool));
  truncated = torch::zeros({T, N}, f32.dtype(torch::kBool));
  final_obs = torch::zeros({T, N, obs_dim}, f32);
  episode_returns = torch::zeros({T, N}, f32);
  episode_lengths = torch::zeros({T, N}, f32.dtype(torch::kInt));
  next_obs = torch::zeros({N, obs_dim}, f32);
  dones = torch::zeros({T, N}, f32);
  advantages = torch::zeros({T, N}, f32);
  returns = torch::zeros({T, N}, f32);
  step_seconds.assign(T + 1, 0.0);
  step.resize(T);
  for (int64_t t = 0; t < T; ++t)
    step[t] = {obs[t],       raw_obs[t],         actions[t],        logprobs[t],
               values[t],    rewards[t],         terminated[t],     truncated[t],
               final_obs[t], episode_returns[t], episode_lengths[t]};
}

}  // namespace myriad::learner
