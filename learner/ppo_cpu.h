// PPO's minibatch loss and its gradient for the MLP actor-critic (learner/policy.h), written out
// by hand for one CPU core: the same losses as learner/ppo.h (clipped surrogate, optionally
// clipped value loss, entropy bonus, per-minibatch advantage normalization), the same gradient
// as LibTorch's autograd gives (ties of max() split in half, as its backward does), without
// LibTorch's per-op cost, which is most of a small net's update on the CPU. The caller shuffles,
// clips the gradient and steps the optimizer as before (ppo_update with use_cpu_kernels).
#pragma once

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <string>

#include "learner/config.h"
#include "learner/mlp_cpu.h"
#include "learner/policy.h"
#include "learner/ppo.h"

namespace myriad::learner {

using PpoSums = std::array<double, kNumPpoMetrics>;

class PpoMinibatchCpu {
 public:
  // Why `policy` cannot take this path (it must live on the CPU in float32, with gradients bound
  // to a flat buffer); "" when it can.
  static std::string unsupported(const ActorCriticImpl& policy);

  // Binds to the policy's current parameter and gradient storage (make one per update: a
  // checkpoint load re-points them).
  PpoMinibatchCpu(ActorCriticImpl& policy, const PpoConfig& config);

  // (one minibatch: obs [rows, D], actions ([rows] int64 or [rows, A] float32), behaviour
  // log-probs, advantages, old values, returns [rows]) => d loss / d parameters added to the
  // policy's gradients; the minibatch's metrics (PpoMetric order) added to `sums`.
  void accumulate(const float* obs, const void* actions, const float* old_logp, const float* adv,
                  const float* old_value, const float* returns, int64_t rows, PpoSums* sums);

 private:
  const PpoConfig& c_;
  bool discrete_;
  int64_t obs_dim_;
  MlpCpu actor_, critic_;
  const float* log_std_ = nullptr;  // [A] (continuous)
  float* grad_log_std_ = nullptr;
  std::vector<float> adv_, d_head_, d_value_, std_, g_log_std_;  // per-minibatch scratch
};

}  // namespace myriad::learner
