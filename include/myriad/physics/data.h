// physics::Data: the mutable state and every derived quantity of N envs, struct-of-arrays with
// the batch index first (qpos [N, nq], xpos [N, nbody, 3], ...). The field list is declared
// once, in for_each_field, which drives allocation, per-env views and tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "myriad/physics/model.h"

namespace myriad::physics {

// Pointers to one env's slice of every field (or, in Data, to row 0 of the batch).
template <class T>
struct EnvData {
  T *qpos, *qvel, *ctrl, *time;                 // state: [nq], [nv], [nu], [1]
  T* qacc;                                      // [nv] forward dynamics result
  T *xpos, *xquat, *xmat, *xipos, *ximat;       // [nbody, 3/4/9]
  T *xanchor, *xaxis;                           // [njnt, 3]
  T *geom_xpos, *geom_xmat;                     // [ngeom, 3/9]
  T *subtree_com, *cinert, *crb;                // [nbody, 3/10/10]
  T *cdof, *cdof_dot;                           // [nv, 6]
  T *cvel, *cacc, *cfrc;                        // [nbody, 6]
  T *qM, *qLD, *qLDiagInv;                      // [nv, nv] dense (tree entries), [nv]
  T *qfrc_bias, *qfrc_passive, *qfrc_actuator;  // [nv]
  T *qfrc_smooth, *qacc_int, *actuator_force;   // [nv], [nv], [nu]
  T *rk_qpos0, *rk_qvel0, *rk_qvel, *rk_qacc;   // RK4 scratch: [nq], [nv], [4, nv], [4, nv]
};

// f(name, pointer member, per-env size) for every field, in declaration order.
template <class T, class F>
void for_each_field(EnvData<T>& d, const Model<T>& m, F&& f) {
  const int64_t nb = m.nbody, nv = m.nv;
  f("qpos", d.qpos, m.nq);
  f("qvel", d.qvel, nv);
  f("ctrl", d.ctrl, m.nu);
  f("time", d.time, 1);
  f("qacc", d.qacc, nv);
  f("xpos", d.xpos, nb * 3);
  f("xquat", d.xquat, nb * 4);
  f("xmat", d.xmat, nb * 9);
  f("xipos", d.xipos, nb * 3);
  f("ximat", d.ximat, nb * 9);
  f("xanchor", d.xanchor, int64_t{m.njnt} * 3);
  f("xaxis", d.xaxis, int64_t{m.njnt} * 3);
  f("geom_xpos", d.geom_xpos, int64_t{m.ngeom} * 3);
  f("geom_xmat", d.geom_xmat, int64_t{m.ngeom} * 9);
  f("subtree_com", d.subtree_com, nb * 3);
  f("cinert", d.cinert, nb * 10);
  f("crb", d.crb, nb * 10);
  f("cdof", d.cdof, nv * 6);
  f("cdof_dot", d.cdof_dot, nv * 6);
  f("cvel", d.cvel, nb * 6);
  f("cacc", d.cacc, nb * 6);
  f("cfrc", d.cfrc, nb * 6);
  f("qM", d.qM, nv * nv);
  f("qLD", d.qLD, nv * nv);
  f("qLDiagInv", d.qLDiagInv, nv);
  f("qfrc_bias", d.qfrc_bias, nv);
  f("qfrc_passive", d.qfrc_passive, nv);
  f("qfrc_actuator", d.qfrc_actuator, nv);
  f("qfrc_smooth", d.qfrc_smooth, nv);
  f("qacc_int", d.qacc_int, nv);
  f("actuator_force", d.actuator_force, m.nu);
  f("rk_qpos0", d.rk_qpos0, m.nq);
  f("rk_qvel0", d.rk_qvel0, nv);
  f("rk_qvel", d.rk_qvel, 4 * nv);
  f("rk_qacc", d.rk_qacc, 4 * nv);
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
