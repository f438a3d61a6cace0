// Teams: how the agents of an env are grouped into policies, and how the env's [N, A, ...]
// buffers become each policy's [N * a, ...] rows. A single-agent env is one team of one agent
// whose rows are the env's own buffers, untouched.
//
// Multi-agent PPO shares parameters within a team: every agent of a team is a row of the same
// policy, env-major (env n's agent k of the team is row n * a + k). A policy's input row is
//   [ the agent's observation (its unpadded width: the widest among the team's agents)
//   | a one-hot of the agent's index within the team (agents.agent_id; teams of 2+ agents)
//   | every agent's padded observation, [A * D] (agents.central_value: the critic's only) ]
// and the actor reads only the first two parts (actor_dim columns): a centralised critic sees
// the whole env, the actor its own observation.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "learner/config.h"
#include "myriad/env_spec.h"

namespace myriad::learner {

struct Team {
  std::string name;             // spec().team_names[id] ("" for a single-agent env)
  int id = 0;                   // the env's team id
  std::vector<int64_t> agents;  // indices into the env's agent axis, ascending
  bool learns = true;           // false: uniform random actions (agents.random_teams)
  int64_t env_agents = 1;       // A (1 for a single-agent env)
  int64_t padded_dim = 0;       // D, the env's padded per-agent observation width
  int64_t obs_width = 0;        // the team's unpadded width (the actor's columns)
  int64_t privileged_dim = 0;   // a task env's critic-only columns after the actor's
  bool agent_id = false;        // one-hot agent index in the input
  bool central_value = false;   // every agent's observation in the critic's input
  torch::Tensor index;          // [a] int64 on the device: `agents`
  torch::Tensor one_hot;        // [a, a] float32 on the device (agent_id)

  bool multi_agent() const { return env_agents > 1; }
  int64_t size() const { return static_cast<int64_t>(agents.size()); }  // a
  int64_t actor_dim() const { return obs_width + (agent_id ? size() : 0); }
  int64_t input_dim() const {
    return actor_dim() + privileged_dim + (central_value ? env_agents * padded_dim : 0);
  }

  // Env observations [N, A, D] => policy input [N * a, input_dim()] (single-agent: obs itself).
  torch::Tensor input(const torch::Tensor& obs) const;
  // A per-agent buffer [N, A, ...] => the team's rows [N * a, ...] (single-agent: x itself).
  torch::Tensor rows(const torch::Tensor& per_agent) const;
  // A per-env buffer [N] => [N * a], each env's value repeated for its agents.
  torch::Tensor per_env(const torch::Tensor& per_env) const;
  // The team's env actions [N * a, ...] written into the env's action tensor [N, A, ...].
  void put_actions(const torch::Tensor& actions, torch::Tensor& env_actions) const;
};

// The teams of `spec` in team-id order: one per team (agents.random_teams act at random), or
// the single team of a single-agent env. Throws std::invalid_argument for a random_teams name
// the env does not have (listing its teams) or when no team is left to learn.
std::vector<Team> make_teams(const EnvSpec& spec, const AgentsConfig& config, torch::Device device);

// The prefix of a team's entries in checkpoints: "" for team 0 (and single-agent envs, so their
// checkpoints keep their keys), "team<id>." for the others.
std::string checkpoint_prefix(const Team& team);

// Uniform random actions for `rows` rows of `space`: int64 [rows] or float32 [rows, K].
torch::Tensor random_actions(const Space& space, int64_t rows, torch::Generator* gen,
                             torch::Device device);

}  // namespace myriad::learner
