// The smooth-dynamics pipeline for one env, named after MuJoCo's stages (engine_forward.c,
// engine_core_smooth.c) so the two can be read side by side. Every stage is a MYRIAD_HD
// function of (const ModelView&, EnvData&), written once for CPU and CUDA, templated on the
// scalar (double for validation, float for speed). The smooth stages (position, velocity,
// actuation, acceleration) are templated on the value type T of the env's data instead, with
// the model's constants of type S = scalar_of<T>: T is the scalar for one env, or Lanes<S, W>
// for W envs at once in SIMD lanes on the CPU (physics/lanes.h, physics/tile.h). Branches on
// data values there are selects (physics/value.h), so every lane gets the scalar code's bits.
#pragma once

#include <type_traits>

#include "myriad/physics/data.h"
#include "physics/collision/collide.h"
#include "physics/constraint/body_forces.h"
#include "physics/constraint/make.h"
#include "physics/constraint/solve.h"
#include "physics/model_view.h"
#include "physics/sensor.h"
#include "physics/spatial.h"
#include "physics/value.h"

namespace myriad::physics {

constexpr double kMinVal = 1e-15;

// Position of a frame given in body coordinates (pos, quat) in world coordinates.
template <class T, class S, int Block, class X>
MYRIAD_HD void local_to_global(const EnvData<T, Block>& d, int body, const S* pos, const S* quat,
                               X xpos, X xmat) {
  mul_mat_vec3(xpos, d.xmat + 9 * body, pos);
  for (int k = 0; k < 3; ++k) xpos[k] += d.xpos[3 * body + k];
  T q[4];
  mul_quat(q, d.xquat + 4 * body, quat);
  quat2mat(xmat, q);
}

// mj_kinematics: body, inertial-frame and geom poses; joint anchors and axes.
template <class T, int Block>
MYRIAD_HD void kinematics(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  for (int k = 0; k < 3; ++k) d.xpos[k] = d.xipos[k] = 0;
  d.xquat[0] = 1;
  d.xquat[1] = d.xquat[2] = d.xquat[3] = 0;
  for (int k = 0; k < 9; ++k) d.xmat[k] = d.ximat[k] = (k % 4 == 0) ? T(1) : T(0);

  for (int i = 1; i < m.nbody; ++i) {
    T pos[3], quat[4];
    const int jadr = m.body_jntadr[i];
    if (m.body_jntnum[i] > 0 && m.jnt_type[jadr] == kFree) {
      const auto q = d.qpos + m.jnt_qposadr[jadr];
      for (int k = 0; k < 3; ++k) pos[k] = q[k];
      for (int k = 0; k < 4; ++k) quat[k] = q[3 + k];
      normalize4(quat);
      for (int k = 0; k < 3; ++k) {
        d.xanchor[3 * jadr + k] = pos[k];
        d.xaxis[3 * jadr + k] = m.jnt_axis[3 * jadr + k];
      }
    } else {
      const int pid = m.body_parentid[i];
      mul_mat_vec3(pos, d.xmat + 9 * pid, m.body_pos + 3 * i);
      for (int k = 0; k < 3; ++k) pos[k] += d.xpos[3 * pid + k];
      mul_quat(quat, d.xquat + 4 * pid, m.body_quat + 4 * i);
      for (int jj = 0; jj < m.body_jntnum[i]; ++jj) {
        const int j = jadr + jj;
        const int qadr = m.jnt_qposadr[j];
        auto xaxis = d.xaxis + 3 * j;
        auto xanchor = d.xanchor + 3 * j;
        rot_vec_quat(xaxis, m.jnt_axis + 3 * j, quat);
        rot_vec_quat(xanchor, m.jnt_pos + 3 * j, quat);
        for (int k = 0; k < 3; ++k) xanchor[k] += pos[k];
        const int type = m.jnt_type[j];
        if (type == kSlide) {
          const T delta = d.qpos[qadr] - m.qpos0[qadr];
          for (int k = 0; k < 3; ++k) pos[k] += xaxis[k] * delta;
          continue;
        }
        T qloc[4];
        if (type == kBall) {
          for (int k = 0; k < 4; ++k) qloc[k] = d.qpos[qadr + k];
          normalize4(qloc);  // a normalized copy; qpos is left as it is (MuJoCo 3)
        } else {             // hinge
          axis_angle2quat(qloc, m.jnt_axis + 3 * j, d.qpos[qadr] - m.qpos0[qadr]);
        }
        T q2[4], vec[3];
        mul_quat(q2, quat, qloc);
        for (int k = 0; k < 4; ++k) quat[k] = q2[k];
        // The rotation is about the anchor, not the body origin.
        rot_vec_quat(vec, m.jnt_pos + 3 * j, quat);
        for (int k = 0; k < 3; ++k) pos[k] = xanchor[k] - vec[k];
      }
    }
    normalize4(quat);
    for (int k = 0; k < 4; ++k) d.xquat[4 * i + k] = quat[k];
    for (int k = 0; k < 3; ++k) d.xpos[3 * i + k] = pos[k];
    quat2mat(d.xmat + 9 * i, quat);
  }
  for (int i = 1; i < m.nbody; ++i)
    local_to_global(d, i, m.body_ipos + 3 * i, m.body_iquat + 4 * i, d.xipos + 3 * i,
                    d.ximat + 9 * i);
  for (int g = 0; g < m.ngeom; ++g)
    local_to_global(d, m.geom_bodyid[g], m.geom_pos + 3 * g, m.geom_quat + 4 * g,
                    d.geom_xpos + 3 * g, d.geom_xmat + 9 * g);
}

// Motion subspace of a dof about `origin`: [axis; axis x (origin - anchor)].
template <class R, class A, class O>
MYRIAD_HD void dof_com(R res, A axis, O offset) {
  for (int k = 0; k < 3; ++k) res[k] = axis[k];
  cross3(res + 3, axis, offset);
}

// mj_comPos: subtree centers of mass, com-based inertias (cinert) and motion subspaces (cdof).
template <class T, int Block>
MYRIAD_HD void com_pos(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  using S = scalar_of<T>;
  for (int i = 0; i < m.nbody; ++i)
    for (int k = 0; k < 3; ++k) d.subtree_com[3 * i + k] = d.xipos[3 * i + k] * m.body_mass[i];
  for (int i = m.nbody - 1; i > 0; --i)
    for (int k = 0; k < 3; ++k)
      d.subtree_com[3 * m.body_parentid[i] + k] += d.subtree_com[3 * i + k];
  for (int i = 0; i < m.nbody; ++i) {
    const S mass = m.body_subtreemass[i];
    if (mass < S(kMinVal)) {
      for (int k = 0; k < 3; ++k) d.subtree_com[3 * i + k] = d.xipos[3 * i + k];
    } else {
      const S inv = S(1) / mass;
      for (int k = 0; k < 3; ++k) d.subtree_com[3 * i + k] *= inv;
    }
  }
  for (int k = 0; k < 10; ++k) d.cinert[k] = 0;
  for (int i = 1; i < m.nbody; ++i) {
    const auto origin = d.subtree_com + 3 * m.body_rootid[i];
    T dif[3];
    for (int k = 0; k < 3; ++k) dif[k] = d.xipos[3 * i + k] - origin[k];
    // R diag(I) R' plus the parallel-axis term (mju_inertCom).
    const auto R = d.ximat + 9 * i;
    const S* I = m.body_inertia + 3 * i;
    const S mass = m.body_mass[i];
    auto res = d.cinert + 10 * i;
    T full[9];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        full[3 * r + c] = R[3 * r] * I[0] * R[3 * c] + R[3 * r + 1] * I[1] * R[3 * c + 1] +
                          R[3 * r + 2] * I[2] * R[3 * c + 2];
    res[0] = full[0] + mass * (dif[1] * dif[1] + dif[2] * dif[2]);
    res[1] = full[4] + mass * (dif[0] * dif[0] + dif[2] * dif[2]);
    res[2] = full[8] + mass * (dif[0] * dif[0] + dif[1] * dif[1]);
    res[3] = full[1] - mass * dif[0] * dif[1];
    res[4] = full[2] - mass * dif[0] * dif[2];
    res[5] = full[5] - mass * dif[1] * dif[2];
    for (int k = 0; k < 3; ++k) res[6 + k] = mass * dif[k];
    res[9] = mass;
  }
  for (int j = 0; j < m.njnt; ++j) {
    const int b = m.jnt_bodyid[j];
    int da = m.jnt_dofadr[j];
    const auto origin = d.subtree_com + 3 * m.body_rootid[b];
    T offset[3];
    switch (m.jnt_type[j]) {
      case kFree: {
        for (int r = 0; r < 3; ++r) {
          auto c = d.cdof + 6 * (da + r);
          for (int k = 0; k < 6; ++k) c[k] = 0;
          c[3 + r] = 1;
        }
        for (int k = 0; k < 3; ++k) offset[k] = origin[k] - d.xpos[3 * b + k];
        da += 3;
        const auto R = d.xmat + 9 * b;
        for (int r = 0; r < 3; ++r) {
          const T axis[3] = {R[r], R[3 + r], R[6 + r]};
          dof_com(d.cdof + 6 * (da + r), axis, offset);
        }
        break;
      }
      case kBall: {
        for (int k = 0; k < 3; ++k) offset[k] = origin[k] - d.xanchor[3 * j + k];
        const auto R = d.xmat + 9 * b;
        for (int r = 0; r < 3; ++r) {
          const T axis[3] = {R[r], R[3 + r], R[6 + r]};
          dof_com(d.cdof + 6 * (da + r), axis, offset);
        }
        break;
      }
      case kSlide: {
        auto c = d.cdof + 6 * da;
        for (int k = 0; k < 3; ++k) {
          c[k] = 0;
          c[3 + k] = d.xaxis[3 * j + k];
        }
        break;
      }
      default: {  // hinge
        for (int k = 0; k < 3; ++k) offset[k] = origin[k] - d.xanchor[3 * j + k];
        dof_com(d.cdof + 6 * da, d.xaxis + 3 * j, offset);
      }
    }
  }
}

// mj_tendon for fixed tendons: (qpos) => (ten_length, ten_J), a linear combination of joint
// positions with the tendon's coefficients.
template <class T, int Block>
MYRIAD_HD void tendon(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  for (int t = 0; t < m.ntendon; ++t) {
    auto J = d.ten_J + t * m.nv;
    for (int i = 0; i < m.nv; ++i) J[i] = 0;
    T length = 0;
    for (int k = m.tendon_adr[t]; k < m.tendon_adr[t] + m.tendon_num[t]; ++k) {
      const int j = m.wrap_objid[k];
      const scalar_of<T> coef = m.wrap_prm[k];
      length += coef * d.qpos[m.jnt_qposadr[j]];
      J[m.jnt_dofadr[j]] += coef;
    }
    d.ten_length[t] = length;
  }
}

// Tendon velocities: (ten_J, qvel) => (ten_velocity).
template <class T, int Block>
MYRIAD_HD void tendon_velocity(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  for (int t = 0; t < m.ntendon; ++t) {
    T v = 0;
    for (int i = 0; i < m.nv; ++i) v += d.ten_J[t * m.nv + i] * d.qvel[i];
    d.ten_velocity[t] = v;
  }
}

// Dense storage of the tree-sparse mass matrix: entry (i, j) with j an ancestor dof of i.
template <class P>
MYRIAD_HD decltype(auto) mat(P M, int nv, int i, int j) {
  return M[i * nv + j];
}

// mj_crb: composite rigid-body inertias and the mass matrix (lower triangle on the tree).
template <class T, int Block>
MYRIAD_HD void crb(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  for (int k = 0; k < 10 * m.nbody; ++k) d.crb[k] = d.cinert[k];
  for (int i = m.nbody - 1; i > 0; --i) {
    const int p = m.body_parentid[i];
    if (p > 0)
      for (int k = 0; k < 10; ++k) d.crb[10 * p + k] += d.crb[10 * i + k];
  }
  for (int i = 0; i < m.nv; ++i) {
    T buf[6];
    mul_inert_vec(buf, d.crb + 10 * m.dof_bodyid[i], d.cdof + 6 * i);
    for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) mat(d.qM, m.nv, i, j) = 0;
    mat(d.qM, m.nv, i, i) = m.dof_armature[i];
    for (int j = i; j >= 0; j = m.dof_parentid[j])
      mat(d.qM, m.nv, i, j) += dot6(d.cdof + 6 * j, buf);
  }
}

