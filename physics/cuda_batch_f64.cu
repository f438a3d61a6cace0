// CudaBatch<double> (compiled with --fmad=false: no FMA contraction, as libmujoco).
#include "physics/cuda_batch.cuh"

namespace myriad::physics {
template class CudaBatch<double>;
template int cuda_solve_storage_bytes<double>(int, int);
}  // namespace myriad::physics
