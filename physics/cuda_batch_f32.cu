// CudaBatch<float>.
#include "physics/cuda_batch.cuh"

namespace myriad::physics {
template class CudaBatch<float>;
}  // namespace myriad::physics
