// Narrow phase for the pairs with a box (sphere-box, capsule-box, box-box), computing what
// libmujoco 2.2.2's engine_collision_box.c computes: the same case analysis and the same contact
// sets, including its quirks (see each function), so that contacts agree to rounding.
// Same calling form as primitives.h; geom 2 is the box.
#pragma once

#include "physics/collision/primitives.h"

namespace myriad::physics::collision {

namespace detail {

// res[3x3] = a^T * b (row-major), products summed in row order.
template <class T>
MYRIAD_HD void mul_mat_t_mat3(T* res, const T* a, const T* b) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      res[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j];
}

// res[3x3] = a * b^T (row-major).
template <class T>
MYRIAD_HD void mul_mat_mat_t3(T* res, const T* a, const T* b) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      res[3 * i + j] =
          a[3 * i] * b[3 * j] + a[3 * i + 1] * b[3 * j + 1] + a[3 * i + 2] * b[3 * j + 2];
}

template <class T>
MYRIAD_HD void transpose3(T* res, const T* a) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) res[3 * i + j] = a[3 * j + i];
}

// res += v * s.
template <class T>
MYRIAD_HD void add_scaled3(T* res, const T* v, T s) {
  for (int i = 0; i < 3; ++i) res[i] += v[i] * s;
}

// A box face as a signed permutation: the rotation that takes face f (0..2: -x,-y,-z ...
// as MuJoCo numbers them: f % 3 the axis, f / 3 the side) onto +z. Applied to a vector v it
// gives (v[idx0] * sgn0, v[idx1] * sgn1, v[idx2] * sgn2).
template <class T>
struct FaceTurn {
  int idx[3];
  T sgn[3];
  MYRIAD_HD explicit FaceTurn(int face) {
    idx[0] = 0;
    idx[1] = 1;
    idx[2] = 2;
    sgn[0] = sgn[1] = sgn[2] = 1;
    switch (face) {
      case 0:
        idx[0] = 2, sgn[0] = -1, idx[2] = 0;
        break;
      case 1:
        idx[1] = 2, sgn[1] = -1, idx[2] = 1;
        break;
      case 3:
        idx[0] = 2, idx[2] = 0, sgn[2] = -1;
        break;
      case 4:
        idx[1] = 2, idx[2] = 1, sgn[2] = -1;
        break;
      case 5:
        sgn[0] = -1, sgn[2] = -1;
        break;
      default:
        break;  // face 2: identity
    }
  }
  // The same rotation as a 3x3 matrix (row i has sgn[i] at column idx[i]).
  MYRIAD_HD void matrix(T* res) const {
    for (int k = 0; k < 9; ++k) res[k] = 0;
    for (int i = 0; i < 3; ++i) res[3 * i + idx[i]] = sgn[i];
  }
  MYRIAD_HD void vec(T* res, const T* v) const {
    set3(res, v[idx[0]] * sgn[0], v[idx[1]] * sgn[1], v[idx[2]] * sgn[2]);
  }
  // Rows of m turned (matrix * m).
  MYRIAD_HD void rows(T* res, const T* m) const {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) res[3 * i + j] = m[3 * idx[i] + j] * sgn[i];
  }
};

// line[0:3] = start, line[3:6] = direction.
template <class T>
MYRIAD_HD void set_line(T* line, const T* start, const T* d) {
  for (int a = 0; a < 3; ++a) {
    line[a] = start[a];
    line[3 + a] = d[a];
  }
}

}  // namespace detail