// mj_factorI: in-place L'DL of the tree-sparse matrix M (dense storage) into LD, DiagInv.
template <class PM, class PL, class PD>
MYRIAD_HD void factor(const ModelView<scalar_of<element_of<PL>>>& m, PM M, PL LD, PD diag_inv) {
  using T = element_of<PL>;
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i)
    for (int j = i; j >= 0; j = m.dof_parentid[j]) mat(LD, nv, i, j) = M[i * nv + j];
  // MuJoCo 3's mj_factorI: with invD = 1 / L(k,k), row i of each ancestor (nearest first) gains
  // L(k, 0..i) times -L(k,i) invD, then row k's off-diagonal entries are scaled by invD (MuJoCo 2
  // divided by L(k,k) instead: other rounding).
  for (int k = nv - 1; k >= 0; --k) {
    mat(LD, nv, k, k) = select(mat(LD, nv, k, k) < T(kMinVal), T(kMinVal), mat(LD, nv, k, k));
    const T inv = T(1) / mat(LD, nv, k, k);
    diag_inv[k] = inv;
    for (int i = m.dof_parentid[k]; i >= 0; i = m.dof_parentid[i]) {
      const T s = -mat(LD, nv, k, i) * inv;
      for (int j = i; j >= 0; j = m.dof_parentid[j]) mat(LD, nv, i, j) += mat(LD, nv, k, j) * s;
    }
    for (int i = m.dof_parentid[k]; i >= 0; i = m.dof_parentid[i]) mat(LD, nv, k, i) *= inv;
  }
}

