// The rollout's per-step policy call (ActorCriticImpl::sample) written out for one CPU core: the
// critic's value, the actor's head, and an action drawn from it with its log-probability. At a
// CPU batch of a few dozen envs LibTorch spends most of this call in per-op dispatch (some thirty
// small ops per env step); the layers here are learner/mlp_cpu.h's, so the call costs its
// arithmetic. The random draws still come from LibTorch's generator in the same order and shape
// as ActorCriticImpl::sample takes them, so a run's random stream does not depend on the path.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "learner/mlp_cpu.h"
#include "learner/policy.h"

namespace myriad::learner {

class PolicySamplerCpu {
 public:
  // Why `policy` cannot be sampled here (it must live on the CPU in float32); "" when it can.
  static std::string unsupported(const ActorCriticImpl& policy);

  // Reads the policy's parameters in place: make one per rollout (they must not change while
  // it samples, and a checkpoint load re-points them).
  explicit PolicySamplerCpu(const ActorCriticImpl& policy);

  // (obs [B, D] float32, contiguous) => action ([B] int64 or [B, A] float32, before clipping),
  // log_prob [B], value [B], written into the given contiguous CPU tensors. Draws E ~ Exp(1)
  // [B, K] (Discrete) or z ~ N(0, 1) [B, A] (Box) from `gen`, as ActorCriticImpl::sample does.
  void sample(const torch::Tensor& obs, torch::Generator* gen, torch::Tensor& action,
              torch::Tensor& log_prob, torch::Tensor& value);

 private:
  bool discrete_;
  int64_t obs_dim_;
  MlpCpu actor_, critic_;
  const float* log_std_ = nullptr;  // [A] (Box)
  torch::Tensor noise_;             // [B, A] or [B, K], reused across steps
  std::vector<float> std_dev_;      // [A] exp(log_std), per call
};

}  // namespace myriad::learner
