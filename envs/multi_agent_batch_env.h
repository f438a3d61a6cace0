// MultiAgentBatchEnv<Env>: the BatchEnv over a multi-agent scenario written as reset/step/observe
// for one instance over [A, ...] arrays (envs/mpe/): KernelBatchEnv (envs/kernel_batch_env.h,
// as ClassicBatchEnv: options, seeding, auto-reset, divergence cut, state access, rollout
// save/load) with the agent axis after the batch axis in every per-agent buffer (shapes in
// myriad/batch_env.h), and its own action checks and drawing. The kernels are
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
#include "envs/kernel_batch_env.h"
#include "envs/mpe/drawing.h"
#include "myriad/batch_env.h"
#include "myriad/host_memory.h"
#include "myriad/registry.h"
#include "myriad/torch_device.h"

namespace myriad::envs {

template <class Env>
class MultiAgentBatchEnv final : public KernelBatchEnv<MultiAgentBatchEnv<Env>, Env> {
  using Base = KernelBatchEnv<MultiAgentBatchEnv<Env>, Env>;
  friend Base;
  using Base::n_;
  using Base::spec_;

 public:
  static constexpr int kAgents = Env::kAgents;
  using Drawing = mpe::Drawing<typename Env::Scenario>;

  // options: max_episode_steps and the env's own (Env::set_option); see myriad/batch_env.h.
  MultiAgentBatchEnv(int64_t num_envs, DeviceId device, uint64_t seed, const EnvOptions& options)
      : Base(num_envs, device, seed, options,
             4 * (Env::kStateDim + 2 * kAgents * Env::kObsDim + 3 * kAgents +
                  kAgents * Env::kActionDim + 5) +
                 2) {}

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

 private:
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
    const int64_t per_agent = kDiscrete ? 1 : K;  // action values per agent
    const auto place = [this, per_agent](int64_t i) {
      const int64_t agent = i / per_agent;
      return "env " + std::to_string(agent / kAgents) + " (agent " +
             spec_.agent_names[agent % kAgents] + ")";
    };
    return this->checked_values(a, place);
  }
};

}  // namespace myriad::envs
