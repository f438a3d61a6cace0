// Ray casts: the distance along a ray (pnt + x vec, x >= 0) to the first surface it meets, as
// libmujoco's engine_ray.c computes it (mju_rayGeom, mj_rayHfield, mj_ray): the same cases and
// the same arithmetic where it decides a branch, so hits and misses agree with libmujoco and
// distances to rounding. Every function returns -1 for no hit. A distance is in units of |vec|
// (vec need not be unit length). MYRIAD_HD; templated on the scalar.
//
// Used by the rangefinder and touch sensors (physics/sensor.h) and by height scans over the
// batch. Meshes are not ray-cast (the import refuses what would need it).
#pragma once

#include <cstdint>

#include "myriad/hd.h"
#include "physics/collision/contact.h"
#include "physics/spatial.h"
#include "physics/value.h"

namespace myriad::physics::ray {

using collision::kMinVal;
using std::ceil;
using std::fabs;
using std::floor;

namespace detail {

// The ray in a frame's coordinates: lpnt = mat' (pnt - pos), lvec = mat' vec.
template <class T>
MYRIAD_HD void to_local(const T* pos, const T* mat, const T* pnt, const T* vec, T* lpnt, T* lvec) {
  const T dif[3] = {pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]};
  for (int i = 0; i < 3; ++i) {
    lpnt[i] = mat[i] * dif[0] + mat[3 + i] * dif[1] + mat[6 + i] * dif[2];
    lvec[i] = mat[i] * vec[0] + mat[3 + i] * vec[1] + mat[6 + i] * vec[2];
  }
}

// The roots of a x^2 + 2 b x + c = 0 into x[2] (both -1 when the discriminant is below kMinVal);
// returns the smaller non-negative one, or -1.
template <class T>
MYRIAD_HD T quadratic(T a, T b, T c, T* x) {
  T det = b * b - a * c;
  if (det < T(kMinVal)) {
    x[0] = x[1] = T(-1);
    return T(-1);
  }
  det = sqrt(det);
  x[0] = (-b - det) / a;
  x[1] = (-b + det) / a;
  if (x[0] >= T(0)) return x[0];
  if (x[1] >= T(0)) return x[1];
  return T(-1);
}

// Keeps the nearer of a current best (-1: none) and a candidate that must be >= 0.
template <class T>
MYRIAD_HD void keep_nearest(T& best, T candidate) {
  if (candidate >= T(0) && (best < T(0) || candidate < best)) best = candidate;
}

// A triangle v [3][3] and a ray in the same frame; b0, b1 span the plane normal to the ray.
// The triangle is projected on that plane; a ray that does not pass through the projection
// misses. Otherwise the distance to the triangle's plane.
template <class T>
MYRIAD_HD T triangle(const T v[3][3], const T* lpnt, const T* lvec, const T* b0, const T* b1) {
  T planar[3][2];
  for (int i = 0; i < 3; ++i) {
    const T dif[3] = {v[i][0] - lpnt[0], v[i][1] - lpnt[1], v[i][2] - lpnt[2]};
    planar[i][0] = dot3(b0, dif);
    planar[i][1] = dot3(b1, dif);
  }
  for (int k = 0; k < 2; ++k) {
    if (planar[0][k] > T(0) && planar[1][k] > T(0) && planar[2][k] > T(0)) return T(-1);
    if (planar[0][k] < T(0) && planar[1][k] < T(0) && planar[2][k] < T(0)) return T(-1);
  }
  // Barycentric coordinates of the origin: [p0 - p2, p1 - p2] t = -p2.
  const T a0 = planar[0][0] - planar[2][0], a1 = planar[1][0] - planar[2][0];
  const T a2 = planar[0][1] - planar[2][1], a3 = planar[1][1] - planar[2][1];
  const T r0 = -planar[2][0], r1 = -planar[2][1];
  const T det = a0 * a3 - a1 * a2;
  if (fabs(det) < T(kMinVal)) return T(-1);
  const T t0 = (a3 * r0 - a1 * r1) / det;
  const T t1 = (-a2 * r0 + a0 * r1) / det;
  if (t0 < T(0) || t1 < T(0) || t0 + t1 > T(1)) return T(-1);
  T e0[3], e1[3], from[3], normal[3];
  for (int k = 0; k < 3; ++k) {
    e0[k] = v[0][k] - v[2][k];
    e1[k] = v[1][k] - v[2][k];
    from[k] = lpnt[k] - v[2][k];
  }
  cross3(normal, e0, e1);
  const T denom = dot3(lvec, normal);
  if (fabs(denom) < T(kMinVal)) return T(-1);
  return -dot3(from, normal) / denom;
}

}  // namespace detail

