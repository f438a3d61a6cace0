// Shared helper for env option errors (host only).
#pragma once

#include <stdexcept>
#include <string>

#include "myriad/env_spec.h"

namespace myriad::envs {

[[noreturn]] inline void unknown_option(const EnvSpec& spec, const std::string& key) {
  std::string valid = "max_episode_steps";
  for (const auto& name : spec.option_names) valid += ", " + name;
  throw std::invalid_argument("env '" + spec.id + "' has no option '" + key +
                              "' (valid options: " + valid + ")");
}

}  // namespace myriad::envs
