// LoadedPolicy: a trained policy's deterministic actions and values (learner/loaded_policy.h).
#include "learner/loaded_policy.h"

#include <stdexcept>
#include <string>

#include "learner/collect.h"
#include "myriad/registry.h"

namespace myriad::learner {

torch::Tensor LoadedPolicy::network_input(const torch::Tensor& obs) const {
  const int64_t width = spec.observation_space.flat_size();
  if (obs.dim() != 2 || obs.size(1) != width)
    throw std::invalid_argument("policy: expected observations of shape [B, " +
                                std::to_string(width) + "], got " +
                                envs::shape_string(obs.sizes()));
  torch::Tensor x = obs.to(torch::kFloat);
  if (config.ppo.normalize_obs) x = Standardizer(obs_rms, config.ppo.obs_clip, torch::kFloat)(x);
  return x;
}

torch::Tensor LoadedPolicy::act(const torch::Tensor& obs) {
  torch::NoGradGuard no_grad;
  if (!spec.multi_agent()) {
    policy->eval();
    const torch::Tensor a = policy->deterministic_action(network_input(obs));
    return ActionAdapter(spec.action_space, a.device())(a);
  }
  const int64_t agents = spec.num_agents, width = spec.observation_space.flat_size();
  if (obs.dim() != 3 || obs.size(1) != agents || obs.size(2) != width)
    throw std::invalid_argument("policy: expected observations of shape [B, " +
                                std::to_string(agents) + ", " + std::to_string(width) +
                                "] (envs, agents, padded obs), got " +
                                envs::shape_string(obs.sizes()));
  const torch::Tensor x = obs.to(torch::kFloat);
  const int64_t b = x.size(0);
  const ActionAdapter to_env(spec.action_space, x.device());
  torch::Tensor actions =
      spec.action_space.is_discrete()
          ? torch::zeros({b, agents}, x.options().dtype(torch::kInt))
          : torch::zeros({b, agents, spec.action_space.flat_size()}, x.options());
  for (TeamPolicy& t : teams) {
    torch::Tensor a;
    if (t.policy) {
      t.policy->eval();
      torch::Tensor in = t.team.input(x);
      if (config.ppo.normalize_obs)
        in = Standardizer(t.obs_rms, config.ppo.obs_clip, torch::kFloat)(in);
      a = t.policy->deterministic_action(in);
    } else {
      a = random_actions(spec.action_space, b * t.team.size(), &random_gen, x.device());
    }
    t.team.put_actions(to_env(a), actions);
  }
  return actions;
}

torch::Tensor LoadedPolicy::value(const torch::Tensor& obs) {
  if (spec.multi_agent())
    throw std::invalid_argument("policy: value() is for single-agent envs; " + spec.id +
                                " has a critic per team");
  torch::NoGradGuard no_grad;
  policy->eval();
  torch::Tensor v = policy->value(network_input(obs));
  if (config.ppo.normalize_reward && ret_rms.var.defined())
    v = v * (ret_rms.var.to(v.dtype()) + 1e-8).sqrt();
  return v;
}
}  // namespace myriad::learner
