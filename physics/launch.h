// The physics launch: one templated loop per entry point (forward, step), written once and
// instantiated for the CPU (OpenMP, physics/engine.cc) and for CUDA (physics/cuda_batch.cuh), as
// the envs are launched (envs/batch_launch.inl). The per-env work is physics/pipeline.h's.
#pragma once

#include <cstdint>

#include "myriad/parallel_for.h"
#include "physics/batch_view.h"
#include "physics/pipeline.h"

namespace myriad::physics {

// mj_forward on n envs.
template <Device D, class T>
void launch_forward(const ModelView<T>& m, const BatchView<T>& b, int64_t n, DeviceId device,
                    void* stream = nullptr) {
  parallel_for(
      DeviceId{D, device.index}, "physics.forward", n,
      [m, b] MYRIAD_HD_LAMBDA(int64_t i) {
        EnvData<T> e = b.env(i);
        physics::forward(m, e);
      },
      stream, /*min_parallel=*/2);
}

// `substeps` mj_step on n envs.
template <Device D, class T>
void launch_step(const ModelView<T>& m, const BatchView<T>& b, int64_t n, int substeps,
                 DeviceId device, void* stream = nullptr) {
  parallel_for(
      DeviceId{D, device.index}, "physics.step", n,
      [m, b, substeps] MYRIAD_HD_LAMBDA(int64_t i) {
        EnvData<T> e = b.env(i);
        for (int s = 0; s < substeps; ++s) physics::step(m, e);
      },
      stream, /*min_parallel=*/2);
}

}  // namespace myriad::physics
