// MuJoCo's implicitfast integrator (mj_implicitSkip with mjINT_IMPLICITFAST, MuJoCo 3.11), for
// one env after forward(): the velocity update is implicit in the forces' velocity derivative
// (damping, actuator kv, velocity-dependent gains), without the Coriolis terms:
//
//   (M - h qDeriv) qacc_int = qfrc_smooth + qfrc_constraint,
//   qvel += h qacc_int,  qpos <- qpos (+) h qvel,  time += h.
//
// qDeriv = d(qfrc_actuator + qfrc_passive)/d qvel, kept on M's tree sparsity (entries where one
// dof is an ancestor of the other; MuJoCo drops the rest, e.g. a tendon's coupling of two trees):
//   dampers:   -dof_damping on the diagonal, -tendon_damping ten_J' ten_J;
//   actuators: (biasprm[2] + gainprm[2] ctrl) moment' moment, skipping an actuator whose force
//              sits at or beyond its forcerange (a saturated actuator does not stiffen).
// A free body that is its tree's only body (nothing jointed or massive below it) is solved on
// its own 6 dofs with the gyroscopic derivative of qfrc_bias added (unsymmetric, LU with partial
// pivoting), as MuJoCo does; the global solve sees M alone in its rows.
// mj_forward's qacc is left as it was and warm-starts the next step.
#pragma once

#include "myriad/physics/data.h"
#include "physics/model_view.h"
#include "physics/spatial.h"

namespace myriad::physics {

// qH (in place of qM's tree entries) -= h * s * a a' over the tree sparsity, for a dense row a.
template <class T, class H, class A>
MYRIAD_HD void implicit_add_outer(const ModelView<T>& m, H qH, A a, T s) {
  for (int i = 0; i < m.nv; ++i) {
    if (a[i] == T(0)) continue;
    for (int j = i; j >= 0; j = m.dof_parentid[j]) mat(qH, m.nv, i, j) -= s * a[i] * a[j];
  }
}

// res (3x3, row-major) = [v]x, the cross-product matrix of v.
template <class T>
MYRIAD_HD void skew3(T* res, const T* v) {
  res[0] = 0;
  res[1] = -v[2];
  res[2] = v[1];
  res[3] = v[2];
  res[4] = 0;
  res[5] = -v[0];
  res[6] = -v[1];
  res[7] = v[0];
  res[8] = 0;
}

template <class T>
MYRIAD_HD void mul33(T* res, const T* a, const T* b, bool a_transposed = false) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      T s = 0;
      for (int k = 0; k < 3; ++k) s += (a_transposed ? a[3 * k + r] : a[3 * r + k]) * b[3 * k + c];
      res[3 * r + c] = s;
    }
}

// Solves A x = b (6x6, row-major, overwritten) by LU with partial pivoting; false when a pivot
// is below kMinVal (x is then left alone).
template <class T>
MYRIAD_HD bool solve_lu6(T* A, const T* b, T* x) {
  int perm[6] = {0, 1, 2, 3, 4, 5};
  for (int k = 0; k < 6; ++k) {
    int p = k;
    for (int r = k + 1; r < 6; ++r)
      if ((A[6 * r + k] < 0 ? -A[6 * r + k] : A[6 * r + k]) >
          (A[6 * p + k] < 0 ? -A[6 * p + k] : A[6 * p + k]))
        p = r;
    const T pivot = A[6 * p + k];
    if ((pivot < 0 ? -pivot : pivot) < T(1e-15)) return false;
    if (p != k) {
      for (int c = 0; c < 6; ++c) {
        const T t = A[6 * k + c];
        A[6 * k + c] = A[6 * p + c];
        A[6 * p + c] = t;
      }
      const int t = perm[k];
      perm[k] = perm[p];
      perm[p] = t;
    }
    for (int r = k + 1; r < 6; ++r) {
      const T f = A[6 * r + k] / A[6 * k + k];
      A[6 * r + k] = f;
      for (int c = k + 1; c < 6; ++c) A[6 * r + c] -= f * A[6 * k + c];
    }
  }
  T y[6];
  for (int r = 0; r < 6; ++r) {
    T s = b[perm[r]];
    for (int c = 0; c < r; ++c) s -= A[6 * r + c] * y[c];
    y[r] = s;
  }
  for (int r = 5; r >= 0; --r) {
    T s = y[r];
    for (int c = r + 1; c < 6; ++c) s -= A[6 * r + c] * x[c];
    x[r] = s / A[6 * r + r];
  }
  return true;
}

