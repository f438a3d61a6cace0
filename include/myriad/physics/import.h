// Import of a libmujoco model into physics::Model, and MJCF loading through libmujoco.
#pragma once

#include <string>

#include "myriad/physics/model.h"

struct mjModel_;
typedef struct mjModel_ mjModel;

namespace myriad::physics {

// Converts a compiled mjModel. A feature the engine does not support (contacts, joint limits,
// tendons, equality constraints, activation dynamics, non-joint transmissions, the implicit
// integrator, fluid forces, ...) throws std::invalid_argument naming the feature and the
// element (body/joint/actuator name); nothing is approximated silently.
Model<double> import_model(const mjModel* m);

// Compiles an MJCF file with libmujoco and imports it. Errors name the file. The model's
// import_notes (e.g. a PGS model solved with Newton) go to stderr once per file and process.
Model<double> load_mjcf(const std::string& path);

// The same for MJCF text (a model with no files of its own, e.g. one embedded in the binary);
// `name` stands for the file in messages.
Model<double> load_mjcf_text(const std::string& name, const std::string& text);

// Owns an mjModel compiled from MJCF (throws std::invalid_argument with libmujoco's message).
class MjModelHandle {
 public:
  explicit MjModelHandle(const std::string& path);
  // Compiles MJCF text through a one-file virtual file system; `name` stands for the file.
  MjModelHandle(const std::string& name, const std::string& text);
  ~MjModelHandle();
  MjModelHandle(const MjModelHandle&) = delete;
  MjModelHandle& operator=(const MjModelHandle&) = delete;
  const mjModel* get() const { return m_; }

 private:
  mjModel* m_ = nullptr;
};

}  // namespace myriad::physics
