// The fused CUDA launches in float (physics/cuda_fused.cuh).
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

template void cuda_forward_fused(const ModelView<float>&, const BatchView<float>&, int64_t,
                                 DeviceId, void*);
template void cuda_step_fused(const ModelView<float>&, const BatchView<float>&, int64_t, int,
                              DeviceId, void*);

}  // namespace myriad::physics