// The free body b's own 6x6 system, (M_b + h diag(damping_b) + h Bb) x = qfrc_b, Bb the velocity
// derivative of its qfrc_bias (gyroscopic; the linear columns are zero), in two parts.
// implicit_free_matrix: (qH's free-body rows, which hold M alone; damping, poses, qvel) => the
// matrix, written over the body's 6x6 block of qH, both triangles (qM's storage: the next
// forward rebuilds it).
template <class T, int Block>
MYRIAD_HD void implicit_free_matrix(const ModelView<T>& m, EnvData<T, Block>& d, int b, T h) {
  const int nv = m.nv, a = m.jnt_dofadr[m.body_jntadr[b]];
  auto A = d.qM + a * nv + a;  // A[r * nv + c]: row a + r, column a + c
  for (int r = 0; r < 6; ++r)
    for (int c = r + 1; c < 6; ++c) A[r * nv + c] = A[c * nv + r];
  if (m.damper_enabled)
    for (int r = 0; r < 6; ++r) A[r * nv + r] += h * m.dof_damping[a + r];
  T R_buf[9], Xi_buf[9];
  const T* R = readable(d.xmat + 9 * b, R_buf);
  const T* Xi = readable(d.ximat + 9 * b, Xi_buf);
  const T mass = m.body_mass[b];
  // Iw = Xi diag(inertia) Xi', s = xipos - xpos, w = R qvel_rot (world angular velocity).
  T Iw[9];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      T s = 0;
      for (int k = 0; k < 3; ++k) s += Xi[3 * r + k] * m.body_inertia[3 * b + k] * Xi[3 * c + k];
      Iw[3 * r + c] = s;
    }
  T s[3], w[3], ws[3], Iww[3];
  for (int k = 0; k < 3; ++k) s[k] = d.xipos[3 * b + k] - d.xpos[3 * b + k];
  mul_mat_vec3(w, R, d.qvel + a + 3);
  cross3(ws, w, s);
  mul_mat_vec3(Iww, Iw, w);
  // K = [w x s]x + [w]x [s]x;  Bb_lin = -mass K R;  Bb_rot = R' (-mass [s]x K + [w]x Iw - [Iw w]x)
  // R.
  T Sws[9], Sw[9], Ss[9], SIww[9], K[9], t1[9], t2[9], C[9];
  skew3(Sws, ws);
  skew3(Sw, w);
  skew3(Ss, s);
  skew3(SIww, Iww);
  mul33(t1, Sw, Ss);
  for (int k = 0; k < 9; ++k) K[k] = Sws[k] + t1[k];
  mul33(t1, Ss, K);
  mul33(t2, Sw, Iw);
  for (int k = 0; k < 9; ++k) C[k] = -mass * t1[k] + t2[k] - SIww[k];
  T lin[9], rot[9];
  mul33(lin, K, R);
  mul33(t1, C, R);
  mul33(rot, R, t1, /*a_transposed=*/true);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      A[r * nv + 3 + c] += h * (-mass * lin[3 * r + c]);
      A[(3 + r) * nv + 3 + c] += h * rot[3 * r + c];
    }
}

// implicit_free_solve: (the matrix, qfrc_smooth + qfrc_constraint) => the body's qacc_int, by LU
// with partial pivoting (left as the tree solve gave it when a pivot is below kMinVal).
template <class T, int Block>
MYRIAD_HD void implicit_free_solve(const ModelView<T>& m, EnvData<T, Block>& d, int b) {
  const int nv = m.nv, a = m.jnt_dofadr[m.body_jntadr[b]];
  T A[36], qfrc[6], x[6];
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 6; ++c) A[6 * r + c] = d.qM[(a + r) * nv + a + c];
  // qfrc_b: the sum the tree solve started from (summed here again, not kept in an nv array: a
  // GPU thread's stack).
  for (int k = 0; k < 6; ++k) qfrc[k] = d.qfrc_smooth[a + k] + d.qfrc_constraint[a + k];
  if (solve_lu6(A, qfrc, x))
    for (int k = 0; k < 6; ++k) d.qacc_int[a + k] = x[k];
}

