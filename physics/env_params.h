// Per-env model parameters: the model fields a task may randomize, stored in the batch beside
// the data ([N, size] per field), for the fields a task randomizes only. Every other field, and
// every env's view of a field no task randomizes, reads the one shared Model. An env's
// ModelView is the shared view with the randomized fields' pointers moved to its own rows
// (EnvParamsView::apply), so the engine's stages read per-env values without knowing it.
//
// The fields are declared once (MYRIAD_ENV_PARAM_FIELDS: what a task sets; MYRIAD_ENV_DERIVED_
// FIELDS: what MuJoCo's mj_setConst derives from them, physics/set_const.h); storage, views and
// casts are generated from the lists. The randomizer's field table (envs/randomization.cc) and
// the libmujoco runner's copy into each env's mjModel (envs/locomotion/runners_cpu.cc) name the
// fields by hand: a field added here is added there too.
#pragma once

#include <cstdint>
#include <vector>

#include "myriad/hd.h"
#include "physics/model_view.h"

// X(name, rows, cols): a Model field of shape [rows, cols] (rows a Model size).
// clang-format off
#define MYRIAD_ENV_PARAM_FIELDS(X)   \
  X(geom_friction, ngeom, 3)         /* slide, spin, roll */ \
  X(body_mass, nbody, 1)             /* set_const */ \
  X(body_ipos, nbody, 3)             /* centre of mass in the body frame; set_const */ \
  X(body_inertia, nbody, 3)          /* principal; set_const */ \
  X(dof_damping, nv, 1)              \
  X(dof_armature, nv, 1)             /* set_const */ \
  X(dof_frictionloss, nv, 1)         \
  X(jnt_stiffness, njnt, 1)          \
  X(actuator_gainprm, nu, 3)         \
  X(actuator_biasprm, nu, 3)         \
  X(actuator_forcerange, nu, 2)
#define MYRIAD_ENV_DERIVED_FIELDS(X) \
  X(body_subtreemass, nbody, 1)      \
  X(dof_invweight0, nv, 1)           \
  X(body_invweight0, nbody, 2)       \
  X(tendon_invweight0, ntendon, 1)
#define MYRIAD_ENV_ALL_PARAM_FIELDS(X) MYRIAD_ENV_PARAM_FIELDS(X) MYRIAD_ENV_DERIVED_FIELDS(X)
// clang-format on

namespace myriad::physics {

// Host storage of the per-env values: each field empty (every env reads the model's) or
// [n, rows * cols] row-major; gravity empty or [n, 3].
template <class T>
struct EnvParams {
  int64_t n = 0;
#define MYRIAD_X(name, rows, cols) std::vector<T> name;
  MYRIAD_ENV_ALL_PARAM_FIELDS(MYRIAD_X)
#undef MYRIAD_X
  std::vector<T> gravity;
  std::vector<T> meaninertia;  // [n] (derived, with the fields above: mj_setConst's stat)

  bool empty() const {
    bool none = gravity.empty() && meaninertia.empty();
#define MYRIAD_X(name, rows, cols) none = none && name.empty();
    MYRIAD_ENV_ALL_PARAM_FIELDS(MYRIAD_X)
#undef MYRIAD_X
    return none;
  }

  template <class U>
  EnvParams<U> cast() const {
    EnvParams<U> out;
    out.n = n;
#define MYRIAD_X(name, rows, cols) out.name.assign(name.begin(), name.end());
    MYRIAD_ENV_ALL_PARAM_FIELDS(MYRIAD_X)
#undef MYRIAD_X
    out.gravity.assign(gravity.begin(), gravity.end());
    out.meaninertia.assign(meaninertia.begin(), meaninertia.end());
    return out;
  }
};

// What the kernels read: a pointer per field (null: the model's) and its row length.
template <class T>
struct EnvParamsView {
#define MYRIAD_X(name, rows, cols) \
  const T* name = nullptr;         \
  int32_t name##_size = 0;
  MYRIAD_ENV_ALL_PARAM_FIELDS(MYRIAD_X)
#undef MYRIAD_X
  const T* gravity = nullptr;
  const T* meaninertia = nullptr;

  // view <- env i's model: the per-env fields' pointers at row i, gravity and meaninertia
  // copied, and any_damping recomputed as view_of computes it (Euler's implicit damping).
  MYRIAD_HD void apply(ModelView<T>& m, int64_t i) const {
#define MYRIAD_X(name, rows, cols) \
  if (name != nullptr) m.name = name + i * name##_size;
    MYRIAD_ENV_ALL_PARAM_FIELDS(MYRIAD_X)
#undef MYRIAD_X
    if (gravity != nullptr)
      for (int k = 0; k < 3; ++k) m.gravity[k] = gravity[3 * i + k];
    if (meaninertia != nullptr) m.meaninertia = meaninertia[i];
    if (dof_damping != nullptr) {
      bool any = false;
      for (int k = 0; k < m.nv; ++k) any = any || (m.dof_damping[k] > 0 && m.euler_damping);
      m.any_damping = any;
    }
  }
};

// Env i's model: a copy of m with env i's rows of p (p all null: m as it is). The staged
// launch's kernels (physics/launch.h) read it; per-env work inlines it, so the copy stays in
// registers where the stage reads a field.
template <class T>
MYRIAD_HD ModelView<T> env_model(const ModelView<T>& m, const EnvParamsView<T>& p, int64_t i) {
  ModelView<T> out = m;
  p.apply(out, i);
  return out;
}

// The view of host storage (pointers into p; p outlives the view). Row lengths come from m.
template <class T, class M>
EnvParamsView<T> params_view(const EnvParams<T>& p, const M& m) {
  EnvParamsView<T> v;
#define MYRIAD_X(name, rows, cols)                                  \
  if (!p.name.empty()) {                                            \
    v.name = p.name.data();                                         \
    v.name##_size = static_cast<int32_t>(int64_t{m.rows} * (cols)); \
  }
  MYRIAD_ENV_ALL_PARAM_FIELDS(MYRIAD_X)
#undef MYRIAD_X
  if (!p.gravity.empty()) v.gravity = p.gravity.data();
  if (!p.meaninertia.empty()) v.meaninertia = p.meaninertia.data();
  return v;
}

}  // namespace myriad::physics
