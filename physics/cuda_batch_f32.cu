// CudaBatch<float>.
#include "physics/cuda_batch.cuh"

namespace myriad::physics {
template class CudaBatch<float>;
template int cuda_solve_storage_bytes<float>(int, int);
}  // namespace myriad::physics
