// Host-side checks of the actions a batch env's step receives, shared by ClassicBatchEnv,
// MultiAgentBatchEnv and PhysicsBatchEnv: each checks the shape it expects, then these.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace myriad::envs {

// The index of the first element of contiguous CPU integer tensor a outside [0, n), or -1: a
// plain loop (ATen would fork its thread team per op at every step, and has no comparisons for
// the wide unsigned types). Other dtypes throw std::invalid_argument naming env `id`.
inline int64_t first_outside(const at::Tensor& a, int64_t n, const std::string& id) {
  const auto scan = [&](const auto* p) -> int64_t {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
    for (int64_t i = 0; i < a.numel(); ++i) {
      if constexpr (std::is_signed_v<T>) {
        if (p[i] < 0 || static_cast<int64_t>(p[i]) >= n) return i;
      } else {
        if (static_cast<uint64_t>(p[i]) >= static_cast<uint64_t>(n)) return i;
      }
    }
    return -1;
  };
  switch (a.scalar_type()) {
    case at::kByte:
      return scan(a.data_ptr<uint8_t>());
    case at::kChar:
      return scan(a.data_ptr<int8_t>());
    case at::kShort:
      return scan(a.data_ptr<int16_t>());
    case at::kInt:
      return scan(a.data_ptr<int32_t>());
    case at::kLong:
      return scan(a.data_ptr<int64_t>());
    case at::kUInt16:
      return scan(a.data_ptr<uint16_t>());
    case at::kUInt32:
      return scan(a.data_ptr<uint32_t>());
    case at::kUInt64:
      return scan(a.data_ptr<uint64_t>());
    default:
      throw std::invalid_argument(id + " step: discrete actions of type " +
                                  std::string(c10::toString(a.scalar_type())) +
                                  " are not supported");
  }
}

// Element i of integer tensor a as text (unsigned 64-bit values kept exact).
inline std::string integer_at(const at::Tensor& a, int64_t i) {
  const c10::Scalar v = a.reshape({-1})[i].item();
  return a.scalar_type() == at::kUInt64 ? std::to_string(v.toUInt64()) : std::to_string(v.toLong());
}

// Where element i of the flat action tensor belongs, e.g. "env 3" or "env 3 (agent agent_0)".
using ActionPlace = std::function<std::string(int64_t)>;

// Actions must sit on the env's device: a silent copy would hide a host-device round trip.
inline void check_action_device(const std::string& id, const at::Tensor& a,
                                const at::Device& env_device) {
  if (a.device() != env_device)
    throw std::invalid_argument(id + " step: actions are on " + a.device().str() +
                                " but the env runs on " + env_device.str());
}

// Discrete actions in [0, n) as contiguous int32. Checked in the caller's integer type before
// the narrowing to int32 (which would turn 2**32 into a valid 0), on the CPU only: a CUDA check
// would cost a device sync per step; there the conversion saturates, so a wide value cannot
// wrap into range, and the kernels read an out-of-range action unchecked.
inline at::Tensor checked_discrete_actions(const std::string& id, const at::Tensor& a, int64_t n,
                                           bool on_cpu, const ActionPlace& place) {
  if (a.is_floating_point() || a.is_complex())
    throw std::invalid_argument(id + " step: discrete actions must be integers, got " +
                                std::string(c10::toString(a.scalar_type())));
  const at::Tensor wide = a.scalar_type() == at::kBool ? a.to(at::kLong) : a.contiguous();
  if (on_cpu) {
    const int64_t i = first_outside(wide, n, id);
    if (i >= 0)
      throw std::invalid_argument(id + " step: action " + integer_at(wide, i) + " of " + place(i) +
                                  " is outside [0, " + std::to_string(n) + ")");
    return wide.to(at::kInt).contiguous();
  }
  return (wide.is_signed() ? wide.clamp(-1, n) : wide.clamp_max(n)).to(at::kInt).contiguous();
}

// Continuous actions as contiguous float32. NaN or infinite actions (a diverged policy) are
// refused on the CPU; on CUDA a check would cost a device sync per step, and the state they
// produce is cut as divergence (reward 0, counted in diverged_count), never rewarded.
inline at::Tensor checked_continuous_actions(const std::string& id, const at::Tensor& a,
                                             bool on_cpu, const ActionPlace& place) {
  if (!a.is_floating_point())
    throw std::invalid_argument(id + " step: continuous actions must be floats, got " +
                                std::string(c10::toString(a.scalar_type())));
  at::Tensor out = a.to(at::kFloat).contiguous();
  if (on_cpu) {
    const float* p = out.data_ptr<float>();
    for (int64_t i = 0; i < out.numel(); ++i)
      if (!std::isfinite(p[i]))
        throw std::invalid_argument(id + " step: action " + std::to_string(p[i]) + " of " +
                                    place(i) + " is not finite");
  }
  return out;
}

}  // namespace myriad::envs
