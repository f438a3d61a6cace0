// Generalized advantage estimation over a rollout [T, N].
#pragma once

#include <torch/torch.h>

namespace myriad::learner {

// rewards, values, dones: [T, N] float; next_value: [N]. dones[t] = 1 where the episode ended
// at step t (terminated or truncated); the caller has already folded the bootstrap value of a
// truncated episode's final_obs into rewards[t] (r + gamma * V(final_obs)), so every done cuts
// the recursion. Returns advantages [T, N]; returns = advantages + values.
torch::Tensor compute_gae(const torch::Tensor& rewards, const torch::Tensor& values,
                          const torch::Tensor& dones, const torch::Tensor& next_value, double gamma,
                          double lambda);

}  // namespace myriad::learner
