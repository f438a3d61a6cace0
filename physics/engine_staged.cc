// The staged step and forward pass on the CPU (one loop over the batch per stage).
#include <cstdint>

#include "myriad/parallel_for.h"
#include "myriad/physics/engine.h"
#include "physics/env_step.h"
#include "physics/launch.h"

namespace myriad::physics {

template <class T>
void step_staged(const Model<T>& m, Data<T>& d, int substeps) {
  launch_step_staged<Device::kCpu>(view_of(m), batch_view(m, d), d.num_envs(), substeps,
                                   {Device::kCpu, 0});
}

template <class T>
void forward_staged(const Model<T>& m, Data<T>& d, const uint8_t* only_a, const uint8_t* only_b) {
  launch_forward_staged<Device::kCpu>(view_of(m), batch_view(m, d), d.num_envs(), {Device::kCpu, 0},
                                      nullptr, EnvMask{only_a, only_b});
}

template void step_staged(const Model<float>&, Data<float>&, int);
template void forward_staged(const Model<float>&, Data<float>&, const uint8_t*, const uint8_t*);
template void step_staged(const Model<double>&, Data<double>&, int);
template void forward_staged(const Model<double>&, Data<double>&, const uint8_t*, const uint8_t*);

}  // namespace myriad::physics
