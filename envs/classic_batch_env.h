// ClassicBatchEnv<Env>: the BatchEnv over any env written as reset/step/observe for one
// instance: KernelBatchEnv (envs/kernel_batch_env.h: state, buffers, kernel table) with the
// single-agent action checks and drawing; the env logic itself lives only in Env.
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
#include "envs/kernel_batch_env.h"
#include "myriad/batch_env.h"
#include "myriad/host_memory.h"
#include "myriad/registry.h"
#include "myriad/torch_device.h"

namespace myriad::envs {

template <class Env>
class ClassicBatchEnv final : public KernelBatchEnv<ClassicBatchEnv<Env>, Env> {
  using Base = KernelBatchEnv<ClassicBatchEnv<Env>, Env>;
  friend Base;
  using Base::n_;
  using Base::spec_;

 public:
  ClassicBatchEnv(int64_t num_envs, DeviceId device, uint64_t seed, const EnvOptions& options)
      : Base(num_envs, device, seed, options,
             4 * (Env::kStateDim + 2 * Env::kObsDim + 8) + 2 + 4 * Env::kActionDim) {}

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

 private:
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
    const auto place = [](int64_t i) { return "env " + std::to_string(i / Env::kActionDim); };
    return this->checked_values(a, place);
  }
};

}  // namespace myriad::envs
