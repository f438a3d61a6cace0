// The physics envs' CUDA runners in float (runners_cuda.cuh).
#include "envs/locomotion/runners_cuda.cuh"

namespace myriad::envs {

#define MYRIAD_X(Env)                                                           \
  template std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner_of<Env, float>( \
      const physics::Model<double>&, int64_t, int, bool, bool);
MYRIAD_PHYSICS_ENV_TYPES(MYRIAD_X)
MYRIAD_TASK_ENVS(MYRIAD_X)
#undef MYRIAD_X

}  // namespace myriad::envs
