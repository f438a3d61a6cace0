// Model<double> -> Model<U>: every real converted, the rest copied (myriad/physics/model_fields.h
// lists them).
#include "myriad/physics/model.h"

namespace myriad::physics {
namespace {

template <class U, class T>
std::vector<U> conv(const std::vector<T>& v) {
  return std::vector<U>(v.begin(), v.end());
}

}  // namespace

template <class T>
template <class U>
Model<U> Model<T>::cast() const {
  Model<U> r;
#define MYRIAD_X(name, init, from) r.name = name;
  MYRIAD_MODEL_INT_SCALARS(MYRIAD_X)
  MYRIAD_MODEL_FLAGS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, init, from) r.name = static_cast<U>(name);
  MYRIAD_MODEL_REAL_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, length, from) \
  for (int k = 0; k < (length); ++k) r.name[k] = static_cast<U>(name[k]);
  MYRIAD_MODEL_REAL_VECTORS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) r.name = name;
  MYRIAD_MODEL_INT_ARRAYS(MYRIAD_X)
  MYRIAD_MODEL_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) r.name = conv<U>(name);
  MYRIAD_MODEL_REAL_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, adr) r.name = name;
  MYRIAD_MODEL_NAMES(MYRIAD_X)
#undef MYRIAD_X
  r.import_notes = import_notes;
  r.key_names = key_names;
  r.key_qpos = key_qpos;
  r.key_qvel = key_qvel;
  return r;
}

template Model<float> Model<double>::cast<float>() const;
template Model<double> Model<double>::cast<double>() const;

}  // namespace myriad::physics