// mj_solveLD: x <- inv(L'DL) x.
template <class PL, class PD, class PX>
MYRIAD_HD void solve(const ModelView<scalar_of<element_of<PX>>>& m, PL LD, PD diag_inv, PX x) {
  using T = element_of<PX>;
  const int nv = m.nv;
  for (int i = nv - 1; i >= 0; --i) {
    const T xi = x[i];
    if constexpr (std::is_floating_point_v<T>) {
      if (xi == T(0)) continue;
      for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) x[j] -= LD[i * nv + j] * xi;
    } else {  // a lane whose xi is zero keeps its x (the scalar code skips it)
      const auto zero = xi == T(0);
      for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j])
        x[j] = select(zero, x[j], x[j] - LD[i * nv + j] * xi);
    }
  }
  for (int i = 0; i < nv; ++i) x[i] *= diag_inv[i];
  // x(i) -= L(i, ancestors) . x(ancestors), the dot product summed as MuJoCo 3's mju_dotSparse
  // sums it: ancestors root first, four running sums while more than four terms remain.
  for (int i = 0; i < nv; ++i) {
    int anc[64];  // nv <= 64 is checked at import
    int n = 0;
    for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) anc[n++] = j;
    if (n == 0) continue;
    T res = T(0);
    int k = 0;
    if (n - 4 > 0) {
      T r0 = T(0), r1 = T(0), r2 = T(0), r3 = T(0);
      for (; k < n - 4; k += 4) {
        r0 += LD[i * nv + anc[n - 1 - k]] * x[anc[n - 1 - k]];
        r1 += LD[i * nv + anc[n - 2 - k]] * x[anc[n - 2 - k]];
        r2 += LD[i * nv + anc[n - 3 - k]] * x[anc[n - 3 - k]];
        r3 += LD[i * nv + anc[n - 4 - k]] * x[anc[n - 4 - k]];
      }
      res = (r0 + r2) + (r1 + r3);
    }
    for (; k < n; ++k) res += LD[i * nv + anc[n - 1 - k]] * x[anc[n - 1 - k]];
    x[i] -= res;
  }
}

