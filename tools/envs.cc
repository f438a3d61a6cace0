// myriad envs: the registered envs with their spaces, episode limits and options.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "myriad/registry.h"
#include "tools/commands.h"

namespace myriad::tools {
namespace {

nlohmann::json spec_json(const EnvSpec& s) {
  nlohmann::json j = {{"id", s.id},
                      {"observation_space", s.observation_space.describe()},
                      {"action_space", s.action_space.describe()},
                      {"max_episode_steps", s.max_episode_steps},
                      {"reward_threshold",
                       s.reward_threshold ? nlohmann::json(*s.reward_threshold) : nlohmann::json()},
                      {"physics", s.physics_env},
                      {"options", s.option_names},
                      {"num_agents", s.num_agents}};
  if (s.dt) j["dt"] = *s.dt;
  if (s.multi_agent()) {
    j["agents"] = s.agent_names;
    j["teams"] = s.team_names;
  }
  return j;
}

// One line per env: id, spaces, episode limit; agents for multi-agent envs.
void print_table(const std::vector<EnvSpec>& specs) {
  size_t width = 2;
  for (const EnvSpec& s : specs) width = std::max(width, s.id.size());
  for (const EnvSpec& s : specs) {
    std::cout << s.id << std::string(width + 2 - s.id.size(), ' ') << "obs "
              << s.observation_space.describe() << "  act " << s.action_space.describe()
              << "  steps " << s.max_episode_steps;
    if (s.multi_agent()) std::cout << "  agents " << s.num_agents << " (per-agent spaces)";
    if (s.physics_env) std::cout << "  physics";
    std::cout << "\n";
  }
}

}  // namespace

void add_envs_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("envs", "List the registered envs with their spaces");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "One JSON array with every spec (spaces, limits, options)");
  cmd->callback([json] {
    std::vector<EnvSpec> specs;
    // An env whose files are missing (a task env's robot needs the mjlab package) is named on
    // stderr, not fatal to the list.
    for (const std::string& id : envs::registered_ids()) {
      try {
        specs.push_back(envs::spec_of(id));
      } catch (const std::exception& e) {
        std::cerr << "myriad envs: " << id << " unavailable: " << e.what() << "\n";
      }
    }
    if (*json) {
      nlohmann::json out = nlohmann::json::array();
      for (const EnvSpec& s : specs) out.push_back(spec_json(s));
      std::cout << out.dump(2) << "\n";
    } else {
      print_table(specs);
    }
  });
}

}  // namespace myriad::tools
