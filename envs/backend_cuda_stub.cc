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

// One line per env type of envs/env_list.h.
template Backend<CartPole> cuda_backend<CartPole>();
template Backend<Pendulum> cuda_backend<Pendulum>();
template Backend<Acrobot> cuda_backend<Acrobot>();
template Backend<MountainCar> cuda_backend<MountainCar>();
template Backend<MountainCarContinuous> cuda_backend<MountainCarContinuous>();
template Backend<SpreadDiscrete> cuda_backend<SpreadDiscrete>();
template Backend<SpreadContinuous> cuda_backend<SpreadContinuous>();
template Backend<TagDiscrete> cuda_backend<TagDiscrete>();
template Backend<TagContinuous> cuda_backend<TagContinuous>();
template Backend<SumoDiscrete> cuda_backend<SumoDiscrete>();
template Backend<SumoContinuous> cuda_backend<SumoContinuous>();

}  // namespace myriad::envs
