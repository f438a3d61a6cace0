// The fused CUDA launches of a build without them (MYRIAD_CUDA_FUSED OFF): asking for one is an
// error naming the option.
#include <stdexcept>

#include "physics/cuda_fused.cuh"

namespace myriad::physics {
namespace {

[[noreturn]] void fused_not_built() {
  throw std::invalid_argument(
      "the fused CUDA launches are not in this build (configure with -DMYRIAD_CUDA_FUSED=ON); "
      "the staged launch is the default");
}

}  // namespace

template <class T>
void cuda_forward_fused(const ModelView<T>&, const BatchView<T>&, int64_t, DeviceId, void*) {
  fused_not_built();
}

template <class T>
void cuda_step_fused(const ModelView<T>&, const BatchView<T>&, int64_t, int, DeviceId, void*) {
  fused_not_built();
}

template void cuda_forward_fused(const ModelView<float>&, const BatchView<float>&, int64_t,
                                 DeviceId, void*);
template void cuda_forward_fused(const ModelView<double>&, const BatchView<double>&, int64_t,
                                 DeviceId, void*);
template void cuda_step_fused(const ModelView<float>&, const BatchView<float>&, int64_t, int,
                              DeviceId, void*);
template void cuda_step_fused(const ModelView<double>&, const BatchView<double>&, int64_t, int,
                              DeviceId, void*);

}  // namespace myriad::physics