// implicitfast in three parts, which the staged launch runs as kernels of their own (the tree's
// factorization, the free bodies' gyroscopic matrices and their 6x6 LU then do not share one GPU
// thread's registers):
// implicit_fast_solve: (qM, dof and tendon damping, ten_J, actuator_force, ctrl, qfrc_smooth,
//   qfrc_constraint) => (qH in qM's storage, its factor qLD, qacc_int of the tree solve);
// implicit_free_bodies: each free body solved alone, its matrix (implicit_free_matrix);
// implicit_fast_finish: their LU solves (implicit_free_solve), then (qacc_int, qvel) => (qvel,
//   qpos, time, qacc_warmstart).
template <class T, int Block>
MYRIAD_HD void implicit_fast_solve(const ModelView<T>& m, EnvData<T, Block>& d) {
  const T h = m.timestep;
  const int nv = m.nv;
  // qH = M - h qDeriv, in qM's storage (the next forward rebuilds qM).
  auto qH = d.qM;
  if (m.damper_enabled) {
    for (int i = 0; i < nv; ++i)
      if (!m.body_implicit_free[m.dof_bodyid[i]]) mat(qH, nv, i, i) += h * m.dof_damping[i];
    for (int t = 0; t < m.ntendon; ++t)
      if (m.tendon_damping[t] != T(0))
        implicit_add_outer(m, qH, d.ten_J + t * nv, -h * m.tendon_damping[t]);
  }
  if (m.actuation_enabled)
    for (int u = 0; u < m.nu; ++u) {
      if (m.actuator_forcelimited[u]) {
        const T f = d.actuator_force[u];
        if (f <= m.actuator_forcerange[2 * u] || f >= m.actuator_forcerange[2 * u + 1]) continue;
      }
      T dfdv = m.actuator_biastype[u] == kBiasAffine ? m.actuator_biasprm[3 * u + 2] : T(0);
      if (m.actuator_gaintype[u] == kGainAffine && m.actuator_gainprm[3 * u + 2] != T(0))
        dfdv += m.actuator_gainprm[3 * u + 2] * d.ctrl[u];
      if (dfdv == T(0)) continue;
      const T gear = m.actuator_gear[u];
      const int id = m.actuator_trnid[u];
      if (m.actuator_trntype[u] == kTrnTendon) {
        implicit_add_outer(m, qH, d.ten_J + id * nv, h * dfdv * gear * gear);
      } else {
        const int dof = m.jnt_dofadr[id];
        mat(qH, nv, dof, dof) -= h * dfdv * gear * gear;
      }
    }
  factor(m, qH, d.qLD, d.qLDiagInv);
  for (int i = 0; i < nv; ++i) d.qacc_int[i] = d.qfrc_smooth[i] + d.qfrc_constraint[i];
  solve(m, d.qLD, d.qLDiagInv, d.qacc_int);
}

template <class T, int Block>
MYRIAD_HD void implicit_free_bodies(const ModelView<T>& m, EnvData<T, Block>& d) {
  for (int b = 1; b < m.nbody; ++b)
    if (m.body_implicit_free[b]) implicit_free_matrix(m, d, b, m.timestep);
}

template <class T, int Block>
MYRIAD_HD void implicit_fast_finish(const ModelView<T>& m, EnvData<T, Block>& d) {
  const T h = m.timestep;
  for (int b = 1; b < m.nbody; ++b)
    if (m.body_implicit_free[b]) implicit_free_solve(m, d, b);
  for (int i = 0; i < m.nv; ++i) d.qvel[i] += h * d.qacc_int[i];
  integrate_pos(m, d.qpos, d.qvel, h);
  d.time[0] += h;
  for (int i = 0; i < m.nv; ++i) d.qacc_warmstart[i] = d.qacc[i];
}

template <class T, int Block>
MYRIAD_HD void implicit_fast(const ModelView<T>& m, EnvData<T, Block>& d) {
  implicit_fast_solve(m, d);
  implicit_free_bodies(m, d);
  implicit_fast_finish(m, d);
}

}  // namespace myriad::physics
