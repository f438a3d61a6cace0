// Constraint rows for one env as libmujoco 2.2.2 builds them (engine_core_constraint.c):
// mj_makeConstraint (rows, Jacobians, positions, margins), mj_makeImpedance (impedance,
// stiffness, damping, R and D) and mj_referenceConstraint (reference acceleration). Rows come in
// MuJoCo's order: friction loss (dofs, then tendons), limits (joints, then tendons), contacts.
// Supported: hinge and slide limits, fixed tendons' limits and friction loss, dof friction loss,
// contacts with condim 1, 3, 4 (torsional friction) or 6 (and rolling) on the pyramidal or the
// elliptic cone; the importer refuses the rest by name (physics/import.cc). MYRIAD_HD; templated
// on the scalar.
#pragma once

#include <cmath>

#include "myriad/physics/data.h"
#include "physics/collision/contact.h"
#include "physics/constraint/newton.h"
#include "physics/model_view.h"

namespace myriad::physics::constraint {

using std::fabs;
using std::pow;

// mjtDisableBit values the constraint stage reads.
constexpr int32_t kDisableConstraint = 1 << 0;
constexpr int32_t kDisableEquality = 1 << 1;
constexpr int32_t kDisableFrictionLoss = 1 << 2;
constexpr int32_t kDisableLimit = 1 << 3;
constexpr int32_t kDisableContact = 1 << 4;
constexpr int32_t kDisableRefSafe = 1 << 12;
// mjMINIMP, mjMAXIMP: the impedance's clamp.
constexpr double kMinImp = 0.0001;
constexpr double kMaxImp = 0.9999;

// mjtCone: opt.cone's values.
constexpr int32_t kConePyramidal = 0;
constexpr int32_t kConeElliptic = 1;

// Rows of one contact: 1 for condim 1, 2 (condim - 1) on the pyramidal cone, condim on the
// elliptic one (normal, tangents, torsion, rolling: never more than the pyramid's).
MYRIAD_HD int contact_rows(int condim, bool elliptic = false) {
  return condim == 1 ? 1 : (elliptic ? condim : 2 * (condim - 1));
}

template <class T, int Block>
MYRIAD_HD collision::Contact<T>* contacts_of(const EnvData<T, Block>& d) {
  return reinterpret_cast<collision::Contact<T>*>(d.contact);
}

// Adds frame rows 0..nrow-1 times the translational Jacobian difference at `point` between body2
// and body1 (mj_jacDifPair projected on the contact frame): out[r * nv + i] += sign * frame_r .
// (cdof_lin_i + cdof_ang_i x (point - subtree_com[root])) over the dofs i of body's chain.
template <class T, int Block>
MYRIAD_HD void add_frame_jacobian(const ModelView<T>& m, const EnvData<T, Block>& d, int body,
                                  const T* point, const T* frame, int nrow, T sign, T* out) {
  while (body > 0 && m.body_dofnum[body] == 0) body = m.body_parentid[body];
  if (body == 0) return;
  const auto com = d.subtree_com + 3 * m.body_rootid[body];
  const T offset[3] = {point[0] - com[0], point[1] - com[1], point[2] - com[2]};
  for (int i = m.body_dofadr[body] + m.body_dofnum[body] - 1; i >= 0; i = m.dof_parentid[i]) {
    const auto cdof = d.cdof + 6 * i;
    T jp[3];
    cross3(jp, cdof, offset);
    for (int k = 0; k < 3; ++k) jp[k] += cdof[3 + k];
    for (int r = 0; r < nrow; ++r) out[r * m.nv + i] += sign * dot3(frame + 3 * r, jp);
  }
}

// Adds frame rows 0..nrow-1 times the rotational Jacobian difference between body2 and body1
// (mj_jacDifPair's jacr projected on the contact frame): out[r * nv + i] += sign * frame_r .
// cdof_ang_i over the dofs i of body's chain. Torsion is about frame row 0 (the normal), rolling
// about rows 1 and 2.
template <class T, int Block>
MYRIAD_HD void add_frame_angular(const ModelView<T>& m, const EnvData<T, Block>& d, int body,
                                 const T* frame, int nrow, T sign, T* out) {
  while (body > 0 && m.body_dofnum[body] == 0) body = m.body_parentid[body];
  if (body == 0) return;
  for (int i = m.body_dofadr[body] + m.body_dofnum[body] - 1; i >= 0; i = m.dof_parentid[i])
    for (int r = 0; r < nrow; ++r) out[r * m.nv + i] += sign * dot3(frame + 3 * r, d.cdof + 6 * i);
}

// Whether a body's chain has any dof.
template <class T>
MYRIAD_HD bool has_dofs(const ModelView<T>& m, int body) {
  while (body > 0 && m.body_dofnum[body] == 0) body = m.body_parentid[body];
  return body > 0;
}

// Appends one row, without columns, J's row +0; returns its index. Its builder then lists the
// columns its Jacobian touches (add_column, add_contact_columns): the solver reads a row only
// there, so a row without them is a row of zeros to it, and outside them the row stays +0 (a
// packed row, newton.h's Rows::packed_at, leaves those columns out: the same bits).
template <class T, int Block>
MYRIAD_HD int add_row(const ModelView<T>& m, EnvData<T, Block>& d, int& nefc, RowType type, int id,
                      T pos, T margin, T frictionloss) {
  const int r = nefc++;
  d.efc_type[r] = T(type);
  d.efc_id[r] = T(id);
  d.efc_pos[r] = pos;
  d.efc_margin[r] = margin;
  d.efc_frictionloss[r] = frictionloss;
  for (int k = 0; k < kColumnWords; ++k) d.efc_J_colmask[kColumnWords * r + k] = 0;
  for (int i = 0; i < m.nv; ++i) d.efc_J[r * m.nv + i] = 0;
  return r;
}

static_assert(kColumnWords * kColumnBits == 64, "a row's column set holds nv <= 64 columns");

// Row r's sparse structure (efc_J_colmask: the set of columns its Jacobian can touch, newton.h's
// Rows::colmask): adds column i, not yet in the set.
template <class T, int Block>
MYRIAD_HD void add_column(EnvData<T, Block>& d, int r, int i) {
  d.efc_J_colmask[kColumnWords * r + i / kColumnBits] += T(1 << (i % kColumnBits));
}

// The last dof of body's chain (add_frame_jacobian's: from the first body up the tree with dofs),
// -1 if the chain has none.
template <class T>
MYRIAD_HD int chain_last_dof(const ModelView<T>& m, int body) {
  while (body > 0 && m.body_dofnum[body] == 0) body = m.body_parentid[body];
  return body == 0 ? -1 : m.body_dofadr[body] + m.body_dofnum[body] - 1;
}

// (a contact's rows first .. first + nrow - 1, its bodies b1 and b2) => (each row's columns: the
// dofs of either body's chain but not of both, MuJoCo 3's mj_mergeChain skipping the common
// ones). Both chains descend by dof_parentid, so walking them together from their last dofs
// meets each dof once; the first dof on both chains is their common ancestor's, and so is every
// dof below it: there the two bodies' Jacobians at the contact point are the same numbers, and
// their difference, the row, is exactly zero (add_frame_jacobian).
template <class T, int Block>
MYRIAD_HD void add_contact_columns(const ModelView<T>& m, EnvData<T, Block>& d, int first, int nrow,
                                   int b1, int b2) {
  for (int a = chain_last_dof(m, b1), b = chain_last_dof(m, b2); (a >= 0 || b >= 0) && a != b;) {
    const int next = a > b ? a : b;
    add_column(d, first, next);
    if (a == next) a = m.dof_parentid[a];
    if (b == next) b = m.dof_parentid[b];
  }
  for (int r = first + 1; r < first + nrow; ++r)
    for (int k = 0; k < kColumnWords; ++k)
      d.efc_J_colmask[kColumnWords * r + k] = d.efc_J_colmask[kColumnWords * first + k];
}

// mj_makeConstraint (position stage): (qpos-derived kinematics, contact) => (efc_type, efc_id,
// efc_J with its sparse structure efc_J_colmask, efc_pos, efc_margin,
// efc_frictionloss, nefc).
template <class T, int Block>
MYRIAD_HD void make_rows(const ModelView<T>& m, EnvData<T, Block>& d) {
  int nefc = 0;
  const int flags = m.disableflags;
  if (!(flags & kDisableConstraint)) {
    if (!(flags & kDisableFrictionLoss))
      for (int i = 0; i < m.nv; ++i)
        if (m.dof_frictionloss[i] > T(0)) {
          const int r = add_row(m, d, nefc, kFrictionDof, i, T(0), T(0), m.dof_frictionloss[i]);
          d.efc_J[r * m.nv + i] = 1;
          add_column(d, r, i);
        }
    if (!(flags & kDisableFrictionLoss))
      for (int t = 0; t < m.ntendon; ++t)
        if (m.tendon_frictionloss[t] > T(0)) {
          const int r =
              add_row(m, d, nefc, kFrictionTendon, t, T(0), T(0), m.tendon_frictionloss[t]);
          for (int i = 0; i < m.nv; ++i) {
            if (d.ten_J[t * m.nv + i] == T(0)) continue;  // +0 from add_row, outside the set
            d.efc_J[r * m.nv + i] = d.ten_J[t * m.nv + i];
            add_column(d, r, i);
          }
        }
    if (!(flags & kDisableLimit))
      for (int j = 0; j < m.njnt; ++j) {
        if (!m.jnt_limited[j]) continue;
        const int type = m.jnt_type[j];
        if (type != kHinge && type != kSlide) continue;  // ball limits are refused at import
        const T q = d.qpos[m.jnt_qposadr[j]];
        const T margin = m.jnt_margin[j];
        const T lower = q - m.jnt_range[2 * j], upper = m.jnt_range[2 * j + 1] - q;
        if (lower < margin) {
          const int r = add_row(m, d, nefc, kLimitJoint, j, lower, margin, T(0));
          d.efc_J[r * m.nv + m.jnt_dofadr[j]] = 1;
          add_column(d, r, m.jnt_dofadr[j]);
        }
        if (upper < margin) {
          const int r = add_row(m, d, nefc, kLimitJoint, j, upper, margin, T(0));
          d.efc_J[r * m.nv + m.jnt_dofadr[j]] = -1;
          add_column(d, r, m.jnt_dofadr[j]);
        }
      }
    if (!(flags & kDisableLimit))
      for (int t = 0; t < m.ntendon; ++t) {
        if (!m.tendon_limited[t]) continue;
        const T length = d.ten_length[t], margin = m.tendon_margin[t];
        const T lower = length - m.tendon_range[2 * t], upper = m.tendon_range[2 * t + 1] - length;
        for (int side = 0; side < 2; ++side) {
          const T dist = side == 0 ? lower : upper;
          if (!(dist < margin)) continue;
          const int r = add_row(m, d, nefc, kLimitTendon, t, dist, margin, T(0));
          const T sign = side == 0 ? T(1) : T(-1);
          for (int i = 0; i < m.nv; ++i) {
            // Outside the set the row keeps add_row's +0 (sign · 0 would be −0 on the upper side).
            if (d.ten_J[t * m.nv + i] == T(0)) continue;
            d.efc_J[r * m.nv + i] = sign * d.ten_J[t * m.nv + i];
            add_column(d, r, i);
          }
        }
      }
    const collision::Contact<T>* con = contacts_of(d);
    // ncon_max bounds every env's contacts by construction; the clamp only guards the storage.
    const int found = static_cast<int>(d.ncon[0]);
    const int ncon = found < m.ncon_max ? found : m.ncon_max;
    for (int c = 0; c < ncon; ++c) {
      if (con[c].exclude) continue;
      const int b1 = m.geom_bodyid[con[c].geom1], b2 = m.geom_bodyid[con[c].geom2];
      if (!has_dofs(m, b1) && !has_dofs(m, b2)) continue;
      const int dim = con[c].dim;
      const bool elliptic = m.cone == kConeElliptic && dim > 1;
      const RowType type =
          dim == 1 ? kContactFrictionless : (elliptic ? kContactElliptic : kContactPyramidal);
      const int nlin = dim == 1 ? 1 : 3;  // translational frame rows (normal, two tangents)
      // The contact's rows first hold C0..C(dim-1): frame . (J_body2 - J_body1) for the normal
      // and the tangents, then frame . (Jr_body2 - Jr_body1) about the normal (condim 4) and the
      // tangents (condim 6). On the elliptic cone they are the rows (unscaled by friction; only
      // the normal row has the contact's distance and margin); on the pyramidal one they become
      // the pyramid's 2 (dim - 1) edges in place (no per-thread scratch: dim <= 2 (dim - 1)).
      const int first = nefc;
      for (int k = 0; k < contact_rows(dim, elliptic); ++k) {
        const bool normal = k == 0 || !elliptic;
        add_row(m, d, nefc, type, c, normal ? con[c].dist : T(0),
                normal ? con[c].includemargin : T(0), T(0));
      }
      add_contact_columns(m, d, first, nefc - first, b1, b2);
      T* C = d.efc_J + first * m.nv;
      add_frame_jacobian(m, d, b2, con[c].pos, con[c].frame, nlin, T(1), C);
      add_frame_jacobian(m, d, b1, con[c].pos, con[c].frame, nlin, T(-1), C);
      if (dim == 1) continue;
      if (dim > 3) {
        add_frame_angular(m, d, b2, con[c].frame, dim - 3, T(1), C + 3 * m.nv);
        add_frame_angular(m, d, b1, con[c].frame, dim - 3, T(-1), C + 3 * m.nv);
      }
      if (elliptic) continue;
      // Pyramid edges: C0 + mu_k C_k and C0 - mu_k C_k for k = 1 .. dim-1, mu_k = friction[k-1]
      // (sliding, sliding, torsional, rolling, rolling).
      for (int i = 0; i < m.nv; ++i) {
        T col[6];
        for (int k = 0; k < dim; ++k) col[k] = C[k * m.nv + i];
        for (int k = 1; k < dim; ++k) {
          const T mu = con[c].friction[k - 1];
          C[(2 * k - 2) * m.nv + i] = col[0] + mu * col[k];
          C[(2 * k - 1) * m.nv + i] = col[0] - mu * col[k];
        }
      }
    }
  }
  d.nefc[0] = T(nefc);
}

// getsolparam: solref and solimp after MuJoCo's clean-up (mixed-sign solref replaced by the
// defaults, the time constant at least 2 timesteps unless refsafe is off, solimp clamped).
template <class T>
MYRIAD_HD void clean_params(const ModelView<T>& m, const T* solref_in, const T* solimp_in,
                            T* solref, T* solimp) {
  solref[0] = solref_in[0];
  solref[1] = solref_in[1];
  if ((solref[0] > T(0)) != (solref[1] > T(0))) {
    solref[0] = T(0.02);
    solref[1] = T(1);
  }
  if (!(m.disableflags & kDisableRefSafe) && solref[0] > T(0) && solref[0] < 2 * m.timestep)
    solref[0] = 2 * m.timestep;
  for (int k = 0; k < kNImp; ++k) solimp[k] = solimp_in[k];
  const int clamped[3] = {0, 1, 3};  // dmin, dmax, midpoint
  for (int k : clamped)
    solimp[k] =
        solimp[k] < T(kMinImp) ? T(kMinImp) : (solimp[k] > T(kMaxImp) ? T(kMaxImp) : solimp[k]);
  if (solimp[2] < T(0)) solimp[2] = 0;
  if (solimp[4] < T(1)) solimp[4] = 1;
}

// getimpedance: (solimp, violation |pos - margin|) => (impedance d, its derivative).
template <class T>
MYRIAD_HD void impedance(const T* solimp, T violation, T* imp, T* imp_prime) {
  const T dmin = solimp[0], dmax = solimp[1], width = solimp[2], mid = solimp[3], power = solimp[4];
  *imp_prime = 0;
  if (dmin == dmax || width <= T(kMinVal)) {
    *imp = T(0.5) * (dmin + dmax);
    return;
  }
  const T x = violation / width;
  if (x >= T(1)) {
    *imp = dmax;
    return;
  }
  if (x <= T(0)) {
    *imp = dmin;
    return;
  }
  T y, y_prime;
  if (power == T(1)) {
    y = x;
    y_prime = 1;
  } else if (x <= mid) {
    const T a = T(1) / pow(mid, power - T(1));
    y = a * pow(x, power);
    y_prime = power * a * pow(x, power - T(1));
  } else {
    const T b = T(1) / pow(T(1) - mid, power - T(1));
    y = T(1) - b * pow(T(1) - x, power);
    y_prime = power * b * pow(T(1) - x, power - T(1));
  }
  *imp = dmin + y * (dmax - dmin);
  *imp_prime = y_prime * (dmax - dmin) / width;
}

// mj_makeImpedance (position stage): (rows, contact, model parameters) => (efc_KBIP, efc_R,
// efc_D).
template <class T, int Block>
MYRIAD_HD void make_impedance(const ModelView<T>& m, EnvData<T, Block>& d) {
  const int nefc = static_cast<int>(d.nefc[0]);
  const collision::Contact<T>* con = contacts_of(d);
  for (int r = 0; r < nefc; ++r) {
    const int type = static_cast<int>(d.efc_type[r]);
    const int id = static_cast<int>(d.efc_id[r]);
    // An elliptic contact's rows share the normal row's (its first row's) impedance; the
    // friction rows have no stiffness.
    int first = r;
    if (type == kContactElliptic)
      while (first > 0 && static_cast<int>(d.efc_type[first - 1]) == kContactElliptic &&
             static_cast<int>(d.efc_id[first - 1]) == id)
        --first;
    const T *solref_in, *solimp_in;
    T diag;
    if (type == kFrictionDof) {
      solref_in = m.dof_solref + kNRef * id;
      solimp_in = m.dof_solimp + kNImp * id;
      diag = m.dof_invweight0[id];
    } else if (type == kFrictionTendon) {
      solref_in = m.tendon_solref_fri + kNRef * id;
      solimp_in = m.tendon_solimp_fri + kNImp * id;
      diag = m.tendon_invweight0[id];
    } else if (type == kLimitTendon) {
      solref_in = m.tendon_solref_lim + kNRef * id;
      solimp_in = m.tendon_solimp_lim + kNImp * id;
      diag = m.tendon_invweight0[id];
    } else if (type == kLimitJoint) {
      solref_in = m.jnt_solref + kNRef * id;
      solimp_in = m.jnt_solimp + kNImp * id;
      diag = m.dof_invweight0[m.jnt_dofadr[id]];
    } else {  // contact rows
      solref_in = con[id].solref;
      solimp_in = con[id].solimp;
      const int b1 = m.geom_bodyid[con[id].geom1], b2 = m.geom_bodyid[con[id].geom2];
      const T tran = m.body_invweight0[2 * b1] + m.body_invweight0[2 * b2];
      const T mu = con[id].friction[0];
      diag = type == kContactPyramidal ? tran + mu * mu * tran : tran;
    }
    T solref[kNRef], solimp[kNImp];
    clean_params(m, solref_in, solimp_in, solref, solimp);
    T imp, imp_prime;
    const T violation = fabs(d.efc_pos[first] - d.efc_margin[first]);
    const bool friction = type == kFrictionDof || type == kFrictionTendon;
    impedance(solimp, friction ? T(0) : violation, &imp, &imp_prime);
    const T dmax = solimp[1];
    T K, B;
    if (solref[0] > T(0)) {
      K = T(1) / (dmax * dmax * solref[0] * solref[0] * solref[1] * solref[1]);
      B = T(2) / (dmax * solref[0]);
    } else {
      K = -solref[0] / (dmax * dmax);
      B = -solref[1] / dmax;
    }
    if (friction || (type == kContactElliptic && r > first)) K = 0;
    T* kbip = d.efc_KBIP + 4 * r;
    kbip[0] = K;
    kbip[1] = B;
    kbip[2] = imp;
    kbip[3] = imp_prime;
    const T R = (T(1) - imp) * diag / imp;
    d.efc_R[r] = R > T(kMinVal) ? R : T(kMinVal);
  }
  // Contacts: the pyramid's edges all get 2 mu^2 R0 with mu = friction[0] / sqrt(impratio) and R0
  // the first edge's R (MuJoCo's pyramidal friction scaling).
  for (int r = 0; r < nefc; ++r) {
    if (static_cast<int>(d.efc_type[r]) != kContactPyramidal) continue;
    const int id = static_cast<int>(d.efc_id[r]);
    const int nrow = contact_rows(con[id].dim);
    const T mu = con[id].friction[0];
    const T R = d.efc_R[r] * 2 * mu * mu / m.impratio;
    for (int k = 0; k < nrow; ++k) d.efc_R[r + k] = R;
    r += nrow - 1;
  }
  // Elliptic contacts: the first friction row gets the normal row's R / impratio, each further
  // one the R that gives it the same R mu_k^2 (mu_k its friction coefficient, friction[k - 1]).
  for (int r = 0; r < nefc; ++r) {
    if (static_cast<int>(d.efc_type[r]) != kContactElliptic) continue;
    const collision::Contact<T>& c = con[static_cast<int>(d.efc_id[r])];
    const T impratio = m.impratio > T(kMinVal) ? m.impratio : T(kMinVal);
    d.efc_R[r + 1] = d.efc_R[r] / impratio;
    for (int k = 1; k < c.dim - 1; ++k)
      d.efc_R[r + k + 1] =
          d.efc_R[r + 1] * c.friction[0] * c.friction[0] / (c.friction[k] * c.friction[k]);
    r += c.dim - 1;
  }
  for (int r = 0; r < nefc; ++r) d.efc_D[r] = T(1) / d.efc_R[r];
}

// mj_referenceConstraint (velocity stage): (efc_J, qvel, efc_KBIP, efc_pos, efc_margin) =>
// (efc_aref) = -B J qvel - K imp (pos - margin).
template <class T, int Block>
MYRIAD_HD void reference(const ModelView<T>& m, EnvData<T, Block>& d) {
  const int nefc = static_cast<int>(d.nefc[0]);
  for (int r = 0; r < nefc; ++r) {
    const T* J = d.efc_J + r * m.nv;
    T vel = 0;  // J qvel over the row's columns (the dense sum's bits for finite values)
    for (ColumnMask w = column_set(d.efc_J_colmask + kColumnWords * r); w; w &= w - 1) {
      const int i = lowest_column(w);
      vel += J[i] * d.qvel[i];
    }
    const T* kbip = d.efc_KBIP + 4 * r;
    d.efc_aref[r] = -kbip[1] * vel - kbip[0] * kbip[2] * (d.efc_pos[r] - d.efc_margin[r]);
  }
}

}  // namespace myriad::physics::constraint
