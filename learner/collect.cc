#include "learner/collect.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

namespace myriad::learner {

ActionAdapter::ActionAdapter(const Space& space, torch::Device device)
    : discrete_(space.is_discrete()) {
  if (!discrete_) {
    low_ = torch::tensor(space.low).to(device);
    high_ = torch::tensor(space.high).to(device);
  }
}

torch::Tensor ActionAdapter::operator()(const torch::Tensor& action) const {
  if (discrete_) return action.to(torch::kInt);
  return torch::clamp(action, low_, high_);
}

void collect_rollout(const CollectInputs& in) {
  torch::NoGradGuard no_grad;
  for (TeamCollect c : in.teams)  // copies share the module
    if (c.policy) c.policy->eval();
  const StepBuffers& buf = in.env->buffers();
  const EnvSpec& spec = in.env->spec();
  const int64_t T = in.teams.front().rollout->T, n = in.env->num_envs();
  const auto run_seconds = [&in] {
    return in.seconds_before +
           std::chrono::duration<double>(std::chrono::steady_clock::now() - in.clock_start).count();
  };
  // A multi-agent env takes one action tensor [N, A(, K)] that every team writes its agents into.
  torch::Tensor env_actions;
  if (spec.multi_agent()) {
    const auto opts = buf.obs.options();
    env_actions = spec.action_space.is_discrete()
                      ? torch::zeros({n, spec.num_agents}, opts.dtype(torch::kInt))
                      : torch::zeros({n, spec.num_agents, spec.action_space.flat_size()}, opts);
  }
  // One sampler per fused team, bound to its parameters for this rollout.
  std::vector<std::optional<PolicySamplerCpu>> sampler(in.teams.size());
  for (size_t k = 0; k < in.teams.size(); ++k)
    if (in.teams[k].fused && in.teams[k].policy) sampler[k].emplace(*in.teams[k].policy);
  std::vector<double>& step_seconds = in.teams.front().rollout->step_seconds;
  torch::Tensor info_sum;  // [K, N] float64: the logged info keys summed over the steps
  if (in.info_means && !in.info_keys.empty())
    info_sum = torch::zeros({static_cast<int64_t>(in.info_keys.size()), n},
                            buf.reward.options().dtype(torch::kFloat64));
  for (int64_t t = 0; t < T; ++t) {
    step_seconds[t] = run_seconds();
    for (size_t k = 0; k < in.teams.size(); ++k) {
      TeamCollect c = in.teams[k];  // a copy shares the module
      Rollout::Step& s = c.rollout->step[t];
      if (c.policy) {
        const torch::Tensor x = c.team->input(buf.obs);
        if (c.obs_norm.enabled) s.raw_obs.copy_(x);
        c.obs_norm.apply(x, s.obs);
        if (sampler[k]) {
          sampler[k]->sample(s.obs, in.gen, s.actions, s.logprobs, s.values);
        } else {
          const PolicyOutput out = c.policy->sample(s.obs, in.gen);
          s.actions.copy_(out.action);
          s.logprobs.copy_(out.log_prob);
          s.values.copy_(out.value);
        }
      } else {
        // A team acting at random needs no observations (its rollout keeps rewards and flags).
        s.actions.copy_(
            random_actions(spec.action_space, s.actions.size(0), in.gen, s.actions.device()));
      }
      c.team->put_actions(c.to_env(s.actions), env_actions);
    }
    in.env->step(env_actions);
    if (info_sum.defined()) {
      std::vector<torch::Tensor> values;
      for (const std::string& k : in.info_keys) values.push_back(buf.info.at(k));
      info_sum.add_(torch::stack(values));
    }
    for (const TeamCollect& c : in.teams) {
      Rollout::Step& s = c.rollout->step[t];
      const Team& team = *c.team;
      s.rewards.copy_(team.rows(buf.reward));
      s.terminated.copy_(team.per_env(buf.terminated));
      s.truncated.copy_(team.per_env(buf.truncated));
      if (c.policy) s.final_obs.copy_(team.input(buf.final_obs));
      s.episode_returns.copy_(team.rows(buf.episode_return));
      s.episode_lengths.copy_(team.per_env(buf.episode_length));
      if (s.winner.defined()) s.winner.copy_(team.per_env(buf.winner));
    }
  }
  step_seconds[T] = run_seconds();
  if (info_sum.defined()) *in.info_means = info_sum.sum(1) / static_cast<double>(T * n);
  for (const TeamCollect& c : in.teams) {
    if (c.policy) c.obs_norm.apply(c.team->input(buf.obs), c.rollout->next_obs);
    if (&c != &in.teams.front()) c.rollout->step_seconds = step_seconds;
  }
}

void stagger_episode_starts(BatchEnv& env, uint64_t seed) {
  const std::string key = "run.random_episode_starts";
  const int64_t limit = env.spec().max_episode_steps;
  if (limit <= 0)
    throw std::invalid_argument(key + ": " + env.spec().id +
                                " has no time limit (max_episode_steps) to start within");
  std::map<std::string, at::Tensor> state = env.save_rollout_state();
  const auto it = state.find("elapsed");
  if (it == state.end())
    throw std::invalid_argument(key + ": " + env.spec().id + " keeps no elapsed step count");
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed ^ 0x5EEDE915D0C0FFEEull);
  const at::Tensor elapsed = it->second;
  it->second = at::randint(0, limit, elapsed.sizes(), gen, elapsed.options().device(at::kCPU))
                   .to(elapsed.device());
  env.load_rollout_state(state);
}

std::vector<std::string> logged_info_keys(const BatchEnv& env) {
  std::vector<std::string> keys;
  if (env.spec().multi_agent()) return keys;
  for (const auto& [name, value] : env.buffers().info) {
    const bool named = name.rfind("reward_", 0) == 0 || name.rfind("error_", 0) == 0 ||
                       name.rfind("curriculum_", 0) == 0;
    if (named && value.dim() == 1 && value.size(0) == env.num_envs()) keys.push_back(name);
  }
  return keys;
}

}  // namespace myriad::learner
