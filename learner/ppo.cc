#include "learner/ppo.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "learner/distributed.h"
#include "learner/ppo_cpu.h"

namespace myriad::learner {

torch::Tensor normalize_advantages(const torch::Tensor& adv) {
  // The unbiased std written out: LibTorch's CPU std() of a whole tensor reads its result on the
  // host (.item()), which the sync counter rightly flags; this form is the same on every device.
  const torch::Tensor centered = adv - adv.mean();
  const double n = static_cast<double>(std::max<int64_t>(adv.numel() - 1, 1));
  return centered / (centered.square().sum().div_(n).sqrt_().add_(1e-8));
}

torch::Tensor policy_loss(const torch::Tensor& adv, const torch::Tensor& ratio, double clip) {
  return torch::max(-adv * ratio, -adv * torch::clamp(ratio, 1 - clip, 1 + clip)).mean();
}

torch::Tensor value_loss(const torch::Tensor& value, const torch::Tensor& old_value,
                         const torch::Tensor& returns, double clip, bool clipped) {
  const torch::Tensor unclipped = (value - returns).pow(2);
  if (!clipped) return 0.5 * unclipped.mean();
  const torch::Tensor v_clipped = old_value + torch::clamp(value - old_value, -clip, clip);
  return 0.5 * torch::max(unclipped, (v_clipped - returns).pow(2)).mean();
}

torch::Tensor approx_kl(const torch::Tensor& logratio, const torch::Tensor& ratio) {
  return ((ratio - 1) - logratio).mean();
}

torch::Tensor clip_fraction(const torch::Tensor& ratio, double clip) {
  return ((ratio - 1.0).abs() > clip).to(ratio.dtype()).mean();
}

bool use_cpu_kernels(const std::string& learner_math, const ActorCriticImpl& policy,
                     int learner_threads) {
  if (learner_math == "libtorch") return false;
  const std::string why = PpoMinibatchCpu::unsupported(policy);
  if (learner_math == "fused") {
    if (!why.empty())
      throw std::invalid_argument("run.learner_math: fused needs a CPU float32 policy, but " + why +
                                  " (use auto or libtorch)");
    return true;
  }
  if (learner_math != "auto")
    throw std::invalid_argument("run.learner_math: '" + learner_math +
                                "' is not one of auto, fused, libtorch");
  return why.empty() && learner_threads == 1;
}

torch::Tensor ppo_update(const PpoInputs& in, const Rollout& r) {
  const PpoConfig& c = *in.config;
  ActorCritic policy = in.policy;  // shares the module
  policy->train();
  // Flatten the batch: [T, N, ...] -> [B, ...].
  const int64_t B = r.T * r.N, mb = B / c.num_minibatches;
  const torch::Tensor obs = r.obs.reshape({B, -1});
  const torch::Tensor actions =
      policy->discrete() ? r.actions.reshape({B}) : r.actions.reshape({B, -1});
  const torch::Tensor logprobs = r.logprobs.reshape({B}), advantages = r.advantages.reshape({B});
  const torch::Tensor values = r.values.reshape({B}), returns = r.returns.reshape({B});
  const auto f64 = r.values.options().dtype(torch::kFloat64);
  torch::Tensor sums = torch::zeros({kNumPpoMetrics}, f64);
  std::optional<PpoMinibatchCpu> cpu;
  if (in.cpu_kernels) cpu.emplace(*policy, c);
  for (int64_t epoch = 0; epoch < c.update_epochs; ++epoch) {
    // One shuffle per epoch; minibatches are then contiguous slices.
    const torch::Tensor perm =
        torch::randperm(B, in.gen ? std::optional<at::Generator>(*in.gen) : std::nullopt,
                        r.values.options().dtype(torch::kLong));
    const torch::Tensor e_obs = obs.index_select(0, perm), e_act = actions.index_select(0, perm);
    const torch::Tensor e_logp = logprobs.index_select(0, perm);
    const torch::Tensor e_adv = advantages.index_select(0, perm);
    const torch::Tensor e_val = values.index_select(0, perm), e_ret = returns.index_select(0, perm);
    torch::Tensor epoch_sums = torch::zeros({kNumPpoMetrics}, f64);
    PpoSums cpu_sums{};
    for (int64_t start = 0; start + mb <= B; start += mb) {
      // (minibatch) => gradient in the flat buffer, by hand (learner/ppo_cpu.h) or by autograd.
      in.optimizer->zero_grad();
      torch::Tensor metrics;  // the LibTorch path's [5] for this minibatch
      if (cpu) {
        const int64_t D = e_obs.size(1), A = e_act.dim() == 2 ? e_act.size(1) : 1;
        const void* act = policy->discrete()
                              ? static_cast<const void*>(e_act.data_ptr<int64_t>() + start)
                              : static_cast<const void*>(e_act.data_ptr<float>() + start * A);
        cpu->accumulate(e_obs.data_ptr<float>() + start * D, act, e_logp.data_ptr<float>() + start,
                        e_adv.data_ptr<float>() + start, e_val.data_ptr<float>() + start,
                        e_ret.data_ptr<float>() + start, mb, &cpu_sums);
      } else {
        const PolicyOutput out =
            policy->act(e_obs.narrow(0, start, mb), e_act.narrow(0, start, mb));
        const torch::Tensor logratio = out.log_prob - e_logp.narrow(0, start, mb);
        const torch::Tensor ratio = logratio.exp();
        torch::Tensor adv = e_adv.narrow(0, start, mb);
        if (c.norm_adv) adv = normalize_advantages(adv);
        const torch::Tensor pg = policy_loss(adv, ratio, c.clip_coef);
        const torch::Tensor v = value_loss(out.value, e_val.narrow(0, start, mb),
                                           e_ret.narrow(0, start, mb), c.clip_coef, c.clip_vloss);
        const torch::Tensor entropy = out.entropy.mean();
        const torch::Tensor loss = pg - c.ent_coef * entropy + c.vf_coef * v;
        loss.backward();
        torch::NoGradGuard no_grad;
        metrics = torch::stack(
            {pg, v, entropy, approx_kl(logratio, ratio), clip_fraction(ratio, c.clip_coef)});
      }
      // Data-parallel: one flat all-reduce; every rank then takes the same step.
      if (in.comm) in.comm->all_reduce_mean_(in.optimizer->flat_grad());
      in.optimizer->clip_grad_norm(c.max_grad_norm);
      in.optimizer->step();
      if (metrics.defined()) epoch_sums.add_(metrics.to(torch::kFloat64));
    }
    if (cpu) epoch_sums = torch::tensor(std::vector<double>(cpu_sums.begin(), cpu_sums.end()), f64);
    if (in.comm) in.comm->all_reduce_mean_(epoch_sums);  // the same KL, hence lr, on every rank
    sums.add_(epoch_sums);
    if (in.schedule == LrSchedule::kKlAdaptive)
      adapt_lr_to_kl(in.optimizer->lr(), epoch_sums[kApproxKl] / c.num_minibatches, c.target_kl);
  }
  return sums / static_cast<double>(c.update_epochs * c.num_minibatches);
}

}  // namespace myriad::learner
