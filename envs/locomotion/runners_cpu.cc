// The physics envs' runners on the CPU: the engine in float32 or float64 (OpenMP over envs) and
// libmujoco (one mjData per env), each instantiating envs/physics_kernels.h for every env of
// envs/locomotion/env_list.h.
#include <mujoco/mujoco.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/locomotion/env_list.h"
#include "envs/mujoco_sim.h"
#include "envs/physics_launch.inl"
#include "myriad/physics/cuda_batch.h"
#include "myriad/physics/data.h"
#include "myriad/physics/engine.h"
#include "physics/batch_layout.h"
#include "physics/batch_view.h"
#include "physics/launch.h"
#include "physics/mujoco_batch.h"

namespace myriad::envs {
namespace {

constexpr DeviceId kCpu{Device::kCpu, 0};

// Per-env model parameters in the engine sim's precision (kept in `store`), and the sim's view
// of them: the engine runners' set_params.
template <class T, class Sim>
void set_engine_params(const physics::EnvParams<double>& p, const physics::Model<T>& model,
                       physics::EnvParams<T>& store, Sim& sim) {
  store = p.cast<T>();
  sim.params = physics::params_view(store, model);
  sim.per_env_params = !store.empty();
}

template <class Env, class T>
class EngineRunner final : public SimRunner<Device::kCpu, Env, MyriadSim<T>> {
 public:
  EngineRunner(const physics::Model<double>& model, int64_t n, PhysicsLaunch launch)
      : SimRunner<Device::kCpu, Env, MyriadSim<T>>(kCpu),
        model_(model.cast<T>()),
        data_(model_, n),
        before_store_(launch != PhysicsLaunch::kFused ? n * kBeforeWidth<Env> : 0),
        forward_store_(launch == PhysicsLaunch::kStaged ? n : 0),
        tiled_(launch == PhysicsLaunch::kTiled) {
    this->sim_.model = physics::view_of(model_);
    this->sim_.data = physics::batch_view(model_, data_);
    this->staged_ = launch != PhysicsLaunch::kFused;
    // Staged: the CUDA path's shape, its auto-reset included (the CPU tests check its bits).
    this->reset_launch_ = launch == PhysicsLaunch::kStaged;
    this->before_ = before_store_.data();
    if (!forward_store_.empty()) this->forward_ = forward_store_.data();
  }

 public:
  void set_params(const physics::EnvParams<double>& p) override {
    if (!p.empty() && tiled_)
      throw std::invalid_argument(
          "per-env model parameters run with the fused or staged launch on the CPU (the tiled "
          "launch's SIMD lanes share one model)");
    set_engine_params(p, model_, params_, this->sim_);
  }

 private:
  void forward_staged(physics::EnvMask only, void*) override {
    physics::forward_staged(model_, data_, only.a, only.b, &params_);
  }
  void step_substeps_staged(int substeps, void*) override {
    if (tiled_) {
      physics::step_tiled(model_, data_, substeps);
    } else {
      physics::step_staged(model_, data_, substeps, &params_);
    }
  }

