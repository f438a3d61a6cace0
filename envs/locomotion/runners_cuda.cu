// make_cuda_runner: the physics envs' CUDA runner of the asked precision and layout
// (runners_cuda.cuh, compiled per precision in runners_cuda_f32.cu and runners_cuda_f64.cu).
#include <stdexcept>

#include "envs/locomotion/env_list.h"
#include "envs/locomotion/runners_cuda.h"

namespace myriad::envs {

template <class Env>
std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner(const physics::Model<double>& model, int64_t n,
                                                     int device, PhysicsLaunch launch,
                                                     int precision, bool graph) {
  // Staged only: SimRunner compiles no fused shape for CUDA (its kernels would inline the whole
  // pipeline); the env refuses launch=fused and tiled on CUDA before it gets here.
  if (launch != PhysicsLaunch::kStaged && launch != PhysicsLaunch::kBlocked)
    throw std::logic_error("physics env on CUDA: the step is staged, env-major or blocked");
  const bool blocked = launch == PhysicsLaunch::kBlocked;
  if (precision == 64) return make_cuda_runner_of<Env, double>(model, n, device, blocked, graph);
  return make_cuda_runner_of<Env, float>(model, n, device, blocked, graph);
}

#define MYRIAD_X(Env)                                                 \
  template std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner<Env>( \
      const physics::Model<double>&, int64_t, int, PhysicsLaunch, int, bool);
MYRIAD_PHYSICS_ENV_TYPES(MYRIAD_X)
MYRIAD_TASK_ENVS(MYRIAD_X)
#undef MYRIAD_X

}  // namespace myriad::envs
