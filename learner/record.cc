#include "learner/record.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "learner/evaluation.h"
#include "myriad/registry.h"

namespace myriad::learner {
namespace {

constexpr uint8_t kFirst = 1, kTerminated = 2, kTruncated = 4;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// One env's frames, appended as it runs. Rewards and values are per agent (A = 1 for a
// single-agent env), actions A * adim per frame.
struct Track {
  std::vector<float> pose, reward, value, action, series;
  std::vector<int32_t> episode;
  std::vector<uint8_t> flags;
  std::vector<float> returns;  // of finished episodes, A per episode
  std::vector<int> winners;    // of finished episodes (envs that decide winners)
  int32_t episodes_done = 0;
  std::vector<float> reward_in;  // [A] reward of the step into the next frame
  bool first = true;             // the next frame starts an episode

  int64_t frames() const { return static_cast<int64_t>(episode.size()); }
  void add(const float* p, int64_t pose_size, const float* r, const float* v, int64_t agents,
           const float* a, int64_t adim, const float* s, int64_t series_size, uint8_t f) {
    // A diverged terminal state has no pose worth drawing: the last frame's is held.
    const bool finite = std::all_of(p, p + pose_size, [](float x) { return std::isfinite(x); });
    if (finite || pose.empty()) {
      pose.insert(pose.end(), p, p + pose_size);
    } else {
      const size_t n = pose.size();
      pose.resize(n + pose_size);
      std::copy_n(pose.begin() + (n - pose_size), pose_size, pose.begin() + n);
    }
    series.insert(series.end(), s, s + series_size);
    reward.insert(reward.end(), r, r + agents);
    value.insert(value.end(), v, v + agents);
    for (int64_t k = 0; k < adim; ++k) action.push_back(a ? a[k] : kNaN);
    episode.push_back(episodes_done);
    flags.push_back(f);
  }
};

torch::Tensor cpu_float(const torch::Tensor& t) {
  return t.to(torch::kCPU, torch::kFloat).contiguous();
}

// The env's plotted series for observations obs as [M, S] float32 on the CPU.
torch::Tensor series_of(const BatchEnv& env, const torch::Tensor& obs, int64_t M, int64_t S) {
  if (S == 0) return torch::empty({M, 0});
  torch::Tensor s = cpu_float(env.series(obs));
  if (!s.sizes().equals({M, S}))
    throw std::invalid_argument("record: " + env.spec().id + " series: expected [" +
                                std::to_string(M) + ", " + std::to_string(S) + "], got " +
                                envs::shape_string(s.sizes()));
  return s;
}

// The driver's value estimates as [M, A] float32 on the CPU (a multi-agent driver may give one
// per env, [M], shared by its agents), NaN where it has none.
torch::Tensor values_of(const Driver& d, const torch::Tensor& obs, int64_t M, int64_t agents) {
  if (!d.value) return torch::full({M, agents}, kNaN);
  torch::Tensor v = cpu_float(d.value(obs)).reshape({-1});
  if (v.numel() == M && agents > 1) return v.reshape({M, 1}).expand({M, agents}).contiguous();
  if (v.numel() != M * agents)
    throw std::invalid_argument("record: expected " + std::to_string(M) +
                                (agents > 1 ? " or " + std::to_string(M * agents) : std::string()) +
                                " value estimates per step, got " + std::to_string(v.numel()));
  return v.reshape({M, agents});
}

}  // namespace

Recording record_episodes(BatchEnv& env_ref, const Driver& driver, const RecordOptions& o) {
  if (o.episodes <= 0)
    throw std::invalid_argument("record: episodes must be positive, got " +
                                std::to_string(o.episodes));
  BatchEnv* env = &env_ref;
  env->reset(o.seed);
  const EnvSpec& spec = env->spec();
  const Scene scene = env->scene();
  const int64_t M = env->num_envs(), nbody = static_cast<int64_t>(scene.bodies.size());
  const int64_t A = spec.num_agents;
  const int64_t pose_size = nbody * 7;
  const bool discrete = spec.action_space.is_discrete();
  const int64_t agent_adim = discrete ? 1 : spec.action_space.flat_size();
  const int64_t adim = A * agent_adim;
  const std::vector<std::string> series_names = env->series_names();
  const int64_t S = static_cast<int64_t>(series_names.size());
  const auto& buf = env->buffers();
  std::vector<Track> tracks(M);
  for (Track& tr : tracks) tr.reward_in.assign(A, 0.0f);
  int64_t active = M;
  // Every env finishes K episodes within K * max_episode_steps steps; the bound guards the loop.
  const int64_t max_steps = o.episodes * std::max(spec.max_episode_steps, 1) + 1;
  for (int64_t t = 0; t < max_steps && active > 0; ++t) {
    const torch::Tensor action = driver.act(buf.obs);
    const torch::Tensor poses = env->current_body_poses();
    const torch::Tensor series = series_of(*env, buf.obs, M, S);
    const torch::Tensor values = values_of(driver, buf.obs, M, A), actions = cpu_float(action);
    if (actions.numel() != M * adim) {
      std::string expected = "[" + std::to_string(M);
      if (A > 1) expected += ", " + std::to_string(A);
      if (!discrete) expected += ", " + std::to_string(agent_adim);
      throw std::invalid_argument("record: expected actions of shape " + expected + "], got " +
                                  envs::shape_string(action.sizes()));
    }
    for (int64_t i = 0; i < M; ++i) {
      Track& tr = tracks[i];
      if (tr.episodes_done >= o.episodes) continue;
      tr.add(poses.data_ptr<float>() + i * pose_size, pose_size, tr.reward_in.data(),
             values.data_ptr<float>() + i * A, A, actions.data_ptr<float>() + i * adim, adim,
             series.data_ptr<float>() + i * S, S, tr.first ? kFirst : 0);
      tr.first = false;
    }
    env->step(action);
    const torch::Tensor term = buf.terminated.cpu(), trunc = buf.truncated.cpu();
    const torch::Tensor rewards = cpu_float(buf.reward), rets = cpu_float(buf.episode_return);
    const torch::Tensor winner = buf.winner.defined() ? buf.winner.cpu() : torch::Tensor();
    const bool* te = term.data_ptr<bool>();
    const bool* tu = trunc.data_ptr<bool>();
    const bool any_done = torch::logical_or(term, trunc).any().item<bool>();
    torch::Tensor final_poses, final_values, final_series;
    if (any_done) {
      // The terminal state as the env kept it: the env has already auto-reset.
      final_poses = env->final_body_poses();
      final_values = values_of(driver, buf.final_obs, M, A);
      final_series = series_of(*env, buf.final_obs, M, S);
    }
    for (int64_t i = 0; i < M; ++i) {
      Track& tr = tracks[i];
      if (tr.episodes_done >= o.episodes) continue;
      const float* r = rewards.data_ptr<float>() + i * A;
      if (!te[i] && !tu[i]) {
        tr.reward_in.assign(r, r + A);
        continue;
      }
      const uint8_t f = (te[i] ? kTerminated : 0) | (tu[i] ? kTruncated : 0);
      tr.add(final_poses.data_ptr<float>() + i * pose_size, pose_size, r,
             final_values.data_ptr<float>() + i * A, A, nullptr, adim,
             final_series.data_ptr<float>() + i * S, S, f);
      const float* ret = rets.data_ptr<float>() + i * A;
      tr.returns.insert(tr.returns.end(), ret, ret + A);
      if (winner.defined()) tr.winners.push_back(winner.data_ptr<int32_t>()[i]);
      tr.episodes_done += 1;
      tr.reward_in.assign(A, 0.0f);
      tr.first = true;
      if (tr.episodes_done == o.episodes) --active;
    }
  }

  // Pad every env to F frames: last pose held, reward 0, value NaN, episode -1, flags 0.
  int64_t F = 0;
  for (const Track& tr : tracks) F = std::max(F, tr.frames());
  std::vector<float> pose, reward, value, act, series;
  std::vector<int32_t> episode, num_frames;
  std::vector<uint8_t> flags;
  for (const Track& tr : tracks) {
    const int64_t n = tr.frames();
    num_frames.push_back(static_cast<int32_t>(n));
    pose.insert(pose.end(), tr.pose.begin(), tr.pose.end());
    reward.insert(reward.end(), tr.reward.begin(), tr.reward.end());
    value.insert(value.end(), tr.value.begin(), tr.value.end());
    act.insert(act.end(), tr.action.begin(), tr.action.end());
    series.insert(series.end(), tr.series.begin(), tr.series.end());
    episode.insert(episode.end(), tr.episode.begin(), tr.episode.end());
    flags.insert(flags.end(), tr.flags.begin(), tr.flags.end());
    for (int64_t f = n; f < F; ++f) {
      pose.insert(pose.end(), tr.pose.end() - pose_size, tr.pose.end());
      reward.insert(reward.end(), A, 0.0f);
      value.insert(value.end(), A, kNaN);
      act.insert(act.end(), adim, kNaN);
      series.insert(series.end(), S, kNaN);
      episode.push_back(-1);
      flags.push_back(0);
    }
  }

  Recording rec;
  replay::Replay& r = rec.replay;
  nlohmann::json returns = nlohmann::json::array();
  std::vector<double> episode_returns;  // every finished episode's, A per episode
  std::vector<int> winners;
  for (const Track& tr : tracks) {
    nlohmann::json env_returns = nlohmann::json::array();
    for (size_t e = 0; e * A < tr.returns.size(); ++e) {
      const auto first = tr.returns.begin() + static_cast<std::ptrdiff_t>(e * A);
      if (A == 1) {
        env_returns.push_back(*first);
      } else {
        env_returns.push_back(std::vector<float>(first, first + A));
      }
    }
    episode_returns.insert(episode_returns.end(), tr.returns.begin(), tr.returns.end());
    winners.insert(winners.end(), tr.winners.begin(), tr.winners.end());
    returns.push_back(env_returns);
  }
  double len = 0;
  for (int32_t n : episode) len += n >= 0;
  r.header = {{"env", spec.id},
              {"env_options", o.env_options.is_null() ? nlohmann::json::object() : o.env_options},
              {"checkpoint", o.checkpoint},
              {"seed", o.seed},
              {"num_envs", M},
              {"num_frames", F},
              {"frame_dt", scene.frame_dt},
              {"discrete_actions", discrete},
              {"action_dim", adim},
              {"episode_returns", returns}};
  replay::add_scene(r, scene);
  r.arrays["body_pose"] = replay::make_array({M, F, nbody, 7}, pose);
  r.arrays["action"] = replay::make_array({M, F, adim}, act);
  r.arrays["episode"] = replay::make_array({M, F}, episode);
  r.arrays["flags"] = replay::make_array({M, F}, flags);
  r.arrays["num_frames"] = replay::make_array({M}, num_frames);
  if (S > 0) {
    r.header["series"] = series_names;
    r.arrays["series"] = replay::make_array({M, F, S}, series);
  }
  if (A == 1) {
    r.arrays["reward"] = replay::make_array({M, F}, reward);
    r.arrays["value"] = replay::make_array({M, F}, value);
  } else {
    // Multi-agent (docs/replay-format.md): every agent's series, and agent 0's as the plain
    // reward and value every reader plots.
    r.header["num_agents"] = A;
    r.header["agent_names"] = spec.agent_names;
    r.header["team_ids"] = spec.team_ids;
    r.header["agent_action_dim"] = agent_adim;
    std::vector<float> reward0, value0;
    for (size_t k = 0; k < reward.size(); k += A) reward0.push_back(reward[k]);
    for (size_t k = 0; k < value.size(); k += A) value0.push_back(value[k]);
    r.arrays["reward"] = replay::make_array({M, F}, reward0);
    r.arrays["value"] = replay::make_array({M, F}, value0);
    r.arrays["agent_reward"] = replay::make_array({M, F, A}, reward);
    r.arrays["agent_value"] = replay::make_array({M, F, A}, value);
  }

  // Statistics, as evaluate() gives them.
  const int64_t count = static_cast<int64_t>(episode_returns.size()) / A;
  rec.eval.episodes = count;
  // Frames per episode minus the reset frame is the episode's length.
  if (count > 0) rec.eval.length_mean = (len - count) / count;
  set_returns(rec.eval, spec, episode_returns, winners, o.learns);
  return rec;
}

Recording record_episodes(LoadedPolicy& p, const RecordOptions& o) {
  if (o.envs <= 0)
    throw std::invalid_argument("record: envs must be positive, got " + std::to_string(o.envs));
  const LearnerThreads threads(p.config);
  const EnvConfig env_config = eval_env_config(p.config.env);
  auto env = envs::make(env_config.id, o.envs, resolve_device_id(env_config.device), o.seed,
                        env_config.options, env_text_options(env_config));
  if (p.random_gen.defined()) p.random_gen.set_current_seed(o.seed);  // random teams' draws
  RecordOptions named = o;
  named.env_options = env_config.options;
  for (const auto& [k, v] : env_text_options(env_config)) named.env_options[k] = v;
  Driver driver;
  driver.act = [&p](const torch::Tensor& obs) { return p.act(obs); };
  // Multi-agent envs: no values (each team has its own critic over its own input).
  if (!p.spec.multi_agent()) driver.value = [&p](const torch::Tensor& obs) { return p.value(obs); };
  for (const TeamPolicy& t : p.teams) named.learns.push_back(t.team.learns);
  return record_episodes(*env, driver, named);
}

EvalResult record_to_file(LoadedPolicy& policy, const RecordOptions& options,
                          const std::string& path) {
  Recording rec = record_episodes(policy, options);
  replay::write_file(path, rec.replay);
  return rec.eval;
}

}  // namespace myriad::learner
