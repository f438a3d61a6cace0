// Box-box narrow phase: libmujoco's mjc_BoxBox (separating-axis test over the 6 face normals and
// 9 edge-edge axes, then clipping on the reference face), reproduced case by case so that the
// contact sets agree, quirks included:
//  - face contacts sit at half their penetration depth and report the whole depth (MuJoCo 2
//    reported half of it);
//  - the incident box's deepest corner is a candidate even outside the reference face;
//  - in the edge-edge case the face-corner loop reuses its determinant variable for the squared
//    distance once a corner is accepted (so later corners are tested against that value).
// What mj_collideGeoms then keeps of them (box_box_keep: contacts outside one box, repeated
// positions, at most 8) runs in the caller (collide.h). Included by box.h.
#pragma once

#include "physics/collision/box.h"

namespace myriad::physics::collision {

// Box (geom 1) and box (geom 2): up to kMaxBoxBoxContacts contacts sharing one normal. con has
// room for kMaxBoxBoxContacts: the points are built there, so the slots past the count returned
// may hold scratch.
template <class T>
MYRIAD_HD int box_box(Contact<T>* con, T margin, const T* pos1, const T* mat1, const T* size1,
                      const T* pos2, const T* mat2, const T* size2) {
  using namespace detail;
  constexpr int kCap = kMaxBoxBoxContacts;
  const T margin2 = margin * margin;

  // Each box's center in the other's frame; rot = mat1^T mat2 (box 2's axes in box 1's frame).
  T dif[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
  T pos21[3], pos12[3];
  mul_mat_t_vec3(pos21, mat1, dif);
  dif[0] = pos1[0] - pos2[0];
  dif[1] = pos1[1] - pos2[1];
  dif[2] = pos1[2] - pos2[2];
  mul_mat_t_vec3(pos12, mat2, dif);
  T rot[9], rott[9], rotabs[9], rottabs[9];
  mul_mat_t_mat3(rot, mat1, mat2);
  transpose3(rott, rot);
  for (int i = 0; i < 9; ++i) {
    rotabs[i] = fabs(rot[i]);
    rottabs[i] = fabs(rott[i]);
  }
  // Each box's half-extent projected on the other's axes.
  T plen2[3], plen1[3];
  mul_mat_vec3(plen2, rotabs, size2);
  mul_mat_t_vec3(plen1, rotabs, size1);

  // Separating-axis test: face axes (codes 0..5: box 1, 6..11: box 2; code % 6 is the face
  // index, axis + 3 * (negative side)), then edge-edge axes (codes 12 + 3 i + j).
  T penetration = margin;
  for (int i = 0; i < 3; ++i) penetration += size1[i] * T(3) + size2[i] * T(3);
  int code = -1;
  for (int i = 0; i < 3; ++i) {
    const T c1 = -fabs(pos21[i]) + size1[i] + plen2[i];
    const T c2 = -fabs(pos12[i]) + size2[i] + plen1[i];
    if (c1 < -margin || c2 < -margin) return 0;
    if (c1 < penetration) {
      penetration = c1;
      code = i + 3 * (pos21[i] < T(0));
    }
    if (c2 < penetration) {
      penetration = c2;
      code = i + 3 * (pos12[i] < T(0)) + 6;
    }
  }
  int edge_sides1 = 0, edge_sides2 = 0;  // which edges are closest (bit per axis)
  bool flipped = false;                  // the edge-edge normal points from 2 to 1
  T edge_normal[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      // Axis = e_i x (box 2's axis j), in box 1's frame.
      T n[3] = {0, 0, 0};
      const T* a2 = rott + 3 * j;
      if (i == 0) {
        n[1] = -a2[2];
        n[2] = a2[1];
      } else if (i == 1) {
        n[0] = a2[2];
        n[2] = -a2[0];
      } else {
        n[0] = -a2[1];
        n[1] = a2[0];
      }
      const T len = normalize3(n);
      if (len < T(kMinVal)) continue;
      const T proj = dot3(pos21, n);
      T reach = 0;
      for (int k = 0; k < 3; ++k)
        if (k != i) reach += size1[k] * fabs(n[k]);
      for (int k = 0; k < 3; ++k)
        if (k != j) reach += size2[k] * rotabs[3 * i + 3 - k - j] / len;
      reach -= fabs(proj);
      if (reach < -margin) return 0;
      // Edge axes win only when clearly better than a face axis.
      if (reach < penetration * (T(1) - T(1e-12))) {
        penetration = reach;
        edge_sides1 = 0;
        for (int k = 0; k < 3; ++k)
          if (k != i && ((n[k] > T(0)) ^ (proj < T(0)))) edge_sides1 += 1 << k;
        edge_sides2 = 0;
        for (int k = 0; k < 3; ++k)
          if (k != j && ((rot[3 * i + 3 - k - j] > T(0)) ^ (proj < T(0)) ^ ((k - j + 3) % 3 == 1)))
            edge_sides2 += 1 << k;
        code = 12 + 3 * i + j;
        set3(edge_normal, n[0], n[1], n[2]);
        flipped = proj < T(0);
      }
    }
  }
  if (code == -1) return 0;

  // The contact points are built where they end up, in con (room for kCap): points(n) its
  // position (in the reference face's frame until the end), con[n].dist its depth. No [kCap]
  // arrays on a GPU thread's stack.
  const auto points = [con](int n) { return con[n].pos; };
  T pts[6][3];
  T lines[4][6];
  for (int a = 0; a < 6; ++a) pts[a][0] = pts[a][1] = pts[a][2] = 0;
  T r[9], rt[9], p[3], s[3], tmp[3];
  int n = 0;

  if (code < 12) {
    // Face of the reference box (box 1 when code < 6) against the incident box, in the
    // reference face's frame (face on z = 0, reference box below).
    const int face = code % 6;
    const bool ref2 = code / 6 != 0;
    const FaceTurn<T> turn(face);
    T turn_mat[9];
    turn.matrix(turn_mat);
    if (ref2) {
      mul_mat_mat_t3(r, turn_mat, rot);
      turn.vec(p, pos12);
      turn.vec(tmp, size2);
      set3(s, size1[0], size1[1], size1[2]);
    } else {
      turn.rows(r, rot);
      turn.vec(p, pos21);
      turn.vec(tmp, size1);
      set3(s, size2[0], size2[1], size2[2]);
    }
    transpose3(rt, r);
    const T ss[3] = {fabs(tmp[0]), fabs(tmp[1]), fabs(tmp[2])};
    const T lx = ss[0], ly = ss[1], hz = ss[2];
    p[2] -= hz;

    // The incident box's deepest corner, and its edges that run within 60 degrees of the face.
    int corner = 0;
    for (int i = 0; i < 3; ++i)
      if (r[6 + i] < T(0)) corner += 1 << i;
    T lp[3] = {p[0], p[1], p[2]};
    for (int i = 0; i < 3; ++i)
      add_scaled3(lp, rt + 3 * i, s[i] * ((corner & (1 << i)) ? T(1) : T(-1)));
    int m = 0;
    set3(pts[m++], lp[0], lp[1], lp[2]);
    for (int i = 0; i < 3; ++i)
      if (fabs(r[6 + i]) < T(0.5)) {
        const T len = s[i] * ((corner & (1 << i)) ? T(-2) : T(2));
        set3(pts[m++], rt[3 * i] * len, rt[3 * i + 1] * len, rt[3 * i + 2] * len);
      }
    for (int a = 0; a < 3; ++a) {
      pts[3][a] = pts[0][a] + pts[1][a];
      pts[4][a] = pts[0][a] + pts[2][a];
    }
    for (int a = 0; a < 3; ++a) pts[5][a] = pts[3][a] + pts[2][a];

    // The incident face's edges (start, direction).
    int k = 0;
    if (m > 1) set_line(lines[k++], pts[0], pts[1]);
    if (m > 2) {
      set_line(lines[k++], pts[0], pts[2]);
      set_line(lines[k++], pts[3], pts[2]);
      set_line(lines[k++], pts[4], pts[1]);
    }
    // Where those edges cross the reference face's sides.
    for (int i = 0; i < k; ++i) {
      for (int q = 0; q < 2; ++q) {
        const T a = lines[i][q], b = lines[i][3 + q];
        const T c = lines[i][1 - q], d = lines[i][4 - q];
        if (fabs(b) <= T(kMinVal)) continue;
        for (int j = -1; j <= 1; j += 2) {
          const T l = ss[q] * T(j);
          const T t = (l - a) * (T(1) / b);
          if (t < T(0) || t > T(1)) continue;
          const T other = c + d * t;
          if (fabs(other) > ss[1 - q]) continue;
          set3(points(n), lines[i][0], lines[i][1], lines[i][2]);
          add_scaled3(points(n++), lines[i] + 3, t);
        }
      }
    }
    // Reference face corners inside the incident face (strictly).
    {
      const T a = pts[1][0], b = pts[2][0], c = pts[1][1], d = pts[2][1];
      const T det = a * d - b * c;
      if (m > 2) {
        for (int i = 0; i < 4; ++i) {
          const T llx = (i / 2) ? lx : -lx;
          const T lly = (i % 2) ? ly : -ly;
          const T x = llx - pts[0][0];
          const T y = lly - pts[0][1];
          const T u = (x * d - y * b) * (T(1) / det);
          const T v = (y * a - x * c) * (T(1) / det);
          if (u <= T(0) || v <= T(0) || u >= T(1) || v >= T(1)) continue;
          set3(points(n), llx, lly, pts[0][2] + u * pts[1][2] + v * pts[2][2]);
          ++n;
        }
      }
    }
    // The incident box's deepest corner, and its other face corners inside the reference face.
    for (int i = 0; i < (1 << (m - 1)); ++i) {
      const T* q = pts[i == 0 ? 0 : i + 2];
      if (i != 0 && (q[0] <= -lx || q[0] >= lx)) continue;
      if (i != 0 && (q[1] <= -ly || q[1] >= ly)) continue;
      set3(points(n++), q[0], q[1], q[2]);
    }

    // Keep the points within margin; contacts sit at half their height and report the whole.
    const int all = n;
    n = 0;
    for (int i = 0; i < all; ++i) {
      if (points(i)[2] > margin) continue;
      set3(points(n), points(i)[0], points(i)[1], points(i)[2]);
      con[n].dist = points(n)[2];
      points(n)[2] *= T(0.5);
      ++n;
    }
    mul_mat_mat_t3(r, ref2 ? mat2 : mat1, turn_mat);
    const T* origin = ref2 ? pos2 : pos1;
    const T sgn = ref2 ? T(-1) : T(1);
    T normal[3] = {sgn * r[2], sgn * r[5], sgn * r[8]};
    for (int i = 0; i < n; ++i) {
      points(i)[2] += hz;
      mul_mat_vec3(tmp, r, points(i));
      for (int a = 0; a < 3; ++a) con[i].pos[a] = tmp[a] + origin[a];
      set3(con[i].frame, normal[0], normal[1], normal[2]);
      clear_tangent(con[i]);
    }
    return n;
  }

  // Edge-edge: edge of box 1 along axis i1 against edge of box 2 along axis i2.
  const int i1 = (code - 12) / 3, i2 = (code - 12) % 3;
  int ax1 = i2 == 1 ? 0 : 1, ax2 = i2 == 0 ? 2 : (i2 == 1 ? 2 : 0);
  int pax1 = i1 == 1 ? 0 : 1, pax2 = i1 == 0 ? 2 : (i1 == 1 ? 2 : 0);
  if (rotabs[3 * i1 + ax1] < rotabs[3 * i1 + ax2]) {
    ax1 = ax2;
    ax2 = 3 - i2 - ax1;
  }
  if (rottabs[3 * i2 + pax1] < rottabs[3 * i2 + pax2]) {
    pax1 = pax2;
    pax2 = 3 - i1 - pax1;
  }
  // Box 1's face adjacent to its edge, turned onto +z.
  const int face = (edge_sides1 & (1 << pax2)) ? pax2 : pax2 + 3;
  const FaceTurn<T> turn(face);
  T turn_mat[9];
  turn.matrix(turn_mat);
  T rnorm[3];
  turn.vec(p, pos21);
  turn.vec(rnorm, edge_normal);
  turn.rows(r, rot);
  mul_mat_t_vec3(tmp, turn_mat, size1);
  set3(s, fabs(tmp[0]), fabs(tmp[1]), fabs(tmp[2]));
  transpose3(rt, r);
  const T lx = s[0], ly = s[1], hz = s[2];
  p[2] -= hz;

  // Box 2's face containing its closest edge: corners 0, 1 (the edge) and 2, 3 (the edge
  // across the face).
  const T side1 = size2[ax1] * ((edge_sides2 & (1 << ax1)) ? T(1) : T(-1));
  const T side2 = size2[ax2] * ((edge_sides2 & (1 << ax2)) ? T(1) : T(-1));
  T corners[4][3];
  for (int e = 0; e < 2; ++e) {
    T* a = corners[2 * e];
    T* b = corners[2 * e + 1];
    set3(a, p[0], p[1], p[2]);
    add_scaled3(a, rt + 3 * ax1, e == 0 ? side1 : -side1);
    add_scaled3(a, rt + 3 * ax2, side2);
    set3(b, a[0], a[1], a[2]);
    add_scaled3(a, rt + 3 * i2, size2[i2]);
    add_scaled3(b, rt + 3 * i2, -size2[i2]);
  }
  T axi[3][3];
  set3(axi[0], corners[0][0], corners[0][1], corners[0][2]);
  for (int a = 0; a < 3; ++a) {
    axi[1][a] = corners[1][a] - corners[0][a];
    axi[2][a] = corners[2][a] - corners[0][a];
  }
  if (fabs(rnorm[2]) < T(kMinVal)) return 0;
  const T innorm = (T(1) / rnorm[2]) * (flipped ? T(-1) : T(1));

  // Project the incident face's corners along the normal onto the reference plane.
  T pu[4][3], proj2[4][2];
  for (int i = 0; i < 4; ++i) {
    const T t = -corners[i][2] * (T(1) / rnorm[2]);
    set3(pu[i], corners[i][0], corners[i][1], corners[i][2]);
    add_scaled3(corners[i], rnorm, t);
    proj2[i][0] = corners[i][0];
    proj2[i][1] = corners[i][1];
  }
  set3(pts[0], corners[0][0], corners[0][1], corners[0][2]);
  for (int a = 0; a < 3; ++a) {
    pts[1][a] = corners[1][a] - corners[0][a];
    pts[2][a] = corners[2][a] - corners[0][a];
  }
  n = 0;
  MYRIAD_NO_UNROLL
  for (int i = 0; i < 4; ++i) {
    // Edge i of the projected face (line: start, direction) and of the unprojected one (lineu):
    // from corner 0 along 1, from 0 along 2, from 0 + 1 along 2, from 0 + 2 along 1.
    T line[6], lineu[6];
    const int along = i == 0 || i == 3 ? 1 : 2;
    for (int a = 0; a < 3; ++a) {
      line[a] = i < 2 ? pts[0][a] : pts[0][a] + pts[i == 2 ? 1 : 2][a];
      line[3 + a] = pts[along][a];
      lineu[a] = i < 2 ? axi[0][a] : axi[0][a] + axi[i == 2 ? 1 : 2][a];
      lineu[3 + a] = axi[along][a];
    }
    for (int q = 0; q < 2; ++q) {
      const T a = line[q], b = line[3 + q];
      const T c = line[1 - q], d = line[4 - q];
      if (fabs(b) <= T(kMinVal)) continue;
      for (int j = -1; j <= 1; j += 2) {
        if (n >= kCap) continue;
        const T l = s[q] * T(j);
        const T t = (l - a) * (T(1) / b);
        if (t < T(0) || t > T(1)) continue;
        const T other = c + d * t;
        if (fabs(other) > s[1 - q]) continue;
        if ((lineu[2] + lineu[5] * t) * innorm > margin) continue;
        T* at = points(n);
        for (int e = 0; e < 3; ++e) at[e] = lineu[e] * T(0.5);
        add_scaled3(at, lineu + 3, T(0.5) * t);
        at[q] += T(0.5) * l;
        at[1 - q] += T(0.5) * other;
        con[n].dist = at[2] * innorm * T(2);
        ++n;
      }
    }
  }
  const int n_lines = n;

  // Reference face corners over the projected incident face.
  {
    const T a = pts[1][0], b = pts[2][0], c = pts[1][1], d = pts[2][1];
    T det = a * d - b * c;  // reused below for a squared distance, as libmujoco does
    MYRIAD_NO_UNROLL
    for (int i = 0; i < 4; ++i) {
      if (n >= kCap) continue;
      const T llx = (i / 2) ? lx : -lx;
      const T lly = (i % 2) ? ly : -ly;
      const T x = llx - pts[0][0];
      const T y = lly - pts[0][1];
      T u = (x * d - y * b) * (T(1) / det);
      T v = (y * a - x * c) * (T(1) / det);
      if (n_lines == 0) {
        if ((u < T(0) || u > T(1)) && (v < T(0) || v > T(1))) continue;
      } else if (u < T(0) || u > T(1) || v < T(0) || v > T(1)) {
        continue;
      }
      u = u < T(0) ? T(0) : (u > T(1) ? T(1) : u);
      v = v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
      // The point under the corner: pu[0] (1 - u - v) + pu[1] u + pu[2] v, summed in that order
      // (a rolled loop on the GPU: unrolled it holds all three corners in registers).
      T under[3];
      const T w = T(1) - u - v;
      MYRIAD_NO_UNROLL
      for (int e = 0; e < 3; ++e) under[e] = pu[0][e] * w + pu[1][e] * u + pu[2][e] * v;
      T* at = points(n);
      set3(at, llx, lly, T(0));
      const T gap[3] = {at[0] - under[0], at[1] - under[1], at[2] - under[2]};
      det = dot3(gap, gap);
      if (under[2] > T(0) && det > margin2) continue;
      for (int e = 0; e < 3; ++e) at[e] = (at[e] + under[e]) * T(0.5);
      con[n].dist = sqrt(det) * (under[2] < T(0) ? T(-1) : T(1));
      ++n;
    }
  }
  const int n_face = n;

  // Incident face corners, projected, over the reference face.
  MYRIAD_NO_UNROLL
  for (int i = 0; i < 4; ++i) {
    if (n >= kCap) continue;
    const T x = proj2[i][0], y = proj2[i][1];
    if (n_lines == 0) {
      if (n_face != 0 && (x < -lx || x > lx) && (y < -ly || y > ly)) continue;
    } else if (x < -lx || x > lx || y < -ly || y > ly) {
      continue;
    }
    T d2 = 0;
    for (int j = 0; j < 2; ++j) {
      if (proj2[i][j] < -s[j]) {
        d2 += (proj2[i][j] + s[j]) * (proj2[i][j] + s[j]);
      } else if (proj2[i][j] > s[j]) {
        d2 += (proj2[i][j] - s[j]) * (proj2[i][j] - s[j]);
      }
    }
    d2 += pu[i][2] * innorm * pu[i][2] * innorm;
    if (pu[i][2] > T(0) && d2 > margin2) continue;
    T at[3] = {proj2[i][0] * T(0.5), proj2[i][1] * T(0.5), T(0)};
    for (int j = 0; j < 2; ++j) {
      if (proj2[i][j] < -s[j]) {
        at[j] = -s[j] * T(0.5);
      } else if (proj2[i][j] > s[j]) {
        at[j] = s[j] * T(0.5);
      }
    }
    add_scaled3(at, pu[i], T(0.5));
    set3(points(n), at[0], at[1], at[2]);
    con[n].dist = sqrt(d2) * (pu[i][2] < T(0) ? T(-1) : T(1));
    ++n;
  }

  mul_mat_mat_t3(r, mat1, turn_mat);
  mul_mat_vec3(tmp, r, rnorm);
  const T sgn = flipped ? T(-1) : T(1);
  const T normal[3] = {tmp[0] * sgn, tmp[1] * sgn, tmp[2] * sgn};
  for (int i = 0; i < n; ++i) {
    points(i)[2] += hz;
    mul_mat_vec3(tmp, r, points(i));
    for (int a = 0; a < 3; ++a) con[i].pos[a] = tmp[a] + pos1[a];
    set3(con[i].frame, normal[0], normal[1], normal[2]);
    clear_tangent(con[i]);
  }
  return n;
}

// 1 when point lies outside the box (pos, mat, size) grown by `inflate`, -1 when inside it
// shrunk by `inflate`, 0 between the two (mju_outsideBox).
template <class T>
MYRIAD_HD int outside_box(const T* point, const T* pos, const T* mat, const T* size, T inflate) {
  using namespace detail;
  const T d[3] = {point[0] - pos[0], point[1] - pos[1], point[2] - pos[2]};
  T v[3];
  mul_mat_t_vec3(v, mat, d);
  for (int k = 0; k < 3; ++k) {
    const T big = size[k] * inflate;
    if (v[k] > big || v[k] < -big) return 1;
  }
  for (int k = 0; k < 3; ++k) {
    const T small = size[k] / inflate;
    if (!(v[k] < small && v[k] > -small)) return 0;
  }
  return -1;
}

// What mj_collideGeoms keeps of box_box's contacts (num of them in con, rewritten in place):
// a contact outside one box (by more than 1% of its size plus margin) and not inside the other
// is dropped (even when that drops them all, as in deep penetration); of contacts at the same
// position the last is kept; at most kMaxBoxBoxKept remain. Returns the count kept.
template <class T>
MYRIAD_HD int box_box_keep(Contact<T>* con, int num, T margin, const T* pos1, const T* mat1,
                           const T* size1, const T* pos2, const T* mat2, const T* size2) {
  bool bad[kMaxBoxBoxContacts];
  const T sz1[3] = {size1[0] + margin, size1[1] + margin, size1[2] + margin};
  const T sz2[3] = {size2[0] + margin, size2[1] + margin, size2[2] + margin};
  const T ratio = T(1.01);
  for (int i = 0; i < num; ++i) {
    const int out1 = outside_box(con[i].pos, pos1, mat1, sz1, ratio);
    const int out2 = outside_box(con[i].pos, pos2, mat2, sz2, ratio);
    bad[i] = (out1 == 1 && out2 != -1) || (out2 == 1 && out1 != -1);
  }
  for (int i = 0; i + 1 < num; ++i) {
    if (bad[i]) continue;
    for (int j = i + 1; j < num; ++j) {
      if (bad[j]) continue;
      if (con[i].pos[0] == con[j].pos[0] && con[i].pos[1] == con[j].pos[1] &&
          con[i].pos[2] == con[j].pos[2]) {
        bad[i] = true;
        break;
      }
    }
  }
  int kept = 0;
  for (int i = 0; i < num && kept < kMaxBoxBoxKept; ++i)
    if (!bad[i]) con[kept++] = con[i];
  return kept;
}

}  // namespace myriad::physics::collision