// mj_comVel: body velocities (cvel) and the time derivatives of the motion subspaces.
template <class T, int Block>
MYRIAD_HD void com_vel(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  for (int k = 0; k < 6; ++k) d.cvel[k] = 0;
  for (int i = 1; i < m.nbody; ++i) {
    T cvel[6];
    for (int k = 0; k < 6; ++k) cvel[k] = d.cvel[6 * m.body_parentid[i] + k];
    for (int jj = 0; jj < m.body_jntnum[i]; ++jj) {
      const int j = m.body_jntadr[i] + jj;
      int da = m.jnt_dofadr[j];
      int rot = 0;
      if (m.jnt_type[j] == kFree) {
        // Translation: cdof_dot is zero; its velocity joins cvel before the rotation's.
        for (int r = 0; r < 3; ++r) {
          for (int k = 0; k < 6; ++k) d.cdof_dot[6 * (da + r) + k] = 0;
          for (int k = 0; k < 6; ++k) cvel[k] += d.cdof[6 * (da + r) + k] * d.qvel[da + r];
        }
        da += 3;
        rot = 3;
      } else if (m.jnt_type[j] == kBall) {
        rot = 3;
      }
      if (rot == 3) {
        for (int r = 0; r < 3; ++r)
          cross_motion(d.cdof_dot + 6 * (da + r), cvel, d.cdof + 6 * (da + r));
        for (int r = 0; r < 3; ++r)
          for (int k = 0; k < 6; ++k) cvel[k] += d.cdof[6 * (da + r) + k] * d.qvel[da + r];
      } else {
        cross_motion(d.cdof_dot + 6 * da, cvel, d.cdof + 6 * da);
        for (int k = 0; k < 6; ++k) cvel[k] += d.cdof[6 * da + k] * d.qvel[da];
      }
    }
    for (int k = 0; k < 6; ++k) d.cvel[6 * i + k] = cvel[k];
  }
}

// mj_passive: joint springs (toward qpos_spring) and dampers.
template <class T, int Block>
MYRIAD_HD void passive(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  using S = scalar_of<T>;
  for (int i = 0; i < m.nv; ++i) d.qfrc_passive[i] = 0;
  for (int j = 0; j < m.njnt && m.spring_enabled; ++j) {
    const S k = m.jnt_stiffness[j];
    if (k == S(0)) continue;
    int pa = m.jnt_qposadr[j], da = m.jnt_dofadr[j];
    switch (m.jnt_type[j]) {
      case kFree:
        for (int r = 0; r < 3; ++r)
          d.qfrc_passive[da + r] = -k * (d.qpos[pa + r] - m.qpos_spring[pa + r]);
        pa += 3;
        da += 3;
        [[fallthrough]];
      case kBall: {
        T dif[3];
        sub_quat(dif, d.qpos + pa, m.qpos_spring + pa);
        for (int r = 0; r < 3; ++r) d.qfrc_passive[da + r] = -k * dif[r];
        break;
      }
      default:
        d.qfrc_passive[da] = -k * (d.qpos[pa] - m.qpos_spring[pa]);
    }
  }
  if (m.damper_enabled)
    for (int i = 0; i < m.nv; ++i) d.qfrc_passive[i] -= m.dof_damping[i] * d.qvel[i];
  // Tendon springs and dampers, through the tendon Jacobian.
  for (int t = 0; t < m.ntendon; ++t) {
    const S k = m.spring_enabled ? m.tendon_stiffness[t] : S(0);
    const S b = m.damper_enabled ? m.tendon_damping[t] : S(0);
    if (k == S(0) && b == S(0)) continue;
    const T force = -k * (d.ten_length[t] - m.tendon_lengthspring[t]) - b * d.ten_velocity[t];
    for (int i = 0; i < m.nv; ++i) d.qfrc_passive[i] += d.ten_J[t * m.nv + i] * force;
  }
}

