// What the legged tasks read of a terrain height field (MYRIAD_HD, templated on the scalar):
//
//   surface_height   where a vertical ray from above meets the field: MuJoCo's two triangles per
//                    grid cell (as mj_rayHfield meets them), in closed form
//   terrain_normal   mjlab's terrain_normal_from_sensors: a plane fitted to scan hits (the
//                    eigenvector of their covariance with the smallest eigenvalue, pointing up),
//                    or (0, 0, 1) where the hits are too few, not planar or degenerate
#pragma once

#include <cmath>

#include "myriad/hd.h"

namespace myriad::envs::legged {

// A height field geom as the task reads it: size (MuJoCo's hfield_size: x, y half-extents, top
// height, base depth), data [nrow, ncol] elevations in [0, 1] (row = y), the geom's world
// position (its frame unrotated: the task checks).
template <class T>
struct FieldView {
  const T* size;
  const T* data;
  int nrow, ncol;
  const T* pos;
};

// The surface's height at world (x, y) into z; false outside the field.
template <class T>
MYRIAD_HD bool surface_height(const FieldView<T>& f, T x, T y, T& z) {
  const T dx = T(2) * f.size[0] / T(f.ncol - 1), dy = T(2) * f.size[1] / T(f.nrow - 1);
  const T fx = (x - f.pos[0] + f.size[0]) / dx, fy = (y - f.pos[1] + f.size[1]) / dy;
  if (!(fx >= T(0) && fy >= T(0) && fx <= T(f.ncol - 1) && fy <= T(f.nrow - 1))) return false;
  int c = static_cast<int>(floor(fx)), r = static_cast<int>(floor(fy));
  c = c > f.ncol - 2 ? f.ncol - 2 : c;
  r = r > f.nrow - 2 ? f.nrow - 2 : r;
  const T u = fx - T(c), v = fy - T(r);
  const T* row0 = f.data + r * f.ncol + c;
  const T* row1 = row0 + f.ncol;
  const T z00 = row0[0], z10 = row0[1], z01 = row1[0], z11 = row1[1];
  // The lower triangle (x0 y0, x1 y1, x1 y0) where v <= u, else the upper (x0 y0, x1 y1, x0 y1).
  const T e =
      v <= u ? z00 + u * (z10 - z00) + v * (z11 - z10) : z00 + v * (z01 - z00) + u * (z11 - z01);
  z = f.pos[2] + e * f.size[2];
  return true;
}

namespace detail {
// The eigenvalues (ascending) of the symmetric 3x3 matrix a (row-major, overwritten) and the
// eigenvector of the smallest into v, by cyclic Jacobi rotations.
template <class T>
MYRIAD_HD void symmetric_eigen3(T a[9], T eig[3], T v_min[3]) {
  T v[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int sweep = 0; sweep < 16; ++sweep) {
    const T off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
    if (!(off > T(1e-30) * (a[0] * a[0] + a[4] * a[4] + a[8] * a[8]))) break;
    for (int p = 0; p < 2; ++p)
      for (int q = p + 1; q < 3; ++q) {
        const T apq = a[3 * p + q];
        if (apq == T(0)) continue;
        const T theta = (a[3 * q + q] - a[3 * p + p]) / (T(2) * apq);
        const T t = (theta >= T(0) ? T(1) : T(-1)) / (fabs(theta) + sqrt(theta * theta + T(1)));
        const T c = T(1) / sqrt(t * t + T(1)), s = t * c;
        for (int k = 0; k < 3; ++k) {  // a = J^T a J
          const T akp = a[3 * k + p], akq = a[3 * k + q];
          a[3 * k + p] = c * akp - s * akq;
          a[3 * k + q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; ++k) {
          const T apk = a[3 * p + k], aqk = a[3 * q + k];
          a[3 * p + k] = c * apk - s * aqk;
          a[3 * q + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; ++k) {
          const T vkp = v[3 * k + p], vkq = v[3 * k + q];
          v[3 * k + p] = c * vkp - s * vkq;
          v[3 * k + q] = s * vkp + c * vkq;
        }
      }
  }
  int order[3] = {0, 1, 2};
  const T d[3] = {a[0], a[4], a[8]};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2 - i; ++j)
      if (d[order[j]] > d[order[j + 1]]) {
        const int tmp = order[j];
        order[j] = order[j + 1];
        order[j + 1] = tmp;
      }
  for (int k = 0; k < 3; ++k) eig[k] = d[order[k]];
  for (int k = 0; k < 3; ++k) v_min[k] = v[3 * k + order[0]];
}
}  // namespace detail

// The terrain's normal from hit points pts [count, 3] (mjlab: up to 32 of the scan's valid hits),
// into n; (0, 0, 1) with fewer than 3 points, when lambda0 / lambda1 >= 0.1 (not planar), when
// lambda1 <= lambda2 * 1e-6 (collinear) or when anything is not finite.
template <class T>
MYRIAD_HD void terrain_normal(const T* pts, int count, T n[3]) {
  n[0] = n[1] = T(0);
  n[2] = T(1);
  if (count < 3) return;
  T mean[3] = {0, 0, 0};
  for (int k = 0; k < count; ++k)
    for (int a = 0; a < 3; ++a) mean[a] += pts[3 * k + a];
  for (int a = 0; a < 3; ++a) mean[a] /= T(count);
  T cov[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int k = 0; k < count; ++k) {
    const T r[3] = {pts[3 * k] - mean[0], pts[3 * k + 1] - mean[1], pts[3 * k + 2] - mean[2]};
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) cov[3 * a + b] += r[a] * r[b];
  }
  for (T& c : cov) c /= T(count);
  for (const T c : cov)
    if (!std::isfinite(static_cast<double>(c))) return;
  T eig[3], v[3];
  detail::symmetric_eigen3(cov, eig, v);
  if (!(eig[0] < T(0.1) * eig[1]) || !(eig[1] > eig[2] * T(1e-6))) return;
  const T len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (!(len > T(0))) return;
  const T sign = v[2] < T(0) ? T(-1) : T(1);
  for (int a = 0; a < 3; ++a) n[a] = sign * v[a] / len;
}

}  // namespace myriad::envs::legged
