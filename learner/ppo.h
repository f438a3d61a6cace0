// The PPO update: epochs of shuffled minibatches over the flattened rollout, with CleanRL's
// losses (clipped surrogate, optionally clipped value loss, entropy bonus). Metrics accumulate
// as device tensors; nothing is read on the host.
#pragma once

#include <torch/torch.h>

#include "learner/config.h"
#include "learner/optimizer.h"
#include "learner/policy.h"
#include "learner/rollout.h"
#include "learner/schedule.h"

namespace myriad::learner {

class Comm;

// Per-minibatch advantage normalization: (adv - mean) / (std + 1e-8).
torch::Tensor normalize_advantages(const torch::Tensor& adv);
// max(-A r, -A clip(r, 1 - c, 1 + c)), averaged.
torch::Tensor policy_loss(const torch::Tensor& adv, const torch::Tensor& ratio, double clip);
// 0.5 (V - R)^2 averaged; clipped: 0.5 max((V - R)^2, (V_old + clip(V - V_old, -c, c) - R)^2).
torch::Tensor value_loss(const torch::Tensor& value, const torch::Tensor& old_value,
                         const torch::Tensor& returns, double clip, bool clipped);
// The k3 estimator of KL(old || new): mean((r - 1) - log r) (Schulman).
torch::Tensor approx_kl(const torch::Tensor& logratio, const torch::Tensor& ratio);
// Fraction of samples whose ratio left [1 - c, 1 + c].
torch::Tensor clip_fraction(const torch::Tensor& ratio, double clip);

// Means over the update's minibatches: policy loss, value loss, entropy, approx KL, clip
// fraction, in that order, as one [5] float64 device tensor.
enum PpoMetric { kPolicyLoss, kValueLoss, kEntropy, kApproxKl, kClipFrac, kNumPpoMetrics };

struct PpoInputs {
  ActorCritic policy;
  FlatAdam* optimizer = nullptr;
  const PpoConfig* config = nullptr;
  LrSchedule schedule = LrSchedule::kLinear;
  torch::Generator* gen = nullptr;  // minibatch shuffling, of the rollout's device
  Comm* comm = nullptr;  // data-parallel: gradients and the epoch's KL averaged over ranks
  // Minibatch losses and gradients by learner/ppo_cpu.h's hand-written loops instead of LibTorch
  // ops and autograd (CPU, float32 only; see use_cpu_kernels).
  bool cpu_kernels = false;
};

// run.learner_math ("auto", "fused" or "libtorch") => whether ppo_update takes the hand-written
// CPU path for this policy: "auto" when the policy is on the CPU in float32 and LibTorch runs
// on one thread (the fused loops use one core), "fused" always (std::invalid_argument naming
// why when the policy cannot), "libtorch" never.
bool use_cpu_kernels(const std::string& learner_math, const ActorCriticImpl& policy,
                     int learner_threads);

// (rollout.{obs, actions, logprobs, values, advantages, returns}) => policy and optimizer
// updated (and, for kl_adaptive, the optimizer's lr); returns the metrics [5].
torch::Tensor ppo_update(const PpoInputs& in, const Rollout& rollout);

}  // namespace myriad::learner
