// The fused CUDA launches of CudaBatch (physics/launch.h's launch_forward and launch_step on the
// GPU), declared here and instantiated one precision per file (cuda_fused_f32.cu,
// cuda_fused_f64.cu) so that nvcc compiles them beside cuda_batch_f{32,64}.cu's staged kernels.
#pragma once

#include <cstdint>

#include "myriad/device.h"
#include "physics/batch_view.h"
#include "physics/model_view.h"

namespace myriad::physics {

// mj_forward on n envs, one thread each.
template <class T>
void cuda_forward_fused(const ModelView<T>& m, const BatchView<T>& b, int64_t n, DeviceId on,
                        void* stream);

// `substeps` mj_step on n envs, one thread each.
template <class T>
void cuda_step_fused(const ModelView<T>& m, const BatchView<T>& b, int64_t n, int substeps,
                     DeviceId on, void* stream);

}  // namespace myriad::physics