// Plane (normal: its z axis; size[0], size[1] > 0 bound the drawn rectangle): only rays coming
// at its front face hit it.
template <class T>
MYRIAD_HD T plane(const T* pos, const T* mat, const T* size, const T* pnt, const T* vec) {
  T lpnt[3], lvec[3];
  detail::to_local(pos, mat, pnt, vec, lpnt, lvec);
  if (lvec[2] > T(-kMinVal)) return T(-1);
  const T x = -lpnt[2] / lvec[2];
  if (x < T(0)) return T(-1);
  const T p0 = lpnt[0] + x * lvec[0];
  const T p1 = lpnt[1] + x * lvec[1];
  const bool in0 = size[0] <= T(0) || fabs(p0) <= size[0];
  const bool in1 = size[1] <= T(0) || fabs(p1) <= size[1];
  return in0 && in1 ? x : T(-1);
}

// Sphere of squared radius r2 about pos (also the bounding-sphere test of the others).
template <class T>
MYRIAD_HD T sphere(const T* pos, T r2, const T* pnt, const T* vec) {
  const T dif[3] = {pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]};
  const T a = vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2];
  const T b = vec[0] * dif[0] + vec[1] * dif[1] + vec[2] * dif[2];
  const T c = dif[0] * dif[0] + dif[1] * dif[1] + dif[2] * dif[2] - r2;
  T x[2];
  return detail::quadratic(a, b, c, x);
}

// Capsule (radius size[0], half-length size[1] along z): the side, then each cap's outer half.
template <class T>
MYRIAD_HD T capsule(const T* pos, const T* mat, const T* size, const T* pnt, const T* vec) {
  const T bound = size[0] + size[1];
  if (sphere(pos, bound * bound, pnt, vec) < T(0)) return T(-1);
  T lpnt[3], lvec[3], xx[2];
  detail::to_local(pos, mat, pnt, vec, lpnt, lvec);
  T x = T(-1);
  T a = lvec[0] * lvec[0] + lvec[1] * lvec[1];
  T b = lvec[0] * lpnt[0] + lvec[1] * lpnt[1];
  T c = lpnt[0] * lpnt[0] + lpnt[1] * lpnt[1] - size[0] * size[0];
  const T side = detail::quadratic(a, b, c, xx);
  if (side >= T(0) && fabs(lpnt[2] + side * lvec[2]) <= size[1]) detail::keep_nearest(x, side);
  a = lvec[0] * lvec[0] + lvec[1] * lvec[1] + lvec[2] * lvec[2];
  for (int cap = 1; cap >= -1; cap -= 2) {  // top (+z) cap, then bottom
    const T ldif[3] = {lpnt[0], lpnt[1], lpnt[2] - T(cap) * size[1]};
    b = lvec[0] * ldif[0] + lvec[1] * ldif[1] + lvec[2] * ldif[2];
    c = ldif[0] * ldif[0] + ldif[1] * ldif[1] + ldif[2] * ldif[2] - size[0] * size[0];
    detail::quadratic(a, b, c, xx);
    for (int i = 0; i < 2; ++i) {
      const T z = lpnt[2] + xx[i] * lvec[2];
      const bool outer = cap > 0 ? z >= size[1] : z <= -size[1];
      if (xx[i] >= T(0) && outer) detail::keep_nearest(x, xx[i]);
    }
  }
  return x;
}

// Ellipsoid of semi-axes size[0..2].
template <class T>
MYRIAD_HD T ellipsoid(const T* pos, const T* mat, const T* size, const T* pnt, const T* vec) {
  T lpnt[3], lvec[3];
  detail::to_local(pos, mat, pnt, vec, lpnt, lvec);
  const T s[3] = {T(1) / (size[0] * size[0]), T(1) / (size[1] * size[1]),
                  T(1) / (size[2] * size[2])};
  const T a = s[0] * lvec[0] * lvec[0] + s[1] * lvec[1] * lvec[1] + s[2] * lvec[2] * lvec[2];
  const T b = s[0] * lvec[0] * lpnt[0] + s[1] * lvec[1] * lpnt[1] + s[2] * lvec[2] * lpnt[2];
  const T c = s[0] * lpnt[0] * lpnt[0] + s[1] * lpnt[1] * lpnt[1] + s[2] * lpnt[2] * lpnt[2] - 1;
  T xx[2];
  return detail::quadratic(a, b, c, xx);
}

