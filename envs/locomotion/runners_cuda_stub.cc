// Build without nvcc: the physics envs' CUDA runner says so.
#include <memory>
#include <stdexcept>

#include "envs/locomotion/env_list.h"
#include "envs/physics_runner.h"

namespace myriad::envs {

template <class Env>
std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner(const physics::Model<double>&, int64_t, int,
                                                     PhysicsLaunch, int, bool) {
  throw std::invalid_argument(std::string(Env::kId) +
                              " on CUDA: this Myriad build has no CUDA backend (nvcc was not "
                              "found when it was configured); use device=cpu");
}

#define MYRIAD_X(Env)                                                 \
  template std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner<Env>( \
      const physics::Model<double>&, int64_t, int, PhysicsLaunch, int, bool);
MYRIAD_PHYSICS_ENV_TYPES(MYRIAD_X)
MYRIAD_TASK_ENVS(MYRIAD_X)
#undef MYRIAD_X

}  // namespace myriad::envs
