// Host-side checks of the actions a batch env's step receives, shared by ClassicBatchEnv and
// MultiAgentBatchEnv.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
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

}  // namespace myriad::envs
