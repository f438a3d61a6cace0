// The physics envs' runners on the CPU: the engine in float32 or float64 (OpenMP over envs) and
// libmujoco (one mjData per env), each instantiating envs/physics_kernels.h for every env of
// envs/locomotion/env_list.h.
#include <mujoco/mujoco.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "envs/locomotion/env_list.h"
#include "envs/mujoco_sim.h"
#include "envs/physics_launch.inl"
#include "myriad/physics/data.h"
#include "myriad/physics/engine.h"
#include "physics/batch_view.h"
#include "physics/mujoco_batch.h"

namespace myriad::envs {
namespace {

constexpr DeviceId kCpu{Device::kCpu, 0};

template <class Env, class T>
class EngineRunner final : public SimRunner<Device::kCpu, Env, MyriadSim<T>> {
 public:
  EngineRunner(const physics::Model<double>& model, int64_t n, PhysicsLaunch launch)
      : SimRunner<Device::kCpu, Env, MyriadSim<T>>(kCpu),
        model_(model.cast<T>()),
        data_(model_, n),
        before_store_(launch != PhysicsLaunch::kFused ? n * kBeforeWidth<Env> : 0),
        tiled_(launch == PhysicsLaunch::kTiled) {
    this->sim_.model = physics::view_of(model_);
    this->sim_.data = physics::batch_view(model_, data_);
    this->staged_ = launch != PhysicsLaunch::kFused;
    // Staged: the CUDA path's shape, its auto-reset included (the CPU tests check its bits).
    this->reset_launch_ = launch == PhysicsLaunch::kStaged;
    this->before_ = before_store_.data();
  }

 private:
  void forward_staged(physics::EnvMask only, void*) override {
    physics::forward_staged(model_, data_, only.a, only.b);
  }
  void step_substeps_staged(int substeps, void*) override {
    if (tiled_) {
      physics::step_tiled(model_, data_, substeps);
    } else {
      physics::step_staged(model_, data_, substeps);
    }
  }

  physics::Model<T> model_;
  physics::Data<T> data_;
  std::vector<T> before_store_;  // the staged or tiled step's `before` values
  bool tiled_;
};

template <class Env>
class MujocoRunner final : public SimRunner<Device::kCpu, Env, MujocoSim> {
 public:
  MujocoRunner(const physics::Model<double>& model, const mjModel* mj, int64_t n)
      : SimRunner<Device::kCpu, Env, MujocoSim>(kCpu), model_(model), batch_(mj, n) {
    for (int64_t i = 0; i < n; ++i) datas_.push_back(batch_.data(i));
    this->sim_.model = physics::view_of(model_);
    this->sim_.mj = batch_.model();
    this->sim_.datas = datas_.data();
  }

 private:
  physics::Model<double> model_;
  physics::MujocoBatch batch_;
  std::vector<mjData*> datas_;
};

}  // namespace

template <class Env>
std::unique_ptr<PhysicsRunner<Env>> make_cpu_runner(PhysicsSim sim,
                                                    const physics::Model<double>& model,
                                                    const mjModel* mj, int64_t n,
                                                    PhysicsLaunch launch) {
  switch (sim) {
    case PhysicsSim::kMyriad32:
      return std::make_unique<EngineRunner<Env, float>>(model, n, launch);
    case PhysicsSim::kMyriad64:
      return std::make_unique<EngineRunner<Env, double>>(model, n, launch);
    case PhysicsSim::kMujoco:
      return std::make_unique<MujocoRunner<Env>>(model, mj, n);
  }
  throw std::logic_error("make_cpu_runner: unknown sim");
}

#define MYRIAD_X(Env)                                                \
  template std::unique_ptr<PhysicsRunner<Env>> make_cpu_runner<Env>( \
      PhysicsSim, const physics::Model<double>&, const mjModel*, int64_t, PhysicsLaunch);
MYRIAD_PHYSICS_ENV_TYPES(MYRIAD_X)
#undef MYRIAD_X

}  // namespace myriad::envs
