// The definitions of physics/cuda_fused.cuh's launches, included by cuda_fused_f32.cu and
// cuda_fused_f64.cu, which instantiate them one precision each.
#pragma once

#include "physics/cuda_fused.cuh"
#include "physics/launch.h"

namespace myriad::physics {

template <class T>
void cuda_forward_fused(const ModelView<T>& m, const BatchView<T>& b, int64_t n, DeviceId on,
                        void* stream) {
  launch_forward<Device::kCuda>(m, b, n, on, stream);
}

template <class T>
void cuda_step_fused(const ModelView<T>& m, const BatchView<T>& b, int64_t n, int substeps,
                     DeviceId on, void* stream) {
  launch_step<Device::kCuda>(m, b, n, substeps, on, stream);
}

}  // namespace myriad::physics
