// CUDA (one thread per env) instantiation of every env's kernels.
#include "envs/backend.h"
#include "envs/batch_launch.inl"
#include "envs/env_list.h"

namespace myriad::envs {

template <class Env>
Backend<Env> cuda_backend() {
  return {&launch_reset<Device::kCuda, Env>, &launch_step<Device::kCuda, Env>,
          &launch_observe<Device::kCuda, Env>};
}

#define MYRIAD_X(Env) template Backend<Env> cuda_backend<Env>();
MYRIAD_BATCH_ENVS(MYRIAD_X)
#undef MYRIAD_X

}  // namespace myriad::envs
