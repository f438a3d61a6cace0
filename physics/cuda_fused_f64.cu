// The fused CUDA launches in double (physics/cuda_fused.cuh).
#include "physics/cuda_fused.inl"

namespace myriad::physics {

template void cuda_forward_fused(const ModelView<double>&, const BatchView<double>&, int64_t,
                                 DeviceId, void*);
template void cuda_step_fused(const ModelView<double>&, const BatchView<double>&, int64_t, int,
                              DeviceId, void*);

}  // namespace myriad::physics
