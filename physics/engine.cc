// CPU instantiation of the batched engine for float and double.
#include "myriad/physics/engine.h"

#include <cstdint>

#include "physics/env_step.h"
#include "physics/launch.h"
#include "physics/tile.h"

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
void step_staged(const Model<T>& m, Data<T>& d, int substeps) {
  launch_step_staged<Device::kCpu>(view_of(m), batch_view(m, d), d.num_envs(), substeps,
                                   {Device::kCpu, 0});
}

template <class T>
void forward_staged(const Model<T>& m, Data<T>& d, const uint8_t* only_a, const uint8_t* only_b) {
  launch_forward_staged<Device::kCpu>(view_of(m), batch_view(m, d), d.num_envs(), {Device::kCpu, 0},
                                      nullptr, EnvMask{only_a, only_b});
}

template <class T>
void step_tiled(const Model<T>& m, Data<T>& d, int substeps) {
  launch_step_tiled(view_of(m), batch_view(m, d), d.num_envs(), substeps);
}

template <class T>
void reset_data(const Model<T>& m, Data<T>& d) {
  for (int64_t i = 0; i < d.num_envs(); ++i) {
    EnvData<T> e = d.env(m, i);
    for (int k = 0; k < m.nq; ++k) e.qpos[k] = m.qpos0[k];
    for (int k = 0; k < m.nv; ++k) e.qvel[k] = e.qacc_warmstart[k] = 0;
    for (int k = 0; k < m.nu; ++k) e.ctrl[k] = 0;
    e.time[0] = 0;
  }
}

template <class T>
void forward_env(const ModelView<T>& m, EnvData<T>& d) {
  forward(m, d);
}

template <class T>
void step_env(const ModelView<T>& m, EnvData<T>& d) {
  step(m, d);
}

template void forward_env(const ModelView<float>&, EnvData<float>&);
template void forward_env(const ModelView<double>&, EnvData<double>&);
template void step_env(const ModelView<float>&, EnvData<float>&);
template void step_env(const ModelView<double>&, EnvData<double>&);
template void forward(const Model<float>&, Data<float>&);
template void forward(const Model<double>&, Data<double>&);
template void step(const Model<float>&, Data<float>&, int);
template void step(const Model<double>&, Data<double>&, int);
template void step_staged(const Model<float>&, Data<float>&, int);
template void step_staged(const Model<double>&, Data<double>&, int);
template void forward_staged(const Model<float>&, Data<float>&, const uint8_t*, const uint8_t*);
template void forward_staged(const Model<double>&, Data<double>&, const uint8_t*, const uint8_t*);
template void step_tiled(const Model<float>&, Data<float>&, int);
template void step_tiled(const Model<double>&, Data<double>&, int);
template void reset_data(const Model<float>&, Data<float>&);
template void reset_data(const Model<double>&, Data<double>&);

}  // namespace myriad::physics
