// CPU (OpenMP) instantiation of every env's kernels.
#include "envs/backend.h"
#include "envs/batch_launch.inl"
#include "envs/env_list.h"

namespace myriad::envs {

template <class Env>
Backend<Env> cpu_backend() {
  return {&launch_reset<Device::kCpu, Env>, &launch_step<Device::kCpu, Env>,
          &launch_observe<Device::kCpu, Env>};
}

// One line per env type of envs/env_list.h.
template Backend<CartPole> cpu_backend<CartPole>();
template Backend<Pendulum> cpu_backend<Pendulum>();
template Backend<Acrobot> cpu_backend<Acrobot>();
template Backend<MountainCar> cpu_backend<MountainCar>();
template Backend<MountainCarContinuous> cpu_backend<MountainCarContinuous>();

}  // namespace myriad::envs
