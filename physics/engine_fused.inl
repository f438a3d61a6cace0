// The fused step and forward pass on the CPU (one env per iteration of an OpenMP loop).
// Each instantiation inlines the whole pipeline (about 200 s of GCC -O3 per precision when they
// were one file, the longest compile of the build), so one small .cc file instantiates each
// (engine_fused_{forward,step,env}_f{32,64}.cc) and they compile side by side.
#pragma once

#include <cstdint>

#include "myriad/parallel_for.h"
#include "myriad/physics/engine.h"
#include "physics/env_step.h"
#include "physics/launch.h"

namespace myriad::physics {

template <class T>
void forward(const Model<T>& m, Data<T>& d) {
  launch_forward<Device::kCpu>(view_of(m), batch_view(m, d), d.num_envs(), {Device::kCpu, 0});
}

template <class T>
void step(const Model<T>& m, Data<T>& d, int substeps) {
  launch_step<Device::kCpu>(view_of(m), batch_view(m, d), d.num_envs(), substeps,
                            {Device::kCpu, 0});
}

template <class T>
void forward_env(const ModelView<T>& m, EnvData<T>& d) {
  forward(m, d);
}

template <class T>
void step_env(const ModelView<T>& m, EnvData<T>& d) {
  step(m, d);
}

}  // namespace myriad::physics