// Cylinder (radius size[0], half-height size[1] along z): the flat ends, then the side.
template <class T>
MYRIAD_HD T cylinder(const T* pos, const T* mat, const T* size, const T* pnt, const T* vec) {
  if (sphere(pos, size[0] * size[0] + size[1] * size[1], pnt, vec) < T(0)) return T(-1);
  T lpnt[3], lvec[3];
  detail::to_local(pos, mat, pnt, vec, lpnt, lvec);
  T x = T(-1);
  if (fabs(lvec[2]) > T(kMinVal)) {
    for (int end = -1; end <= 1; end += 2) {
      const T sol = (T(end) * size[1] - lpnt[2]) / lvec[2];
      if (sol < T(0)) continue;
      const T p0 = lpnt[0] + sol * lvec[0];
      const T p1 = lpnt[1] + sol * lvec[1];
      if (p0 * p0 + p1 * p1 <= size[0] * size[0]) detail::keep_nearest(x, sol);
    }
  }
  const T a = lvec[0] * lvec[0] + lvec[1] * lvec[1];
  const T b = lvec[0] * lpnt[0] + lvec[1] * lpnt[1];
  const T c = lpnt[0] * lpnt[0] + lpnt[1] * lpnt[1] - size[0] * size[0];
  T xx[2];
  const T side = detail::quadratic(a, b, c, xx);
  if (side >= T(0) && fabs(lpnt[2] + side * lvec[2]) <= size[1]) detail::keep_nearest(x, side);
  return x;
}

// Box of half-sizes size[0..2]. faces (optional, [6]): the distance to each face's plane where
// the ray crosses that face (-x, +x, -y, +y, -z, +z), -1 for the others.
template <class T>
MYRIAD_HD T box(const T* pos, const T* mat, const T* size, const T* pnt, const T* vec,
                T* faces = nullptr) {
  if (faces)
    for (int i = 0; i < 6; ++i) faces[i] = T(-1);
  if (sphere(pos, size[0] * size[0] + size[1] * size[1] + size[2] * size[2], pnt, vec) < T(0))
    return T(-1);
  T lpnt[3], lvec[3];
  detail::to_local(pos, mat, pnt, vec, lpnt, lvec);
  T x = T(-1);
  for (int i = 0; i < 3; ++i) {
    if (fabs(lvec[i]) <= T(kMinVal)) continue;
    const int u = i == 0 ? 1 : 0, w = i == 2 ? 1 : 2;  // the face's two in-plane axes
    for (int side = -1; side <= 1; side += 2) {
      const T sol = (T(side) * size[i] - lpnt[i]) / lvec[i];
      if (sol < T(0)) continue;
      const T p0 = lpnt[u] + sol * lvec[u];
      const T p1 = lpnt[w] + sol * lvec[w];
      if (fabs(p0) <= size[u] && fabs(p1) <= size[w]) {
        detail::keep_nearest(x, sol);
        if (faces) faces[2 * i + (side + 1) / 2] = sol;
      }
    }
  }
  return x;
}

// mju_rayGeom: a primitive geom of type (collision::GeomType) at pos, mat with MuJoCo's sizes;
// -1 for types without a closed form here (hfield: hfield(); mesh: none).
template <class T>
MYRIAD_HD T geom(int type, const T* pos, const T* mat, const T* size, const T* pnt, const T* vec) {
  switch (type) {
    case collision::kPlane:
      return plane(pos, mat, size, pnt, vec);
    case collision::kSphere:
      return sphere(pos, size[0] * size[0], pnt, vec);
    case collision::kCapsule:
      return capsule(pos, mat, size, pnt, vec);
    case collision::kEllipsoid:
      return ellipsoid(pos, mat, size, pnt, vec);
    case collision::kCylinder:
      return cylinder(pos, mat, size, pnt, vec);
    case collision::kBox:
      return box(pos, mat, size, pnt, vec);
    default:
      return T(-1);
  }
}

// A height field's shape: size = MuJoCo's hfield_size (x and y half-extents, top height, base
// depth), data [nrow, ncol] the elevations in [0, 1] (row-major, row = y).
template <class T>
struct HField {
  const T* size;
  const T* data;
  int nrow, ncol;
};

