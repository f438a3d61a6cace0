#include "learner/collect.h"

#include <cstdint>

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

void collect_rollout(const CollectInputs& in, Rollout& r) {
  torch::NoGradGuard no_grad;
  ActorCritic policy = in.policy;  // shares the module
  policy->eval();
  const StepBuffers& buf = in.env->buffers();
  const auto run_seconds = [&in] {
    return in.seconds_before +
           std::chrono::duration<double>(std::chrono::steady_clock::now() - in.clock_start).count();
  };
  for (int64_t t = 0; t < r.T; ++t) {
    Rollout::Step& s = r.step[t];
    r.step_seconds[t] = run_seconds();
    if (in.obs_norm.enabled) s.raw_obs.copy_(buf.obs);
    in.obs_norm.apply(buf.obs, s.obs);
    const PolicyOutput out = policy->sample(s.obs, in.gen);
    s.actions.copy_(out.action);
    s.logprobs.copy_(out.log_prob);
    s.values.copy_(out.value);
    in.env->step(in.to_env(out.action));
    s.rewards.copy_(buf.reward);
    s.terminated.copy_(buf.terminated);
    s.truncated.copy_(buf.truncated);
    s.final_obs.copy_(buf.final_obs);
    s.episode_returns.copy_(buf.episode_return);
    s.episode_lengths.copy_(buf.episode_length);
  }
  r.step_seconds[r.T] = run_seconds();
  in.obs_norm.apply(buf.obs, r.next_obs);
}

}  // namespace myriad::learner