// mj_rne without accelerations: qfrc_bias = Coriolis, centrifugal and gravity forces.
template <class T, int Block>
MYRIAD_HD void rne(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  for (int k = 0; k < 6; ++k) d.cacc[k] = 0;
  if (m.gravity_enabled)
    for (int k = 0; k < 3; ++k) d.cacc[3 + k] = -m.gravity[k];
  for (int i = 1; i < m.nbody; ++i) {
    auto cacc = d.cacc + 6 * i;
    for (int k = 0; k < 6; ++k) cacc[k] = d.cacc[6 * m.body_parentid[i] + k];
    for (int r = 0; r < m.body_dofnum[i]; ++r) {
      const int dof = m.body_dofadr[i] + r;
      for (int k = 0; k < 6; ++k) cacc[k] += d.cdof_dot[6 * dof + k] * d.qvel[dof];
    }
    T f1[6], f2[6], tmp[6];
    mul_inert_vec(f1, d.cinert + 10 * i, cacc);
    mul_inert_vec(tmp, d.cinert + 10 * i, d.cvel + 6 * i);
    cross_force(f2, d.cvel + 6 * i, tmp);
    for (int k = 0; k < 6; ++k) d.cfrc[6 * i + k] = f1[k] + f2[k];
  }
  for (int i = m.nbody - 1; i > 0; --i) {
    const int p = m.body_parentid[i];
    if (p > 0)
      for (int k = 0; k < 6; ++k) d.cfrc[6 * p + k] += d.cfrc[6 * i + k];
  }
  for (int i = 0; i < m.nv; ++i)
    d.qfrc_bias[i] = dot6(d.cdof + 6 * i, d.cfrc + 6 * m.dof_bodyid[i]);
}

// mj_fwdActuation for joint and fixed-tendon transmissions without activation dynamics.
template <class T, int Block>
MYRIAD_HD void actuation(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  using S = scalar_of<T>;
  for (int i = 0; i < m.nv; ++i) d.qfrc_actuator[i] = 0;
  if (m.nu == 0 || !m.actuation_enabled) return;
  // A NaN or huge control zeroes every control (mj_checkCtrl-like guard in mj_fwdActuation).
  auto bad = T(0) < T(0);  // false (in every lane)
  for (int u = 0; u < m.nu; ++u) {
    const T c = d.ctrl[u];
    bad = bad || !(c == c) || c > T(1e10) || c < T(-1e10);
  }
  for (int u = 0; u < m.nu; ++u) {
    T ctrl = select(bad, T(0), d.ctrl[u]);
    if (m.clamp_ctrl && m.actuator_ctrllimited[u]) {
      const S lo = m.actuator_ctrlrange[2 * u], hi = m.actuator_ctrlrange[2 * u + 1];
      ctrl = select(ctrl < lo, T(lo), select(ctrl > hi, T(hi), ctrl));
    }
    const int id = m.actuator_trnid[u];
    const bool on_tendon = m.actuator_trntype[u] == kTrnTendon;
    const S gear = m.actuator_gear[u];
    const T length = gear * (on_tendon ? d.ten_length[id] : d.qpos[m.jnt_qposadr[id]]);
    const T velocity = gear * (on_tendon ? d.ten_velocity[id] : d.qvel[m.jnt_dofadr[id]]);
    const S* g = m.actuator_gainprm + 3 * u;
    const T gain =
        m.actuator_gaintype[u] == kGainFixed ? T(g[0]) : g[0] + g[1] * length + g[2] * velocity;
    T force = gain * ctrl;
    if (m.actuator_biastype[u] == kBiasAffine) {
      const S* b = m.actuator_biasprm + 3 * u;
      force += b[0] + b[1] * length + b[2] * velocity;
    }
    if (m.actuator_forcelimited[u]) {
      const S lo = m.actuator_forcerange[2 * u], hi = m.actuator_forcerange[2 * u + 1];
      force = select(force < lo, T(lo), select(force > hi, T(hi), force));
    }
    d.actuator_force[u] = force;
    if (on_tendon) {
      for (int i = 0; i < m.nv; ++i) d.qfrc_actuator[i] += gear * force * d.ten_J[id * m.nv + i];
    } else {
      d.qfrc_actuator[m.jnt_dofadr[id]] += gear * force;
    }
  }
  // The joint's total actuator force within its actuatorfrcrange (MuJoCo 3; actuator_force is
  // left as each actuator made it). Hinge and slide joints: the importer refuses the others.
  for (int j = 0; j < m.njnt; ++j) {
    if (!m.jnt_actfrclimited[j]) continue;
    const S lo = m.jnt_actfrcrange[2 * j], hi = m.jnt_actfrcrange[2 * j + 1];
    T& f = d.qfrc_actuator[m.jnt_dofadr[j]];
    f = select(f < lo, T(lo), select(f > hi, T(hi), f));
  }
}

