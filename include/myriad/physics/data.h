// physics::Data: the mutable state and every derived quantity of N envs, struct-of-arrays with
// the batch index first (qpos [N, nq], xpos [N, nbody, 3], ...). The field list is declared
// once, in MYRIAD_DATA_FIELDS, which drives EnvData, for_each_field, allocation, per-env
// views, the device copy and tests.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "myriad/hd.h"
#include "myriad/physics/model.h"

namespace myriad::physics {

// Room for one collision::Contact<T> (float or double) in a contact field, in scalars.
constexpr int64_t kContactWords = 32;

// The fields, in order: X(name, size, kind), size per env in terms of the model's sizes nq, nv,
// nu, nbody, njnt, ngeom, ntendon, ncon_max, ncon_scratch, ncandidate, nefc_max, nsolver_scratch,
// nsensordata. Counts (ncon, nefc, solver_niter, pair_ncon) are stored as scalars of type T. kind
// `env`: the state, and what an env may read (libmujoco's mjData has each under the same name and
// layout, envs/mujoco_sim.h); with the state they are what a physics env's snapshot holds. kind
// `internal`: the engine's own.
// clang-format off
#define MYRIAD_DATA_FIELDS(X)                                               \
  /* state */                                                               \
  X(qpos, nq, env)                                                          \
  X(qvel, nv, env)                                                          \
  X(ctrl, nu, env)                                                          \
  X(time, 1, env)                                                           \
  X(qacc, nv, env)             /* forward dynamics result */                \
  X(xpos, nbody * 3, env)                                                   \
  X(xquat, nbody * 4, env)                                                  \
  X(xmat, nbody * 9, env)                                                   \
  X(xipos, nbody * 3, env)                                                  \
  X(ximat, nbody * 9, env)                                                  \
  X(xanchor, njnt * 3, env)                                                 \
  X(xaxis, njnt * 3, env)                                                   \
  X(geom_xpos, ngeom * 3, env)                                              \
  X(geom_xmat, ngeom * 9, env)                                              \
  X(subtree_com, nbody * 3, env)                                            \
  X(cinert, nbody * 10, env)                                                \
  X(crb, nbody * 10, internal)                                              \
  X(cdof, nv * 6, internal)                                                 \
  X(cdof_dot, nv * 6, internal)                                             \
  X(cvel, nbody * 6, env)                                                   \
  X(cacc, nbody * 6, env)                                                   \
  X(cfrc, nbody * 6, internal)                                              \
  X(qM, nv * nv, internal)          /* dense, tree entries only */          \
  X(qLD, nv * nv, internal)                                                 \
  X(qLDiagInv, nv, internal)                                                \
  X(qfrc_bias, nv, env)                                                     \
  X(qfrc_passive, nv, env)                                                  \
  X(qfrc_actuator, nv, env)                                                 \
  X(qfrc_smooth, nv, internal)                                              \
  X(qacc_int, nv, internal)                                                 \
  X(actuator_force, nu, env)                                                \
  X(ten_length, ntendon, env)  /* fixed tendons */                          \
  X(ten_J, ntendon * nv, internal)                                          \
  X(ten_velocity, ntendon, env)                                             \
  /* constraints (physics/constraint/) */                                   \
  X(ncon, 1, internal)              /* contacts this step */                \
  X(contact, (ncon_max + ncon_scratch) * kContactWords, internal) /* collision::Contact<T> */\
  X(pair_ncon, ncandidate, internal) /* the staged collision's contacts per pair */\
  X(nefc, 1, internal)              /* constraint rows this step */         \
  X(efc_type, nefc_max, internal)   /* constraint::RowType */               \
  X(efc_id, nefc_max, internal)     /* dof, joint or contact of the row */  \
  X(efc_J, nefc_max * nv, internal)                                         \
  X(efc_J_colmask, nefc_max * 4, internal) /* a row's columns: 4 x 16 bits */\
  X(efc_pos, nefc_max, internal)                                            \
  X(efc_margin, nefc_max, internal)                                         \
  X(efc_frictionloss, nefc_max, internal)                                   \
  X(efc_KBIP, nefc_max * 4, internal) /* stiffness, damping, impedance, d' */\
  X(efc_R, nefc_max, internal)                                              \
  X(efc_D, nefc_max, internal)                                              \
  X(efc_aref, nefc_max, internal)                                           \
  X(efc_force, nefc_max, internal)                                          \
  X(qacc_smooth, nv, internal)                                              \
  X(qacc_warmstart, nv, env)                                                \
  X(qfrc_constraint, nv, env)                                               \
  X(cfrc_ext, nbody * 6, env)  /* constraint force per body (com frame) */  \
  /* sensors (physics/sensor.h) */                                          \
  X(sensordata, nsensordata, env)                                           \
  X(cfrc_int, nbody * 6, internal)  /* mj_rnePostConstraint's */            \
  X(subtree_linvel, nbody * 3, internal)                                    \
  X(subtree_angmom, nbody * 3, internal)                                    \
  X(solver_niter, 1, internal)                                              \
  X(solver_scratch, nsolver_scratch, internal)                              \
  /* RK4 scratch */                                                         \
  X(rk_qpos0, nq, internal)                                                 \
  X(rk_qvel0, nv, internal)                                                 \
  X(rk_qvel, 4 * nv, internal)                                              \
  X(rk_qacc, 4 * nv, internal)                                             \
  X(rk_sensordata, nsensordata, internal) /* the step's own, kept over RK4 */
// clang-format on

// A field of one env in a blocked batch: element k at p[k * S] (S envs side by side).
template <class T, int S>
struct Strided {
  T* p;
  MYRIAD_HD T& operator[](int64_t k) const { return p[k * S]; }
  MYRIAD_HD Strided operator+(int64_t k) const { return {p + k * S}; }
};

// The fields a blocked batch keeps contiguous per env: the constraint half's, whose sizes and
// work vary per env, and the geoms' poses, which the collision kernels read a thread per (env,
// candidate pair): the threads of a warp read one or a few envs' poses, which are then close
// together, where in blocks they would be 32 envs apart (and each pair function would copy its
// two poses out of the blocks: 40 more registers for box-box in float64).
constexpr bool stays_per_env(const char* name) {
  const char* const kPerEnv[] = {
      "ncon",      "contact",       "pair_ncon", "nefc",       "efc_type",         "efc_id",
      "efc_J",     "efc_J_colmask", "efc_pos",   "efc_margin", "efc_frictionloss", "efc_KBIP",
      "efc_R",     "efc_D",         "efc_aref",  "efc_force",  "solver_niter",     "solver_scratch",
      "geom_xpos", "geom_xmat"};
  for (const char* f : kPerEnv) {
    int i = 0;
    while (f[i] && f[i] == name[i]) ++i;
    if (f[i] == name[i]) return true;
  }
  return false;
}

template <class T, int S>
using FieldPtr = std::conditional_t<S == 1, T*, Strided<T, S>>;

// Pointers to one env's slice of every field (or, in Data, to row 0 of the batch); S > 1: the
// env's fields in a blocked batch of S envs, but for the ones that stay per env.
template <class T, int S = 1>
struct EnvData {
#define MYRIAD_X(name, size, kind) FieldPtr<T, stays_per_env(#name) ? 1 : S> name;
  MYRIAD_DATA_FIELDS(MYRIAD_X)
#undef MYRIAD_X
};

// f(name, pointer member, per-env size) for every field, in declaration order.
template <class T, class F>
void for_each_field(EnvData<T>& d, const Model<T>& m, F&& f) {
  const int64_t nq = m.nq, nv = m.nv, nu = m.nu, nbody = m.nbody, njnt = m.njnt, ngeom = m.ngeom,
                ntendon = m.ntendon;
  const int64_t ncon_max = m.ncon_max, nefc_max = m.nefc_max, nsolver_scratch = m.nsolver_scratch,
                nsensordata = m.nsensordata, ncon_scratch = m.ncon_scratch,
                ncandidate = m.ncandidate;
#define MYRIAD_X(name, size, kind) f(#name, d.name, size);
  MYRIAD_DATA_FIELDS(MYRIAD_X)
#undef MYRIAD_X
}

// f(pointer member, per-env size) for the fields of kind `env`, in order. M: a Model or a
// ModelView (anything with the size members). In a blocked batch's env (S > 1) a member is a
// Strided field.
template <class T, int S, class M, class F>
MYRIAD_HD void for_each_env_field(EnvData<T, S>& d, const M& m, F&& f) {
  const int64_t nq = m.nq, nv = m.nv, nu = m.nu, nbody = m.nbody, njnt = m.njnt, ngeom = m.ngeom,
                ntendon = m.ntendon;
  const int64_t ncon_max = m.ncon_max, nefc_max = m.nefc_max, nsolver_scratch = m.nsolver_scratch,
                nsensordata = m.nsensordata, ncon_scratch = m.ncon_scratch,
                ncandidate = m.ncandidate;
  (void)ncon_max, (void)nefc_max, (void)nsolver_scratch, (void)nsensordata, (void)ncon_scratch,
      (void)ncandidate;
#define MYRIAD_ENV_FIELD_env(name, size) f(d.name, size);
#define MYRIAD_ENV_FIELD_internal(name, size)
#define MYRIAD_X(name, size, kind) MYRIAD_ENV_FIELD_##kind(name, size)
  MYRIAD_DATA_FIELDS(MYRIAD_X)
#undef MYRIAD_X
#undef MYRIAD_ENV_FIELD_internal
#undef MYRIAD_ENV_FIELD_env
}

// The batch: one host array [N, size] per field.
template <class T>
class Data {
 public:
  Data(const Model<T>& m, int64_t n) : n_(n) {
    EnvData<T> probe{};
    for_each_field(probe, m, [&](const char*, T*&, int64_t size) {
      sizes_.push_back(size);
      arrays_.emplace_back(static_cast<size_t>(size * n), T(0));
    });
  }
  int64_t num_envs() const { return n_; }

  // Views of env i (pointers into the batch arrays).
  EnvData<T> env(const Model<T>& m, int64_t i) {
    EnvData<T> d{};
    size_t k = 0;
    for_each_field(d, m, [&](const char*, T*& p, int64_t size) {
      p = arrays_[k].data() + i * size;
      ++k;
    });
    return d;
  }

  // The whole batch array of a field by name ([N, size]); nullptr if unknown.
  T* field(const Model<T>& m, const char* name, int64_t* size = nullptr) {
    EnvData<T> d = env(m, 0);
    T* found = nullptr;
    for_each_field(d, m, [&](const char* fname, T*& p, int64_t s) {
      if (std::string(fname) == name) {
        found = p;
        if (size) *size = s;
      }
    });
    return found;
  }

 private:
  int64_t n_;
  std::vector<int64_t> sizes_;
  std::vector<std::vector<T>> arrays_;
};

}  // namespace myriad::physics
