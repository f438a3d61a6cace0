// The particle-world scenarios as registered envs (envs/registry.cc): each scenario of envs/mpe/
// with its spec and options, in a discrete and a continuous variant. make() picks the variant by
// the option `continuous` (0, the default: Discrete(5) per agent; 1: Box(0, 1, (5,)) per agent).
//   Spread-v0: 3 agents cover 3 landmarks (envs/mpe/spread.h); option local_ratio (0.5).
//   Tag-v0:    3 adversaries chase 1 good agent among 2 obstacles (envs/mpe/tag.h).
//   Sumo-v0:   2 wrestlers push each other out of a ring (envs/mpe/sumo.h).
#pragma once

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/env_options.h"
#include "envs/mpe/spread.h"
#include "envs/mpe/sumo.h"
#include "envs/mpe/tag.h"
#include "envs/multi_agent_kernels.h"
#include "myriad/env_spec.h"

namespace myriad::envs {

// The spec of scenario S registered as `id`: per-agent spaces (observations padded to
// S::kObsDim), agents and teams, and state names (entity positions, then velocities, in the
// order of envs/mpe/world.h). `landmark` names the scenario's non-agent entities.
template <class S>
EnvSpec mpe_spec(const std::string& id, const std::string& landmark,
                 std::vector<std::string> option_names) {
  const float inf = std::numeric_limits<float>::infinity();
  EnvSpec s;
  s.id = id;
  s.observation_space =
      Space::box(std::vector<float>(S::kObsDim, -inf), std::vector<float>(S::kObsDim, inf));
  s.action_space = S::ActionDecoder::kContinuous
                       ? Space::box(std::vector<float>(S::kActionDim, 0.0f),
                                    std::vector<float>(S::kActionDim, 1.0f))
                       : Space::discrete(5);
  s.max_episode_steps = S::kMaxEpisodeSteps;
  s.option_names = std::move(option_names);
  s.num_agents = S::kAgents;
  std::vector<std::string> entities;
  for (int i = 0; i < S::kAgents; ++i) {
    s.agent_names.push_back(S::agent_name(i));
    s.team_ids.push_back(S::team(i));
    s.agent_obs_sizes.push_back(S::obs_size(i));
    entities.push_back(S::agent_name(i));
  }
  for (int t = 0; t < S::kTeams; ++t) s.team_names.push_back(S::team_name(t));
  s.decides_winner = HasWinner<S>::value;
  for (int l = 0; l < S::kEntities - S::kAgents; ++l)
    entities.push_back(landmark + "_" + std::to_string(l));
  for (const std::string& e : entities)
    s.state_names.insert(s.state_names.end(), {e + "_x", e + "_y"});
  for (const std::string& e : entities)
    s.state_names.insert(s.state_names.end(), {e + "_vx", e + "_vy"});
  return s;
}

template <class Actions>
struct SpreadEnv : mpe::Spread<3, Actions> {
  using Scenario = mpe::Spread<3, Actions>;  // drawn by mpe::Drawing<Scenario> (envs/mpe/drawing.h)
  static EnvSpec spec() {
    return mpe_spec<SpreadEnv>("Spread-v0", "landmark", {"continuous", "local_ratio"});
  }
  static void set_option(typename SpreadEnv::Params& p, const std::string& key, double value) {
    if (key != "local_ratio") unknown_option(spec(), key);
    if (!(value >= 0.0 && value <= 1.0))
      throw std::invalid_argument("Spread-v0 option local_ratio must lie in [0, 1], got " +
                                  std::to_string(value));
    p.local_ratio = static_cast<float>(value);
  }
};

template <class Actions>
struct TagEnv : mpe::Tag<1, 3, 2, Actions> {
  using Scenario = mpe::Tag<1, 3, 2, Actions>;
  static EnvSpec spec() { return mpe_spec<TagEnv>("Tag-v0", "obstacle", {"continuous"}); }
  static void set_option(typename TagEnv::Params&, const std::string& key, double) {
    unknown_option(spec(), key);
  }
};

template <class Actions>
struct SumoEnv : mpe::Sumo<Actions> {
  using Scenario = mpe::Sumo<Actions>;
  static EnvSpec spec() { return mpe_spec<SumoEnv>("Sumo-v0", "landmark", {"continuous"}); }
  static void set_option(typename SumoEnv::Params&, const std::string& key, double) {
    unknown_option(spec(), key);
  }
};

using SpreadDiscrete = SpreadEnv<mpe::DiscreteActions>;
using SpreadContinuous = SpreadEnv<mpe::ContinuousActions>;
using TagDiscrete = TagEnv<mpe::DiscreteActions>;
using TagContinuous = TagEnv<mpe::ContinuousActions>;
using SumoDiscrete = SumoEnv<mpe::DiscreteActions>;
using SumoContinuous = SumoEnv<mpe::ContinuousActions>;

}  // namespace myriad::envs