// mj_rayHfield: the base box under the surface, then within the top box the surface's two
// triangles per grid cell the ray passes near, then the top box's four sides below the surface's
// edge. pos, mat: the geom's pose.
template <class T>
MYRIAD_HD T hfield(const HField<T>& h, const T* pos, const T* mat, const T* pnt, const T* vec) {
  const T* size = h.size;
  const int nrow = h.nrow, ncol = h.ncol;
  const T* data = h.data;
  const T base_size[3] = {size[0], size[1], size[3] * T(0.5)};
  const T top_size[3] = {size[0], size[1], size[2] * T(0.5)};
  T base_pos[3], top_pos[3];
  for (int k = 0; k < 3; ++k) {
    base_pos[k] = pos[k] - mat[3 * k + 2] * size[3] * T(0.5);
    top_pos[k] = pos[k] + mat[3 * k + 2] * size[2] * T(0.5);
  }
  T x = box(base_pos, mat, base_size, pnt, vec);
  T faces[6];
  const T top = box(top_pos, mat, top_size, pnt, vec, faces);
  if (top < T(0)) return x;

  T lpnt[3], lvec[3];
  detail::to_local(pos, mat, pnt, vec, lpnt, lvec);
  // b0, b1: an orthonormal basis of the plane normal to lvec.
  T b0[3] = {1, 1, 1}, b1[3];
  if (fabs(lvec[0]) >= fabs(lvec[1]) && fabs(lvec[0]) >= fabs(lvec[2])) {
    b0[0] = 0;
  } else if (fabs(lvec[1]) >= fabs(lvec[2])) {
    b0[1] = 0;
  } else {
    b0[2] = 0;
  }
  const T along = -dot3(lvec, b0) / dot3(lvec, lvec);
  for (int k = 0; k < 3; ++k) b1[k] = b0[k] + lvec[k] * along;
  normalize3(b1);
  cross3(b0, b1, lvec);
  normalize3(b0);

  // The part of the ray inside the top box, then the grid cells under it (padded by one).
  T seg[2] = {0, top};
  for (int i = 0; i < 6; ++i)
    if (faces[i] > seg[1]) {
      seg[0] = top;
      seg[1] = faces[i];
    }
  const T dx = (T(2) * size[0]) / T(ncol - 1);
  const T dy = (T(2) * size[1]) / T(nrow - 1);
  const auto lo = [](T a, T b) { return a < b ? a : b; };
  const auto hi = [](T a, T b) { return a > b ? a : b; };

  // The top box's sides (x = -/+size[0], y = -/+size[1]) where the ray meets them below the
  // surface's edge (linear between the edge's grid points): the nearest such side, kept with
  // the triangles' hits below (MuJoCo takes a side after the triangles when it is nearer than
  // their nearest; the nearer of the two nearest is the same value). Found before the cells, so
  // that the faces are not live through them.
  T side = T(-1);
  for (int i = 0; i < 4; ++i) {
    if (!(faces[i] >= T(0))) continue;
    const T z = (lpnt[2] + faces[i] * lvec[2]) / size[2];
    T y, y0, z0, z1;
    if (i < 2) {
      y = (lpnt[1] + faces[i] * lvec[1] + size[1]) / dy;
      y0 = hi(T(0), lo(T(nrow - 2), floor(y)));
      const int col = i == 1 ? ncol - 1 : 0;
      z0 = data[static_cast<int>(y0) * ncol + col];
      z1 = data[static_cast<int>(y0 + 1) * ncol + col];
    } else {
      y = (lpnt[0] + faces[i] * lvec[0] + size[0]) / dx;
      y0 = hi(T(0), lo(T(ncol - 2), floor(y)));
      const int row = i == 3 ? (nrow - 1) * ncol : 0;
      z0 = data[static_cast<int>(y0) + row];
      z1 = data[static_cast<int>(y0 + 1) + row];
    }
    if (z < z0 * (y0 + 1 - y) + z1 * (y - y0)) detail::keep_nearest(side, faces[i]);
  }

  T sx[2], sy[2];
  for (int i = 0; i < 2; ++i) {
    sx[i] = (lpnt[0] + seg[i] * lvec[0] + size[0]) / dx;
    sy[i] = (lpnt[1] + seg[i] * lvec[1] + size[1]) / dy;
  }
  int cmin = static_cast<int>(floor(lo(sx[0], sx[1]))) - 1;
  int cmax = static_cast<int>(ceil(hi(sx[0], sx[1]))) + 1;
  int rmin = static_cast<int>(floor(lo(sy[0], sy[1]))) - 1;
  int rmax = static_cast<int>(ceil(hi(sy[0], sy[1]))) + 1;
  cmin = cmin < 0 ? 0 : cmin;
  rmin = rmin < 0 ? 0 : rmin;
  cmax = cmax > ncol - 1 ? ncol - 1 : cmax;
  rmax = rmax > nrow - 1 ? nrow - 1 : rmax;
  // Each cell's two triangles, one at a time (the loop over them not unrolled, so that a GPU
  // thread holds one triangle's values: in float64 two at once take it over 128 registers).
  for (int r = rmin; r < rmax; ++r) {
    for (int c = cmin; c < cmax; ++c) {
      MYRIAD_NO_UNROLL
      for (int t = 0; t < 2; ++t) {
        // lower (t = 0): (x0, y0), (x1, y1), (x1, y0); upper: (x0, y0), (x1, y1), (x0, y1).
        const int c2 = t == 0 ? c + 1 : c, r2 = t == 0 ? r : r + 1;
        const T v[3][3] = {
            {dx * T(c) - size[0], dy * T(r) - size[1], data[r * ncol + c] * size[2]},
            {dx * T(c + 1) - size[0], dy * T(r + 1) - size[1],
             data[(r + 1) * ncol + (c + 1)] * size[2]},
            {dx * T(c2) - size[0], dy * T(r2) - size[1], data[r2 * ncol + c2] * size[2]}};
        detail::keep_nearest(x, detail::triangle(v, lpnt, lvec, b0, b1));
      }
    }
  }
  detail::keep_nearest(x, side);
  return x;
}

