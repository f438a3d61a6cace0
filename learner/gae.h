// Generalized advantage estimation over a rollout [T, N].
#pragma once

#include <torch/torch.h>

#include <functional>

namespace myriad::learner {

// rewards, values, dones: [T, N] float; next_value: [N]. dones[t] = 1 where the episode ended
// at step t (terminated or truncated); the caller has already folded the bootstrap value of a
// truncated episode's final_obs into rewards[t] (r + gamma * V(final_obs)), so every done cuts
// the recursion. Returns advantages [T, N]; returns = advantages + values.
torch::Tensor compute_gae(const torch::Tensor& rewards, const torch::Tensor& values,
                          const torch::Tensor& dones, const torch::Tensor& next_value, double gamma,
                          double lambda);

// Truncation is not termination: adds gamma * V(final_obs) to reward[i] for every env i that
// was truncated and not terminated. final_values(idx) returns V(final_obs[idx]) for the env
// indices idx [K] (called only when K > 0). reward: [N] float; terminated, truncated: [N] bool.
void add_truncation_bootstrap(
    torch::Tensor& reward, const torch::Tensor& terminated, const torch::Tensor& truncated,
    const std::function<torch::Tensor(const torch::Tensor&)>& final_values, double gamma);

}  // namespace myriad::learner
