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

}  // namespace myriad::learner
