// BatchView<T, Block>: every data field's batch array as plain pointers and row sizes, trivially
// copyable, so one value passed by copy reaches a CPU loop body or a CUDA kernel alike: env-major
// ([N, size] row-major, Block = 1) or in blocks of Block envs (physics/batch_layout.h). The host
// Data<T> and the device mirror (physics/cuda_batch.cuh) both hand one to the launch
// (physics/launch.h).
#pragma once

#include <cstdint>
#include <cstring>

#include "myriad/hd.h"
#include "myriad/physics/data.h"

namespace myriad::physics {

// The number of batch data fields (MYRIAD_DATA_FIELDS).
#define MYRIAD_COUNT_FIELD(name, size, kind) +1
constexpr int kNumDataFields = 0 MYRIAD_DATA_FIELDS(MYRIAD_COUNT_FIELD);
#undef MYRIAD_COUNT_FIELD
static_assert(sizeof(EnvData<float>) == kNumDataFields * sizeof(float*) &&
                  sizeof(EnvData<double>) == kNumDataFields * sizeof(double*),
              "EnvData is its fields' pointers, in order");

namespace detail {
// Env i's pointer into a field of row length `size` stored in blocks of S envs (S = 1: env-major).
template <class T, int S>
MYRIAD_HD FieldPtr<T, S> field_of(T* base, int64_t size, int64_t i) {
  if constexpr (S == 1)
    return base + i * size;
  else
    return Strided<T, S>{base + (i / S) * size * S + i % S};
}
}  // namespace detail

// Block = 1: every field env-major, env i's slice at base[f] + i * size[f]. Block > 1: the batch
// in blocks of Block envs (physics/batch_layout.h), element k of env i at base[f] + ((i / Block)
// * size[f] + k) * Block + i % Block, but for the fields that stay per env (stays_per_env), which
// are env-major. size[f]: an env's elements of field f (its row).
template <class T, int Block = 1>
struct BatchView {
  T* base[kNumDataFields];
  int64_t size[kNumDataFields];

  // Env i's slice of every field.
  MYRIAD_HD EnvData<T, Block> env(int64_t i) const {
    if constexpr (Block == 1) {
      T* pointers[kNumDataFields];
      for (int f = 0; f < kNumDataFields; ++f) pointers[f] = base[f] + i * size[f];
      EnvData<T> d;
      memcpy(&d, pointers, sizeof(EnvData<T>));
      return d;
    } else {
      EnvData<T, Block> d;
      int f = 0;
#define MYRIAD_X(name, sz, kind)                                                           \
  d.name = detail::field_of < T, stays_per_env(#name) ? 1 : Block > (base[f], size[f], i); \
  ++f;
      MYRIAD_DATA_FIELDS(MYRIAD_X)
#undef MYRIAD_X
      return d;
    }
  }
};

// The view of a host batch.
template <class T>
BatchView<T> batch_view(const Model<T>& m, Data<T>& d) {
  BatchView<T> b{};
  EnvData<T> row0 = d.env(m, 0);
  int f = 0;
  for_each_field(row0, m, [&](const char*, T*& p, int64_t size) {
    b.base[f] = p;
    b.size[f] = size;
    ++f;
  });
  return b;
}

}  // namespace myriad::physics
