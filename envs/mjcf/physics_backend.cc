#include "envs/mjcf/physics_backend.h"

#include <mujoco/mujoco.h>

#include <cstdint>
#include <stdexcept>

#include "myriad/physics/data.h"
#include "myriad/physics/import.h"
#include "physics/mujoco_batch.h"
#include "physics/pipeline.h"

namespace myriad::envs {
namespace {

template <class T>
class MyriadPhysics final : public PhysicsBackend {
 public:
  MyriadPhysics(physics::Model<double> model, int64_t n)
      : model64_(std::move(model)),
        model_(model64_.cast<T>()),
        view_(physics::view_of(model_)),
        data_(model_, n) {
    for (int64_t i = 0; i < n; ++i) envs_.push_back(data_.env(model_, i));
  }
  const physics::Model<double>& model() const override { return model64_; }
  void set_ctrl(int64_t i, const float* ctrl) override {
    for (int u = 0; u < model_.nu; ++u) envs_[i].ctrl[u] = static_cast<T>(ctrl[u]);
  }
  void step(int64_t i, int substeps) override {
    for (int s = 0; s < substeps; ++s) physics::step(view_, envs_[i]);
  }
  void get(int64_t i, double* qpos, double* qvel, double* time) const override {
    const auto& e = envs_[i];
    for (int k = 0; k < model_.nq; ++k) qpos[k] = e.qpos[k];
    for (int k = 0; k < model_.nv; ++k) qvel[k] = e.qvel[k];
    *time = e.time[0];
  }
  void set(int64_t i, const double* qpos, const double* qvel, double time) override {
    auto& e = envs_[i];
    for (int k = 0; k < model_.nq; ++k) e.qpos[k] = static_cast<T>(qpos[k]);
    for (int k = 0; k < model_.nv; ++k) e.qvel[k] = static_cast<T>(qvel[k]);
    e.time[0] = static_cast<T>(time);
    // A new state starts the constraint solver cold, as mj_resetData does.
    for (int k = 0; k < model_.nv; ++k) e.qacc_warmstart[k] = 0;
  }
  void observe(int64_t i, float* obs) const override {
    const auto& e = envs_[i];
    for (int k = 0; k < model_.nq; ++k) obs[k] = static_cast<float>(e.qpos[k]);
    for (int k = 0; k < model_.nv; ++k) obs[model_.nq + k] = static_cast<float>(e.qvel[k]);
  }

 private:
  physics::Model<double> model64_;
  physics::Model<T> model_;
  physics::ModelView<T> view_;
  physics::Data<T> data_;
  std::vector<physics::EnvData<T>> envs_;
};

class MujocoPhysics final : public PhysicsBackend {
 public:
  MujocoPhysics(const std::string& xml, int64_t n)
      : batch_(xml, n), model64_(physics::import_model(batch_.model())) {}
  const physics::Model<double>& model() const override { return model64_; }
  void set_ctrl(int64_t i, const float* ctrl) override {
    mjData* d = batch_.data(i);
    for (int u = 0; u < model64_.nu; ++u) d->ctrl[u] = ctrl[u];
  }
  void step(int64_t i, int substeps) override {
    for (int s = 0; s < substeps; ++s) mj_step(batch_.model(), batch_.data(i));
  }
  void get(int64_t i, double* qpos, double* qvel, double* time) const override {
    const mjData* d = batch_.data(i);
    std::copy(d->qpos, d->qpos + model64_.nq, qpos);
    std::copy(d->qvel, d->qvel + model64_.nv, qvel);
    *time = d->time;
  }
  void set(int64_t i, const double* qpos, const double* qvel, double time) override {
    mjData* d = batch_.data(i);
    std::copy(qpos, qpos + model64_.nq, d->qpos);
    std::copy(qvel, qvel + model64_.nv, d->qvel);
    d->time = time;
    std::fill(d->qacc_warmstart, d->qacc_warmstart + model64_.nv, 0.0);
  }
  void observe(int64_t i, float* obs) const override {
    const mjData* d = batch_.data(i);
    for (int k = 0; k < model64_.nq; ++k) obs[k] = static_cast<float>(d->qpos[k]);
    for (int k = 0; k < model64_.nv; ++k) obs[model64_.nq + k] = static_cast<float>(d->qvel[k]);
  }

 private:
  physics::MujocoBatch batch_;
  physics::Model<double> model64_;
};

}  // namespace

std::unique_ptr<PhysicsBackend> make_physics(const std::string& xml, int64_t n,
                                             const std::string& physics, int precision) {
  if (physics == "mujoco") return std::make_unique<MujocoPhysics>(xml, n);
  if (physics != "myriad")
    throw std::invalid_argument("unknown physics '" + physics + "' (valid: myriad, mujoco)");
  if (precision != 32 && precision != 64)
    throw std::invalid_argument("precision must be 32 or 64, got " + std::to_string(precision));
  physics::Model<double> model = physics::load_mjcf(xml);
  if (precision == 64) return std::make_unique<MyriadPhysics<double>>(std::move(model), n);
  return std::make_unique<MyriadPhysics<float>>(std::move(model), n);
}

}  // namespace myriad::envs
