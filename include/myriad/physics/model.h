// physics::Model: an immutable, struct-of-arrays copy of the parts of an mjModel that the
// supported dynamics and the collision stage use, in scalar T (double for validation, float for
// speed). Names and shapes follow mjmodel.h so the two can be read side by side. The fields are
// declared once, in myriad/physics/model_fields.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "myriad/physics/model_fields.h"

namespace myriad::physics {

enum JointType : int32_t { kFree = 0, kBall = 1, kSlide = 2, kHinge = 3 };
enum Integrator : int32_t { kEuler = 0, kRK4 = 1, kImplicitFast = 2 };
enum GainType : int32_t { kGainFixed = 0, kGainAffine = 1 };
enum BiasType : int32_t { kBiasNone = 0, kBiasAffine = 1 };
enum TrnType : int32_t { kTrnJoint = 0, kTrnTendon = 3 };  // mjtTrn values

template <class T>
struct Model {
#define MYRIAD_X(name, init, from) int32_t name = init;
  MYRIAD_MODEL_INT_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, init, from) bool name = init;
  MYRIAD_MODEL_FLAGS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, init, from) T name = init;
  MYRIAD_MODEL_REAL_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, length, from) T name[length] = {};
  MYRIAD_MODEL_REAL_VECTORS(MYRIAD_X)
#undef MYRIAD_X
  // Arrays [rows * cols], row-major.
#define MYRIAD_X(name, rows, cols, from) std::vector<int32_t> name;
  MYRIAD_MODEL_INT_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) std::vector<T> name;
  MYRIAD_MODEL_REAL_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) std::vector<uint8_t> name;
  MYRIAD_MODEL_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, adr) std::vector<std::string> name;
  MYRIAD_MODEL_NAMES(MYRIAD_X)
#undef MYRIAD_X
  // What the importer changed in the model's meaning, to be said once (e.g. a PGS model solved
  // with Newton).
  std::vector<std::string> import_notes;
  // The model's keyframes (host only): names, and each key's qpos [nq] and qvel [nv] in a row.
  // use_keyframe (myriad/physics/import.h) makes one the episodes' start (qpos_init, qvel_init).
  std::vector<std::string> key_names;
  std::vector<double> key_qpos, key_qvel;

  template <class U>
  Model<U> cast() const;
};

}  // namespace myriad::physics
