#include "learner/rollout.h"

#include <cstdint>
#include <string>

#include "myriad/host_memory.h"

namespace myriad::learner {

Rollout::Rollout(int64_t num_steps, int64_t num_envs, int64_t obs_dim, const Space& action_space,
                 torch::Device device, bool winners)
    : T(num_steps), N(num_envs) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(device);
  if (device.is_cpu()) {
    // The tensors below, counted before the first is allocated: per transition 3 observations
    // (normalized, raw, final), the action, 8 floats and ints, 2 flags.
    const int64_t per_step =
        4 * (3 * obs_dim + 8) + 2 + (action_space.is_discrete() ? 8 : 4 * action_space.flat_size());
    check_host_allocation(checked_product(checked_product(T, N), per_step),
                          "the rollout of ppo.num_steps=" + std::to_string(T) +
                              " x env.num_envs=" + std::to_string(N));
  }
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
  if (winners) winner = torch::full({T, N}, -1, f32.dtype(torch::kInt));
  dones = torch::zeros({T, N}, f32);
  advantages = torch::zeros({T, N}, f32);
  returns = torch::zeros({T, N}, f32);
  step_seconds.assign(T + 1, 0.0);
  step.resize(T);
  for (int64_t t = 0; t < T; ++t)
    step[t] = {obs[t],
               raw_obs[t],
               actions[t],
               logprobs[t],
               values[t],
               rewards[t],
               terminated[t],
               truncated[t],
               final_obs[t],
               episode_returns[t],
               episode_lengths[t],
               winners ? winner[t] : torch::Tensor()};
}

}  // namespace myriad::learner