// Sphere and box: one contact between the sphere and the nearest box point. A sphere whose
// center is inside the box is pushed out through the nearest face, its dist -(radius + the
// center's depth under that face) (MuJoCo 2 reported -radius whatever the depth).
template <class T>
MYRIAD_HD int sphere_box(Contact<T>* con, T margin, const T* pos1, const T* /*mat1*/,
                         const T* size1, const T* pos2, const T* mat2, const T* size2) {
  using namespace detail;
  const T r = size1[0];
  const T rel[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
  T center[3];  // sphere center in box coordinates
  mul_mat_t_vec3(center, mat2, rel);
  T clamped[3];
  for (int i = 0; i < 3; ++i) {
    clamped[i] = center[i];
    if (size2[i] > T(0)) {
      if (clamped[i] < -size2[i]) {
        clamped[i] = -size2[i];
      } else if (clamped[i] > size2[i]) {
        clamped[i] = size2[i];
      }
    }
  }
  T dir[3] = {clamped[0] - center[0], clamped[1] - center[1], clamped[2] - center[2]};
  const T dist = normalize3(dir);
  if (dist - r > margin) return 0;

  Contact<T>& k = con[0];
  T local[3];
  k.dist = dist - r;
  if (dist <= T(kMinVal)) {
    // Inside: the face nearest the center, faces in the order -x, +x, -y, +y, -z, +z.
    T closest = (size2[0] + size2[1] + size2[2]) * T(2);
    int face = 0;
    for (int f = 0; f < 6; ++f) {
      const T gap = fabs((f % 2 ? T(1) : T(-1)) * size2[f / 2] - center[f / 2]);
      if (closest > gap) {
        closest = gap;
        face = f;
      }
    }
    T inward[3] = {0, 0, 0};
    inward[face / 2] = (face % 2) ? T(-1) : T(1);
    for (int i = 0; i < 3; ++i) local[i] = center[i];
    add_scaled3(local, inward, (r - closest) / T(2));
    mul_mat_vec3(k.frame, mat2, inward);
    k.dist = -(r + closest);
  } else {
    T deepest[3] = {center[0], center[1], center[2]};
    add_scaled3(deepest, dir, r);
    T zero[3] = {0, 0, 0};
    add_scaled3(zero, clamped, T(0.5));
    add_scaled3(zero, deepest, T(0.5));
    for (int i = 0; i < 3; ++i) local[i] = zero[i];
    mul_mat_vec3(k.frame, mat2, dir);
  }
  T world[3];
  mul_mat_vec3(world, mat2, local);
  for (int i = 0; i < 3; ++i) k.pos[i] = world[i] + pos2[i];
  clear_tangent(k);
  return 1;
}

// Capsule and box: up to two sphere-box contacts along the capsule's segment. The first is at
// the segment point closest to the box (over the two segment ends against the faces and the
// segment against the 12 edges); a second point is chosen along the segment when the capsule
// lies along a face or edge, libmujoco 2.2.2's case analysis (cases by which box feature is
// closest and how the capsule axis points relative to it).
template <class T>
MYRIAD_HD int capsule_box(Contact<T>* con, T margin, const T* pos1, const T* mat1, const T* size1,
                          const T* pos2, const T* mat2, const T* size2) {
  using namespace detail;
  const T half_len = size1[1];
  T second = -4;  // offset of the second point along the segment; < -3: none

  // Capsule center and axis in box coordinates.
  const T rel[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
  T c[3];
  mul_mat_t_vec3(c, mat2, rel);
  T zaxis[3], axis[3];
  axis_of(zaxis, mat1, 2);
  mul_mat_t_vec3(axis, mat2, zaxis);
  const T half[3] = {axis[0] * half_len, axis[1] * half_len, axis[2] * half_len};
  // Octant of the axis (bit k: half[k] > 0); octant and 7 - octant are the same direction.
  const int octant = (half[0] > T(0) ? 1 : 0) + (half[1] > T(0) ? 2 : 0) + (half[2] > T(0) ? 4 : 0);

  T best = margin + T(2) * (size1[0] + half_len + size2[0] + size2[1] + size2[2]);
  T best_seg = 0;  // segment parameter in [-1, 1] of the closest point
  T best_box = 0;  // edge parameter in [-1, 1] of the closest point when an edge is closest
  // Closest feature: -3 / -1 a segment end (-1 / +1) against a face (or inside);
  // 0..8 an edge, 3 * s_edge + s_seg where s = 0 / 1 / 2 means clamped low / inside / high.
  int kind = -4;
  int face = -1, corner = 0, edge = 0;

  // Segment ends against the faces: an end that is outside along at most one axis.
  for (int end = -1; end <= 1; end += 2) {
    T p[3] = {c[0], c[1], c[2]};
    add_scaled3(p, half, T(end));
    T q[3] = {p[0], p[1], p[2]};
    int outside = 0, out_axis = -1;
    for (int j = 0; j < 3; ++j) {
      if (p[j] < -size2[j]) {
        ++outside;
        out_axis = j;
        p[j] = -size2[j];
      } else if (p[j] > size2[j]) {
        ++outside;
        out_axis = j;
        p[j] = size2[j];
      }
    }
    if (outside > 1) continue;
    for (int j = 0; j < 3; ++j) p[j] -= q[j];
    const T d2 = dot3(p, p);
    if (d2 < best) {
      best = d2;
      best_seg = T(end);
      kind = end - 2;
      face = out_axis;
    }
  }

  // The segment against the 12 edges: edge along axis j through corner i (bit j of i clear).
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 8; ++i) {
      if (i & (1 << j)) continue;
      T start[3] = {((i & 1) ? T(1) : T(-1)) * size2[0], ((i & 2) ? T(1) : T(-1)) * size2[1],
                    ((i & 4) ? T(1) : T(-1)) * size2[2]};
      start[j] = 0;
      T dif[3] = {start[0] - c[0], start[1] - c[1], start[2] - c[2]};
      const T ma = size2[j] * size2[j];
      const T mb = -size2[j] * half[j];
      const T mc = size1[1] * size1[1];
      const T u = -size2[j] * dif[j];
      const T v = dot3(half, dif);
      const T det = ma * mc - mb * mb;
      if (fabs(det) < T(kMinVal)) continue;
      const T idet = T(1) / det;
      T x1 = (mc * u - mb * v) * idet;  // along the edge
      T x2 = (ma * v - mb * u) * idet;  // along the segment
      int s1 = 1, s2 = 1;
      if (x1 > T(1)) {
        x1 = 1;
        s1 = 2;
        x2 = (v - mb) * (T(1) / mc);
      } else if (x1 < T(-1)) {
        x1 = -1;
        s1 = 0;
        x2 = (v + mb) * (T(1) / mc);
      }
      if (x2 > T(1) || x2 < T(-1)) {
        const bool high = x2 > T(1);
        x2 = high ? T(1) : T(-1);
        s2 = high ? 2 : 0;
        x1 = high ? (u - mb) * (T(1) / ma) : (u + mb) * (T(1) / ma);
        // s1 keeps its earlier value when x1 lands inside (as libmujoco does).
        if (x1 > T(1)) {
          x1 = 1;
          s1 = 2;
        } else if (x1 < T(-1)) {
          x1 = -1;
          s1 = 0;
        }
      }
      dif[0] = start[0] - c[0];
      dif[1] = start[1] - c[1];
      dif[2] = start[2] - c[2];
      add_scaled3(dif, half, -x2);
      dif[j] += size2[j] * x1;
      const T d2 = dot3(dif, dif);
      // The -kMinVal keeps a face result when the axis is numerically parallel to the box.
      if (d2 < best - T(kMinVal)) {
        best = d2;
        best_seg = x2;
        best_box = x1;
        corner = i + (1 << j) * ((s1 * 3 + s2) / 6);
        edge = j;
        kind = s1 * 3 + s2;
      }
    }
  }

  if (kind == -4) return 0;

  if (kind >= 0 && kind / 3 != 1) {
    // A box corner is closest: a second point when the capsule runs along a face or an edge.
    int rel_dir = octant ^ corner;
    if (rel_dir != 0 && rel_dir != 7) {
      T sign, toward_end, away_end;
      if (rel_dir == 1 || rel_dir == 2 || rel_dir == 4) {
        sign = 1;
        toward_end = 1 - best_seg;
        away_end = 1 + best_seg;
      } else {
        sign = -1;
        rel_dir = 7 - rel_dir;
        away_end = 1 - best_seg;
        toward_end = 1 + best_seg;
      }
      const int ax = rel_dir == 1 ? 0 : (rel_dir == 2 ? 1 : 2);
      const int ax1 = (ax + 1) % 3, ax2 = (ax + 2) % 3;
      if (axis[ax] * axis[ax] > T(0.5)) {
        // Along the edge: stop at the edge's other corner.
        second = toward_end;
        const T e = T(2) * size2[ax] / fabs(half[ax]);
        if (e < second) second = e;
        second *= sign;
      } else {
        // Across a face: stop where the segment leaves it.
        second = away_end;
        T e = T(2) * size2[ax1] / fabs(half[ax1]);
        if (e < second) second = e;
        e = T(2) * size2[ax2] / fabs(half[ax2]);
        if (e < second) second = e;
        second *= -sign;
      }
    }
  } else if (kind >= 0) {
    // The middle of an edge is closest: a second point when capsule and edge cross (X), none
    // when they form a T.
    const int rel_dir = (octant ^ corner) & (7 - (1 << edge));
    if (rel_dir == 1 || rel_dir == 2 || rel_dir == 4) {
      const int ax = edge;
      int ax1 = (edge + 1) % 3, ax2 = (edge + 2) % 3;
      // The face the capsule is flatter against.
      if (fabs(axis[ax1]) > fabs(axis[ax2])) ax1 = ax2;
      ax2 = 3 - ax - ax1;
      T sign;
      if (rel_dir & (1 << ax2)) {
        sign = 1;
        second = 1 - best_seg;
      } else {
        sign = -1;
        second = 1 + best_seg;
      }
      T e = T(2) * size2[ax2] / fabs(half[ax2]);
      if (e < second) second = e;
      const T room = (((octant & (1 << ax)) != 0) == ((rel_dir & (1 << ax2)) != 0)) ? 1 - best_box
                                                                                    : 1 + best_box;
      e = size2[ax] * room / fabs(half[ax]);
      if (e < second) second = e;
      second *= sign;
    }
  } else if (face != -1) {
    // A segment end against a face: the other end's direction, clamped to where the segment
    // stays over the face.
    const T sign = kind == -3 ? T(1) : T(-1);
    second = 2;
    T p[3] = {c[0], c[1], c[2]};
    add_scaled3(p, half, -sign);
    for (int i = 0; i < 3; ++i) {
      if (i == face) continue;
      T e = (size2[i] - p[i]) / half[i] * sign;
      if (e > T(0) && e < second) second = e;
      e = (-size2[i] - p[i]) / half[i] * sign;
      if (e > T(0) && e < second) second = e;
    }
    second *= sign;
  }

  // Sphere-box at the first point, then at the second.
  T p[3] = {c[0], c[1], c[2]};
  add_scaled3(p, half, best_seg);
  T center[3];
  mul_mat_vec3(center, mat2, p);
  for (int i = 0; i < 3; ++i) center[i] += pos2[i];
  int n = sphere_box(con, margin, center, mat1, size1, pos2, mat2, size2);
  if (second > T(-3)) {
    for (int i = 0; i < 3; ++i) p[i] = c[i];
    add_scaled3(p, half, second + best_seg);
    mul_mat_vec3(center, mat2, p);
    for (int i = 0; i < 3; ++i) center[i] += pos2[i];
    n += sphere_box(con + n, margin, center, mat1, size1, pos2, mat2, size2);
  }
  return n;
}

}  // namespace myriad::physics::collision

#include "physics/collision/box_box.h"
