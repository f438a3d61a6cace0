// EpisodeBuffers: what every batch env class (ClassicBatchEnv, MultiAgentBatchEnv,
// PhysicsBatchEnv) owns alike, written once: the step buffers a caller reads (obs, final_obs,
// reward, terminated, truncated, episode_return, episode_length), the per-env episode
// bookkeeping the kernels keep (elapsed steps, episode counter, running return, divergence
// count), the seed, the seeding rule of reset(), the fields every kernel view shares, and the
// tensors a rollout state holds. The env class adds its own state, kernels and checks.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "envs/batch_env_checks.h"
#include "myriad/batch_env.h"
#include "myriad/torch_device.h"

namespace myriad::envs {

class EpisodeBuffers {
 public:
  EpisodeBuffers() = default;
  // (N, device, obs_dim, agents: 0 for a single-agent env) => (every buffer zero: obs and
  // final_obs [N, obs_dim], reward and returns [N]; with agents A: obs [N, A, obs_dim], reward
  // and returns [N, A]).
  EpisodeBuffers(int64_t n, DeviceId device, int64_t obs_dim, int agents, uint64_t seed)
      : n_(n), device_(device), seed_(seed) {
    const auto f32 = at::TensorOptions().dtype(at::kFloat).device(torch_device(device));
    const auto i32 = f32.dtype(at::kInt);
    const auto b8 = f32.dtype(at::kBool);
    std::vector<int64_t> per_env{n}, obs{n, obs_dim};
    if (agents > 0) {
      per_env = {n, agents};
      obs = {n, agents, obs_dim};
    }
    elapsed_ = at::zeros({n}, i32);
    episode_ = at::zeros({n}, i32);
    running_return_ = at::zeros(per_env, f32);
    diverged_ = at::zeros({n}, i32);
    buf_.obs = at::zeros(obs, f32);
    buf_.final_obs = at::zeros(obs, f32);
    buf_.reward = at::zeros(per_env, f32);
    buf_.terminated = at::zeros({n}, b8);
    buf_.truncated = at::zeros({n}, b8);
    buf_.episode_return = at::zeros(per_env, f32);
    buf_.episode_length = at::zeros({n}, i32);
  }

  // reset(seed)'s rule for every env: a seed restarts the episode counter (episode k of env i
  // draws from (seed, i, k)); no seed starts the next episode. Divergence counts, rewards and
  // done flags start at zero.
  void begin_reset(const EnvSpec& spec, std::optional<uint64_t> seed) {
    if (seed) {
      check_seed(spec, *seed);
      seed_ = *seed;
      episode_.zero_();
    } else {
      episode_.add_(1);
    }
    diverged_.zero_();
    buf_.reward.zero_();
    buf_.terminated.zero_();
    buf_.truncated.zero_();
  }

  // (a kernel view: BatchView, MultiAgentView, PhysicsFrame) => (its shared fields set).
  template <class View>
  void fill(View& v, int max_steps) const {
    v.n = n_;
    v.seed = seed_;
    v.max_steps = max_steps;
    v.obs = buf_.obs.data_ptr<float>();
    v.final_obs = buf_.final_obs.data_ptr<float>();
    v.reward = buf_.reward.data_ptr<float>();
    v.terminated = reinterpret_cast<uint8_t*>(buf_.terminated.data_ptr<bool>());
    v.truncated = reinterpret_cast<uint8_t*>(buf_.truncated.data_ptr<bool>());
    v.elapsed = elapsed_.data_ptr<int32_t>();
    v.episode = episode_.data_ptr<int32_t>();
    v.running_return = running_return_.data_ptr<float>();
    v.episode_return = buf_.episode_return.data_ptr<float>();
    v.episode_length = buf_.episode_length.data_ptr<int32_t>();
    v.diverged = diverged_.data_ptr<int32_t>();
  }

  // The bookkeeping a rollout state holds (the env adds its own state first).
  RolloutTensors rollout_tensors() const {
    return {{"elapsed", &elapsed_},
            {"episode", &episode_},
            {"running_return", &running_return_},
            {"diverged", &diverged_},
            {"obs", &buf_.obs}};
  }
  std::map<std::string, at::Tensor> save(const RolloutTensors& own) const {
    return save_rollout(with(own), seed_);
  }
  void load(const std::map<std::string, at::Tensor>& saved, const RolloutTensors& own) {
    seed_ = load_rollout(saved, with(own));
  }

  int64_t diverged_count() const { return diverged_.sum().item<int64_t>(); }
  int64_t num_envs() const { return n_; }
  DeviceId device() const { return device_; }
  uint64_t seed() const { return seed_; }
  const StepBuffers& buffers() const { return buf_; }
  StepBuffers& buffers() { return buf_; }

 private:
  RolloutTensors with(const RolloutTensors& own) const {
    RolloutTensors all = own;
    for (const auto& entry : rollout_tensors()) all.push_back(entry);
    return all;
  }

  int64_t n_ = 0;
  DeviceId device_{};
  uint64_t seed_ = 0;
  at::Tensor elapsed_, episode_, running_return_, diverged_;
  StepBuffers buf_;
};

}  // namespace myriad::envs
