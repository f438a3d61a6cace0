// What an environment declares about itself: spaces, episode limit, Gymnasium's threshold.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "myriad/spaces.h"

namespace myriad {

struct EnvSpec {
  std::string id;                          // registry id, e.g. "CartPole-v1"
  Space observation_space;                 // per env
  Space action_space;                      // per env
  int max_episode_steps = 0;               // truncation limit (Gymnasium's TimeLimit)
  std::optional<double> reward_threshold;  // where Gymnasium registers one
  std::vector<std::string> state_names;    // names of get_state() columns
  std::vector<std::string> option_names;   // options make() accepts besides max_episode_steps
};

}  // namespace myriad
