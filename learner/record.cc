#include "learner/record.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "myriad/registry.h"

namespace myriad::learner {
namespace {

constexpr uint8_t kFirst = 1, kTerminated = 2, kTruncated = 4;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// One env's frames, appended as it runs.
struct Track {
  std::vector<float> pose, reward, value, action;
  std::vector<int32_t> episode;
  std::vector<uint8_t> flags;
  std::vector<float> returns;  // of finished episodes
  int32_t episodes_done = 0;
  float reward_in = 0;  // reward of the step into the next frame
  bool first = true;    // the next frame starts an episode

  int64_t frames() const { return static_cast<int64_t>(reward.size()); }
  void add(const float* p, int64_t pose_size, float r, float v, const float* a, int64_t adim,
           uint8_t f) {
    pose.insert(pose.end(), p, p + pose_size);
    reward.push_back(r);
    value.push_back(v);
    for (int64_t k = 0; k < adim; ++k) action.push_back(a ? a[k] : kNaN);
    episode.push_back(episodes_done);
    flags.push_back(f);
  }
};

torch::Tensor cpu_float(const torch::Tensor& t) {
  return t.to(torch::kCPU, torch::kFloat).contiguous();
}

// The driver's value estimates [M] as float32 on the CPU, NaN where it has none.
torch::Tensor values_of(const Driver& d, const torch::Tensor& obs, int64_t M) {
  if (!d.value) return torch::full({M}, kNaN);
  torch::Tensor v = cpu_float(d.value(obs)).reshape({-1});
  if (v.numel() != M)
    throw std::invalid_argument("record: expected " + std::to_string(M) +
                                " value estimates per step, got " + std::to_string(v.numel()));
  return v;
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
  const int64_t pose_size = nbody * 7;
  const bool discrete = spec.action_space.is_discrete();
  const int64_t adim = discrete ? 1 : spec.action_space.flat_size();
  const auto& buf = env->buffers();
  std::vector<Track> tracks(M);
  int64_t active = M;
  // Every env finishes K episodes within K * max_episode_steps steps; the bound guards the loop.
  const int64_t max_steps = o.episodes * std::max(spec.max_episode_steps, 1) + 1;
  for (int64_t t = 0; t < max_steps && active > 0; ++t) {
    const torch::Tensor action = driver.act(buf.obs);
    const torch::Tensor poses = env->body_poses(buf.obs);
    const torch::Tensor values = values_of(driver, buf.obs, M), actions = cpu_float(action);
    if (actions.numel() != M * adim)
      throw std::invalid_argument("record: expected " + std::to_string(M * adim) +
                                  " action values per step, got " +
                                  std::to_string(actions.numel()));
    for (int64_t i = 0; i < M; ++i) {
      Track& tr = tracks[i];
      if (tr.episodes_done >= o.episodes) continue;
      tr.add(poses.data_ptr<float>() + i * pose_size, pose_size, tr.reward_in,
             values.data_ptr<float>()[i], actions.data_ptr<float>() + i * adim, adim,
             tr.first ? kFirst : 0);
      tr.first = false;
    }
    env->step(action);
    const torch::Tensor term = buf.terminated.cpu(), trunc = buf.truncated.cpu();
    const torch::Tensor rewards = cpu_float(buf.reward), rets = cpu_float(buf.episode_return);
    const bool* te = term.data_ptr<bool>();
    const bool* tu = trunc.data_ptr<bool>();
    const bool any_done = torch::logical_or(term, trunc).any().item<bool>();
    torch::Tensor final_poses, final_values;
    if (any_done) {
      // The terminal state is drawn from final_obs: the env has already auto-reset.
      final_poses = env->body_poses(buf.final_obs);
      final_values = values_of(driver, buf.final_obs, M);
    }
    for (int64_t i = 0; i < M; ++i) {
      Track& tr = tracks[i];
      if (tr.episodes_done >= o.episodes) continue;
      const float r = rewards.data_ptr<float>()[i];
      if (!te[i] && !tu[i]) {
        tr.reward_in = r;
        continue;
      }
      const uint8_t f = (te[i] ? kTerminated : 0) | (tu[i] ? kTruncated : 0);
      tr.add(final_poses.data_ptr<float>() + i * pose_size, pose_size, r,
             final_values.data_ptr<float>()[i], nullptr, adim, f);
      tr.returns.push_back(rets.data_ptr<float>()[i]);
      tr.episodes_done += 1;
      tr.reward_in = 0;
      tr.first = true;
      if (tr.episodes_done == o.episodes) --active;
    }
  }

  // Pad every env to F frames: last pose held, reward 0, value NaN, episode -1, flags 0.
  int64_t F = 0;
  for (const Track& tr : tracks) F = std::max(F, tr.frames());
  std::vector<float> pose, reward, value, act;
  std::vector<int32_t> episode, num_frames;
  std::vector<uint8_t> flags;
  for (const Track& tr : tracks) {
    const int64_t n = tr.frames();
    num_frames.push_back(static_cast<int32_t>(n));
    pose.insert(pose.end(), tr.pose.begin(), tr.pose.end());
    reward.insert(reward.end(), tr.reward.begin(), tr.reward.end());
    value.insert(value.end(), tr.value.begin(), tr.value.end());
    act.insert(act.end(), tr.action.begin(), tr.action.end());
    episode.insert(episode.end(), tr.episode.begin(), tr.episode.end());
    flags.insert(flags.end(), tr.flags.begin(), tr.flags.end());
    for (int64_t f = n; f < F; ++f) {
      pose.insert(pose.end(), tr.pose.end() - pose_size, tr.pose.end());
      reward.push_back(0);
      value.push_back(kNaN);
      for (int64_t k = 0; k < adim; ++k) act.push_back(kNaN);
      episode.push_back(-1);
      flags.push_back(0);
    }
  }

  Recording rec;
  replay::Replay& r = rec.replay;
  nlohmann::json returns = nlohmann::json::array();
  double sum = 0, sq = 0, len = 0;
  int64_t count = 0;
  for (const Track& tr : tracks) {
    returns.push_back(tr.returns);
    for (float x : tr.returns) sum += x, sq += double(x) * x, ++count;
  }
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
  r.arrays["reward"] = replay::make_array({M, F}, reward);
  r.arrays["value"] = replay::make_array({M, F}, value);
  r.arrays["action"] = replay::make_array({M, F, adim}, act);
  r.arrays["episode"] = replay::make_array({M, F}, episode);
  r.arrays["flags"] = replay::make_array({M, F}, flags);
  r.arrays["num_frames"] = replay::make_array({M}, num_frames);

  rec.eval.episodes = count;
  if (count > 0) {
    rec.eval.return_mean = sum / count;
    rec.eval.return_std =
        std::sqrt(std::max(sq / count - rec.eval.return_mean * rec.eval.return_mean, 0.0));
    // Frames per episode minus the reset frame is the episode's length.
    rec.eval.length_mean = (len - count) / count;
  }
  return rec;
}

Recording record_episodes(LoadedPolicy& p, const RecordOptions& o) {
  if (o.envs <= 0)
    throw std::invalid_argument("record: envs must be positive, got " + std::to_string(o.envs));
  const LearnerThreads threads(p.config);
  auto env = envs::make(p.config.env.id, o.envs, resolve_device_id(p.config.env.device), o.seed,
                        p.config.env.options, env_text_options(p.config.env));
  RecordOptions named = o;
  named.env_options = p.config.env.options;
  for (const auto& [k, v] : env_text_options(p.config.env)) named.env_options[k] = v;
  Driver driver;
  driver.act = [&p](const torch::Tensor& obs) { return p.act(obs); };
  driver.value = [&p](const torch::Tensor& obs) { return p.value(obs); };
  return record_episodes(*env, driver, named);
}

EvalResult record_to_file(LoadedPolicy& policy, const RecordOptions& options,
                          const std::string& path) {
  Recording rec = record_episodes(policy, options);
  replay::write_file(path, rec.replay);
  return rec.eval;
}

}  // namespace myriad::learner
