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
