#include "physics/mujoco_batch.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "myriad/device.h"
#include "myriad/physics/import.h"
#include "myriad/physics/mujoco_messages.h"

namespace myriad::physics {

void MujocoBatch::ModelDeleter::operator()(mjModel* m) const { mj_deleteModel(m); }
void MujocoBatch::DataDeleter::operator()(mjData* d) const { mj_deleteData(d); }

MujocoBatch::MujocoBatch(const std::string& xml_path, int64_t num_envs) {
  if (num_envs < 1) {
    throw std::invalid_argument("MujocoBatch: num_envs must be at least 1 (got " +
                                std::to_string(num_envs) + ") for '" + xml_path + "'");
  }
  // Compiled and checked as every model is (MjModelHandle: libmujoco's errors, model numbers).
  const MjModelHandle handle(xml_path);
  model_.reset(mj_copyModel(nullptr, handle.get()));
  if (!model_) throw std::runtime_error("MujocoBatch: mj_copyModel failed for '" + xml_path + "'");
  data_.reserve(static_cast<size_t>(num_envs));
  for (int64_t i = 0; i < num_envs; ++i) {
    data_.emplace_back(mj_makeData(model_.get()));
    if (!data_.back()) {
      throw std::runtime_error("MujocoBatch: mj_makeData failed for '" + xml_path + "'");
    }
  }
}

MujocoBatch::MujocoBatch(const mjModel* model, int64_t num_envs) {
  if (num_envs < 1)
    throw std::invalid_argument("MujocoBatch: num_envs must be at least 1 (got " +
                                std::to_string(num_envs) + ")");
  route_mujoco_messages();
  check_model_numbers(model);
  model_.reset(mj_copyModel(nullptr, model));
  if (!model_) throw std::runtime_error("MujocoBatch: mj_copyModel failed");
  data_.reserve(static_cast<size_t>(num_envs));
  for (int64_t i = 0; i < num_envs; ++i) {
    data_.emplace_back(mj_makeData(model_.get()));
    if (!data_.back()) throw std::runtime_error("MujocoBatch: mj_makeData failed");
  }
}

MujocoBatch::~MujocoBatch() = default;
MujocoBatch::MujocoBatch(MujocoBatch&&) noexcept = default;
MujocoBatch& MujocoBatch::operator=(MujocoBatch&&) noexcept = default;

void MujocoBatch::step(int64_t substeps) {
  if (substeps <= 0) return;
  const mjModel* m = model_.get();
  const int64_t n = num_envs();
#pragma omp parallel for schedule(static) num_threads(cpu_threads())
  for (int64_t i = 0; i < n; ++i) {
    mjData* d = data_[static_cast<size_t>(i)].get();
    for (int64_t s = 0; s < substeps; ++s) mj_step(m, d);
  }
}

void MujocoBatch::forward() {
  const mjModel* m = model_.get();
  const int64_t n = num_envs();
#pragma omp parallel for schedule(static) num_threads(cpu_threads())
  for (int64_t i = 0; i < n; ++i) mj_forward(m, data_[static_cast<size_t>(i)].get());
}

void MujocoBatch::get_state(double* qpos, double* qvel, double* time) const {
  const size_t nq = static_cast<size_t>(model_->nq);
  const size_t nv = static_cast<size_t>(model_->nv);
  for (size_t i = 0; i < data_.size(); ++i) {
    const mjData* d = data_[i].get();
    if (nq > 0) std::memcpy(qpos + i * nq, d->qpos, nq * sizeof(double));
    if (nv > 0) std::memcpy(qvel + i * nv, d->qvel, nv * sizeof(double));
    time[i] = d->time;
  }
}

void MujocoBatch::set_state(const double* qpos, const double* qvel, const double* time) {
  const size_t nq = static_cast<size_t>(model_->nq);
  const size_t nv = static_cast<size_t>(model_->nv);
  for (size_t i = 0; i < data_.size(); ++i) {
    mjData* d = data_[i].get();
    if (nq > 0) std::memcpy(d->qpos, qpos + i * nq, nq * sizeof(double));
    if (nv > 0) std::memcpy(d->qvel, qvel + i * nv, nv * sizeof(double));
    d->time = time[i];
  }
}

void MujocoBatch::set_ctrl(const double* ctrl) {
  const size_t nu = static_cast<size_t>(model_->nu);
  if (nu == 0) return;
  for (size_t i = 0; i < data_.size(); ++i) {
    std::memcpy(data_[i]->ctrl, ctrl + i * nu, nu * sizeof(double));
  }
}

void MujocoBatch::get_qacc(double* qacc) const {
  const size_t nv = static_cast<size_t>(model_->nv);
  if (nv == 0) return;
  for (size_t i = 0; i < data_.size(); ++i) {
    std::memcpy(qacc + i * nv, data_[i]->qacc, nv * sizeof(double));
  }
}

mjData* MujocoBatch::data(int64_t i) {
  if (i < 0 || i >= num_envs()) {
    throw std::out_of_range("MujocoBatch::data: index " + std::to_string(i) + " outside [0, " +
                            std::to_string(num_envs()) + ")");
  }
  return data_[static_cast<size_t>(i)].get();
}

const mjData* MujocoBatch::data(int64_t i) const { return const_cast<MujocoBatch*>(this)->data(i); }

void MujocoBatch::reset() {
  const mjModel* m = model_.get();
  for (auto& d : data_) mj_resetData(m, d.get());
}

}  // namespace myriad::physics
