// ModelView: raw pointers into a Model's arrays, what the per-env kernels read. Its fields come
// from the lists in myriad/physics/model_fields.h.
#pragma once

#include <cstdint>

#include "myriad/physics/model.h"

namespace myriad::physics {

template <class T>
struct ModelView {
#define MYRIAD_X(name, init, from) int32_t name;
  MYRIAD_MODEL_INT_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, init, from) bool name;
  MYRIAD_MODEL_FLAGS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, init, from) T name;
  MYRIAD_MODEL_REAL_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, length, from) T name[length];
  MYRIAD_MODEL_REAL_VECTORS(MYRIAD_X)
#undef MYRIAD_X
  bool any_damping;  // some dof_damping > 0 and Euler integrates it implicitly (view_of)
#define MYRIAD_X(name, rows, cols, from) const int32_t *name;
  MYRIAD_MODEL_INT_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) const T *name;
  MYRIAD_MODEL_REAL_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) const uint8_t *name;
  MYRIAD_MODEL_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
};

// f(model array, view pointer) for every array of the model: what view_of and the device mirror
// (physics/cuda_batch.cuh) share.
template <class T, class F>
void for_each_array(const Model<T> &m, ModelView<T> &v, F &&f) {
#define MYRIAD_X(name, rows, cols, from) f(m.name, v.name);
  MYRIAD_MODEL_INT_ARRAYS(MYRIAD_X)
  MYRIAD_MODEL_REAL_ARRAYS(MYRIAD_X)
  MYRIAD_MODEL_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
}

// f(name, model array, rows * cols) for every array of the model: the size each should have.
template <class T, class F>
void for_each_array_shape(const Model<T> &m, F &&f) {
#define MYRIAD_X(name, rows, cols, from) f(#name, m.name, int64_t{m.rows} * (cols));
  MYRIAD_MODEL_INT_ARRAYS(MYRIAD_X)
  MYRIAD_MODEL_REAL_ARRAYS(MYRIAD_X)
  MYRIAD_MODEL_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
}

// The scalars of the view, with host pointers to the model's arrays.
template <class T>
ModelView<T> view_of(const Model<T> &m) {
  ModelView<T> v{};
#define MYRIAD_X(name, init, from) v.name = m.name;
  MYRIAD_MODEL_INT_SCALARS(MYRIAD_X)
  MYRIAD_MODEL_FLAGS(MYRIAD_X)
  MYRIAD_MODEL_REAL_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, length, from) \
  for (int k = 0; k < (length); ++k) v.name[k] = m.name[k];
  MYRIAD_MODEL_REAL_VECTORS(MYRIAD_X)
#undef MYRIAD_X
  v.any_damping = false;
  for (T b : m.dof_damping) v.any_damping = v.any_damping || (b > 0 && m.euler_damping);
  for_each_array(m, v, [](const auto &array, auto &pointer) { pointer = array.data(); });
  return v;
}

}  // namespace myriad::physics
