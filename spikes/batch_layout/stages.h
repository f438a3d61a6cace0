// Two uniform-work stages of the physics step, written once over a value type T and a field
// handle P, and the same source on the CPU and under nvcc. T = float runs one env; T = Lanes<W>
// runs W envs, one per lane (the blocked "AoSoA" layout [N / W][size][W] seen as arrays of
// Lanes<W>). P is a plain pointer (an env's contiguous slice: the engine's env-major layout, or a
// tile's Lanes) or Strided<float> (one GPU thread's env inside a tile of 32: element k at
// base + 32 k). Both follow physics/pipeline.h:
// - kinematics: (qpos) => (xpos, xquat, xmat, xipos), MuJoCo's mj_kinematics for a tree of free
//   and hinge joints;
// - cholesky: (A) => (L), the dense factor the Newton solver takes of its Hessian every
//   iteration (physics/constraint/newton.h), here on an nv x nv matrix.
#pragma once

#include <cstdint>
#include <vector>

#if defined(__CUDACC__)
#define SPIKE_HD __host__ __device__ __forceinline__
#else
#define SPIKE_HD inline
#include "lanes.h"
#endif

namespace spike {

#if defined(__CUDACC__)
SPIKE_HD float select(bool c, float a, float b) { return c ? a : b; }
template <class T>
SPIKE_HD T broadcast(float x) {
  return x;
}
#endif

enum class Joint : int32_t { kNone, kFree, kHinge };

// A tree like Gymnasium's Ant: a free torso and four legs of three bodies, two hinges each.
struct TreeModel {
  int nbody = 0, nq = 0, nv = 0;
  std::vector<int32_t> parent, qposadr;
  std::vector<Joint> joint;
  std::vector<float> body_pos, body_quat, body_ipos, jnt_axis, jnt_pos;  // [nbody, 3 or 4]
};

// The arrays of a TreeModel (host or device memory).
struct TreeView {
  int nbody, nq, nv;
  const int32_t *parent, *qposadr;
  const Joint* joint;
  const float *body_pos, *body_quat, *body_ipos, *jnt_axis, *jnt_pos;
};

inline TreeView view_of(const TreeModel& m) {
  return {m.nbody,
          m.nq,
          m.nv,
          m.parent.data(),
          m.qposadr.data(),
          m.joint.data(),
          m.body_pos.data(),
          m.body_quat.data(),
          m.body_ipos.data(),
          m.jnt_axis.data(),
          m.jnt_pos.data()};
}

// One env's field inside a tile of `stride` envs: element k at p[k * stride].
template <class T>
struct Strided {
  T* p;
  int stride;
  SPIKE_HD T& operator[](int k) const { return p[k * stride]; }
  SPIKE_HD Strided operator+(int k) const { return {p + k * stride, stride}; }
};

template <class P>
struct KinematicsData {
  P qpos;                      // [nq]
  P xpos, xquat, xmat, xipos;  // [nbody, 3], [nbody, 4], [nbody, 9], [nbody, 3]
};

// out = a * b (quaternions, w first); a or b may be model constants (float).
template <class T, class O, class A, class B>
SPIKE_HD void mul_quat(O out, A a, B b) {
  const T w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  const T x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  const T y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  const T z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  out[0] = w, out[1] = x, out[2] = y, out[3] = z;
}

template <class T, class O, class Q>
SPIKE_HD void quat_to_mat(O r, Q q) {
  const T ww = q[0] * q[0], xx = q[1] * q[1], yy = q[2] * q[2], zz = q[3] * q[3];
  const T wx = q[0] * q[1], wy = q[0] * q[2], wz = q[0] * q[3];
  const T xy = q[1] * q[2], xz = q[1] * q[3], yz = q[2] * q[3];
  r[0] = ww + xx - yy - zz, r[1] = 2.0f * (xy - wz), r[2] = 2.0f * (xz + wy);
  r[3] = 2.0f * (xy + wz), r[4] = ww - xx + yy - zz, r[5] = 2.0f * (yz - wx);
  r[6] = 2.0f * (xz - wy), r[7] = 2.0f * (yz + wx), r[8] = ww - xx - yy + zz;
}

// out = R v for a row-major 3x3 R.
template <class O, class R, class V>
SPIKE_HD void mul_mat_vec(O out, R r, V v) {
  for (int i = 0; i < 3; ++i) out[i] = r[3 * i] * v[0] + r[3 * i + 1] * v[1] + r[3 * i + 2] * v[2];
}

// A quaternion scaled to unit length; the identity where its norm is ~0 (mju_normalize4).
template <class T>
SPIKE_HD void normalize_quat(T* q) {
  const T norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const auto tiny = norm < 1e-15f;
  const T one = broadcast<T>(1.0f), zero = broadcast<T>(0.0f);
  q[0] = select(tiny, one, q[0] / norm);
  for (int k = 1; k < 4; ++k) q[k] = select(tiny, zero, q[k] / norm);
}

// (qpos) => (xpos, xquat, xmat, xipos)
template <class T, class P>
SPIKE_HD void kinematics(const TreeView& m, const KinematicsData<P>& d) {
  for (int k = 0; k < 3; ++k) d.xpos[k] = d.xipos[k] = broadcast<T>(0.0f);
  for (int k = 0; k < 4; ++k) d.xquat[k] = broadcast<T>(k == 0 ? 1.0f : 0.0f);
  for (int k = 0; k < 9; ++k) d.xmat[k] = broadcast<T>(k % 4 == 0 ? 1.0f : 0.0f);
  for (int b = 1; b < m.nbody; ++b) {
    T pos[3], quat[4];
    if (m.joint[b] == Joint::kFree) {
      for (int k = 0; k < 3; ++k) pos[k] = d.qpos[m.qposadr[b] + k];
      for (int k = 0; k < 4; ++k) quat[k] = d.qpos[m.qposadr[b] + 3 + k];
    } else {
      const int p = m.parent[b];
      T offset[3];
      mul_mat_vec(offset, d.xmat + 9 * p, m.body_pos + 3 * b);
      for (int k = 0; k < 3; ++k) pos[k] = d.xpos[3 * p + k] + offset[k];
      mul_quat<T>(quat, d.xquat + 4 * p, m.body_quat + 4 * b);
      if (m.joint[b] == Joint::kHinge) {
        // Rotate about the joint's axis through its anchor (mj_kinematics' hinge case).
        T rot[9], anchor[3];
        quat_to_mat<T>(rot, quat);
        mul_mat_vec(anchor, rot, m.jnt_pos + 3 * b);
        for (int k = 0; k < 3; ++k) anchor[k] = anchor[k] + pos[k];
        const T half = d.qpos[m.qposadr[b]] * 0.5f;
        const T s = sin(half);
        const T local[4] = {cos(half), s * m.jnt_axis[3 * b], s * m.jnt_axis[3 * b + 1],
                            s * m.jnt_axis[3 * b + 2]};
        T turned[4];
        mul_quat<T>(turned, quat, local);
        for (int k = 0; k < 4; ++k) quat[k] = turned[k];
        quat_to_mat<T>(rot, quat);
        mul_mat_vec(offset, rot, m.jnt_pos + 3 * b);
        for (int k = 0; k < 3; ++k) pos[k] = anchor[k] - offset[k];
      }
    }
    normalize_quat(quat);
    for (int k = 0; k < 3; ++k) d.xpos[3 * b + k] = pos[k];
    for (int k = 0; k < 4; ++k) d.xquat[4 * b + k] = quat[k];
    quat_to_mat<T>(d.xmat + 9 * b, quat);
    T inertial[3];
    mul_mat_vec(inertial, d.xmat + 9 * b, m.body_ipos + 3 * b);
    for (int k = 0; k < 3; ++k) d.xipos[3 * b + k] = pos[k] + inertial[k];
  }
}

// (A [n, n], symmetric positive definite) => (L [n, n], lower triangle: A = L L^T). A pivot
// below 1e-15 is raised to it, as the engine's factor does.
template <class T, class PA, class PL>
SPIKE_HD void cholesky(int n, PA a, PL l) {
  for (int j = 0; j < n; ++j) {
    T diag = a[j * n + j];
    for (int k = 0; k < j; ++k) diag = diag - l[j * n + k] * l[j * n + k];
    diag = sqrt(select(diag < 1e-15f, broadcast<T>(1e-15f), diag));
    l[j * n + j] = diag;
    const T inverse = 1.0f / diag;
    for (int i = j + 1; i < n; ++i) {
      T sum = a[i * n + j];
      for (int k = 0; k < j; ++k) sum = sum - l[i * n + k] * l[j * n + k];
      l[i * n + j] = sum * inverse;
    }
  }
}

}  // namespace spike
