// One env's mj_forward and mj_step (physics/pipeline.h) as out-of-line functions, for code that
// runs the engine inside its own per-env kernels (the physics envs, envs/physics_kernels.h):
// each kernel calls these instead of inlining the whole pipeline, so a translation unit compiles
// the pipeline once, not once per kernel. On the host they are compiled in physics/engine.cc; on
// a GPU they are __noinline__ device functions, instantiated once per CUDA translation unit.
#pragma once

#include "myriad/physics/data.h"
#include "physics/model_view.h"
#if defined(__CUDACC__)
#include "physics/pipeline.h"
#endif

namespace myriad::physics {

template <class T>
void forward_env(const ModelView<T>& m, EnvData<T>& d);
template <class T>
void step_env(const ModelView<T>& m, EnvData<T>& d);

#if defined(__CUDACC__)
template <class T, int Block>
__device__ __noinline__ void forward_env_device(const ModelView<T>& m, EnvData<T, Block>& d) {
  forward(m, d);
}
template <class T, int Block>
__device__ __noinline__ void step_env_device(const ModelView<T>& m, EnvData<T, Block>& d) {
  step(m, d);
}
#endif

}  // namespace myriad::physics