// mj_collision: (geom_xpos, geom_xmat) => (contact, ncon) over the model's candidate pairs. The
// contact list has the model's bound (ncon_max) plus the pair functions' room (ncon_scratch), so
// no contact is ever dropped.
template <class T, int Block>
MYRIAD_HD void collision_stage(const ModelView<T>& m, EnvData<T, Block>& d) {
  const collision::CollisionModel<T> cm = collision::collision_model<T>(m);
  const auto* pairs = reinterpret_cast<const collision::CollisionPair*>(m.candidate_pairs);
  d.ncon[0] = T(collision::collide(cm, pairs, m.ncandidate, d.geom_xpos, d.geom_xmat,
                                   constraint::contacts_of(d), m.ncon_max + m.ncon_scratch));
}

// The same in the staged launch's two steps (physics/launch.h; collide.h's collide_into_slot and
// gather_contacts): candidate pair ip, of group kGroup, for one env: (geom_xpos, geom_xmat) =>
// (its contacts in its slot of the list, pair_ncon[ip]); then per env (pair_ncon, the slots) =>
// (contact, ncon), collision_stage's bits.
template <class T, int kGroup, class Arena = collision::ccd::LocalPolytope<double>, int Block>
MYRIAD_HD void collision_pair(const ModelView<T>& m, EnvData<T, Block>& d, int ip,
                              Arena&& arena = Arena()) {
  collision::collide_into_slot<T, kGroup>(
      collision::collision_model<T>(m),
      reinterpret_cast<const collision::CollisionPair*>(m.candidate_pairs), m.candidate_slot, ip,
      d.geom_xpos, d.geom_xmat, constraint::contacts_of(d), d.pair_ncon, arena);
}
// A GJK/EPA candidate pair ip (group kGroup: kPairsHfield, kPairsCcd) by lane group grp
// (hfield.h's hfield_convex_group, convex.h's convex_convex_group): the same slot and count as
// collision_pair<T, kGroup>. round: the group's shared room.
template <int kGroup, class T, class G, class Arena, int Block>
MYRIAD_HD void collision_ccd_group(const G& grp, const ModelView<T>& m, EnvData<T, Block>& d,
                                   int ip, collision::ContactValues<double>* round, Arena& arena) {
  collision::collide_ccd_into_slot<kGroup>(
      grp, collision::collision_model<T>(m),
      reinterpret_cast<const collision::CollisionPair*>(m.candidate_pairs), m.candidate_slot, ip,
      d.geom_xpos, d.geom_xmat, constraint::contacts_of(d), d.pair_ncon, round, arena);
}
template <class T, int Block>
MYRIAD_HD void collision_gather(const ModelView<T>& m, EnvData<T, Block>& d) {
  const auto* pairs = reinterpret_cast<const collision::CollisionPair*>(m.candidate_pairs);
  d.ncon[0] =
      T(collision::gather_contacts(collision::collision_model<T>(m), pairs, m.candidate_slot,
                                   m.ncandidate, d.pair_ncon, constraint::contacts_of(d)));
}

// mj_forward's stages, grouped as MuJoCo's engine_forward.c. forward() runs them in order for
// one env; physics/launch.h's staged launch runs each over the whole batch, one kernel per stage.

// Position: (qpos) => (poses, com quantities, tendon lengths and Jacobians, qM and its factor).
template <class T, int Block>
MYRIAD_HD void forward_position(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  kinematics(m, d);
  com_pos(m, d);
  tendon(m, d);
  crb(m, d);
  factor(m, d.qM, d.qLD, d.qLDiagInv);
}

// Constraint rows: (contacts, poses, qLD) => (efc rows: J, pos, margin, type and their impedance
// D, R, K, B).
template <class T, int Block>
MYRIAD_HD void forward_constraint_rows(const ModelView<T>& m, EnvData<T, Block>& d) {
  constraint::make_rows(m, d);
  constraint::make_impedance(m, d);
}

