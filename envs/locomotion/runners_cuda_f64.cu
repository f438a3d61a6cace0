// The physics envs' CUDA runners in double (runners_cuda.cuh), compiled without FMA contraction
// (envs/CMakeLists.txt) as the engine's float64 units are.
#include "envs/locomotion/runners_cuda.cuh"

namespace myriad::envs {

#define MYRIAD_X(Env)                                                            \
  template std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner_of<Env, double>( \
      const physics::Model<double>&, int64_t, int, bool, bool);
MYRIAD_PHYSICS_ENV_TYPES(MYRIAD_X)
MYRIAD_TASK_ENVS(MYRIAD_X)
#undef MYRIAD_X

}  // namespace myriad::envs
