// Import of a libmujoco model into physics::Model, and MJCF loading through libmujoco.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "myriad/physics/model.h"

struct mjModel_;
typedef struct mjModel_ mjModel;

namespace myriad::physics {

// Converts a compiled mjModel. A feature the engine does not support (contacts, joint limits,
// tendons, equality constraints, activation dynamics, non-joint transmissions, the implicit
// integrator, fluid forces, ...) throws std::invalid_argument naming the feature and the
// element (body/joint/actuator name); nothing is approximated silently.
Model<double> import_model(const mjModel* m);

// Refuses a compiled model whose numbers are not finite or out of Myriad's documented bounds
// (physics/model_numbers.h: lengths within +-1e6 m, sizes 0 to 1e6 m, masses 0 to 1e9 kg,
// inertias and armatures 0 to 1e15, coefficients such as damping, stiffness and friction 0 to
// 1e9, parameters such as gear, gains, ranges, solref and solimp within +-1e9, gravity within
// +-1e4 m/s^2, timestep 1e-6 to 1 s). Throws std::invalid_argument naming the MJCF element (kind
// and name, or index) and attribute, e.g. `body 'ball': pos = "nan 0 1" is not finite`.
// MjModelHandle, load_mjcf(_text), import_model and the mujoco backend all run it.
void check_model_numbers(const mjModel* m);

// Makes the keyframe named `key` (unnamed ones are "#<index>") the episodes' start: qpos_init and
// qvel_init. Throws std::invalid_argument naming the model's keyframes when there is no such key.
void use_keyframe(Model<double>& m, const std::string& key);

// Compiles an MJCF file with libmujoco and imports it. Errors name the file. The model's
// import_notes (e.g. a PGS model solved with Newton) go to stderr once per file and process.
Model<double> load_mjcf(const std::string& path);

// The same for MJCF text (a model with no files of its own, e.g. one embedded in the binary);
// `name` stands for the file in messages.
Model<double> load_mjcf_text(const std::string& name, const std::string& text);

// Owns an mjModel compiled from MJCF whose numbers passed check_model_numbers (throws
// std::invalid_argument with libmujoco's message or the check's, after the model's name).
class MjModelHandle {
 public:
  explicit MjModelHandle(const std::string& path);
  // Compiles MJCF text through a one-file virtual file system; `name` stands for the file.
  MjModelHandle(const std::string& name, const std::string& text);
  ~MjModelHandle();
  MjModelHandle(const MjModelHandle&) = delete;
  MjModelHandle& operator=(const MjModelHandle&) = delete;
  const mjModel* get() const { return m_; }
  // Its height fields' elevations (all of them, nhfielddata values in [0, 1]) replaced before
  // anything reads the model: a task's generated terrain. std::invalid_argument on a count that
  // is not the model's.
  void set_height_fields(const double* data, int count);

 private:
  // check_model_numbers, and a NaN libmujoco warned of and ignored (`nonfinite` finds it in
  // the MJCF text); frees the model before it throws.
  void check_numbers(const std::string& name, const std::vector<std::string>& warnings,
                     const std::function<std::string()>& nonfinite);
  mjModel* m_ = nullptr;
};

}  // namespace myriad::physics
