// Quaternion, rotation and 6D spatial-vector helpers, as MuJoCo's engine_util_spatial.c
// defines them (conventions: quaternions [w x y z]; 6-vectors [angular; linear]). Each argument
// has its own value type, so that a smooth stage can mix one env's values (or a tile's lanes,
// physics/lanes.h) with the model's scalar constants; branches on values are selects
// (physics/value.h), so a lane computes what the scalar code does.
#pragma once

#include <cmath>
#include <type_traits>

#include "myriad/hd.h"
#include "physics/value.h"

namespace myriad::physics {

// Unqualified math calls pick the float or double overload (host and device alike).
using std::atan2;
using std::cos;
using std::sin;
using std::sqrt;

// sin and cos of x (for lanes, one pass per lane, which libm can serve with one sincos call).
template <class T>
MYRIAD_HD void sin_cos(T x, T* s, T* c) {
  *s = sin(x);
  *c = cos(x);
}

template <class A, class B>
MYRIAD_HD auto dot3(A a, B b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

template <class R, class A, class B>
MYRIAD_HD void cross3(R res, A a, B b) {
  using T = element_of<R>;
  const T r0 = a[1] * b[2] - a[2] * b[1];
  const T r1 = a[2] * b[0] - a[0] * b[2];
  const T r2 = a[0] * b[1] - a[1] * b[0];
  res[0] = r0;
  res[1] = r1;
  res[2] = r2;
}

// MuJoCo's mju_dot for 6-vectors: ((p0 + p2) + (p1 + p3)) + (p4 + p5).
template <class A, class B>
MYRIAD_HD auto dot6(A a, B b) {
  return ((a[0] * b[0] + a[2] * b[2]) + (a[1] * b[1] + a[3] * b[3])) + (a[4] * b[4] + a[5] * b[5]);
}

// Normalizes in place; returns the norm. Below 1e-15 gives the unit quaternion; a norm within
// 1e-15 of 1 leaves the quaternion as it is (MuJoCo 3's mju_normalize4).
template <class T>
MYRIAD_HD T normalize4(T* q) {
  const T norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if constexpr (std::is_floating_point_v<T>) {
    if (norm < T(1e-15)) {
      q[0] = 1;
      q[1] = q[2] = q[3] = 0;
    } else if (fabs(norm - T(1)) > T(1e-15)) {
      const T inv = T(1) / norm;
      for (int k = 0; k < 4; ++k) q[k] *= inv;
    }
  } else {
    const auto small = norm < T(1e-15);
    const T inv = T(1) / norm;
    const T off = norm - T(1);
    const auto unit = !(off * off > T(1e-30));
    for (int k = 0; k < 4; ++k)
      q[k] = select(small, T(k == 0 ? 1 : 0), select(unit, q[k], q[k] * inv));
  }
  return norm;
}

// Normalizes in place; returns the norm. Below 1e-15 gives (1, 0, 0).
template <class T>
MYRIAD_HD T normalize3(T* v) {
  const T norm = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if constexpr (std::is_floating_point_v<T>) {
    if (norm < T(1e-15)) {
      v[0] = 1;
      v[1] = v[2] = 0;
    } else {
      const T inv = T(1) / norm;
      for (int k = 0; k < 3; ++k) v[k] *= inv;
    }
  } else {
    const auto small = norm < T(1e-15);
    const T inv = T(1) / norm;
    for (int k = 0; k < 3; ++k) v[k] = select(small, T(k == 0 ? 1 : 0), v[k] * inv);
  }
  return norm;
}

template <class R, class A, class B>
MYRIAD_HD void mul_quat(R res, A a, B b) {
  using T = element_of<R>;
  const T r0 = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  const T r1 = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  const T r2 = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  const T r3 = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  res[0] = r0;
  res[1] = r1;
  res[2] = r2;
  res[3] = r3;
}

// Rotates v by quaternion q (cross-product form, as MuJoCo 2.2.1+). T: the type of q's values
// (v may be the model's constants).
template <class R, class V, class Q>
MYRIAD_HD void rot_vec_quat(R res, V v, Q q) {
  using T = element_of<R>;
  if constexpr (std::is_floating_point_v<T>) {
    if (q[0] == T(1) && q[1] == T(0) && q[2] == T(0) && q[3] == T(0)) {
      res[0] = v[0];
      res[1] = v[1];
      res[2] = v[2];
      return;
    }
  }
  T tmp[3];
  cross3(tmp, q + 1, v);
  for (int k = 0; k < 3; ++k) tmp[k] += q[0] * v[k];
  T c[3];
  cross3(c, q + 1, tmp);
  if constexpr (std::is_floating_point_v<T>) {
    for (int k = 0; k < 3; ++k) res[k] = v[k] + T(2) * c[k];
  } else {
    const auto identity = q[0] == T(1) && q[1] == T(0) && q[2] == T(0) && q[3] == T(0);
    for (int k = 0; k < 3; ++k) res[k] = select(identity, T(v[k]), v[k] + T(2) * c[k]);
  }
}

template <class R, class Q>
MYRIAD_HD void quat2mat(R res, Q q) {
  using T = element_of<R>;
  if constexpr (std::is_floating_point_v<T>) {
    if (q[0] == T(1) && q[1] == T(0) && q[2] == T(0) && q[3] == T(0)) {
      for (int k = 0; k < 9; ++k) res[k] = (k % 4 == 0) ? T(1) : T(0);
      return;
    }
  }
  const T q00 = q[0] * q[0], q01 = q[0] * q[1], q02 = q[0] * q[2], q03 = q[0] * q[3];
  const T q11 = q[1] * q[1], q12 = q[1] * q[2], q13 = q[1] * q[3];
  const T q22 = q[2] * q[2], q23 = q[2] * q[3], q33 = q[3] * q[3];
  res[0] = q00 + q11 - q22 - q33;
  res[4] = q00 - q11 + q22 - q33;
  res[8] = q00 - q11 - q22 + q33;
  res[1] = T(2) * (q12 - q03);
  res[2] = T(2) * (q13 + q02);
  res[3] = T(2) * (q12 + q03);
  res[5] = T(2) * (q23 - q01);
  res[6] = T(2) * (q13 - q02);
  res[7] = T(2) * (q23 + q01);
  if constexpr (!std::is_floating_point_v<T>) {
    const auto identity = q[0] == T(1) && q[1] == T(0) && q[2] == T(0) && q[3] == T(0);
    for (int k = 0; k < 9; ++k) res[k] = select(identity, T(k % 4 == 0 ? 1 : 0), res[k]);
  }
}

// res = mat * v (mat row-major 3x3).
template <class R, class A, class B>
MYRIAD_HD void mul_mat_vec3(R res, A mat, B v) {
  using T = element_of<R>;
  const T r0 = mat[0] * v[0] + mat[1] * v[1] + mat[2] * v[2];
  const T r1 = mat[3] * v[0] + mat[4] * v[1] + mat[5] * v[2];
  const T r2 = mat[6] * v[0] + mat[7] * v[1] + mat[8] * v[2];
  res[0] = r0;
  res[1] = r1;
  res[2] = r2;
}

template <class T, class A>
MYRIAD_HD void axis_angle2quat(T* res, A axis, T angle) {
  T s;
  sin_cos(angle * T(0.5), &s, &res[0]);
  res[1] = axis[0] * s;
  res[2] = axis[1] * s;
  res[3] = axis[2] * s;
}

// q <- normalize(q * quat(axis = w/|w|, angle = scale*|w|)): MuJoCo's mju_quatIntegrate.
template <class T, class Q, class V>
MYRIAD_HD void quat_integrate(Q q, V w, T scale) {
  T axis[3] = {w[0], w[1], w[2]};
  const T angle = normalize3(axis) * scale;
  T qrot[4], res[4];
  axis_angle2quat(qrot, axis, angle);
  mul_quat(res, q, qrot);
  normalize4(res);
  for (int k = 0; k < 4; ++k) q[k] = res[k];
}

// Rotation vector of conj(qb) * qa (MuJoCo's mju_subQuat), angle wrapped to [-pi, pi]. T: the
// type of qa's values (qb may be the model's constants).
template <class T, class A, class B>
MYRIAD_HD void sub_quat(T* res, A qa, B qb) {
  const element_of<B> qneg[4] = {qb[0], -qb[1], -qb[2], -qb[3]};
  T dif[4];
  mul_quat(dif, qneg, qa);
  T axis[3] = {dif[1], dif[2], dif[3]};
  const T sin_a_2 = normalize3(axis);
  T speed = T(2) * atan2(sin_a_2, dif[0]);
  speed = select(speed > T(3.14159265358979323846), speed - T(2 * 3.14159265358979323846), speed);
  for (int k = 0; k < 3; ++k) res[k] = axis[k] * speed;
}

// Spatial inertia [Ixx Iyy Izz Ixy Ixz Iyz | h (= m d) | m] times a motion [w; v].
template <class R, class I, class V>
MYRIAD_HD void mul_inert_vec(R res, I i, V v) {
  using T = element_of<R>;
  res[0] = i[0] * v[0] + i[3] * v[1] + i[4] * v[2] - i[8] * v[4] + i[7] * v[5];
  res[1] = i[3] * v[0] + i[1] * v[1] + i[5] * v[2] + i[8] * v[3] - i[6] * v[5];
  res[2] = i[4] * v[0] + i[5] * v[1] + i[2] * v[2] - i[7] * v[3] + i[6] * v[4];
  res[3] = i[8] * v[1] - i[7] * v[2] + i[9] * v[3];
  res[4] = i[6] * v[2] - i[8] * v[0] + i[9] * v[4];
  res[5] = i[7] * v[0] - i[6] * v[1] + i[9] * v[5];
}

// Motion cross motion: [w x u_a; w x u_l + v_l x u_a].
template <class R, class V, class U>
MYRIAD_HD void cross_motion(R res, V v, U u) {
  using T = element_of<R>;
  T a[3], b[3];
  cross3(res, v, u);
  cross3(a, v, u + 3);
  cross3(b, v + 3, u);
  for (int k = 0; k < 3; ++k) res[3 + k] = a[k] + b[k];
}

// Motion cross force: [w x f_a + v_l x f_l; w x f_l].
template <class R, class V, class F>
MYRIAD_HD void cross_force(R res, V v, F f) {
  using T = element_of<R>;
  T a[3], b[3];
  cross3(a, v, f);
  cross3(b, v + 3, f + 3);
  for (int k = 0; k < 3; ++k) res[k] = a[k] + b[k];
  cross3(res + 3, v, f + 3);
}

}  // namespace myriad::physics
