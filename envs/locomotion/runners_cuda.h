// The physics envs' CUDA runners of one precision (runners_cuda.cuh, compiled per precision in
// runners_cuda_f32.cu and runners_cuda_f64.cu), which make_cuda_runner (runners_cuda.cu) picks
// from. Declared here so that no other unit instantiates them.
#pragma once

#include <cstdint>
#include <memory>

#include "envs/physics_runner.h"

namespace myriad::envs {

// blocked: the batch in blocks of physics::kCudaBlock envs (launch=blocked), else env-major.
template <class Env, class T>
std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner_of(const physics::Model<double>& model,
                                                        int64_t n, int device, bool blocked,
                                                        bool graph);

}  // namespace myriad::envs
