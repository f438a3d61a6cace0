#include "learner/gae.h"

namespace myriad::learner {

torch::Tensor compute_gae(const torch::Tensor& rewards, const torch::Tensor& values,
                          const torch::Tensor& dones, const torch::Tensor& next_value, double gamma,
                          double lambda) {
  const int64_t T = rewards.size(0);
  torch::Tensor adv = torch::zeros_like(rewards);
  torch::Tensor last = torch::zeros_like(next_value);
  for (int64_t t = T - 1; t >= 0; --t) {
    const torch::Tensor nonterminal = 1.0 - dones[t];
    const torch::Tensor next_v = t == T - 1 ? next_value : values[t + 1];
    const torch::Tensor delta = rewards[t] + gamma * next_v * nonterminal - values[t];
    last = delta + gamma * lambda * nonterminal * last;
    adv[t] = last;
  }
  return adv;
}

void add_truncation_bootstrap(
    torch::Tensor& reward, const torch::Tensor& terminated, const torch::Tensor& truncated,
    const std::function<torch::Tensor(const torch::Tensor&)>& final_values, double gamma) {
  const torch::Tensor cut = torch::logical_and(truncated, ~terminated);
  if (!cut.any().item<bool>()) return;
  const torch::Tensor idx = cut.nonzero().squeeze(-1);
  reward.index_add_(0, idx, gamma * final_values(idx));
}

}  // namespace myriad::learner
