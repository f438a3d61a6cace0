// The per-env physics of an MJCF env, behind one signature:
// "myriad" (the batched engine, float32 or float64) or "mujoco" (libmujoco's mj_step).
// Every method acts on env i only, so the env can run them inside its own parallel loop.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "myriad/physics/model.h"

namespace myriad::envs {

class PhysicsBackend {
 public:
  virtual ~PhysicsBackend() = default;
  virtual const physics::Model<double>& model() const = 0;
  virtual void set_ctrl(int64_t i, const float* ctrl) = 0;  // [nu]
  virtual void step(int64_t i, int substeps) = 0;
  // State of env i as float64: qpos [nq], qvel [nv], time.
  virtual void get(int64_t i, double* qpos, double* qvel, double* time) const = 0;
  virtual void set(int64_t i, const double* qpos, const double* qvel, double time) = 0;
  // [qpos, qvel] of env i as float32 (the observation), without temporaries.
  virtual void observe(int64_t i, float* obs) const = 0;
};

// physics: "myriad" or "mujoco"; precision 32 or 64 (myriad only). Unknown names are errors
// listing the valid ones.
std::unique_ptr<PhysicsBackend> make_physics(const std::string& xml, int64_t num_envs,
                                             const std::string& physics, int precision);

}  // namespace myriad::envs
