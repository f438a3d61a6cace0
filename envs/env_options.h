// Env option errors, written once for every env (host only): the list of valid options and the
// error for an option the env does not have.
#pragma once

#include <stdexcept>
#include <string>

#include "myriad/env_spec.h"

namespace myriad::envs {

// "max_episode_steps, a, b, ...": every option make() accepts for spec's env.
inline std::string valid_options(const EnvSpec& spec) {
  std::string valid = "max_episode_steps";
  for (const auto& name : spec.option_names) valid += ", " + name;
  return valid;
}

[[noreturn]] inline void unknown_option(const EnvSpec& spec, const std::string& key) {
  throw std::invalid_argument("env '" + spec.id + "' has no option '" + key +
                              "' (valid options: " + valid_options(spec) + ")");
}

}  // namespace myriad::envs