// Velocity without the constraint rows: (qvel) => (ten_velocity, cvel, cdof_dot, qfrc_passive,
// qfrc_bias).
template <class T, int Block>
MYRIAD_HD void forward_velocity_smooth(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  tendon_velocity(m, d);
  com_vel(m, d);
  passive(m, d);
  rne(m, d);
}

// Velocity: (qvel) => (ten_velocity, cvel, cdof_dot, qfrc_passive, qfrc_bias, efc_aref). The rows'
// reference accelerations read none of the smooth outputs, so they can come last (MuJoCo computes
// them between passive and rne).
template <class T, int Block>
MYRIAD_HD void forward_velocity(const ModelView<T>& m, EnvData<T, Block>& d) {
  forward_velocity_smooth(m, d);
  constraint::reference(m, d);
}

// Acceleration: (qfrc_passive, qfrc_bias, qfrc_actuator, qLD) => (qfrc_smooth, qacc_smooth).
template <class T, int Block>
MYRIAD_HD void forward_acceleration(const ModelView<scalar_of<T>>& m, EnvData<T, Block>& d) {
  for (int i = 0; i < m.nv; ++i) {
    d.qfrc_smooth[i] = (d.qfrc_passive[i] - d.qfrc_bias[i]) + d.qfrc_actuator[i];
    d.qacc_smooth[i] = d.qfrc_smooth[i];
  }
  solve(m, d.qLD, d.qLDiagInv, d.qacc_smooth);
}

// After the solve: (contacts, efc_force) => (cfrc_ext), then the sensors (physics/sensor.h).
template <class T, int Block>
MYRIAD_HD void post_constraint(const ModelView<T>& m, EnvData<T, Block>& d) {
  constraint::body_forces(m, d);
  sensors(m, d);
}

// mj_forward: every stage above, then the constraint solve, (qacc_smooth, rows) => (qacc,
// efc_force, qfrc_constraint), the constraint force per body (cfrc_ext) and the sensors.
template <class T, int Block>
MYRIAD_HD void forward(const ModelView<T>& m, EnvData<T, Block>& d) {
  forward_position(m, d);
  collision_stage(m, d);
  forward_constraint_rows(m, d);
  forward_velocity(m, d);
  actuation(m, d);
  forward_acceleration(m, d);
  constraint::solve(m, d);
  post_constraint(m, d);
}

// mj_integratePos: qpos <- qpos (+) h * qvel on the joint manifolds.
template <class T, class Q, class V>
MYRIAD_HD void integrate_pos(const ModelView<T>& m, Q qpos, V qvel, T h) {
  for (int j = 0; j < m.njnt; ++j) {
    int pa = m.jnt_qposadr[j], da = m.jnt_dofadr[j];
    switch (m.jnt_type[j]) {
      case kFree:
        for (int r = 0; r < 3; ++r) qpos[pa + r] += h * qvel[da + r];
        pa += 3;
        da += 3;
        [[fallthrough]];
      case kBall:
        quat_integrate(qpos + pa, qvel + da, h);
        break;
      default:
        qpos[pa] += h * qvel[da];
    }
  }
}

