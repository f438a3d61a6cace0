// Collection: T batched env steps with the current policy, written into rollout storage.
// Nothing is read back on the host: actions, flags and statistics stay on the env's device.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <string>
#include <vector>

#include "learner/normalizer.h"
#include "learner/policy.h"
#include "learner/rollout.h"
#include "learner/sample_cpu.h"
#include "learner/teams.h"
#include "myriad/batch_env.h"

namespace myriad::learner {

// What the policy's actions become before the env sees them: int32 for Discrete; clipped to the
// space's bounds for Box (the rollout keeps the unclipped sample, whose log-prob it stores).
class ActionAdapter {
 public:
  ActionAdapter() = default;
  ActionAdapter(const Space& action_space, torch::Device device);
  torch::Tensor operator()(const torch::Tensor& action) const;

 private:
  bool discrete_ = true;
  torch::Tensor low_, high_;
};

// One team's part of the collection: its policy (undefined for a team acting at random), the
// observation statistics it acts under, and the rollout its rows [T, N * a] go to.
struct TeamCollect {
  const Team* team = nullptr;
  ActorCritic policy{nullptr};
  Standardizer obs_norm;  // frozen for the rollout (statistics move after it)
  ActionAdapter to_env;
  Rollout* rollout = nullptr;
  // Sample by learner/sample_cpu.h rather than ActorCriticImpl::sample (a CPU float32 policy;
  // run.learner_math decides, as for the update).
  bool fused = false;
};

struct CollectInputs {
  std::vector<TeamCollect> teams;  // in team order: the order of the generator's draws
  BatchEnv* env = nullptr;
  torch::Generator* gen = nullptr;  // of the env's device
  std::chrono::steady_clock::time_point clock_start;
  double seconds_before = 0;  // wall seconds of earlier sessions (resume)
  // The env's info keys to average over the rollout (per-term rewards, tracking errors), and
  // where: [K] float64 on the env's device, the mean per env step (unset: none).
  std::vector<std::string> info_keys;
  torch::Tensor* info_means = nullptr;
};

// The env's info keys the trainer logs: single-agent values per env ([N]) named reward_*,
// error_* or curriculum_* (a task's reward terms, tracking errors and curriculum levels, a
// locomotion env's reward parts).
std::vector<std::string> logged_info_keys(const BatchEnv& env);

// rsl_rl's init_at_random_ep_len (mjlab's train.py): each env's running episode is moved to a
// step drawn uniformly from [0, max_episode_steps), so that the batch's first episodes do not
// all end at the same step (run.random_episode_starts). Drawn from its own generator (seed):
// the run's other draws are unchanged. Refused, naming the key, for an env without a time limit.
void stagger_episode_starts(BatchEnv& env, uint64_t seed);

// (policies, env's current obs) => each team's rollout.{obs, raw_obs, actions, logprobs,
// values, rewards, terminated, truncated, final_obs, episode_returns, episode_lengths,
// winner, next_obs, step_seconds}; per-env flags repeated for each agent of a team.
void collect_rollout(const CollectInputs& in);

}  // namespace myriad::learner
