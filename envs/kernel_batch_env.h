// KernelBatchEnv<Derived, Env>: the BatchEnv of an env whose whole state is a float row per env
// and whose logic is reset/step/observe for one instance, run by a table of CPU or CUDA kernels
// (envs/backend.h) over the batch: the classic envs (ClassicBatchEnv) and the multi-agent
// scenarios (MultiAgentBatchEnv) alike. Owns the state, the framework's buffers
// (envs/episode_buffers.h) and the kernel table; launches CUDA kernels on the env's GPU's current
// LibTorch stream. Derived adds what differs: checked_actions (shape and where a bad value sits)
// and drawing (scene, body_poses).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>

#include "envs/action_checks.h"
#include "envs/backend.h"
#include "envs/batch_env_checks.h"
#include "envs/episode_buffers.h"
#include "myriad/batch_env.h"
#include "myriad/registry.h"
#include "myriad/torch_device.h"

namespace myriad::envs {

template <class Env>
constexpr int agents_of() {
  if constexpr (std::is_same_v<ViewOfT<Env>, MultiAgentView<Env>>)
    return Env::kAgents;
  else
    return 0;
}

template <class Derived, class Env>
class KernelBatchEnv : public BatchEnv {
 public:
  using View = ViewOfT<Env>;
  static constexpr int kAgents = agents_of<Env>();  // 0: a single-agent env

  // options: max_episode_steps and the env's own (Env::set_option); see myriad/batch_env.h.
  // bytes_per_env: every [N, ...] buffer's bytes per env, checked against memory first.
  KernelBatchEnv(int64_t num_envs, DeviceId device, uint64_t seed, const EnvOptions& options,
                 int64_t bytes_per_env)
      : spec_(Env::spec()), n_(num_envs), device_(device) {
    check_batch_size(spec_, num_envs, device.is_cpu(), bytes_per_env);
    for (const auto& [key, value] : options)
      if (!take_common_option(spec_, key, value)) Env::set_option(params_, key, value);
    backend_ = device.is_cpu() ? cpu_backend<Env>() : cuda_backend<Env>();
    const auto f32 = at::TensorOptions().dtype(at::kFloat).device(torch_device());
    state_ = at::zeros({n_, Env::kStateDim}, f32);
    ep_ = EpisodeBuffers(n_, device, Env::kObsDim, kAgents, seed);
    if constexpr (kAgents > 0 && HasWinner<Env>::value)
      ep_.buffers().winner = at::full({n_}, -1, f32.dtype(at::kInt));
    reset(seed);
  }

  const EnvSpec& spec() const override { return spec_; }
  int64_t num_envs() const override { return n_; }
  DeviceId device_id() const override { return device_; }
  const StepBuffers& buffers() const override { return ep_.buffers(); }

  void reset(std::optional<uint64_t> seed) override {
    ep_.begin_reset(spec_, seed);
    backend_.reset(view(nullptr), device_, stream());
  }

  void step(const at::Tensor& actions) override {
    action_ = static_cast<const Derived*>(this)->checked_actions(actions);
    backend_.step(view(action_.data_ptr<typename Env::Action>()), device_, stream());
  }

  at::Tensor get_state() const override { return state_.clone(); }

  void set_state(const at::Tensor& state, const at::Tensor& env_ids) override {
    write_state_rows(spec_, state_, state, env_ids);
    backend_.observe(view(nullptr), device_, stream());
  }

  int64_t diverged_count() const override { return ep_.diverged_count(); }

  std::map<std::string, at::Tensor> save_rollout_state() const override {
    return ep_.save({{"state", &state_}});
  }

  void load_rollout_state(const std::map<std::string, at::Tensor>& saved) override {
    ep_.load(saved, {{"state", &state_}});
  }

 protected:
  // (actions of the shape Derived checked, where flat element i belongs) => (the kernels'
  // actions: integers in [0, n) as int32, or finite floats as float32), refused naming the
  // value and its place when not, or when they sit on another device than the env.
  at::Tensor checked_values(const at::Tensor& a, const ActionPlace& place) const {
    check_action_device(spec_.id, a, torch_device());
    if constexpr (std::is_integral_v<typename Env::Action>)
      return checked_discrete_actions(spec_.id, a, spec_.action_space.n, device_.is_cpu(), place);
    else
      return checked_continuous_actions(spec_.id, a, device_.is_cpu(), place);
  }

  at::Device torch_device() const { return myriad::torch_device(device_); }
  // LibTorch's current stream of the env's GPU, read at each launch (a caller may switch
  // streams between steps); nullptr on the CPU.
  void* stream() const { return current_stream(device_); }

  View view(const typename Env::Action* action) const {
    View b;
    ep_.fill(b, spec_.max_episode_steps);
    b.params = params_;
    b.state = state_.data_ptr<float>();
    b.action = action;
    if constexpr (kAgents > 0 && HasWinner<Env>::value)
      b.winner = ep_.buffers().winner.data_ptr<int32_t>();
    return b;
  }

  EnvSpec spec_;
  int64_t n_;
  DeviceId device_;
  typename Env::Params params_{};

 private:
  Backend<Env> backend_{};
  at::Tensor state_, action_;
  EpisodeBuffers ep_;
};

}  // namespace myriad::envs
