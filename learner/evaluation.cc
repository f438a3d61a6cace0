// Evaluation: K envs run their first episode each with a loaded policy (learner/evaluation.h).
#include "learner/evaluation.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "myriad/device.h"
#include "myriad/registry.h"

namespace myriad::learner {

LearnerThreads::LearnerThreads(const TrainConfig& config) : previous_(torch::get_num_threads()) {
  if (config.run.learner_threads > 0) torch::set_num_threads(config.run.learner_threads);
}
LearnerThreads::~LearnerThreads() { torch::set_num_threads(previous_); }

std::pair<double, double> mean_and_std(const std::vector<double>& xs) {
  if (xs.empty()) return {0.0, 0.0};
  double sum = 0, sq = 0;
  for (double x : xs) sum += x, sq += x * x;
  const double n = static_cast<double>(xs.size()), mean = sum / n;
  return {mean, std::sqrt(std::max(sq / n - mean * mean, 0.0))};
}

void set_returns(EvalResult& r, const EnvSpec& spec, const std::vector<double>& returns,
                 const std::vector<int>& winners, const std::vector<bool>& learns) {
  const int64_t agents = spec.num_agents;
  const int64_t episodes = static_cast<int64_t>(returns.size()) / agents;
  if (!spec.multi_agent()) {
    std::tie(r.return_mean, r.return_std) = mean_and_std(returns);
    return;
  }
  r.teams.clear();
  bool first = true;
  for (size_t team = 0; team < spec.team_names.size(); ++team) {
    std::vector<double> team_returns(episodes, 0.0);  // per episode, the mean over its agents
    int64_t size = 0;
    for (int64_t k = 0; k < agents; ++k) {
      if (spec.team_ids[k] != static_cast<int>(team)) continue;
      ++size;
      for (int64_t e = 0; e < episodes; ++e) team_returns[e] += returns[e * agents + k];
    }
    for (double& x : team_returns) x /= static_cast<double>(std::max<int64_t>(size, 1));
    TeamEval t;
    t.name = spec.team_names[team];
    t.learns = learns.empty() || learns[team];
    std::tie(t.return_mean, t.return_std) = mean_and_std(team_returns);
    if (spec.decides_winner && episodes > 0)
      t.win_rate = static_cast<double>(std::count(winners.begin(), winners.end(), team)) /
                   static_cast<double>(episodes);
    if (t.learns && first) {
      r.return_mean = t.return_mean, r.return_std = t.return_std;
      first = false;
    }
    r.teams.push_back(t);
  }
  if (spec.decides_winner && episodes > 0)
    r.draw_rate = static_cast<double>(std::count(winners.begin(), winners.end(), -1)) /
                  static_cast<double>(episodes);
}

bool has_play_mode(const std::string& env_id) {
  const auto names = envs::spec_of(env_id).option_names;
  return std::find(names.begin(), names.end(), "play") != names.end();
}

EnvConfig eval_env_config(const EnvConfig& env) {
  EnvConfig out = env;
  if (has_play_mode(env.id) && !out.options.count("play")) out.options["play"] = 1;
  return out;
}

EvalResult evaluate(LoadedPolicy& p, int64_t episodes, uint64_t seed) {
  EvalResult result;
  if (episodes <= 0) return result;
  const LearnerThreads threads(p.config);
  const DeviceId device = resolve_device_id(p.config.env.device);
  const EnvConfig env_config = eval_env_config(p.config.env);
  auto env = envs::make(env_config.id, episodes, device, seed, env_config.options,
                        env_text_options(env_config));
  if (p.random_gen.defined()) p.random_gen.set_current_seed(seed);
  const auto& buf = env->buffers();
  const int64_t agents = env->spec().num_agents;
  // returns[i * A + k]: agent k's return of env i's first episode (A = 1: the env's return).
  std::vector<double> returns(episodes * agents, NAN), lengths(episodes, 0);
  std::vector<int> winners(episodes, -1);
  std::vector<bool> finished(episodes, false);
  int64_t remaining = episodes;
  // The error_* and reward_* info keys, summed over the steps of each env's first episode.
  std::vector<std::string> error_keys, reward_keys;
  if (!env->spec().multi_agent())
    for (const auto& [name, value] : buf.info) {
      if (value.dim() != 1) continue;
      if (name.rfind("error_", 0) == 0) error_keys.push_back(name);
      if (name.rfind("reward_", 0) == 0) reward_keys.push_back(name);
    }
  std::vector<double> error_sums(error_keys.size(), 0.0), reward_sums(reward_keys.size(), 0.0);
  int64_t error_steps = 0;
  // A step the framework cut as diverged (truncated before the episode limit with reward 0, as
  // the physics kernels record it) adds nothing to the return; its info row (written before the
  // cut: terms of a state that blew up, perhaps NaN) is left out of the sums too.
  std::vector<bool> cut(episodes, false);
  // Adds the steps' values of the envs still in their first episode to sums.
  const auto add_unfinished = [&](const std::vector<std::string>& keys, std::vector<double>& sums) {
    for (size_t k = 0; k < keys.size(); ++k) {
      const torch::Tensor v = buf.info.at(keys[k]).to(torch::kCPU, torch::kDouble).contiguous();
      for (int64_t i = 0; i < episodes; ++i)
        if (!finished[i] && !cut[i]) sums[k] += v.data_ptr<double>()[i];
    }
  };
  // Every env runs exactly its first episode; the limit bounds the loop.
  for (int64_t t = 0; t < env->spec().max_episode_steps && remaining > 0; ++t) {
    env->step(p.act(buf.obs));
    const torch::Tensor terminated = buf.terminated.cpu(), truncated = buf.truncated.cpu();
    const torch::Tensor rets = buf.episode_return.cpu().contiguous(),
                        lens = buf.episode_length.cpu();
    if (!error_keys.empty() || !reward_keys.empty()) {
      const torch::Tensor reward = buf.reward.to(torch::kCPU, torch::kFloat).contiguous();
      for (int64_t i = 0; i < episodes; ++i)
        cut[i] = truncated.data_ptr<bool>()[i] && !terminated.data_ptr<bool>()[i] &&
                 reward.data_ptr<float>()[i] == 0.0f &&
                 lens.data_ptr<int32_t>()[i] < env->spec().max_episode_steps;
    }
    add_unfinished(error_keys, error_sums);
    add_unfinished(reward_keys, reward_sums);
    for (int64_t i = 0; i < episodes; ++i) {
      if (!error_keys.empty()) error_steps += finished[i] || cut[i] ? 0 : 1;
      if (!finished[i] && cut[i]) ++result.diverged;
    }
    const torch::Tensor done = torch::logical_or(terminated, truncated);
    const torch::Tensor wins = buf.winner.defined() ? buf.winner.cpu() : torch::Tensor();
    const bool* d = done.data_ptr<bool>();
    for (int64_t i = 0; i < episodes; ++i) {
      if (!d[i] || finished[i]) continue;
      finished[i] = true;
      for (int64_t k = 0; k < agents; ++k)
        returns[i * agents + k] = rets.data_ptr<float>()[i * agents + k];
      lengths[i] = lens.data_ptr<int32_t>()[i];
      if (wins.defined()) winners[i] = wins.data_ptr<int32_t>()[i];
      --remaining;
    }
  }
  result.episodes = episodes;
  for (size_t k = 0; k < error_keys.size(); ++k)
    result.errors[error_keys[k]] =
        error_sums[k] / static_cast<double>(std::max<int64_t>(error_steps, 1));
  for (size_t k = 0; k < reward_keys.size(); ++k)
    result.reward_terms[reward_keys[k]] = reward_sums[k] / static_cast<double>(episodes);
  double len = 0;
  for (double l : lengths) len += l;
  result.length_mean = len / episodes;
  std::vector<bool> learns;
  for (const TeamPolicy& t : p.teams) learns.push_back(t.team.learns);
  set_returns(result, env->spec(), returns, winners, learns);
  return result;
}
}  // namespace myriad::learner
