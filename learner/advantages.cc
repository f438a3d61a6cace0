#include "learner/advantages.h"

#include <cstdint>

namespace myriad::learner {

torch::Tensor gae(const torch::Tensor& rewards, const torch::Tensor& values,
                  const torch::Tensor& dones, const torch::Tensor& next_value, double gamma,
                  double lambda) {
  const int64_t T = rewards.size(0);
  const torch::Tensor nonterminal = 1.0 - dones;
  const torch::Tensor next_values = torch::cat({values.slice(0, 1), next_value.unsqueeze(0)});
  // delta_t = r_t + gamma * V(s_t+1) * (1 - done_t) - V(s_t), for every t at once.
  const torch::Tensor delta = rewards + gamma * next_values * nonterminal - values;
  const torch::Tensor decay = (gamma * lambda) * nonterminal;
  torch::Tensor adv = torch::empty_like(rewards);
  torch::Tensor last = delta[T - 1];
  adv[T - 1].copy_(last);
  for (int64_t t = T - 2; t >= 0; --t) {
    last = torch::addcmul(delta[t], decay[t], last);
    adv[t].copy_(last);
  }
  return adv;
}

torch::Tensor truncation_bootstrap(const torch::Tensor& terminated, const torch::Tensor& truncated,
                                   const torch::Tensor& final_values, double gamma) {
  const torch::Tensor cut =
      truncated.logical_and(terminated.logical_not()).logical_and_(final_values.isfinite());
  return torch::where(cut, final_values * gamma, torch::zeros({}, final_values.options()));
}

torch::Tensor discounted_returns(const torch::Tensor& rewards, const torch::Tensor& dones,
                                 torch::Tensor& running, double gamma) {
  torch::Tensor out = torch::empty_like(rewards);
  const torch::Tensor kept = 1.0 - dones;
  for (int64_t t = 0; t < rewards.size(0); ++t) {
    running.mul_(gamma).add_(rewards[t]);
    out[t].copy_(running);
    running.mul_(kept[t]);
  }
  return out;
}

void compute_returns(const ReturnsInputs& in, Rollout& r) {
  torch::NoGradGuard no_grad;
  ActorCritic policy = in.policy;  // shares the module
  policy->eval();
  const int64_t T = r.T, N = r.N, D = r.obs.size(2);
  r.dones.copy_(r.terminated.logical_or(r.truncated));
  torch::Tensor rewards = r.rewards;
  if (in.ret_rms) {
    const torch::Tensor disc = discounted_returns(r.rewards, r.dones, *in.running_return, in.gamma);
    in.ret_rms->update(disc.reshape({T * N}), in.comm);
    rewards = (rewards / (in.ret_rms->var.to(rewards.dtype()) + 1e-8).sqrt())
                  .clamp_(-in.reward_clip, in.reward_clip);
  }
  // V(final_obs) for every step: one batched critic pass instead of one per env step.
  const torch::Tensor final_values =
      policy->value(in.obs_norm(r.final_obs.reshape({T * N, D}))).reshape({T, N});
  rewards = rewards + truncation_bootstrap(r.terminated, r.truncated, final_values, in.gamma);
  r.rewards.copy_(rewards);
  const torch::Tensor next_value = policy->value(r.next_obs);
  r.advantages.copy_(gae(r.rewards, r.values, r.dones, next_value, in.gamma, in.lambda));
  torch::add_out(r.returns, r.advantages, r.values);
}

}  // namespace myriad::learner
