// ClassicBatchEnv<Env>: the BatchEnv over any env written as reset/step/observe for one
// instance. Owns the buffers (torch tensors on the env's device, for CUDA on its GPU) and
// dispatches to the CPU or CUDA kernel table, launching CUDA kernels on that GPU's current
// LibTorch stream; the env logic itself lives only in Env.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "envs/action_checks.h"
#include "envs/backend.h"
#include "envs/batch_env_checks.h"
#include "envs/classic/drawing.h"
#include "myriad/batch_env.h"
#include "myriad/host_memory.h"
#include "myriad/registry.h"
#include "myriad/torch_device.h"

namespace myriad::envs {

template <class Env>
class ClassicBatchEnv final : public BatchEnv {
 public:
  ClassicBatchEnv(int64_t num_envs, DeviceId device, uint64_t seed, const EnvOptions& options)
      : spec_(Env::spec()), n_(num_envs), device_(device), seed_(seed) {
    check_batch_size(spec_, num_envs, device.is_cpu(),
                     4 * (Env::kStateDim + 2 * Env::kObsDim + 8) + 2 + 4 * Env::kActionDim);
    for (const auto& [key, value] : options)
      if (!take_common_option(spec_, key, value)) Env::set_option(params_, key, value);
    max_steps_ = spec_.max_episode_steps;
    backend_ = device.is_cpu() ? cpu_backend<Env>() : cuda_backend<Env>();
    const auto f32 = at::TensorOptions().dtype(at::kFloat).device(torch_device());
    const auto i32 = f32.dtype(at::kInt);
    const auto u8 = f32.dtype(at::kBool);
    state_ = at::zeros({n_, Env::kStateDim}, f32);
    elapsed_ = at::zeros({n_}, i32);
    episode_ = at::zeros({n_}, i32);
    running_return_ = at::zeros({n_}, f32);
    diverged_ = at::zeros({n_}, i32);
    buf_.obs = at::zeros({n_, Env::kObsDim}, f32);
    buf_.final_obs = at::zeros({n_, Env::kObsDim}, f32);
    buf_.reward = at::zeros({n_}, f32);
    buf_.terminated = at::zeros({n_}, u8);
    buf_.truncated = at::zeros({n_}, u8);
    buf_.episode_return = at::zeros({n_}, f32);
    buf_.episode_length = at::zeros({n_}, i32);
    reset(seed);
  }

  const EnvSpec& spec() const override { return spec_; }
  int64_t num_envs() const override { return n_; }
  DeviceId device_id() const override { return device_; }
  const StepBuffers& buffers() const override { return buf_; }

  void reset(std::optional<uint64_t> seed) override {
    if (seed) {
      check_seed(spec_, *seed);
      seed_ = *seed;
      episode_.zero_();
    } else {
      episode_.add_(1);
    }
    diverged_.zero_();
    buf_.reward.zero_();
    buf_.terminated.zero_();
    buf_.truncated.zero_();
    backend_.reset(view(nullptr), device_, stream());
  }

  void step(const at::Tensor& actions) override {
    action_ = checked_actions(actions);
    backend_.step(view(action_.data_ptr<typename Env::Action>()), device_, stream());
  }

  at::Tensor get_state() const override { return state_.clone(); }

  void set_state(const at::Tensor& state, const at::Tensor& env_ids) override {
    write_state_rows(spec_, state_, state, env_ids);
    backend_.observe(view(nullptr), device_, stream());
  }

  int64_t diverged_count() const override { return diverged_.sum().item<int64_t>(); }

  Scene scene() const override { return Drawing<Env>::scene(); }
  at::Tensor body_poses(const at::Tensor& obs) const override {
    const at::Tensor o = observations_for_drawing(obs, spec_);
    const int64_t rows = o.size(0), width = o.size(1);
    const int64_t bodies = static_cast<int64_t>(Drawing<Env>::scene().bodies.size());
    at::Tensor poses = at::empty({rows, bodies, 7}, at::kFloat);
    const float* src = o.data_ptr<float>();
    float* dst = poses.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i) Drawing<Env>::pose(src + i * width, dst + i * bodies * 7);
    return poses;
  }

  std::map<std::string, at::Tensor> save_rollout_state() const override {
    return save_rollout(rollout_tensors(), seed_);
  }

  void load_rollout_state(const std::map<std::string, at::Tensor>& saved) override {
    seed_ = load_rollout(saved, rollout_tensors());
  }

 private:
  RolloutTensors rollout_tensors() const {
    return {{"state", &state_},       {"elapsed", &elapsed_},
            {"episode", &episode_},   {"running_return", &running_return_},
            {"diverged", &diverged_}, {"obs", &buf_.obs}};
  }
  at::Device torch_device() const { return myriad::torch_device(device_); }
  // LibTorch's current stream of the env's GPU, read at each launch (a caller may switch
  // streams between steps); nullptr on the CPU.
  void* stream() const { return current_stream(device_); }

  // Validates shape and device, converts dtype; returns a contiguous tensor the kernel can read.
  at::Tensor checked_actions(const at::Tensor& a) const {
    constexpr bool kDiscrete = std::is_integral_v<typename Env::Action>;
    const bool shape_ok = (a.dim() == 1 && a.size(0) == n_ && Env::kActionDim == 1) ||
                          (a.dim() == 2 && a.size(0) == n_ && a.size(1) == Env::kActionDim);
    if (!shape_ok) {
      const std::string expected =
          kDiscrete || Env::kActionDim != 1
              ? "[" + std::to_string(n_) +
                    (kDiscrete ? "]" : ", " + std::to_string(Env::kActionDim) + "]")
              : "[" + std::to_string(n_) + ", 1] or [" + std::to_string(n_) + "]";
      throw std::invalid_argument(spec_.id + " step: expected actions of shape " + expected +
                                  ", got " + shape_string(a.sizes()));
    }
    check_action_device(spec_.id, a, torch_device());
    const auto place = [](int64_t i) { return "env " + std::to_string(i / Env::kActionDim); };
    if constexpr (kDiscrete)
      return checked_discrete_actions(spec_.id, a, spec_.action_space.n, device_.is_cpu(), place);
    else
      return checked_continuous_actions(spec_.id, a, device_.is_cpu(), place);
  }

  BatchView<Env> view(const typename Env::Action* action) const {
    BatchView<Env> b;
    b.n = n_;
    b.seed = seed_;
    b.max_steps = max_steps_;
    b.params = params_;
    b.state = state_.data_ptr<float>();
    b.action = action;
    b.obs = buf_.obs.data_ptr<float>();
    b.final_obs = buf_.final_obs.data_ptr<float>();
    b.reward = buf_.reward.data_ptr<float>();
    b.terminated = reinterpret_cast<uint8_t*>(buf_.terminated.data_ptr<bool>());
    b.truncated = reinterpret_cast<uint8_t*>(buf_.truncated.data_ptr<bool>());
    b.elapsed = elapsed_.data_ptr<int32_t>();
    b.episode = episode_.data_ptr<int32_t>();
    b.running_return = running_return_.data_ptr<float>();
    b.episode_return = buf_.episode_return.data_ptr<float>();
    b.episode_length = buf_.episode_length.data_ptr<int32_t>();
    b.diverged = diverged_.data_ptr<int32_t>();
    return b;
  }

  EnvSpec spec_;
  int64_t n_;
  DeviceId device_;
  uint64_t seed_;
  int max_steps_ = 0;
  typename Env::Params params_{};
  Backend<Env> backend_{};
  at::Tensor state_, elapsed_, episode_, running_return_, diverged_, action_;
  StepBuffers buf_;
};

}  // namespace myriad::envs
