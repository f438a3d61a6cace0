// Reference physics backend: libmujoco itself, stepped over a batch of environments on the CPU
// (as EnvPool does). One mjModel is shared read-only by N mjData; step() and forward() run the
// environments in parallel with OpenMP when the translation unit is built with it.
//
// Batch arrays are row-major host arrays: qpos [N, nq], qvel [N, nv], ctrl [N, nu], qacc [N, nv],
// time [N].
#pragma once

#include <mujoco/mujoco.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace myriad::physics {

class MujocoBatch {
 public:
  // Loads the MJCF file and makes num_envs fresh mjData (state at qpos0, as mj_resetData leaves
  // it). Throws std::invalid_argument naming the file, with libmujoco's error message, when the
  // model does not load, and std::invalid_argument when num_envs < 1.
  MujocoBatch(const std::string& xml_path, int64_t num_envs);
  // A copy of an already compiled model (mj_copyModel), with num_envs fresh mjData.
  MujocoBatch(const mjModel* model, int64_t num_envs);
  ~MujocoBatch();  // mj_deleteData on every env, then mj_deleteModel

  MujocoBatch(const MujocoBatch&) = delete;
  MujocoBatch& operator=(const MujocoBatch&) = delete;
  MujocoBatch(MujocoBatch&&) noexcept;
  MujocoBatch& operator=(MujocoBatch&&) noexcept;

  const mjModel* model() const { return model_.get(); }
  int64_t num_envs() const { return static_cast<int64_t>(data_.size()); }

  // mj_step `substeps` times on every env (substeps <= 0 does nothing).
  void step(int64_t substeps = 1);
  // mj_forward on every env.
  void forward();

  // Copies the batch state out / in. set_state does not call mj_forward: derived quantities stay
  // stale until the next forward() or step().
  void get_state(double* qpos, double* qvel, double* time) const;
  void set_state(const double* qpos, const double* qvel, const double* time);
  void set_ctrl(const double* ctrl);  // [N, nu]
  void get_qacc(double* qacc) const;  // [N, nv]; valid after forward()

  // The i-th env's data, for callers that want xpos, qM and so on. Throws std::out_of_range.
  mjData* data(int64_t i);
  const mjData* data(int64_t i) const;

  // mj_resetData on every env.
  void reset();

 private:
  struct ModelDeleter {
    void operator()(mjModel* m) const;
  };
  struct DataDeleter {
    void operator()(mjData* d) const;
  };

  std::unique_ptr<mjModel, ModelDeleter> model_;
  // Declared after model_, so destroyed before it.
  std::vector<std::unique_ptr<mjData, DataDeleter>> data_;
};

}  // namespace myriad::physics
