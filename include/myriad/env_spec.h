// What an environment declares about itself: spaces, episode limit, Gymnasium's threshold, and
// its agents.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "myriad/spaces.h"

namespace myriad {

// Agents: a single-agent env has num_agents = 1 and empty agent_names, team_ids and
// agent_obs_sizes; its spaces are per env and its buffers keep their shapes ([N, obs...],
// reward [N]). A multi-agent env (num_agents = A > 1) declares its spaces per agent and every
// buffer gains the agent axis after the batch axis (myriad/batch_env.h): observations
// [N, A, D] with D = observation_space.flat_size(), the largest agent's size. Agent i's
// observation is its first agent_obs_sizes[i] values; the rest of its row is padding, always 0
// (the mask is `k < agent_obs_sizes[i]`).
struct EnvSpec {
  std::string id;                          // registry id, e.g. "CartPole-v1"
  Space observation_space;                 // per env; per agent when num_agents > 1 (padded)
  Space action_space;                      // per env; per agent when num_agents > 1
  int max_episode_steps = 0;               // truncation limit (Gymnasium's TimeLimit)
  std::optional<double> reward_threshold;  // where Gymnasium registers one
  std::optional<double> dt;                // simulated seconds per step (physics envs:
                                           // timestep x frame_skip, Gymnasium's env.dt)
  std::vector<std::string> state_names;    // names of get_state() columns
  bool state_float64 = false;              // get_state() is float64 (physics envs), else float32
  std::vector<std::string> option_names;   // options make() accepts besides max_episode_steps
  bool physics_env = false;                // runs on a physics engine (envs/locomotion/,
                                           // MJCF-v0): takes physics (myriad or mujoco),
                                           // precision (32 or 64) and frame_skip
  int num_agents = 1;                      // A; 1 for every single-agent env
  std::vector<std::string> agent_names;    // [A] (multi-agent envs), e.g. "adversary_0"
  std::vector<int> team_ids;               // [A] team of each agent, 0..teams-1
  std::vector<int64_t> agent_obs_sizes;    // [A] unpadded observation size of each agent
  std::vector<std::string> team_names;     // [teams] (multi-agent envs), e.g. "adversaries"
  bool decides_winner = false;             // buffers().winner names each episode's winning team
  int64_t actor_obs_dim = 0;               // > 0: the observation is [actor | critic], the
                                           // actor's first actor_obs_dim columns, the rest
                                           // privileged, the critic's alone (task envs)

  bool multi_agent() const { return num_agents > 1; }
};

}  // namespace myriad
