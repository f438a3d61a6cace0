// Build without nvcc: every CUDA kernel table entry explains that this build has no CUDA.
#include <stdexcept>

#include "envs/backend.h"
#include "envs/env_list.h"

namespace myriad::envs {

template <class Env>
static void no_cuda(const ViewOfT<Env>&, DeviceId, void*) {
  throw std::runtime_error(
      "this Myriad build has no CUDA backend (nvcc was not found when "
      "it was configured); use device=cpu or rebuild with MYRIAD_CUDA=ON");
}

template <class Env>
Backend<Env> cuda_backend() {
  return {&no_cuda<Env>, &no_cuda<Env>, &no_cuda<Env>};
}

#define MYRIAD_X(Env) template Backend<Env> cuda_backend<Env>();
MYRIAD_BATCH_ENVS(MYRIAD_X)
#undef MYRIAD_X

}  // namespace myriad::envs
