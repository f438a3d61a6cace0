#include "learner/teams.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace myriad::learner {

torch::Tensor Team::input(const torch::Tensor& obs) const {
  if (!multi_agent()) return obs;
  const int64_t n = obs.size(0), a = size();
  std::vector<torch::Tensor> parts{obs.index_select(1, index).narrow(2, 0, obs_width)};
  if (agent_id) parts.push_back(one_hot.unsqueeze(0).expand({n, a, a}));
  if (central_value)
    parts.push_back(obs.reshape({n, 1, env_agents * padded_dim}).expand({n, a, -1}));
  return torch::cat(parts, 2).reshape({n * a, input_dim()});
}

torch::Tensor Team::rows(const torch::Tensor& x) const {
  if (!multi_agent()) return x;
  std::vector<int64_t> shape{x.size(0) * size()};
  for (int64_t d = 2; d < x.dim(); ++d) shape.push_back(x.size(d));
  return x.index_select(1, index).reshape(shape);
}

torch::Tensor Team::per_env(const torch::Tensor& x) const {
  if (!multi_agent()) return x;
  return x.unsqueeze(1).expand({x.size(0), size()}).reshape({x.size(0) * size()});
}

void Team::put_actions(const torch::Tensor& actions, torch::Tensor& env_actions) const {
  if (!multi_agent()) {
    env_actions = actions;
    return;
  }
  std::vector<int64_t> shape{env_actions.size(0), size()};
  for (int64_t d = 1; d < actions.dim(); ++d) shape.push_back(actions.size(d));
  env_actions.index_copy_(1, index, actions.reshape(shape).to(env_actions.dtype()));
}

std::vector<Team> make_teams(const EnvSpec& spec, const AgentsConfig& c, torch::Device device) {
  const int64_t d = spec.observation_space.flat_size();
  if (!spec.multi_agent()) {
    Team t;
    t.agents = {0};
    t.padded_dim = t.obs_width = d;
    // A task env's [actor | critic] row: the actor reads its own columns, the critic all.
    if (spec.actor_obs_dim > 0 && spec.actor_obs_dim < d) {
      t.obs_width = spec.actor_obs_dim;
      t.privileged_dim = d - spec.actor_obs_dim;
    }
    for (const auto& name : c.random_teams)
      throw std::invalid_argument("config key 'agents.random_teams': " + spec.id +
                                  " is a single-agent env, it has no team '" + name + "'");
    return {t};
  }
  const int teams = static_cast<int>(spec.team_names.size());
  for (const auto& name : c.random_teams) {
    if (std::find(spec.team_names.begin(), spec.team_names.end(), name) == spec.team_names.end()) {
      std::string valid;
      for (const auto& t : spec.team_names) valid += (valid.empty() ? "" : ", ") + t;
      throw std::invalid_argument("config key 'agents.random_teams': " + spec.id +
                                  " has no team '" + name + "' (its teams: " + valid + ")");
    }
  }
  std::vector<Team> out;
  for (int id = 0; id < teams; ++id) {
    Team t;
    t.id = id;
    t.name = spec.team_names[id];
    t.learns =
        std::find(c.random_teams.begin(), c.random_teams.end(), t.name) == c.random_teams.end();
    t.env_agents = spec.num_agents;
    t.padded_dim = d;
    for (int64_t i = 0; i < spec.num_agents; ++i) {
      if (spec.team_ids[i] != id) continue;
      t.agents.push_back(i);
      t.obs_width = std::max(t.obs_width, spec.agent_obs_sizes[i]);
    }
    t.agent_id = c.agent_id && t.size() > 1;
    t.central_value = c.central_value;
    t.index = torch::tensor(t.agents, torch::TensorOptions(torch::kLong)).to(device);
    t.one_hot = torch::eye(t.size(), torch::TensorOptions(torch::kFloat).device(device));
    out.push_back(std::move(t));
  }
  if (std::none_of(out.begin(), out.end(), [](const Team& t) { return t.learns; }))
    throw std::invalid_argument("config key 'agents.random_teams': every team of " + spec.id +
                                " acts at random; leave at least one to learn");
  return out;
}

std::string checkpoint_prefix(const Team& team) {
  return team.id == 0 ? "" : "team" + std::to_string(team.id) + ".";
}

torch::Tensor random_actions(const Space& space, int64_t rows, torch::Generator* gen,
                             torch::Device device) {
  const auto g = gen ? std::optional<at::Generator>(*gen) : std::nullopt;
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(device);
  if (space.is_discrete()) return torch::randint(space.n, {rows}, g, f32.dtype(torch::kLong));
  const torch::Tensor low = torch::tensor(space.low).to(device);
  const torch::Tensor high = torch::tensor(space.high).to(device);
  return at::rand({rows, space.flat_size()}, g, f32) * (high - low) + low;
}

}  // namespace myriad::learner
