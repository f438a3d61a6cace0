// A trained policy as a user holds it: its config, network(s) and observation statistics, acting
// deterministically. Made by Trainer::snapshot() or read from a checkpoint by load_policy.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "learner/config.h"
#include "learner/normalizer.h"
#include "learner/policy.h"
#include "learner/teams.h"
#include "myriad/env_spec.h"

namespace myriad::learner {

// One team's trained policy in a multi-agent env (undefined policy: the team acts at random).
struct TeamPolicy {
  Team team;
  ActorCritic policy{nullptr};
  RunningMeanStd obs_rms;
};

// A trained policy with what it needs to act: its config, network and observation statistics.
struct LoadedPolicy {
  TrainConfig config;
  EnvSpec spec;                 // of the configured env (for MJCF-v0, of its model)
  ActorCritic policy{nullptr};  // the policy (multi-agent envs: the first learning team's)
  RunningMeanStd obs_rms;
  RunningMeanStd ret_rms;         // the reward scale (used when config.ppo.normalize_reward)
  std::vector<TeamPolicy> teams;  // every team, in team order (single-agent envs: one)
  // Draws of the teams that act at random (agents.random_teams); evaluate reseeds it.
  at::Generator random_gen;
  // Deterministic, clipped to the action space: obs [B, obs...] => actions [B(, K)];
  // multi-agent envs: obs [B, A, D] => [B, A(, K)], each team by its own policy.
  torch::Tensor act(const torch::Tensor& obs);
  // The critic's estimate V(obs) [B], in the env's reward units (undoing reward scaling).
  // Single-agent envs only.
  torch::Tensor value(const torch::Tensor& obs);

 private:
  torch::Tensor network_input(const torch::Tensor& obs) const;
};
LoadedPolicy load_policy(const std::string& checkpoint,
                         const std::string& device = "");  // learner/checkpoint.cc

}  // namespace myriad::learner
