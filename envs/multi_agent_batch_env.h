// MultiAgentBatchEnv<Env>: the BatchEnv over a multi-agent scenario written as reset/step/observe
// for one instance over [A, ...] arrays (envs/mpe/). The multi-agent counterpart of
// ClassicBatchEnv (envs/classic_batch_env.h): the same options, seeding, auto-reset, divergence
// cut, state access, rollout save/load and action checks, with the agent axis after the batch
// axis in every per-agent buffer (shapes in myriad/batch_env.h). The kernels are
// envs/multi_agent_kernels.h, dispatched through the same CPU/CUDA tables.
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
#include "envs/mpe/drawing.h"
#include "myriad/batch_env.h"
#include "myriad/host_memory.h"
#include "myriad/registry.h"
#include "myriad/torch_device.h"

namespace myriad::envs {

template <class Env>
class MultiAgentBatchEnv final : public BatchEnv {
 public:
  static constexpr int kAgents = Env::kAgents;
  using Drawing = mpe::Drawing<typename Env::Scenario>;

  // options: max_episode_steps and the env's own (Env::set_option); see myriad/batch_env.h.
  MultiAgentBatchEnv(int64_t num_envs, DeviceId device, uint64_t seed, const EnvOptions& options)
      : spec_(Env::spec()), n_(num_envs), device_(device), seed_(seed) {
    check_batch_size(spec_, num_envs, device.is_cpu(),
                     4 * (Env::kStateDim + 2 * kAgents * Env::kObsDim + 3 * kAgents +
                          kAgents * Env::kActionDim + 5) +
                         2);
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
    running_return_ = at::zeros({n_, kAgents}, f32);
    diverged_ = at::zeros({n_}, i32);
    buf_.obs = at::zeros({n_, kAgents, Env::kObsDim}, f32);
    buf_.final_obs = at::zeros({n_, kAgents, Env::kObsDim}, f32);
    buf_.reward = at::zeros({n_, kAgents}, f32);
    buf_.terminated = at::zeros({n_}, u8);
    buf_.truncated = at::zeros({n_}, u8);
    buf_.episode_return = at::zeros({n_, kAgents}, f32);
    buf_.episode_length = at::zeros({n_}, i32);
    if constexpr (HasWinner<Env>::value) buf_.winner = at::full({n_}, -1, i32);
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

  // Drawing: Env::Scenario's mpe::Drawing (envs/mpe/drawing.h); poses from observations
  // [B, A, kObsDim] alone.
  Scene scene() const override { return Drawing::scene(); }
  at::Tensor body_poses(const at::Tensor& obs) const override {
    if (obs.dim() != 3 || obs.size(1) != kAgents || obs.size(2) != Env::kObsDim)
      throw std::invalid_argument(spec_.id + " body_poses: expected observations of shape [B, " +
                                  std::to_string(kAgents) + ", " + std::to_string(Env::kObsDim) +
                                  "], got " + shape_string(obs.sizes()));
    const at::Tensor o = obs.to(at::kCPU, at::kFloat).contiguous();
    const int64_t rows = o.size(0), bodies = Env::kEntities + 1;
    at::Tensor poses = at::empty({rows, bodies, 7}, at::kFloat);
    const float* src = o.data_ptr<float>();
    float* dst = poses.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i)
      Drawing::pose(src + i * kAgents * Env::kObsDim, dst + i * bodies * 7);
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
  void* stream() const { return current_stream(device_); }

  // Validates shape and device, converts dtype; returns a contiguous tensor the kernel can read:
  // [N, A] integers (Discrete) or [N, A, K] floats (Box).
  at::Tensor checked_actions(const at::Tensor& a) const {
    constexpr bool kDiscrete = std::is_integral_v<typename Env::Action>;
    constexpr int64_t K = Env::kActionDim;
    const bool shape_ok =
        kDiscrete ? a.dim() == 2 && a.size(0) == n_ && a.size(1) == kAgents
                  : a.dim() == 3 && a.size(0) == n_ && a.size(1) == kAgents && a.size(2) == K;
    if (!shape_ok) {
      const std::string expected = "[" + std::to_string(n_) + ", " + std::to_string(kAgents) +
                                   (kDiscrete ? "]" : ", " + std::to_string(K) + "]");
      throw std::invalid_argument(spec_.id + " step: expected actions of shape " + expected +
                                  " (envs, agents" + (kDiscrete ? "" : ", action") + "), got " +
                                  shape_string(a.sizes()));
    }
    check_action_device(spec_.id, a, torch_device());
    const int64_t per_agent = kDiscrete ? 1 : K;  // action values per agent
    const auto place = [this, per_agent](int64_t i) {
      const int64_t agent = i / per_agent;
      return "env " + std::to_string(agent / kAgents) + " (agent " +
             spec_.agent_names[agent % kAgents] + ")";
    };
    if constexpr (kDiscrete)
      return checked_discrete_actions(spec_.id, a, spec_.action_space.n, device_.is_cpu(), place);
    else
      return checked_continuous_actions(spec_.id, a, device_.is_cpu(), place);
  }

  MultiAgentView<Env> view(const typename Env::Action* action) const {
    MultiAgentView<Env> b;
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
    if constexpr (HasWinner<Env>::value) b.winner = buf_.winner.data_ptr<int32_t>();
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