// Which geoms a scene ray sees (mj_ray's arguments): geoms in a group whose bit is set in
// group_mask (groups above 5 count as 5, below 0 as 0), on bodies welded to the world only if
// include_static, never on body `exclude_body` (-1: none). Geoms whose colour (or material) has
// alpha 0 are never seen (the model's geom_rayvisible).
struct RayFilter {
  uint32_t group_mask = 0x3f;
  bool include_static = true;
  int exclude_body = -1;
};

// The geom group a filter reads: MuJoCo's groups 0..5, the others clamped into them.
template <class M>
MYRIAD_HD int ray_group(const M& m, int g) {
  const int group = m.geom_group[g];
  return group < 0 ? 0 : (group > 5 ? 5 : group);
}

// Whether a ray under `filter` can meet geom g (M: a model or a view of one).
template <class M>
MYRIAD_HD bool sees(const M& m, int g, const RayFilter& filter) {
  const int body = m.geom_bodyid[g];
  if (body == filter.exclude_body || !m.geom_rayvisible[g]) return false;
  if (!filter.include_static && m.body_weldid[body] == 0) return false;
  return (filter.group_mask >> ray_group(m, g)) & 1u;
}

// mj_ray over one env's geoms: the nearest hit and its geom (geom_id, -1 for none). M: a model
// view with the geom, body and hfield fields; geom_xpos [ngeom, 3], geom_xmat [ngeom, 9]: the
// env's geom poses.
template <class T, class M, class P>
MYRIAD_HD T scene(const M& m, P geom_xpos, P geom_xmat, const T* pnt, const T* vec,
                  const RayFilter& filter, int* geom_id = nullptr) {
  T dist = T(-1);
  if (geom_id) *geom_id = -1;
  for (int g = 0; g < m.ngeom; ++g) {
    if (!sees(m, g, filter)) continue;
    const int type = m.geom_type[g];
    T pos_buf[3], mat_buf[9];  // used for a blocked batch's env only
    const T* pos = readable(geom_xpos + 3 * g, pos_buf);
    const T* mat = readable(geom_xmat + 9 * g, mat_buf);
    T x;
    if (type == collision::kHField) {
      const int h = m.geom_dataid[g];
      const HField<T> shape{m.hfield_size + 4 * h, m.hfield_data + m.hfield_adr[h],
                            m.hfield_nrow[h], m.hfield_ncol[h]};
      x = hfield(shape, pos, mat, pnt, vec);
    } else {
      x = geom(type, pos, mat, m.geom_size + 3 * g, pnt, vec);
    }
    if (x >= T(0) && (x < dist || dist < T(0))) {
      dist = x;
      if (geom_id) *geom_id = g;
    }
  }
  return dist;
}

}  // namespace myriad::physics::ray
