// physics::Data: the mutable state and every derived quantity of N envs, struct-of-arrays with
// the batch index first (qpos [N, nq], xpos [N, nbody, 3], ...). The field list is declared
// once, in MYRIAD_DATA_FIELDS, which drives EnvData, for_each_field, allocation, per-env
// views, the device copy and tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "myriad/physics/model.h"

namespace myriad::physics {

// Room for one collision::Contact<T> (float or double) in a contact field, in scalars.
constexpr int64_t kContactWords = 32;

// The fields, in order: X(name, size), size per env in terms of the model's sizes nq, nv, nu,
// nbody, njnt, ngeom, ntendon, ncon_max, nefc_max, nsolver_scratch. Counts (ncon, nefc,
// solver_niter) are stored as scalars of type T.
// clang-format off
#define MYRIAD_DATA_FIELDS(X)                                       \
  /* state */                                                       \
  X(qpos, nq)                                                       \
  X(qvel, nv)                                                       \
  X(ctrl, nu)                                                       \
  X(time, 1)                                                        \
  X(qacc, nv)             /* forward dynamics result */             \
  X(xpos, nbody * 3)                                                \
  X(xquat, nbody * 4)                                               \
  X(xmat, nbody * 9)                                                \
  X(xipos, nbody * 3)                                               \
  X(ximat, nbody * 9)                                               \
  X(xanchor, njnt * 3)                                              \
  X(xaxis, njnt * 3)                                                \
  X(geom_xpos, ngeom * 3)                                           \
  X(geom_xmat, ngeom * 9)                                           \
  X(subtree_com, nbody * 3)                                         \
  X(cinert, nbody * 10)                                             \
  X(crb, nbody * 10)                                                \
  X(cdof, nv * 6)                                                   \
  X(cdof_dot, nv * 6)                                               \
  X(cvel, nbody * 6)                                                \
  X(cacc, nbody * 6)                                                \
  X(cfrc, nbody * 6)                                                \
  X(qM, nv * nv)          /* dense, tree entries only */            \
  X(qLD, nv * nv)                                                   \
  X(qLDiagInv, nv)                                                  \
  X(qfrc_bias, nv)                                                  \
  X(qfrc_passive, nv)                                               \
  X(qfrc_actuator, nv)                                              \
  X(qfrc_smooth, nv)                                                \
  X(qacc_int, nv)                                                   \
  X(actuator_force, nu)                                             \
  X(ten_length, ntendon)  /* fixed tendons */                       \
  X(ten_J, ntendon * nv)                                            \
  X(ten_velocity, ntendon)                                          \
  /* constraints (physics/constraint/) */                           \
  X(ncon, 1)              /* contacts this step */                  \
  X(contact, ncon_max * kContactWords) /* collision::Contact<T> */  \
  X(nefc, 1)              /* constraint rows this step */           \
  X(efc_type, nefc_max)   /* constraint::RowType */                 \
  X(efc_id, nefc_max)     /* dof, joint or contact of the row */    \
  X(efc_J, nefc_max * nv)                                           \
  X(efc_pos, nefc_max)                                              \
  X(efc_margin, nefc_max)                                           \
  X(efc_frictionloss, nefc_max)                                     \
  X(efc_KBIP, nefc_max * 4) /* stiffness, damping, impedance, d' */ \
  X(efc_R, nefc_max)                                                \
  X(efc_D, nefc_max)                                                \
  X(efc_aref, nefc_max)                                             \
  X(efc_force, nefc_max)                                            \
  X(qacc_smooth, nv)                                                \
  X(qacc_warmstart, nv)                                             \
  X(qfrc_constraint, nv)                                            \
  X(cfrc_ext, nbody * 6)  /* constraint force per body (com frame) */ \
  X(solver_niter, 1)                                                \
  X(solver_scratch, nsolver_scratch)                                \
  /* RK4 scratch */                                                 \
  X(rk_qpos0, nq)                                                   \
  X(rk_qvel0, nv)                                                   \
  X(rk_qvel, 4 * nv)                                                \
  X(rk_qacc, 4 * nv)
// clang-format on

// Pointers to one env's slice of every field (or, in Data, to row 0 of the batch).
template <class T>
struct EnvData {
#define MYRIAD_X(name, size) T* name;
  MYRIAD_DATA_FIELDS(MYRIAD_X)
#undef MYRIAD_X
};

// f(name, pointer member, per-env size) for every field, in declaration order.
template <class T, class F>
void for_each_field(EnvData<T>& d, const Model<T>& m, F&& f) {
  const int64_t nq = m.nq, nv = m.nv, nu = m.nu, nbody = m.nbody, njnt = m.njnt, ngeom = m.ngeom,
                ntendon = m.ntendon;
  const int64_t ncon_max = m.ncon_max, nefc_max = m.nefc_max, nsolver_scratch = m.nsolver_scratch;
#define MYRIAD_X(name, size) f(#name, d.name, size);
  MYRIAD_DATA_FIELDS(MYRIAD_X)
#undef MYRIAD_X
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
