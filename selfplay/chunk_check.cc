#include "selfplay/chunk_check.h"

#include <sstream>

#include "learner/teams.h"
#include "learner/trainer.h"

namespace myriad::selfplay {
namespace {

std::string shape_text(torch::IntArrayRef sizes) {
  std::ostringstream out;
  out << "[";
  for (size_t k = 0; k < sizes.size(); ++k) out << (k ? ", " : "") << sizes[k];
  out << "]";
  return out.str();
}

std::string dtype_text(const torch::Tensor& t) {
  return t.scalar_type() == torch::kFloat  ? "float32"
         : t.scalar_type() == torch::kLong ? "int64"
         : t.scalar_type() == torch::kByte ? "uint8"
                                           : "another dtype";
}

// The first non-finite element's flat index, or -1.
int64_t first_non_finite(const torch::Tensor& t) {
  if (t.numel() == 0) return -1;
  const torch::Tensor bad = t.isfinite().logical_not().reshape({-1});
  if (!bad.any().item<bool>()) return -1;
  return bad.nonzero()[0][0].item<int64_t>();
}

std::string value_text(const torch::Tensor& t, int64_t flat) {
  std::ostringstream out;
  if (t.scalar_type() == torch::kLong)
    out << t.reshape({-1})[flat].item<int64_t>();
  else
    out << t.reshape({-1})[flat].item<double>();
  return out.str();
}

}  // namespace

ChunkSpec chunk_spec(const learner::TrainConfig& config) {
  const EnvSpec spec = learner::configured_spec(config);
  const learner::Team team = learner::make_teams(spec, config.agents, torch::kCPU).front();
  ChunkSpec s;
  s.steps = config.ppo.num_steps;
  s.obs_width = team.input_dim();
  s.rows_per_env = team.size();
  s.action_space = spec.action_space;
  return s;
}

std::string check_chunk(const ChunkMsg& c, const ChunkSpec& spec) {
  const auto expect = [](const char* field, const torch::Tensor& t, torch::ScalarType type,
                         std::vector<int64_t> shape) -> std::string {
    if (t.scalar_type() != type)
      return std::string(field) + ": dtype " + dtype_text(t) + ", expected " +
             (type == torch::kFloat  ? "float32"
              : type == torch::kLong ? "int64"
                                     : "uint8");
    if (!t.sizes().equals(shape))
      return std::string(field) + ": shape " + shape_text(t.sizes()) + ", expected " +
             shape_text(shape);
    return "";
  };
  if (c.version < 0) return "version: " + std::to_string(c.version) + " is negative";
  // Shapes: obs fixes T and B; each is then held to the server's own figures.
  if (c.obs.dim() != 3) return "obs: rank " + std::to_string(c.obs.dim()) + ", expected 3";
  const int64_t T = c.obs.size(0), B = c.obs.size(1), D = spec.obs_width;
  if (T != spec.steps)
    return "obs: T = " + std::to_string(T) +
           " steps, expected ppo.num_steps = " + std::to_string(spec.steps);
  if (B < 1 || B % spec.rows_per_env != 0)
    return "obs: B = " + std::to_string(B) + " rows, expected a positive multiple of " +
           std::to_string(spec.rows_per_env);
  const Space& as = spec.action_space;
  std::vector<int64_t> action_shape = {T, B};
  if (!as.is_discrete()) action_shape.push_back(as.flat_size());
  const std::pair<const char*, std::string> shapes[] = {
      {"obs", expect("obs", c.obs, torch::kFloat, {T, B, D})},
      {"actions",
       expect("actions", c.actions, as.is_discrete() ? torch::kLong : torch::kFloat, action_shape)},
      {"logprobs", expect("logprobs", c.logprobs, torch::kFloat, {T, B})},
      {"rewards", expect("rewards", c.rewards, torch::kFloat, {T, B})},
      {"terminated", expect("terminated", c.terminated, torch::kByte, {T, B})},
      {"truncated", expect("truncated", c.truncated, torch::kByte, {T, B})},
      {"final_obs", expect("final_obs", c.final_obs, torch::kFloat, {T, B, D})},
      {"next_obs", expect("next_obs", c.next_obs, torch::kFloat, {B, D})}};
  for (const auto& [field, why] : shapes)
    if (!why.empty()) return why;

  // Values. final_obs is left alone: a diverged episode's last observation may be non-finite,
  // and the learner bootstraps only from finite final values (learner/advantages.h).
  for (const auto& [field, t] : {std::pair<const char*, const torch::Tensor*>{"obs", &c.obs},
                                 {"next_obs", &c.next_obs},
                                 {"rewards", &c.rewards},
                                 {"logprobs", &c.logprobs}}) {
    const int64_t at = first_non_finite(*t);
    if (at >= 0) return std::string(field) + ": non-finite value " + value_text(*t, at);
  }
  const double reward_max = c.rewards.abs().max().item<double>();
  if (reward_max > kMaxAbsReward)
    return "rewards: |reward| " + std::to_string(reward_max) + " over " +
           std::to_string(kMaxAbsReward);
  if (as.is_discrete()) {
    const int64_t lo = c.actions.min().item<int64_t>(), hi = c.actions.max().item<int64_t>();
    if (lo < 0 || hi >= as.n)
      return "actions: " + std::to_string(lo < 0 ? lo : hi) + " outside " + as.describe();
    const double lp = c.logprobs.max().item<double>();
    if (lp > kLogProbTolerance)
      return "logprobs: " + std::to_string(lp) +
             " is positive; a discrete action's log-probability is at most 0";
  } else {
    const int64_t at = first_non_finite(c.actions);
    if (at >= 0) return "actions: non-finite value " + value_text(c.actions, at);
  }
  for (const auto& [field, t] :
       {std::pair<const char*, const torch::Tensor*>{"terminated", &c.terminated},
        {"truncated", &c.truncated}})
    if (t->gt(1).any().item<bool>()) return std::string(field) + ": a flag other than 0 or 1";
  return "";
}

std::string check_result(const MatchResultMsg& r, int64_t max_games) {
  if (r.wins < 0 || r.draws < 0 || r.losses < 0)
    return "MatchResult: negative counts (" + std::to_string(r.wins) + " wins, " +
           std::to_string(r.draws) + " draws, " + std::to_string(r.losses) + " losses)";
  if (r.wins > max_games || r.draws > max_games || r.losses > max_games ||
      r.wins + r.draws + r.losses > max_games)
    return "MatchResult: more games than one chunk can finish (" + std::to_string(max_games) + ")";
  return "";
}

}  // namespace myriad::selfplay
