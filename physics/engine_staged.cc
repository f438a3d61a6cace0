// The staged step and forward pass on the CPU (one loop over the batch per stage).
#include <cstdint>

#include "myriad/parallel_for.h"
#include "myriad/physics/engine.h"
#include "physics/env_params.h"
#include "physics/env_step.h"
#include "physics/launch.h"

namespace myriad::physics {

namespace {
template <class T>
EnvParamsView<T> view_or_none(const Model<T>& m, const EnvParams<T>* params) {
  return params != nullptr ? params_view(*params, m) : EnvParamsView<T>{};
}
}  // namespace

template <class T>
void step_staged(const Model<T>& m, Data<T>& d, int substeps, const EnvParams<T>* params) {
  launch_step_staged<Device::kCpu>(view_of(m), batch_view(m, d), d.num_envs(), substeps,
                                   {Device::kCpu, 0}, nullptr, view_or_none(m, params));
}

template <class T>
void forward_staged(const Model<T>& m, Data<T>& d, const uint8_t* only_a, const uint8_t* only_b,
                    const EnvParams<T>* params) {
  launch_forward_staged<Device::kCpu>(view_of(m), batch_view(m, d), d.num_envs(), {Device::kCpu, 0},
                                      nullptr, EnvMask{only_a, only_b}, view_or_none(m, params));
}

#define MYRIAD_X(T)                                                                       \
  template void step_staged(const Model<T>&, Data<T>&, int, const EnvParams<T>*);         \
  template void forward_staged(const Model<T>&, Data<T>&, const uint8_t*, const uint8_t*, \
                               const EnvParams<T>*);
MYRIAD_X(float)
MYRIAD_X(double)
#undef MYRIAD_X

}  // namespace myriad::physics
