// Advantages and returns: reward scaling, bootstrapping through truncation, and GAE, for the
// whole rollout at once once it is collected (no per-step work, no host reads).
#pragma once

#include <torch/torch.h>

#include "learner/normalizer.h"
#include "learner/policy.h"
#include "learner/rollout.h"

namespace myriad::learner {

// Generalized advantage estimation. rewards, values, dones: [T, N] float; next_value: [N].
// dones[t] = 1 where the episode ended at step t (terminated or truncated); a truncated
// episode's bootstrap value is already in rewards[t] (truncation_bootstrap), so every done cuts
// the recursion. Returns advantages [T, N]; returns = advantages + values.
torch::Tensor gae(const torch::Tensor& rewards, const torch::Tensor& values,
                  const torch::Tensor& dones, const torch::Tensor& next_value, double gamma,
                  double lambda);

// Truncation is not termination: gamma * V(final_obs) where an episode was truncated and not
// terminated, 0 elsewhere (also where a stale final value is not finite). All [T, N].
torch::Tensor truncation_bootstrap(const torch::Tensor& terminated, const torch::Tensor& truncated,
                                   const torch::Tensor& final_values, double gamma);

// The running discounted return whose spread scales rewards (as CleanRL's NormalizeReward):
// running = running * gamma + rewards[t], kept [t], then zeroed where dones[t] (any episode end;
// Gymnasium >= 1.0 zeroes it on termination only, carrying a truncated episode's return into
// the next one). rewards, dones: [T, N]; running: [N], carried from one rollout to the next.
// Returns [T, N].
torch::Tensor discounted_returns(const torch::Tensor& rewards, const torch::Tensor& dones,
                                 torch::Tensor& running, double gamma);

struct ReturnsInputs {
  ActorCritic policy;                       // its critic values final_obs and next_obs
  Standardizer obs_norm;                    // the statistics the rollout was collected under
  RunningMeanStd* ret_rms = nullptr;        // reward scaling, when enabled
  torch::Tensor* running_return = nullptr;  // [N], with ret_rms
  double reward_clip = 10.0;                // scaled rewards clipped to +-reward_clip
  double gamma = 0.99, lambda = 0.95;
  Comm* comm = nullptr;  // data-parallel: reward statistics over every rank
};

// (rollout.{rewards, terminated, truncated, final_obs, values, next_obs}) =>
//   rollout.{rewards (scaled, bootstrapped), dones, advantages, returns}
void compute_returns(const ReturnsInputs& in, Rollout& rollout);

}  // namespace myriad::learner