// The implicitfast integrator: physics/implicit.h (it uses mat, factor, solve and integrate_pos).
}  // namespace myriad::physics
#include "physics/implicit.h"
namespace myriad::physics {

// mj_Euler: semi-implicit Euler; with joint damping, the damping is implicit
// (qacc from (M + h diag(damping)) a = qfrc_smooth + qfrc_constraint, as MuJoCo 2.2 does).
template <class T, int Block>
MYRIAD_HD void euler_semi_implicit(const ModelView<T>& m, EnvData<T, Block>& d) {
  const T h = m.timestep;
  auto acc = d.qacc;
  if (m.any_damping) {
    // qM is rebuilt by the next forward, so it can hold M + h B here.
    for (int i = 0; i < m.nv; ++i) mat(d.qM, m.nv, i, i) += h * m.dof_damping[i];
    factor(m, d.qM, d.qLD, d.qLDiagInv);
    for (int i = 0; i < m.nv; ++i) d.qacc_int[i] = d.qfrc_smooth[i] + d.qfrc_constraint[i];
    solve(m, d.qLD, d.qLDiagInv, d.qacc_int);
    acc = d.qacc_int;
  }
  for (int i = 0; i < m.nv; ++i) d.qvel[i] += h * acc[i];
  integrate_pos(m, d.qpos, d.qvel, h);
  d.time[0] += h;
  // MuJoCo 3 warm-starts the next step from this step's qacc (not from each solve's).
  for (int i = 0; i < m.nv; ++i) d.qacc_warmstart[i] = d.qacc[i];
}

// The integrator of an Euler-family model: implicitfast (implicit.h) or semi-implicit Euler.
// The staged launch runs them as two kernels, so that the Euler models' kernel does not carry
// implicitfast's registers.
template <class T, int Block>
MYRIAD_HD void euler(const ModelView<T>& m, EnvData<T, Block>& d) {
  if (m.integrator == kImplicitFast) return implicit_fast(m, d);
  euler_semi_implicit(m, d);
}

// mj_RungeKutta(4): classic RK4 over (qpos, qvel); positions advance with the averaged velocity.
// In four parts so that a staged launch can run forward's stages between them: rk4_begin, then
// for s = 1, 2, 3 rk4_stage_begin(s), forward, rk4_stage_end(s), then rk4_finish. Nothing in
// forward reads time, so it moves once, at the end (mj_RungeKutta sets it per stage).
template <class T, int Block>
MYRIAD_HD void rk4_begin(const ModelView<T>& m, EnvData<T, Block>& d) {
  // The step's sensors are the first forward's (mj_RungeKutta's stages skip them).
  for (int k = 0; k < m.nsensordata; ++k) d.rk_sensordata[k] = d.sensordata[k];
  for (int k = 0; k < m.nq; ++k) d.rk_qpos0[k] = d.qpos[k];
  for (int k = 0; k < m.nv; ++k) {
    d.rk_qvel0[k] = d.qvel[k];
    d.rk_qvel[k] = d.qvel[k];
    d.rk_qacc[k] = d.qacc[k];
  }
}

// Stage s starts from x0 + h A[s-1] * (stage s-1's derivative), A = (1/2, 1/2, 1).
template <class T, int Block>
MYRIAD_HD void rk4_stage_begin(const ModelView<T>& m, EnvData<T, Block>& d, int s) {
  const T h = m.timestep;
  const T a = s == 3 ? T(1) : T(0.5);
  const int nv = m.nv;
  for (int k = 0; k < m.nq; ++k) d.qpos[k] = d.rk_qpos0[k];
  T dxv[64];  // stage velocity a * qvel_{s-1}; nv <= 64 is checked at import
  for (int k = 0; k < nv; ++k) dxv[k] = a * d.rk_qvel[(s - 1) * nv + k];
  integrate_pos(m, d.qpos, dxv, h);
  for (int k = 0; k < nv; ++k) d.qvel[k] = d.rk_qvel0[k] + h * (a * d.rk_qacc[(s - 1) * nv + k]);
}

template <class T, int Block>
MYRIAD_HD void rk4_stage_end(const ModelView<T>& m, EnvData<T, Block>& d, int s) {
  for (int k = 0; k < m.nv; ++k) {
    d.rk_qvel[s * m.nv + k] = d.qvel[k];
    d.rk_qacc[s * m.nv + k] = d.qacc[k];
  }
}

// (rk_qvel, rk_qacc of the four stages) => (qpos, qvel, time at the end of the step).
template <class T, int Block>
MYRIAD_HD void rk4_finish(const ModelView<T>& m, EnvData<T, Block>& d) {
  const T h = m.timestep;
  const T B[4] = {T(1.0 / 6), T(1.0 / 3), T(1.0 / 3), T(1.0 / 6)};
  const int nv = m.nv;
  // The weighted acceleration goes straight into qvel (one array on a GPU thread's stack, not
  // two); the sums are the same, in the same order.
  T vel[64];
  for (int k = 0; k < nv; ++k) {
    T acc = 0;
    vel[k] = 0;
    for (int s = 0; s < 4; ++s) {
      vel[k] += B[s] * d.rk_qvel[s * nv + k];
      acc += B[s] * d.rk_qacc[s * nv + k];
    }
    d.qvel[k] = d.rk_qvel0[k] + h * acc;
  }
  for (int k = 0; k < m.nq; ++k) d.qpos[k] = d.rk_qpos0[k];
  integrate_pos(m, d.qpos, vel, h);
  d.time[0] += h;
  for (int k = 0; k < m.nsensordata; ++k) d.sensordata[k] = d.rk_sensordata[k];
  // MuJoCo 3 warm-starts the next step from the last stage's qacc.
  for (int k = 0; k < nv; ++k) d.qacc_warmstart[k] = d.qacc[k];
}

template <class T, int Block>
MYRIAD_HD void rk4(const ModelView<T>& m, EnvData<T, Block>& d) {
  rk4_begin(m, d);
  for (int s = 1; s < 4; ++s) {
    rk4_stage_begin(m, d, s);
    forward(m, d);
    rk4_stage_end(m, d, s);
  }
  rk4_finish(m, d);
}

// mj_step: forward, then the model's integrator.
template <class T, int Block>
MYRIAD_HD void step(const ModelView<T>& m, EnvData<T, Block>& d) {
  forward(m, d);
  if (m.integrator == kRK4) {
    rk4(m, d);
  } else {
    euler(m, d);
  }
}

}  // namespace myriad::physics
