// Narrow phase for plane, sphere and capsule pairs, computing what libmujoco 2.2.2's
// engine_collision_primitive.c computes (same cases, same arithmetic where it decides a branch).
//
// Every pair function has the form
//   int f(Contact<T>* con, T margin, const T* pos1, const T* mat1, const T* size1,
//         const T* pos2, const T* mat2, const T* size2)
// with geom 1 of the lower type (plane < sphere < capsule < box), world positions pos [3],
// world rotations mat [3x3 row-major, columns = geom axes] and MuJoCo's geom sizes (sphere:
// radius; capsule: radius, half-length of the segment along local z; box: half-sizes; plane:
// unused, its normal is local z). It writes up to max_pair_contacts(type1, type2) contacts
// (dist, pos, frame normal and, where MuJoCo sets it, the first tangent; the rest of the frame
// is zero until make_frame) and returns how many. Contacts farther apart than margin are not
// reported.
#pragma once

#include "physics/collision/contact.h"

namespace myriad::physics::collision {

namespace detail {

template <class T>
MYRIAD_HD void set3(T* res, T x, T y, T z) {
  res[0] = x;
  res[1] = y;
  res[2] = z;
}

// Local axis k of a rotation (column k of the row-major matrix).
template <class T>
MYRIAD_HD void axis_of(T* res, const T* mat, int k) {
  set3(res, mat[k], mat[3 + k], mat[6 + k]);
}

// res = mat^T * v: world vector into the frame's coordinates.
template <class T, class M, class V>
MYRIAD_HD void mul_mat_t_vec3(T* res, M mat, V v) {
  const T r0 = mat[0] * v[0] + mat[3] * v[1] + mat[6] * v[2];
  const T r1 = mat[1] * v[0] + mat[4] * v[1] + mat[7] * v[2];
  const T r2 = mat[2] * v[0] + mat[5] * v[1] + mat[8] * v[2];
  set3(res, r0, r1, r2);
}

// res = base + x * axis.
template <class T>
MYRIAD_HD void point_on(T* res, const T* base, const T* axis, T x) {
  for (int i = 0; i < 3; ++i) res[i] = axis[i] * x + base[i];
}

template <class T>
MYRIAD_HD T clamp_unit(T x) {
  return x > T(1) ? T(1) : (x < T(-1) ? T(-1) : x);
}

// The normal and tangent rows after the normal start as zero (make_frame completes them).
template <class T>
MYRIAD_HD void clear_tangent(Contact<T>& c) {
  c.frame[3] = c.frame[4] = c.frame[5] = 0;
}

// Sphere (center c, radius r) against a plane through p with unit normal n (MuJoCo's
// _PlaneSphere, shared by plane-capsule): the contact sits halfway into the overlap.
template <class T>
MYRIAD_HD int plane_point(Contact<T>* con, T margin, const T* p, const T* n, const T* c, T r) {
  const T dif[3] = {c[0] - p[0], c[1] - p[1], c[2] - p[2]};
  const T height = dot3(dif, n);
  if (height > margin + r) return 0;
  Contact<T>& k = con[0];
  set3(k.frame, n[0], n[1], n[2]);
  k.dist = height - r;
  const T back = -k.dist / T(2) - r;
  for (int i = 0; i < 3; ++i) k.pos[i] = c[i] + n[i] * back;
  clear_tangent(k);
  return 1;
}

// Two spheres (MuJoCo's _SphereSphere, shared by the sphere and capsule pairs). With coincident
// centers the normal is the cross product of the two geoms' z axes (or +x if those are parallel).
template <class T>
MYRIAD_HD int sphere_point(Contact<T>* con, T margin, const T* c1, const T* mat1, T r1, const T* c2,
                           const T* mat2, T r2) {
  const T d[3] = {c2[0] - c1[0], c2[1] - c1[1], c2[2] - c1[2]};
  const T center_dist = sqrt(dot3(d, d));
  if (center_dist > margin + r1 + r2) return 0;
  Contact<T>& k = con[0];
  k.dist = center_dist - r1 - r2;
  set3(k.frame, d[0], d[1], d[2]);
  if (normalize3(k.frame) < T(kMinVal)) {
    T z1[3], z2[3];
    axis_of(z1, mat1, 2);
    axis_of(z2, mat2, 2);
    cross3(k.frame, z1, z2);
    normalize3(k.frame);
  }
  const T along = r1 + k.dist / T(2);
  for (int i = 0; i < 3; ++i) k.pos[i] = k.frame[i] * along + c1[i];
  clear_tangent(k);
  return 1;
}

}  // namespace detail

// Plane (normal = its z axis) and sphere: one contact.
template <class T>
MYRIAD_HD int plane_sphere(Contact<T>* con, T margin, const T* pos1, const T* mat1,
                           const T* /*size1*/, const T* pos2, const T* /*mat2*/, const T* size2) {
  T n[3];
  detail::axis_of(n, mat1, 2);
  return detail::plane_point(con, margin, pos1, n, pos2, size2[0]);
}

// Plane and capsule: one sphere test per segment end (+z end first); the first tangent of each
// contact is the capsule axis.
template <class T>
MYRIAD_HD int plane_capsule(Contact<T>* con, T margin, const T* pos1, const T* mat1,
                            const T* /*size1*/, const T* pos2, const T* mat2, const T* size2) {
  T n[3], axis[3];
  detail::axis_of(n, mat1, 2);
  detail::axis_of(axis, mat2, 2);
  const T seg[3] = {axis[0] * size2[1], axis[1] * size2[1], axis[2] * size2[1]};
  const T top[3] = {pos2[0] + seg[0], pos2[1] + seg[1], pos2[2] + seg[2]};
  const T bottom[3] = {pos2[0] - seg[0], pos2[1] - seg[1], pos2[2] - seg[2]};
  int n_top = detail::plane_point(con, margin, pos1, n, top, size2[0]);
  int n_bottom = detail::plane_point(con + n_top, margin, pos1, n, bottom, size2[0]);
  for (int i = 0; i < n_top + n_bottom; ++i)
    detail::set3(con[i].frame + 3, axis[0], axis[1], axis[2]);
  return n_top + n_bottom;
}

// Plane and box: the corners on the plane side of the box center (along the normal) within
// margin, in corner order (bit 0: +x, bit 1: +y, bit 2: +z), at most 4.
template <class T>
MYRIAD_HD int plane_box(Contact<T>* con, T margin, const T* pos1, const T* mat1, const T* /*size1*/,
                        const T* pos2, const T* mat2, const T* size2) {
  T n[3];
  detail::axis_of(n, mat1, 2);
  const T dif[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
  const T center_height = dot3(dif, n);
  int count = 0;
  for (int corner = 0; corner < 8; ++corner) {
    const T local[3] = {(corner & 1) ? size2[0] : -size2[0], (corner & 2) ? size2[1] : -size2[1],
                        (corner & 4) ? size2[2] : -size2[2]};
    T offset[3];
    mul_mat_vec3(offset, mat2, local);
    const T below = dot3(n, offset);
    if (center_height + below > margin || below > T(0)) continue;
    Contact<T>& k = con[count];
    k.dist = center_height + below;
    detail::set3(k.frame, n[0], n[1], n[2]);
    detail::clear_tangent(k);
    const T back = -k.dist / T(2);
    for (int i = 0; i < 3; ++i) k.pos[i] = (offset[i] + pos2[i]) + n[i] * back;
    if (++count >= 4) break;
  }
  return count;
}

// Sphere and sphere: one contact.
template <class T>
MYRIAD_HD int sphere_sphere(Contact<T>* con, T margin, const T* pos1, const T* mat1, const T* size1,
                            const T* pos2, const T* mat2, const T* size2) {
  return detail::sphere_point(con, margin, pos1, mat1, size1[0], pos2, mat2, size2[0]);
}

// Sphere and capsule: the sphere against the nearest point of the capsule's segment.
template <class T>
MYRIAD_HD int sphere_capsule(Contact<T>* con, T margin, const T* pos1, const T* mat1,
                             const T* size1, const T* pos2, const T* mat2, const T* size2) {
  T axis[3];
  detail::axis_of(axis, mat2, 2);
  for (int i = 0; i < 3; ++i) axis[i] *= size2[1];
  const T dif[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
  const T x = detail::clamp_unit(dot3(axis, dif) / dot3(axis, axis));
  const T nearest[3] = {axis[0] * x + pos2[0], axis[1] * x + pos2[1], axis[2] * x + pos2[2]};
  return detail::sphere_point(con, margin, pos1, mat1, size1[0], nearest, mat2, size2[0]);
}

// Capsule and capsule: the closest points of the two segments, one contact; with parallel axes
// (|det| < kMinVal) up to two, from the segment ends (1's +end, 1's -end, then 2's +end, 2's
// -end, stopping at two).
template <class T>
MYRIAD_HD int capsule_capsule(Contact<T>* con, T margin, const T* pos1, const T* mat1,
                              const T* size1, const T* pos2, const T* mat2, const T* size2) {
  T a1[3], a2[3];
  detail::axis_of(a1, mat1, 2);
  detail::axis_of(a2, mat2, 2);
  for (int i = 0; i < 3; ++i) {
    a1[i] *= size1[1];
    a2[i] *= size2[1];
  }
  const T dif[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
  // Normal equations of min |pos1 + x1 a1 - pos2 - x2 a2|^2 over x1, x2 in [-1, 1].
  const T ma = dot3(a1, a1);
  const T mb = -dot3(a1, a2);
  const T mc = dot3(a2, a2);
  const T u = -dot3(a1, dif);
  const T v = dot3(a2, dif);
  const T det = ma * mc - mb * mb;
  T p1[3], p2[3];
  using detail::point_on;

  if (fabs(det) >= T(kMinVal)) {
    T x1 = (mc * u - mb * v) / det;
    T x2 = (ma * v - mb * u) / det;
    if (x1 > T(1)) {
      x1 = 1;
      x2 = (v - mb) / mc;
    } else if (x1 < T(-1)) {
      x1 = -1;
      x2 = (v + mb) / mc;
    }
    if (x2 > T(1)) {
      x2 = 1;
      x1 = detail::clamp_unit((u - mb) / ma);
    } else if (x2 < T(-1)) {
      x2 = -1;
      x1 = detail::clamp_unit((u + mb) / ma);
    }
    point_on(p1, pos1, a1, x1);
    point_on(p2, pos2, a2, x2);
    return detail::sphere_point(con, margin, p1, mat1, size1[0], p2, mat2, size2[0]);
  }

  // Parallel axes: segment ends of capsule 1, then of capsule 2, until two contacts.
  int n = 0;
  for (int end = 0; end < 4 && n < 2; ++end) {
    const T s = (end % 2 == 0) ? T(1) : T(-1);
    if (end < 2) {
      for (int i = 0; i < 3; ++i) p1[i] = pos1[i] + s * a1[i];
      point_on(p2, pos2, a2, detail::clamp_unit(end == 0 ? (v - mb) / mc : (v + mb) / mc));
    } else {
      for (int i = 0; i < 3; ++i) p2[i] = pos2[i] + s * a2[i];
      point_on(p1, pos1, a1, detail::clamp_unit(end == 2 ? (u - mb) / ma : (u + mb) / ma));
    }
    n += detail::sphere_point(con + n, margin, p1, mat1, size1[0], p2, mat2, size2[0]);
  }
  return n;
}

}  // namespace myriad::physics::collision