  physics::Model<T> model_;
  physics::Data<T> data_;
  std::vector<T> before_store_;         // the staged or tiled step's `before` values
  std::vector<uint8_t> forward_store_;  // a task env's staged step's finite flags
  bool tiled_;
  physics::EnvParams<T> params_;  // per-env model parameters, in the sim's precision
};

// The engine on a batch in the blocked layout (physics/batch_layout.h: blocks of kCudaBlock envs,
// CUDA's option), stepped by the staged launch as CUDA steps it, the auto-reset in launches of its
// own: the blocked env step on the CPU, so the CPU tests check its bits.
template <class Env, class T>
class BlockedEngineRunner final
    : public SimRunner<Device::kCpu, Env, MyriadSim<T, physics::kCudaBlock>> {
  using Base = SimRunner<Device::kCpu, Env, MyriadSim<T, physics::kCudaBlock>>;

 public:
  BlockedEngineRunner(const physics::Model<double>& model, int64_t n)
      : Base(kCpu),
        model_(model.cast<T>()),
        data_(model_, n, physics::kCudaBlock),
        before_store_(n * kBeforeWidth<Env>),
        forward_store_(n) {
    this->sim_.model = physics::view_of(model_);
    this->sim_.data = data_.template view<physics::kCudaBlock>();
    this->staged_ = true;
    this->reset_launch_ = true;
    this->before_ = before_store_.data();
    this->forward_ = forward_store_.data();
  }

  void set_params(const physics::EnvParams<double>& p) override {
    set_engine_params(p, model_, params_, this->sim_);
  }

 private:
  void forward_staged(physics::EnvMask only, void*) override {
    physics::launch_forward_staged<Device::kCpu>(this->sim_.model, this->sim_.data,
                                                 data_.layout().n, kCpu, nullptr, only,
                                                 this->sim_.params);
  }
  void step_substeps_staged(int substeps, void*) override {
    physics::launch_step_staged<Device::kCpu>(this->sim_.model, this->sim_.data, data_.layout().n,
                                              substeps, kCpu, nullptr, this->sim_.params);
  }

  physics::Model<T> model_;
  physics::BlockedData<T> data_;
  std::vector<T> before_store_;         // the staged step's `before` values
  std::vector<uint8_t> forward_store_;  // a task env's finite flags
  physics::EnvParams<T> params_;
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
  ~MujocoRunner() override { free_models(); }

  // Each env gets its own mjModel: the shared one with env i's values written in, and the
  // constants MuJoCo derives from them (mj_setConst) recomputed by libmujoco itself.
  void set_params(const physics::EnvParams<double>& p) override {
    // Built aside and swapped in at the end: a libmujoco error (thrown) leaves the runner as it
    // was and leaks nothing.
    using ModelPtr = std::unique_ptr<mjModel, void (*)(mjModel*)>;
    using DataPtr = std::unique_ptr<mjData, void (*)(mjData*)>;
    std::vector<ModelPtr> models;
    const mjModel* base = batch_.model();
    for (int64_t i = 0; i < (p.empty() ? 0 : p.n); ++i) {
      ModelPtr m(mj_copyModel(nullptr, base), mj_deleteModel);
      if (!m)
        throw std::runtime_error("physics=mujoco: could not copy the model for env " +
                                 std::to_string(i));
      write_row(p.geom_friction, i, m->geom_friction, 3, 3, base->ngeom);
      write_row(p.body_mass, i, m->body_mass, 1, 1, base->nbody);
      write_row(p.body_ipos, i, m->body_ipos, 3, 3, base->nbody);
      write_row(p.body_inertia, i, m->body_inertia, 3, 3, base->nbody);
      write_row(p.dof_damping, i, m->dof_damping, 1, 1, base->nv);
      write_row(p.dof_armature, i, m->dof_armature, 1, 1, base->nv);
      write_row(p.dof_frictionloss, i, m->dof_frictionloss, 1, 1, base->nv);
      write_row(p.jnt_stiffness, i, m->jnt_stiffness, 1, 1, base->njnt);
      write_row(p.actuator_gainprm, i, m->actuator_gainprm, 3, mjNGAIN, base->nu);
      write_row(p.actuator_biasprm, i, m->actuator_biasprm, 3, mjNBIAS, base->nu);
      write_row(p.actuator_forcerange, i, m->actuator_forcerange, 2, 2, base->nu);
      if (!p.gravity.empty())
        for (int k = 0; k < 3; ++k) m->opt.gravity[k] = p.gravity[3 * i + k];
      DataPtr scratch(mj_makeData(m.get()), mj_deleteData);
      if (!scratch) throw std::runtime_error("physics=mujoco: could not allocate mjData");
      mj_setConst(m.get(), scratch.get());
      models.push_back(std::move(m));
    }
    physics::EnvParams<double> kept = p;  // copies and allocations before anything is freed
    std::vector<mjModel*> raw;
    raw.reserve(models.size());
    free_models();
    params_ = std::move(kept);
    for (auto& m : models) raw.push_back(m.release());
    models_ = std::move(raw);
    this->sim_.params = physics::params_view(params_, model_);
    this->sim_.per_env_params = !p.empty();
    this->sim_.models = models_.empty() ? nullptr : models_.data();
  }

 private:
  // Row i of a per-env field ([n, rows * cols]) into an mjModel array of `stride` per row.
  static void write_row(const std::vector<double>& field, int64_t i, mjtNum* out, int cols,
                        int stride, int rows) {
    if (field.empty()) return;
    const double* row = field.data() + i * int64_t{rows} * cols;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) out[r * stride + c] = row[r * cols + c];
  }
  void free_models() {
    for (mjModel* m : models_) mj_deleteModel(m);
    models_.clear();
    this->sim_.models = nullptr;
  }

  physics::Model<double> model_;
  physics::MujocoBatch batch_;
  std::vector<mjData*> datas_;
  physics::EnvParams<double> params_;
  std::vector<mjModel*> models_;
};

}  // namespace

template <class Env>
std::unique_ptr<PhysicsRunner<Env>> make_cpu_runner(PhysicsSim sim,
                                                    const physics::Model<double>& model,
                                                    const mjModel* mj, int64_t n,
                                                    PhysicsLaunch launch) {
  switch (sim) {
    case PhysicsSim::kMyriad32:
      if (launch == PhysicsLaunch::kBlocked)
        return std::make_unique<BlockedEngineRunner<Env, float>>(model, n);
      return std::make_unique<EngineRunner<Env, float>>(model, n, launch);
    case PhysicsSim::kMyriad64:
      if (launch == PhysicsLaunch::kBlocked)
        return std::make_unique<BlockedEngineRunner<Env, double>>(model, n);
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
MYRIAD_TASK_ENVS(MYRIAD_X)
#undef MYRIAD_X

}  // namespace myriad::envs
