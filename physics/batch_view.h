// BatchView<T>: every data field's batch array ([N, size] row-major, env i's slice at base[f] +
// i * size[f]) as plain pointers and sizes, trivially copyable, so one value passed by copy
// reaches a CPU loop body or a CUDA kernel alike. The host Data<T> and the device mirror
// (physics/cuda_batch.cuh) both hand one to the launch (physics/launch.h).
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

template <class T>
struct BatchView {
  T* base[kNumDataFields];
  int64_t size[kNumDataFields];

  // Env i's slice of every field.
  MYRIAD_HD EnvData<T> env(int64_t i) const {
    T* pointers[kNumDataFields];
    for (int f = 0; f < kNumDataFields; ++f) pointers[f] = base[f] + i * size[f];
    EnvData<T> d;
    memcpy(&d, pointers, sizeof(EnvData<T>));
    return d;
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
