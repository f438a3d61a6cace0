// Convex collision detection as libmujoco 3.11 computes it (mjc_ccd with MuJoCo's native GJK and
// EPA, engine_collision_gjk.c) for a height-field prism against a sphere, capsule, ellipsoid,
// cylinder or box, and for two geoms among sphere, capsule, ellipsoid, cylinder and box
// (mjc_Convex, convex.h), at its default behaviour. Ported from spikes/hfield_ccd/hfield_ccd.py
// (see its README for what was confirmed against the 3.11 library and how) and, for the ellipsoid
// and cylinder supports and the two-sided sphere/capsule core pass, from 3.11's own machine code
// (libmujoco.so.3.11.0: mjc_ellipsoidSupport, mjc_cylinderSupport, mjc_ccd); the arithmetic follows
// the same order, so that in double with -ffp-contract=off the results are bitwise those of 3.11.
// Three rules the spike had inferred are now taken from that machine code too: a face's v points
// away from an interior point of the initial polytope (orient_face), GJK reports 0 when its
// four-point simplex encloses the origin, and the EPA finds no contact only when it converges on
// its first face with the support more than 1e-10 short of it. With them the height field also
// agrees at ccd_tolerance 1e-2 and 3e-2, where the spike's rules did not.
//
// Everything here runs in one frame: the height field's, or the world for two geoms. MYRIAD_HD,
// templated on the scalar, no heap, no recursion, fixed-size buffers (the EPA polytope lives where
// the caller's arena puts it: LocalPolytope, WarpPolytope; see kEpaMaxFaces).
#pragma once

#include <cmath>

#include "physics/collision/contact.h"

namespace myriad::physics::collision::ccd {

using std::fabs;
using std::sqrt;

// Most iterations the EPA runs (mjOption.ccd_iterations; MuJoCo's default is 35). The polytope
// buffers are sized from it: a model with more ccd_iterations gets its EPA clamped to this many
// iterations (GJK, which needs no buffer, runs them all), so it may differ from MuJoCo; the
// importer refuses such models.
constexpr int kCcdMaxIterations = 50;
// Faces of the EPA polytope: 6 per iteration as MuJoCo allocates (it allocates for at least 170
// iterations, 1020 faces; an EPA that runs out of faces stops early, "out of memory", so with
// fewer faces here a polytope bigger than kEpaMaxFaces would stop where MuJoCo's continues).
// Seen: at most 173 faces at 35 iterations (tests/physics/test_hfield_ccd.cc prints the peak);
// 252 at 50 iterations in one longer run while porting; this stop has not been reached.
constexpr int kEpaMaxFaces = 6 * kCcdMaxIterations;
// Vertices: up to 5 from the initial polytope, one per EPA iteration.
constexpr int kEpaMaxVerts = 5 + kCcdMaxIterations;

// What a convex object is (mjCCDObj): the prism of a height-field cell or a geom.
enum ObjMode : int { kFull = 0, kPoint = 1, kLine = 2 };

// DBL_MAX (FLT_MAX in float): "no contact" distance (mjMAX_LIMIT).
template <class T>
MYRIAD_HD T max_limit() {
  if constexpr (sizeof(T) == sizeof(float)) {
    return T(3.402823466e38f);
  } else {
    return T(1.7976931348623157e308);
  }
}

// mjMINVAL^2 and mjMAXVAL^2 (mjMAXVAL = 1e10), as MuJoCo squares them.
template <class T>
MYRIAD_HD T min_val2() {
  return T(kMinVal) * T(kMinVal);
}
template <class T>
MYRIAD_HD T max_val2() {
  return T(1e10) * T(1e10);
}

// ------------------------------------------------------------------------- vector helpers

template <class T>
MYRIAD_HD void set3(T* r, T x, T y, T z) {
  r[0] = x;
  r[1] = y;
  r[2] = z;
}
template <class T>
MYRIAD_HD void copy3(T* r, const T* a) {
  set3(r, a[0], a[1], a[2]);
}
template <class T>
MYRIAD_HD void sub3(T* r, const T* a, const T* b) {
  set3(r, a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}
// r = s * a.
template <class T>
MYRIAD_HD void scl3(T* r, const T* a, T s) {
  set3(r, s * a[0], s * a[1], s * a[2]);
}
template <class T>
MYRIAD_HD T norm3(const T* a) {
  return sqrt(dot3(a, a));
}
// Determinant of the rows v1, v2, v3 (mju_det3 as the GJK writes it).
template <class T>
MYRIAD_HD T det3(const T* v1, const T* v2, const T* v3) {
  return v1[0] * (v2[1] * v3[2] - v2[2] * v3[1]) + v1[1] * (v2[2] * v3[0] - v2[0] * v3[2]) +
         v1[2] * (v2[0] * v3[1] - v2[1] * v3[0]);
}
// |a - b| < mjMINVAL in every component.
template <class T>
MYRIAD_HD bool equal3(const T* a, const T* b) {
  return fabs(a[0] - b[0]) < T(kMinVal) && fabs(a[1] - b[1]) < T(kMinVal) &&
         fabs(a[2] - b[2]) < T(kMinVal);
}
// r = mat * v (row-major 3x3).
template <class T>
MYRIAD_HD void mat_vec(T* r, const T* mat, const T* v) {
  set3(r, mat[0] * v[0] + mat[1] * v[1] + mat[2] * v[2],
       mat[3] * v[0] + mat[4] * v[1] + mat[5] * v[2],
       mat[6] * v[0] + mat[7] * v[1] + mat[8] * v[2]);
}
// r = mat^T * v.
template <class T>
MYRIAD_HD void mat_t_vec(T* r, const T* mat, const T* v) {
  set3(r, mat[0] * v[0] + mat[3] * v[1] + mat[6] * v[2],
       mat[1] * v[0] + mat[4] * v[1] + mat[7] * v[2],
       mat[2] * v[0] + mat[5] * v[1] + mat[8] * v[2]);
}
// 1 when a and b are both positive, -1 when both negative, else 0 (sameSign).
template <class T>
MYRIAD_HD int same_sign2(T a, T b) {
  if (a > 0 && b > 0) return 1;
  if (a < 0 && b < 0) return -1;
  return 0;
}

// ------------------------------------------------------------------------- convex objects

// One convex object (mjCCDObj): a prism of the height field (its 6 vertices: 0..2 on the base,
// 3..5 on the surface) or a sphere, capsule, ellipsoid, cylinder or box (pos, mat: its pose; size:
// MuJoCo's geom size); in the sphere/capsule core pass of mjc_ccd a point or a segment. A prism
// needs no mat or size and a geom no vertices, so they share their storage (a GPU lane holds two
// objects through GJK/EPA: 184 bytes each in double instead of 288). Zeroed, as the prism's walk
// expects; a geom's pose and size are set by whoever makes it (init_obj, geom_in_hfield_frame).
template <class T>
struct Obj {
  // Small numbers, a byte each (the object is on a GPU lane's stack): the geom type (mjtGeom), the
  // ObjMode, the box corner of the last support (mjCCDObj.vertindex; -1 none).
  signed char type = kHField;
  signed char mode = kFull;
  signed char vertindex = -1;
  T pos[3] = {0, 0, 0};
  union {
    struct {  // a geom's
      T mat[9];
      T size[3];
    };
    T prism[6][3];  // a prism's
  };
  T margin = 0;
  MYRIAD_HD Obj() {
    for (int i = 0; i < 6; ++i) prism[i][0] = prism[i][1] = prism[i][2] = T(0);
  }
};

// Support point of the height-field prism along d (prism_support): the base vertices when d
// points down, else the top ones; first maximum wins.
template <class T>
MYRIAD_HD void prism_support(T* res, const Obj<T>& o, const T* d) {
  const int start = d[2] < 0 ? 0 : 3;
  int best_i = start;
  T best = dot3(o.prism[start], d);
  for (int i = start + 1; i < start + 3; ++i) {
    const T tmp = dot3(o.prism[i], d);
    if (tmp > best) {
      best_i = i;
      best = tmp;
    }
  }
  copy3(res, o.prism[best_i]);
}

// Support of the capsule's segment along d (mjc_lineSupport: +half length when axis . d >= 0).
template <class T>
MYRIAD_HD void line_support(T* res, const Obj<T>& o, const T* d) {
  const T* m = o.mat;
  const T dt = m[2] * d[0] + m[5] * d[1] + m[8] * d[2];
  const T s = dt >= 0 ? o.size[1] : -o.size[1];
  set3(res, m[2] * s + o.pos[0], m[5] * s + o.pos[1], m[8] * s + o.pos[2]);
}

// Support of a sphere, capsule, ellipsoid, cylinder or box along unit d, without margin
// (mjc_sphereSupport, mjc_capsuleSupport, mjc_ellipsoidSupport, mjc_cylinderSupport,
// mjc_boxSupport); a box records its corner in vertindex. The ellipsoid's and cylinder's degenerate
// branches compare squared norms with mjMINVAL^2, as 3.11's machine code does.
template <class T>
MYRIAD_HD void geom_support(T* res, Obj<T>& o, const T* d) {
  if (o.type == kSphere) {
    const T r = o.size[0];
    set3(res, r * d[0] + o.pos[0], r * d[1] + o.pos[1], r * d[2] + o.pos[2]);
    return;
  }
  T ld[3], ls[3];
  mat_t_vec(ld, o.mat, d);
  if (o.type == kEllipsoid) {
    const T* s = o.size;
    const T t[3] = {ld[0] * s[0], ld[1] * s[1], ld[2] * s[2]};
    const T n2 = t[0] * t[0] + t[1] * t[1] + t[2] * t[2];
    if (n2 < min_val2<T>()) {  // d ~ 0: the end of the local x axis
      const T* m = o.mat;
      set3(res, m[0] * s[0] + o.pos[0], m[3] * s[0] + o.pos[1], m[6] * s[0] + o.pos[2]);
      return;
    }
    const T inv = T(1) / sqrt(n2);
    set3(ls, t[0] * (inv * s[0]), t[1] * (inv * s[1]), t[2] * (inv * s[2]));
  } else if (o.type == kCylinder) {
    const T n2 = ld[0] * ld[0] + ld[1] * ld[1];
    const T scale = n2 < min_val2<T>() ? T(0) : o.size[0] / sqrt(n2);  // d along the axis: centre
    set3(ls, scale * ld[0], scale * ld[1], ld[2] >= 0 ? o.size[1] : -o.size[1]);
  } else if (o.type == kCapsule) {
    const T r = o.size[0];
    set3(ls, ld[0] * r, ld[1] * r, ld[2] * r);
    ls[2] += ld[2] >= 0 ? o.size[1] : -o.size[1];
  } else {  // box
    const T* s = o.size;
    set3(ls, ld[0] >= 0 ? s[0] : -s[0], ld[1] >= 0 ? s[1] : -s[1], ld[2] >= 0 ? s[2] : -s[2]);
    o.vertindex = (ls[0] > 0 ? 1 : 0) | (ls[1] > 0 ? 2 : 0) | (ls[2] > 0 ? 4 : 0);
  }
  T g[3];
  mat_vec(g, o.mat, ls);
  set3(res, g[0] + o.pos[0], g[1] + o.pos[1], g[2] + o.pos[2]);
}

// Support of the object along unit d, without margin (mjCCDObj.support).
template <class T>
MYRIAD_HD void obj_support(T* res, Obj<T>& o, const T* d) {
  if (o.type == kHField) {
    prism_support(res, o, d);
  } else if (o.mode == kPoint) {
    copy3(res, o.pos);
  } else if (o.mode == kLine) {
    line_support(res, o, d);
  } else {
    geom_support(res, o, d);
  }
}

// Center of the object (mjCCDObj.center): the mean of the prism's 6 vertices, the geom's pos.
template <class T>
MYRIAD_HD void obj_center(T* res, const Obj<T>& o) {
  if (o.type != kHField) {
    copy3(res, o.pos);
    return;
  }
  T r[3] = {0, 0, 0};
  for (int i = 0; i < 6; ++i)
    set3(r, r[0] + o.prism[i][0], r[1] + o.prism[i][1], r[2] + o.prism[i][2]);
  scl3(res, r, T(1) / T(6));
}

// A point of the Minkowski difference with the two points it comes from (mjtVertex).
template <class T>
struct Vertex {
  T vert[3];
  T vert1[3];
  T vert2[3];
  int index1;
  int index2;
};

// Support of the difference o1 - o2 along unit d (dneg = -d), each object inflated by half its
// margin (the GJK's support).
template <class T>
MYRIAD_HD void support(Vertex<T>* v, Obj<T>& o1, Obj<T>& o2, const T* d, const T* dneg) {
  obj_support(v->vert1, o1, d);
  if (o1.margin > 0) {
    const T h = T(0.5) * o1.margin;
    set3(v->vert1, v->vert1[0] + d[0] * h, v->vert1[1] + d[1] * h, v->vert1[2] + d[2] * h);
  }
  obj_support(v->vert2, o2, dneg);
  if (o2.margin > 0) {
    const T h = T(0.5) * o2.margin;
    set3(v->vert2, v->vert2[0] + dneg[0] * h, v->vert2[1] + dneg[1] * h, v->vert2[2] + dneg[2] * h);
  }
  sub3(v->vert, v->vert1, v->vert2);
  v->index1 = o1.vertindex;
  v->index2 = o2.vertindex;
}

// GJK's support along -x_k (gjkSupport).
template <class T>
MYRIAD_HD void gjk_support(Vertex<T>* v, Obj<T>& o1, Obj<T>& o2, const T* x_k, T x_norm) {
  T dneg[3], d[3];
  scl3(dneg, x_k, T(1) / x_norm);
  scl3(d, dneg, T(-1));
  support(v, o1, o2, d, dneg);
}

// Both objects have flat faces and no margin: the GJK/EPA run their discrete variant
// (discreteGeoms: hfield, box; meshes are not modelled).
template <class T>
MYRIAD_HD bool discrete_geoms(const Obj<T>& o1, const Obj<T>& o2) {
  if (o1.margin != 0 || o2.margin != 0) return false;
  const bool d1 = o1.type == kHField || o1.type == kBox;
  const bool d2 = o2.type == kHField || o2.type == kBox;
  return d1 && d2;
}

// State of one mjc_ccd call (mjCCDStatus, the fields the height field uses).
template <class T>
struct Status {
  Vertex<T> simplex[4];
  int nsimplex = 0;
  T x1[3] = {0, 0, 0};  // witness on object 1 (the prism)
  T x2[3] = {0, 0, 0};  // witness on object 2
  T dist = 0;
  int gjk_iterations = 0;
  int max_iterations = 0;
  T tolerance = 0;
  T dist_cutoff = 0;
};

// ------------------------------------------------------------------------- GJK

// r = sum_i coef[i] * v_i (lincomb), accumulated left to right.
template <class T>
MYRIAD_HD void lincomb(T* r, const T* coef, int n, const T* const* vs) {
  for (int c = 0; c < 3; ++c) {
    T acc = coef[0] * vs[0][c];
    for (int q = 1; q < n; ++q) acc = acc + coef[q] * vs[q][c];
    r[c] = acc;
  }
}

// Projection of the origin on the line through v1, v2 (projectOriginLine).
template <class T>
MYRIAD_HD void project_origin_line(T* r, const T* v1, const T* v2) {
  T diff[3];
  sub3(diff, v2, v1);
  const T scl = -(dot3(v2, diff) / dot3(diff, diff));
  set3(r, v2[0] + scl * diff[0], v2[1] + scl * diff[1], v2[2] + scl * diff[2]);
}

// Projection of the origin on the plane through v1, v2, v3 (projectOriginPlane); false when the
// triangle is degenerate (a zero normal).
template <class T>
MYRIAD_HD bool project_origin_plane(T* r, const T* v1, const T* v2, const T* v3) {
  T d21[3], d31[3], d32[3], n[3];
  sub3(d21, v2, v1);
  sub3(d31, v3, v1);
  sub3(d32, v3, v2);
  cross3(n, d32, d21);
  T nv = dot3(n, v2);
  T nn = dot3(n, n);
  if (nn == 0) return false;
  if (nv != 0 && nn > T(kMinVal)) {
    scl3(r, n, nv / nn);
    return true;
  }
  cross3(n, d21, d31);
  nv = dot3(n, v1);
  nn = dot3(n, n);
  if (nn == 0) return false;
  if (nv != 0 && nn > T(kMinVal)) {
    scl3(r, n, nv / nn);
    return true;
  }
  cross3(n, d31, d32);
  nv = dot3(n, v3);
  nn = dot3(n, n);
  scl3(r, n, nv / nn);
  return true;
}

// Barycentric weights of the point of segment s1 s2 closest to the origin (S1D, signed volumes).
template <class T>
MYRIAD_HD void s1d(T* lam, const T* s1, const T* s2) {
  T p[3];
  project_origin_line(p, s1, s2);
  T mu_max = s1[0] - s2[0];
  int index = 0;
  for (int i = 1; i < 3; ++i) {
    const T mu = s1[i] - s2[i];
    if (fabs(mu) >= fabs(mu_max)) {
      mu_max = mu;
      index = i;
    }
  }
  const T c1 = p[index] - s2[index];
  const T c2 = s1[index] - p[index];
  const bool same = same_sign2(mu_max, c1) && same_sign2(mu_max, c2);
  lam[0] = same ? c1 / mu_max : T(0);
  lam[1] = same ? c2 / mu_max : T(1);
}

// The three 2x2 minors of the triangle (v1, v2, v3) and the projection plane with the largest
// (shared by S2D and triAffineCoord).
template <class T>
MYRIAD_HD T tri_minor(int* x, int* y, const T* s1, const T* s2, const T* s3) {
  const T m14 =
      s2[1] * s3[2] - s2[2] * s3[1] - s1[1] * s3[2] + s1[2] * s3[1] + s1[1] * s2[2] - s1[2] * s2[1];
  const T m24 =
      s2[0] * s3[2] - s2[2] * s3[0] - s1[0] * s3[2] + s1[2] * s3[0] + s1[0] * s2[2] - s1[2] * s2[0];
  const T m34 =
      s2[0] * s3[1] - s2[1] * s3[0] - s1[0] * s3[1] + s1[1] * s3[0] + s1[0] * s2[1] - s1[1] * s2[0];
  const T mu1 = fabs(m14), mu2 = fabs(m24), mu3 = fabs(m34);
  if (mu1 >= mu2 && mu1 >= mu3) {
    *x = 1;
    *y = 2;
    return m14;
  }
  if (mu2 >= mu3) {
    *x = 0;
    *y = 2;
    return m24;
  }
  *x = 0;
  *y = 1;
  return m34;
}

// The three cofactors of point q in the 2D triangle (a, b, c) (components x, y).
template <class T>
MYRIAD_HD void tri_cofactors(T* c3, const T* q, const T* a, const T* b, const T* c, int x, int y) {
  c3[0] = q[x] * b[y] + q[y] * c[x] + b[x] * c[y] - q[x] * c[y] - q[y] * b[x] - c[x] * b[y];
  c3[1] = q[x] * c[y] + q[y] * a[x] + c[x] * a[y] - q[x] * a[y] - q[y] * c[x] - a[x] * c[y];
  c3[2] = q[x] * a[y] + q[y] * b[x] + a[x] * b[y] - q[x] * b[y] - q[y] * a[x] - b[x] * a[y];
}

// |sum_i lam[i] v_i|^2 for the n vertices.
template <class T>
MYRIAD_HD T lincomb_norm2(const T* lam, int n, const T* const* vs) {
  T x[3];
  lincomb(x, lam, n, vs);
  return dot3(x, x);
}

// Barycentric weights of the point of triangle s1 s2 s3 closest to the origin (S2D).
template <class T>
MYRIAD_HD void s2d(T* lam, const T* s1, const T* s2, const T* s3) {
  T p[3];
  if (!project_origin_plane(p, s1, s2, s3)) {
    s1d(lam, s1, s2);
    lam[2] = 0;
    return;
  }
  int x, y;
  const T m_max = tri_minor(&x, &y, s1, s2, s3);
  T c[3];
  tri_cofactors(c, p, s1, s2, s3, x, y);
  const int comp1 = same_sign2(m_max, c[0]), comp2 = same_sign2(m_max, c[1]),
            comp3 = same_sign2(m_max, c[2]);
  if (comp1 && comp2 && comp3) {
    set3(lam, c[0] / m_max, c[1] / m_max, c[2] / m_max);
    return;
  }
  set3(lam, T(0), T(0), T(0));
  T dmin = max_limit<T>();
  T l[2];
  if (!comp1) {
    s1d(l, s2, s3);
    const T* vs[2] = {s2, s3};
    dmin = lincomb_norm2(l, 2, vs);
    set3(lam, T(0), l[0], l[1]);
  }
  if (!comp2) {
    s1d(l, s1, s3);
    const T* vs[2] = {s1, s3};
    const T dd = lincomb_norm2(l, 2, vs);
    if (dd < dmin) {
      set3(lam, l[0], T(0), l[1]);
      dmin = dd;
    }
  }
  if (!comp3) {
    s1d(l, s1, s2);
    const T* vs[2] = {s1, s2};
    const T dd = lincomb_norm2(l, 2, vs);
    if (dd < dmin) set3(lam, l[0], l[1], T(0));
  }
}

// Barycentric weights of the point of tetrahedron s1..s4 closest to the origin (S3D). As in
// MuJoCo, the last face's branch leaves lam[3] as an earlier branch wrote it.
template <class T>
MYRIAD_HD void s3d(T* lam, const T* s1, const T* s2, const T* s3, const T* s4) {
  const T c41 = -det3(s2, s3, s4);
  const T c42 = det3(s1, s3, s4);
  const T c43 = -det3(s1, s2, s4);
  const T c44 = det3(s1, s2, s3);
  const T m_det = c41 + c42 + c43 + c44;
  const int c1 = same_sign2(m_det, c41), c2 = same_sign2(m_det, c42), c3 = same_sign2(m_det, c43),
            c4 = same_sign2(m_det, c44);
  if (c1 && c2 && c3 && c4) {
    lam[0] = c41 / m_det;
    lam[1] = c42 / m_det;
    lam[2] = c43 / m_det;
    lam[3] = c44 / m_det;
    return;
  }
  lam[0] = lam[1] = lam[2] = lam[3] = 0;
  T dmin = max_limit<T>();
  T l[3];
  if (!c1) {
    s2d(l, s2, s3, s4);
    const T* vs[3] = {s2, s3, s4};
    dmin = lincomb_norm2(l, 3, vs);
    lam[0] = 0, lam[1] = l[0], lam[2] = l[1], lam[3] = l[2];
  }
  if (!c2) {
    s2d(l, s1, s3, s4);
    const T* vs[3] = {s1, s3, s4};
    const T dd = lincomb_norm2(l, 3, vs);
    if (dd < dmin) {
      lam[0] = l[0], lam[1] = 0, lam[2] = l[1], lam[3] = l[2];
      dmin = dd;
    }
  }
  if (!c3) {
    s2d(l, s1, s2, s4);
    const T* vs[3] = {s1, s2, s4};
    const T dd = lincomb_norm2(l, 3, vs);
    if (dd < dmin) {
      lam[0] = l[0], lam[1] = l[1], lam[2] = 0, lam[3] = l[2];
      dmin = dd;
    }
  }
  if (!c4) {
    s2d(l, s1, s2, s3);
    const T* vs[3] = {s1, s2, s3};
    const T dd = lincomb_norm2(l, 3, vs);
    if (dd < dmin) lam[0] = l[0], lam[1] = l[1], lam[2] = l[2];  // lam[3] kept
  }
}

// Barycentric weights of the simplex's point closest to the origin (subdistance).
template <class T>
MYRIAD_HD void subdistance(T* lam, int n, const Vertex<T>* s) {
  lam[0] = 1, lam[1] = lam[2] = lam[3] = 0;
  if (n == 4) {
    s3d(lam, s[0].vert, s[1].vert, s[2].vert, s[3].vert);
  } else if (n == 3) {
    s2d(lam, s[0].vert, s[1].vert, s[2].vert);
  } else if (n == 2) {
    s1d(lam, s[0].vert, s[1].vert);
  }
}

// Unit outward normal and signed distance of the origin to face (v1, v2, v3) of the GJK
// tetrahedron (signedDistance); DBL_MAX when the face is degenerate (normal left unscaled).
template <class T>
MYRIAD_HD T signed_distance(T* n, const Vertex<T>& v1, const Vertex<T>& v2, const Vertex<T>& v3) {
  T diff1[3], diff2[3];
  sub3(diff1, v3.vert, v1.vert);
  sub3(diff2, v2.vert, v1.vert);
  cross3(n, diff1, diff2);
  const T n2 = dot3(n, n);
  if (n2 > min_val2<T>() && n2 < max_val2<T>()) {
    scl3(n, n, T(1) / sqrt(n2));
    return dot3(n, v1.vert);
  }
  return max_limit<T>();
}

// Unit outward normal and signed distance of face f of the GJK tetrahedron v[0..3]: the face
// opposite v[f], in gjkIntersect's vertex order.
template <class T>
MYRIAD_HD T face_distance(T* n, const Vertex<T>* v, int f) {
  if (f == 0) return signed_distance(n, v[2], v[1], v[3]);
  if (f == 1) return signed_distance(n, v[0], v[2], v[3]);
  if (f == 2) return signed_distance(n, v[1], v[0], v[3]);
  return signed_distance(n, v[0], v[1], v[2]);
}

// Exchanges two vertices field by field (no whole-vertex temporary on a GPU lane's stack).
template <class T>
MYRIAD_HD void swap_vertices(Vertex<T>& a, Vertex<T>& b) {
  for (int c = 0; c < 3; ++c) {
    const T v = a.vert[c], v1 = a.vert1[c], v2 = a.vert2[c];
    a.vert[c] = b.vert[c], a.vert1[c] = b.vert1[c], a.vert2[c] = b.vert2[c];
    b.vert[c] = v, b.vert1[c] = v1, b.vert2[c] = v2;
  }
  const int i1 = a.index1, i2 = a.index2;
  a.index1 = b.index1, a.index2 = b.index2;
  b.index1 = i1, b.index2 = i2;
}

// Refines the GJK tetrahedron in st->simplex until it encloses the origin or a separating face is
// found (gjkIntersect): 1 enclosed (st->simplex is the tetrahedron), 0 separated, -1 undecided (a
// face through the origin, or the iterations ran out; GJK goes on from st->gjk_iterations). MuJoCo
// refines a copy, so that on -1 its GJK goes on from the tetrahedron it had; this one refines
// st->simplex in place (the copy would be 320 bytes of a GPU lane's stack) and on -1 the GJK
// replays itself to get it back (gjk).
template <class T>
MYRIAD_HD int gjk_intersect(Status<T>* st, Obj<T>& o1, Obj<T>& o2) {
  Vertex<T>* v = st->simplex;
  int k = st->gjk_iterations;
  for (; k < st->max_iterations; ++k) {
    T nrm[3];
    const T d0 = face_distance(nrm, v, 0), d1 = face_distance(nrm, v, 1);
    const T d2 = face_distance(nrm, v, 2), d3 = face_distance(nrm, v, 3);
    if (d3 == 0 || d2 == 0 || d1 == 0 || d0 == 0) break;
    const int i = d0 < d1 ? 0 : 1;
    const int j = d2 < d3 ? 2 : 3;
    const T di = i == 0 ? d0 : d1, dj = j == 2 ? d2 : d3;
    const int index = di < dj ? i : j;
    if ((di < dj ? di : dj) > 0) {
      st->nsimplex = 4;
      st->gjk_iterations = k;
      return 1;
    }
    // The nearest face's normal, computed again rather than kept for all four (a GPU lane's stack).
    face_distance(nrm, v, index);
    const T nneg[3] = {-nrm[0], -nrm[1], -nrm[2]};
    support(&v[index], o1, o2, nrm, nneg);
    if (dot3(nrm, v[index].vert) < 0) {
      st->nsimplex = 0;
      st->gjk_iterations = k;
      return 0;
    }
    // Swap two vertices to keep the tetrahedron's orientation.
    swap_vertices(v[(index + 1) & 3], v[(index + 2) & 3]);
  }
  st->gjk_iterations = k;
  return -1;
}

// lincomb over one point of each of the simplex's first n vertices (vert, vert1 or vert2), without
// an array of pointers to them (which a GPU lane would keep on its stack).
template <class T>
MYRIAD_HD void simplex_lincomb(T* r, const T* coef, int n, const Vertex<T>* s,
                               T (Vertex<T>::*point)[3]) {
  for (int c = 0; c < 3; ++c) {
    T acc = coef[0] * (s[0].*point)[c];
    for (int q = 1; q < n; ++q) acc = acc + coef[q] * (s[q].*point)[c];
    r[c] = acc;
  }
}

// GJK gave up: no contact (dist = DBL_MAX, empty simplex); true (gjk_pass is done).
template <class T>
MYRIAD_HD bool gjk_separated(Status<T>* st, int k) {
  st->gjk_iterations = k;
  st->nsimplex = 0;
  st->dist = max_limit<T>();
  return true;
}

// GJK distance between the objects (gjk) as 3.11 computes it: with dist_cutoff > 0 the distance
// (stopping as soon as it exceeds the cutoff), else an intersection test that hands a
// tetrahedron to gjkIntersect. Leaves the simplex, witnesses x1, x2 and dist in st: the squared
// norm after the early stop |x|^2 < tol^2, 0 when the four-point simplex encloses the origin (3.11
// writes 0, not |x_k|: with S3D's kept lam[3] the last iterate need not be near 0), else |x_k| from
// the top of the last iteration. One pass of it (gjk_pass): replay, the second pass after
// gjkIntersect returned -1 (a face through the origin, or out of iterations), takes that -1
// without running it, at the iteration count the first pass left; false when the pass ended in
// that -1 and has to be replayed.
template <class T>
MYRIAD_HD bool gjk_pass(Status<T>* st, Obj<T>& o1, Obj<T>& o2, bool replay) {
  const bool get_dist = st->dist_cutoff > 0;
  bool backup_gjk = !get_dist;
  Vertex<T>* simplex = st->simplex;
  int n = 0, k = 0;
  const int kmax = st->max_iterations;
  T x_k[3];
  sub3(x_k, st->x1, st->x2);
  T lam[4] = {1, 0, 0, 0};
  const T cutoff2 = st->dist_cutoff * st->dist_cutoff;
  const T tol = st->tolerance;
  const T epsilon = discrete_geoms(o1, o2) ? T(0) : T(0.5) * tol * tol;
  const T early_thresh = epsilon > 0 ? tol * tol : min_val2<T>();
  T x_norm = 0;
  bool early = false, enclosed = false;
  while (k < kmax) {
    x_norm = dot3(x_k, x_k);
    if (x_norm < early_thresh) {
      early = true;
      break;
    }
    x_norm = sqrt(x_norm);
    gjk_support(&simplex[n], o1, o2, x_k, x_norm);
    const T* s_k = simplex[n].vert;
    T diff[3];
    sub3(diff, x_k, s_k);
    if (dot3(x_k, diff) < epsilon) {  // duality gap closed
      if (!k) n = 1;
      break;
    }
    if (!get_dist) {
      if (dot3(x_k, s_k) > 0) return gjk_separated(st, k);
    } else if (st->dist_cutoff < max_limit<T>()) {
      const T vs = dot3(x_k, s_k), vv = dot3(x_k, x_k);
      if (vs > 0 && (vs * vs / vv) >= cutoff2) return gjk_separated(st, k);
    }
    if (n == 3 && backup_gjk) {
      if (!replay) {
        st->gjk_iterations = k;
        const int ret = gjk_intersect(st, o1, o2);
        if (ret == -1) return false;  // st->simplex is gjkIntersect's now: replay
        st->dist = ret > 0 ? T(0) : max_limit<T>();
        return true;
      }
      k = st->gjk_iterations;  // where gjkIntersect's -1 left it (the first pass wrote it)
      backup_gjk = false;
    }
    subdistance(lam, n + 1, simplex);
    n = 0;
    for (int i = 0; i < 4; ++i) {
      if (!lam[i]) continue;
      simplex[n] = simplex[i];
      lam[n] = lam[i];
      ++n;
    }
    if (n < 1) return gjk_separated(st, k);
    T x_next[3];
    simplex_lincomb(x_next, lam, n, simplex, &Vertex<T>::vert);
    if (equal3(x_next, x_k)) break;
    copy3(x_k, x_next);
    if (n == 4) {
      enclosed = true;
      break;
    }
    ++k;
  }
  if (n > 0) {
    simplex_lincomb(st->x1, lam, n, simplex, &Vertex<T>::vert1);
    simplex_lincomb(st->x2, lam, n, simplex, &Vertex<T>::vert2);
  }
  st->gjk_iterations = k;
  st->nsimplex = n;
  st->dist = early ? x_norm : (enclosed ? T(0) : x_norm);
  return true;
}

// Hook for tests: counts the GJK replays (defined empty unless a test defines it).
#ifndef MYRIAD_CCD_NOTE_REPLAY
#define MYRIAD_CCD_NOTE_REPLAY()
#endif

// gjk_pass, replayed when gjkIntersect returns -1. A pass reads from st only what it does not
// write before then (x1, x2, the settings) and the objects' supports depend only on the direction
// (a box's corner is written before it is read), so the replay repeats the first pass's
// iterations bit for bit up to where it called gjkIntersect.
template <class T>
MYRIAD_HD_OUTLINE void gjk(Status<T>* st, Obj<T>& o1, Obj<T>& o2) {
  for (int pass = 0; pass < 2; ++pass) {  // one call site: one copy of the pass
    if (gjk_pass(st, o1, o2, pass == 1)) return;
    MYRIAD_CCD_NOTE_REPLAY();
  }
}

// ------------------------------------------------------------------------- EPA polytope

// One triangle of the EPA polytope (Face): vertex and adjacent-face indices, the origin's
// projection v on its plane (turned to point out of the polytope), |v|^2, and its slot in the map
// (-1: not in the map, -2: deleted).
template <class T>
struct Face {
  int verts[3];
  int adj[3];
  int index;
  T v[3];
  T dist2;
};

// The EPA polytope (Polytope) with the horizon scratch, all fixed-size.
template <class T>
struct Polytope {
  Vertex<T> verts[kEpaMaxVerts];
  Face<T> faces[kEpaMaxFaces];
  int map[kEpaMaxFaces];  // faces that may hold the closest point, in MuJoCo's map order
  int nverts;
  int nfaces;
  int nmap;
  T center[3];  // a point inside the initial polytope: faces' v point away from it
  // Horizon of the current EPA step: faces and edges, and the explicit stack of the walk.
  int hor_face[kEpaMaxFaces];
  unsigned char hor_edge[kEpaMaxFaces];
  int nhorizon;
  int stack_face[kEpaMaxFaces];
  unsigned char stack_edge[kEpaMaxFaces];
  unsigned char stack_step[kEpaMaxFaces];
  const T* w;  // the new support point the horizon is seen from
};

template <class T>
MYRIAD_HD void polytope_clear(Polytope<T>* pt) {
  pt->nverts = pt->nfaces = pt->nmap = 0;
  set3(pt->center, T(0), T(0), T(0));
}

template <class T>
MYRIAD_HD int insert_vertex(Polytope<T>* pt, const Vertex<T>& v) {
  pt->verts[pt->nverts] = v;
  return pt->nverts++;
}

// Appends the support point along d (normalised by dnorm; +x when dnorm is ~0) (epaSupport).
template <class T>
MYRIAD_HD int epa_support(Polytope<T>* pt, Obj<T>& o1, Obj<T>& o2, const T* d, T dnorm) {
  T dd[3] = {1, 0, 0}, dneg[3] = {-1, 0, 0};
  if (dnorm > T(kMinVal)) {
    set3(dd, d[0] / dnorm, d[1] / dnorm, d[2] / dnorm);
    scl3(dneg, dd, T(-1));
  }
  support(&pt->verts[pt->nverts], o1, o2, dd, dneg);
  return pt->nverts++;
}

// Turns the face's v out of the polytope: flips it when v . (P1 - center) < 0, P1 the face's first
// vertex and center the initial polytope's interior point (3.11's attachFace; it matters when the
// origin lies outside a face, e.g. GJK stopped within ccd_tolerance of the boundary).
template <class T>
MYRIAD_HD void orient_face(Polytope<T>* pt, Face<T>& f) {
  T d[3];
  sub3(d, pt->verts[f.verts[0]].vert, pt->center);
  if (dot3(f.v, d) < 0) set3(f.v, -f.v[0], -f.v[1], -f.v[2]);
}

// Appends face (v1, v2, v3) with adjacent faces (a1, a2, a3) and returns its |v|^2, 0 when the
// triangle is degenerate (attachFace).
template <class T>
MYRIAD_HD T attach_face(Polytope<T>* pt, int v1, int v2, int v3, int a1, int a2, int a3) {
  Face<T>& f = pt->faces[pt->nfaces++];
  f.verts[0] = v1, f.verts[1] = v2, f.verts[2] = v3;
  f.adj[0] = a1, f.adj[1] = a2, f.adj[2] = a3;
  f.index = -1;
  set3(f.v, T(0), T(0), T(0));
  f.dist2 = 0;
  if (!project_origin_plane(f.v, pt->verts[v3].vert, pt->verts[v2].vert, pt->verts[v1].vert)) {
    set3(f.v, T(0), T(0), T(0));
    return 0;
  }
  orient_face(pt, f);
  f.dist2 = dot3(f.v, f.v);
  return f.dist2;
}

// Puts the first n faces in the map, in order.
template <class T>
MYRIAD_HD void populate_map(Polytope<T>* pt, int n) {
  pt->nmap = n;
  for (int i = 0; i < n; ++i) {
    pt->map[i] = i;
    pt->faces[i].index = i;
  }
}

// Whether p3 and the origin lie strictly on the same side of plane (p0, p1, p2) (sameSide).
template <class T>
MYRIAD_HD bool same_side(const T* p0, const T* p1, const T* p2, const T* p3) {
  T e1[3], e2[3], n[3], e3[3], mp0[3];
  sub3(e1, p1, p0);
  sub3(e2, p2, p0);
  cross3(n, e1, e2);
  sub3(e3, p3, p0);
  scl3(mp0, p0, T(-1));
  const T dot1 = dot3(n, e3), dot2 = dot3(n, mp0);
  return (dot1 > 0 && dot2 > 0) || (dot1 < 0 && dot2 < 0);
}

// Whether the tetrahedron contains the origin (testTetra).
template <class T>
MYRIAD_HD bool test_tetra(const T* p0, const T* p1, const T* p2, const T* p3) {
  return same_side(p0, p1, p2, p3) && same_side(p1, p2, p3, p0) && same_side(p2, p3, p0, p1) &&
         same_side(p3, p0, p1, p2);
}

// Rotation by 120 degrees about axis (rotmat), with MuJoCo's literal sine and cosine.
template <class T>
MYRIAD_HD void rotmat(T* r, const T* axis) {
  const T n = norm3(axis);
  const T u1 = axis[0] / n, u2 = axis[1] / n, u3 = axis[2] / n;
  const T sn = T(0.86602540378), cs = T(-0.5), c1 = T(1) - cs;
  r[0] = cs + u1 * u1 * c1;
  r[1] = u1 * u2 * c1 - u3 * sn;
  r[2] = u1 * u3 * c1 + u2 * sn;
  r[3] = u2 * u1 * c1 + u3 * sn;
  r[4] = cs + u2 * u2 * c1;
  r[5] = u2 * u3 * c1 - u1 * sn;
  r[6] = u1 * u3 * c1 - u2 * sn;
  r[7] = u2 * u3 * c1 + u1 * sn;
  r[8] = cs + u3 * u3 * c1;
}

// Whether segment v1 v2 passes through triangle (v3, v4, v5): 1 or -1 by side, 0 if not
// (rayTriangle).
template <class T>
MYRIAD_HD int ray_triangle(const T* v1, const T* v2, const T* v3, const T* v4, const T* v5) {
  T d12[3], d13[3], d14[3], d15[3];
  sub3(d12, v2, v1);
  sub3(d13, v3, v1);
  sub3(d14, v4, v1);
  sub3(d15, v5, v1);
  const T vol1 = det3(d13, d14, d12);
  const T vol2 = det3(d14, d15, d12);
  const T vol3 = det3(d15, d13, d12);
  if (vol1 >= 0 && vol2 >= 0 && vol3 >= 0) return 1;
  if (vol1 <= 0 && vol2 <= 0 && vol3 <= 0) return -1;
  return 0;
}

// Affine coordinates of p (in the triangle's plane) in triangle (v1, v2, v3) (triAffineCoord).
template <class T>
MYRIAD_HD void tri_affine_coord(T* lam, const T* v1, const T* v2, const T* v3, const T* p) {
  int x, y;
  const T m_max = tri_minor(&x, &y, v1, v2, v3);
  T c[3];
  tri_cofactors(c, p, v1, v2, v3, x, y);
  set3(lam, c[0] / m_max, c[1] / m_max, c[2] / m_max);
}

// Whether p lies in triangle (v1, v2, v3) (triPointIntersect).
template <class T>
MYRIAD_HD bool tri_point_intersect(const T* v1, const T* v2, const T* v3, const T* p) {
  T l[3];
  tri_affine_coord(l, v1, v2, v3, p);
  if (l[0] < 0 || l[1] < 0 || l[2] < 0) return false;
  T pr[3], d[3];
  for (int c = 0; c < 3; ++c) pr[c] = v1[c] * l[0] + v2[c] * l[1] + v3[c] * l[2];
  sub3(d, pr, p);
  return norm3(d) < T(kMinVal);
}

// The polytope's initial faces: (vertex a, b, c | adjacent faces x, y, z), 6 per row of 6.
struct FaceDef {
  int v[3];
  int a[3];
};

// Status codes of the polytope construction (names as the EPA's).
enum EpaStatus : int {
  kEpaOk = 0,
  kP2NonConvex = 2,
  kP3BadNormal = 3,
  kP3InvalidV4 = 4,
  kP3InvalidV5 = 5,
  kP3MissingOrigin = 6,
  kP3OriginOnFace = 7,
  kP4MissingOrigin = 8,
  kRestartFromFace = 9,  // polytope2 or polytope4 found the origin on a face: polytope3 from it
};

// Hexahedron around triangle v1 v2 v3 of the simplex, with the supports along its normal
// (polytope3).
template <class T>
MYRIAD_HD_OUTLINE int polytope3(Polytope<T>* pt, Status<T>* st, Obj<T>& o1, Obj<T>& o2) {
  const T* v1 = st->simplex[0].vert;
  const T* v2 = st->simplex[1].vert;
  const T* v3 = st->simplex[2].vert;
  for (int c = 0; c < 3; ++c) pt->center[c] = ((v1[c] + v2[c]) + v3[c]) * T(0.3333333333333333);
  T e1[3], e2[3], n[3], n_neg[3];
  sub3(e1, v2, v1);
  sub3(e2, v3, v1);
  cross3(n, e1, e2);
  const T n_norm = norm3(n);
  if (n_norm < T(kMinVal)) return kP3BadNormal;
  scl3(n_neg, n, T(-1));
  const int i1 = insert_vertex(pt, st->simplex[0]);
  const int i2 = insert_vertex(pt, st->simplex[1]);
  const int i3 = insert_vertex(pt, st->simplex[2]);
  const int i5 = epa_support(pt, o1, o2, n_neg, n_norm);
  const int i4 = epa_support(pt, o1, o2, n, n_norm);
  const T* v4 = pt->verts[i4].vert;
  const T* v5 = pt->verts[i5].vert;
  if (tri_point_intersect(v1, v2, v3, v4)) return kP3InvalidV4;
  if (tri_point_intersect(v1, v2, v3, v5)) return kP3InvalidV5;
  if (st->dist > T(10 * kMinVal) && !test_tetra(v1, v2, v3, v4) && !test_tetra(v1, v2, v3, v5))
    return kP3MissingOrigin;
  const FaceDef defs[6] = {{{i4, i1, i2}, {1, 3, 2}}, {{i4, i3, i1}, {2, 4, 0}},
                           {{i4, i2, i3}, {0, 5, 1}}, {{i5, i2, i1}, {5, 0, 4}},
                           {{i5, i1, i3}, {3, 1, 5}}, {{i5, i3, i2}, {4, 2, 3}}};
  for (const FaceDef& f : defs) {
    if (attach_face(pt, f.v[0], f.v[1], f.v[2], f.a[0], f.a[1], f.a[2]) < min_val2<T>())
      return kP3OriginOnFace;
  }
  populate_map(pt, 6);
  return kEpaOk;
}

// The origin lies on face (a, b, c) of the polytope being built: the face becomes the simplex, and
// penetration restarts from it with polytope3 (its one call site, which was three when polytope2
// and polytope4 called it).
template <class T>
MYRIAD_HD int restart_from_face(Polytope<T>* pt, Status<T>* st, int a, int b, int c) {
  st->nsimplex = 3;
  st->simplex[0] = pt->verts[a];
  st->simplex[1] = pt->verts[b];
  st->simplex[2] = pt->verts[c];
  return kRestartFromFace;
}

// Double triangular pyramid around segment v1 v2 of the simplex, with supports along three
// directions 120 degrees apart (polytope2).
template <class T>
MYRIAD_HD_OUTLINE int polytope2(Polytope<T>* pt, Status<T>* st, Obj<T>& o1, Obj<T>& o2) {
  for (int c = 0; c < 3; ++c)
    pt->center[c] = (st->simplex[0].vert[c] + st->simplex[1].vert[c]) * T(0.5);
  T diff[3];
  sub3(diff, st->simplex[1].vert, st->simplex[0].vert);
  T value = max_limit<T>();
  int index = 0;
  for (int i = 0; i < 3; ++i) {
    if (fabs(diff[i]) < value) {
      value = fabs(diff[i]);
      index = i;
    }
  }
  T e[3] = {0, 0, 0}, d1[3], d2[3], d3[3], rot[9];
  e[index] = 1;
  cross3(d1, e, diff);
  rotmat(rot, diff);
  mat_vec(d2, rot, d1);
  mat_vec(d3, rot, d2);
  const int i1 = insert_vertex(pt, st->simplex[0]);
  const int i2 = insert_vertex(pt, st->simplex[1]);
  const int i3 = epa_support(pt, o1, o2, d1, norm3(d1));
  const int i4 = epa_support(pt, o1, o2, d2, norm3(d2));
  const int i5 = epa_support(pt, o1, o2, d3, norm3(d3));
  const FaceDef defs[6] = {{{i1, i3, i4}, {1, 3, 2}}, {{i1, i5, i3}, {2, 4, 0}},
                           {{i1, i4, i5}, {0, 5, 1}}, {{i2, i4, i3}, {5, 0, 4}},
                           {{i2, i3, i5}, {3, 1, 5}}, {{i2, i5, i4}, {4, 2, 3}}};
  for (const FaceDef& f : defs) {
    if (attach_face(pt, f.v[0], f.v[1], f.v[2], f.a[0], f.a[1], f.a[2]) < min_val2<T>())
      return restart_from_face(pt, st, f.v[0], f.v[1], f.v[2]);
  }
  const Vertex<T>* v = pt->verts;
  if (!ray_triangle(v[i1].vert, v[i2].vert, v[i3].vert, v[i4].vert, v[i5].vert))
    return kP2NonConvex;
  populate_map(pt, 6);
  return kEpaOk;
}

// The GJK tetrahedron as the initial polytope (polytope4).
template <class T>
MYRIAD_HD_OUTLINE int polytope4(Polytope<T>* pt, Status<T>* st, Obj<T>& o1, Obj<T>& o2) {
  const int i1 = insert_vertex(pt, st->simplex[0]);
  const int i2 = insert_vertex(pt, st->simplex[1]);
  const int i3 = insert_vertex(pt, st->simplex[2]);
  const int i4 = insert_vertex(pt, st->simplex[3]);
  const T* p[4] = {pt->verts[i1].vert, pt->verts[i2].vert, pt->verts[i3].vert, pt->verts[i4].vert};
  for (int c = 0; c < 3; ++c) pt->center[c] = (((p[0][c] + p[1][c]) + p[2][c]) + p[3][c]) * T(0.25);
  const FaceDef defs[4] = {{{i1, i2, i3}, {1, 3, 2}},
                           {{i1, i4, i2}, {2, 3, 0}},
                           {{i1, i3, i4}, {0, 3, 1}},
                           {{i4, i3, i2}, {2, 0, 1}}};
  for (const FaceDef& f : defs) {
    if (attach_face(pt, f.v[0], f.v[1], f.v[2], f.a[0], f.a[1], f.a[2]) < min_val2<T>())
      return restart_from_face(pt, st, f.v[0], f.v[1], f.v[2]);
  }
  if (!test_tetra(p[0], p[1], p[2], p[3])) return kP4MissingOrigin;
  populate_map(pt, 4);
  return kEpaOk;
}

// ------------------------------------------------------------------------- EPA

// Removes the face from the map (the map's last entry takes its slot) and marks it deleted
// (deleteFace).
template <class T>
MYRIAD_HD void delete_face(Polytope<T>* pt, int fi) {
  Face<T>& f = pt->faces[fi];
  if (f.index >= 0) {
    const int last = pt->map[--pt->nmap];
    if (f.index < pt->nmap) {
      pt->map[f.index] = last;
      pt->faces[last].index = f.index;
    }
  }
  f.index = -2;
}

// Which edge of the face starts at the vertex (getEdge).
template <class T>
MYRIAD_HD int get_edge(const Face<T>& f, int vertex) {
  if (f.verts[0] == vertex) return 0;
  if (f.verts[1] == vertex) return 1;
  return 2;
}

// Whether w sees the face (v . w - |v|^2 > mjMINVAL).
template <class T>
MYRIAD_HD bool visible(const Polytope<T>* pt, int fi) {
  const Face<T>& f = pt->faces[fi];
  return dot3(f.v, pt->w) - f.dist2 > T(kMinVal);
}

// Records horizon edge e of face fi (counted even when the list is full: the caller then stops
// as MuJoCo does when out of faces).
template <class T>
MYRIAD_HD void add_horizon(Polytope<T>* pt, int fi, int e) {
  if (pt->nhorizon < kEpaMaxFaces) {
    pt->hor_face[pt->nhorizon] = fi;
    pt->hor_edge[pt->nhorizon] = static_cast<unsigned char>(e);
  }
  ++pt->nhorizon;
}

// Depth-first walk from face fi (entered through edge e) over the faces w sees, deleting them and
// recording the horizon edges in the order MuJoCo's recursion does (horizonRec, with an explicit
// stack); false when w does not see fi.
template <class T>
MYRIAD_HD bool horizon_walk(Polytope<T>* pt, int fi, int e) {
  if (!visible(pt, fi)) return false;
  delete_face(pt, fi);
  int top = 0;
  pt->stack_face[0] = fi;
  pt->stack_edge[0] = static_cast<unsigned char>(e);
  pt->stack_step[0] = 1;
  while (top >= 0) {
    const int step = pt->stack_step[top];
    if (step > 2) {
      --top;
      continue;
    }
    pt->stack_step[top] = static_cast<unsigned char>(step + 1);
    const Face<T>& face = pt->faces[pt->stack_face[top]];
    const int i = (pt->stack_edge[top] + step) % 3;
    const int ai = face.adj[i];
    if (pt->faces[ai].index <= -2) continue;
    const int adj_edge = get_edge(pt->faces[ai], face.verts[(i + 1) % 3]);
    if (visible(pt, ai)) {
      delete_face(pt, ai);
      ++top;  // each pushed face is deleted once: top < kEpaMaxFaces
      pt->stack_face[top] = ai;
      pt->stack_edge[top] = static_cast<unsigned char>(adj_edge);
      pt->stack_step[top] = 1;
    } else {
      add_horizon(pt, ai, adj_edge);
    }
  }
  return true;
}

// Deletes face fi and every face w sees, collecting the horizon (horizon).
template <class T>
MYRIAD_HD void horizon(Polytope<T>* pt, int fi) {
  pt->nhorizon = 0;
  const Face<T> face = pt->faces[fi];
  delete_face(pt, fi);
  for (int j = 0; j < 3; ++j) {
    const int ai = face.adj[j];
    const int adj_edge = get_edge(pt->faces[ai], face.verts[(j + 1) % 3]);
    if (j > 0 && pt->faces[ai].index <= -2) continue;
    if (!horizon_walk(pt, ai, adj_edge)) add_horizon(pt, ai, adj_edge);
  }
}

// Witness points of the face: affine coordinates of its v applied to the vertices' points on
// each object (epaWitness).
template <class T>
MYRIAD_HD void epa_witness(const Polytope<T>* pt, const Face<T>& f, T* x1, T* x2) {
  const Vertex<T>& a = pt->verts[f.verts[0]];
  const Vertex<T>& b = pt->verts[f.verts[1]];
  const Vertex<T>& c = pt->verts[f.verts[2]];
  T l[3];
  tri_affine_coord(l, a.vert, b.vert, c.vert, f.v);
  for (int q = 0; q < 3; ++q) {
    x1[q] = a.vert1[q] * l[0] + b.vert1[q] * l[1] + c.vert1[q] * l[2];
    x2[q] = a.vert2[q] * l[0] + b.vert2[q] * l[1] + c.vert2[q] * l[2];
  }
}

// Whether w repeats the (index1, index2) pair of an earlier vertex (discrete EPA stop).
template <class T>
MYRIAD_HD bool repeated_vertex(const Polytope<T>* pt, const Vertex<T>& w) {
  const int n = pt->nverts - 1;
  for (int i = 0; i < n; ++i)
    if (w.index1 == pt->verts[i].index1 && w.index2 == pt->verts[i].index2) return true;
  return false;
}

// Attaches one face per horizon edge from w (index wi), adding to the map those whose |v|^2 lies
// in [lower2, upper2]; false when a new face is degenerate (no contact).
template <class T>
MYRIAD_HD bool attach_horizon(Polytope<T>* pt, int wi, T lower2, T upper2) {
  const int nfaces = pt->nfaces, nedges = pt->nhorizon;
  for (int i = 0; i < nedges; ++i) {
    const int cur = nfaces + i;
    const int prev = i == 0 ? nfaces + nedges - 1 : cur - 1;
    const int next = nfaces + (i + 1) % nedges;
    Face<T>& hf = pt->faces[pt->hor_face[i]];
    const int he = pt->hor_edge[i];
    const int a = hf.verts[he], b = hf.verts[(he + 1) % 3];
    hf.adj[he] = cur;
    const T dist2 = attach_face(pt, wi, b, a, prev, pt->hor_face[i], next);
    if (dist2 == 0) return false;
    if (dist2 >= lower2 && dist2 <= upper2) {
      pt->map[pt->nmap] = pt->nfaces - 1;
      pt->faces[pt->nfaces - 1].index = pt->nmap++;
    }
  }
  return true;
}

// Hook for tests: the most faces an EPA call used (defined empty unless a test defines it).
#ifndef MYRIAD_CCD_NOTE_FACES
#define MYRIAD_CCD_NOTE_FACES(n)
#endif

// Expanding polytope: penetration depth and witnesses (epa). Sets st->dist = -depth and x1, x2,
// or dist = 0 (no contact) when it fails.
template <class T>
MYRIAD_HD void epa(Status<T>* st, Polytope<T>* pt, Obj<T>& o1, Obj<T>& o2) {
  T upper = max_limit<T>(), upper2 = max_limit<T>();
  int face = -1;
  const bool discrete = discrete_geoms(o1, o2);
  const T tolerance = discrete ? T(kMinVal) : st->tolerance;
  // The buffers hold kCcdMaxIterations iterations (see kCcdMaxIterations).
  const int kmax = st->max_iterations < kCcdMaxIterations ? st->max_iterations : kCcdMaxIterations;
  for (int k = 0; k < kmax; ++k) {
    const int pface = face;
    T lower2 = max_limit<T>();
    for (int m = 0; m < pt->nmap; ++m) {
      const int fi = pt->map[m];
      if (pt->faces[fi].dist2 < lower2) {
        face = fi;
        lower2 = pt->faces[fi].dist2;
      }
    }
    if (lower2 > upper2 || face < 0) {
      face = pface;
      break;
    }
    if (lower2 <= 0) break;
    const Face<T>& f = pt->faces[face];
    const T lower = sqrt(lower2);
    const int wi = epa_support(pt, o1, o2, f.v, lower);
    const Vertex<T>& w = pt->verts[wi];
    const T upper_k = dot3(f.v, w.vert) / lower;
    if (upper_k < upper) {
      upper = upper_k;
      upper2 = upper * upper;
    }
    if (upper - lower < tolerance) {
      // Converged; on the first face, a support short of it by more than 1e-10 means the origin is
      // outside the polytope: no contact (3.11's machine code; the stored upstream source has no
      // such test).
      if (k == 0 && lower + T(-1e-10) > upper) face = -1;
      break;
    }
    if (discrete && repeated_vertex(pt, w)) break;
    pt->w = w.vert;
    horizon(pt, face);
    if (pt->nhorizon < 3) {
      face = -1;
      break;
    }
    if (pt->nhorizon > kEpaMaxFaces - pt->nfaces) break;  // out of faces: keep this face
    if (!attach_horizon(pt, wi, lower2, upper2)) {
      face = -1;
      break;
    }
    MYRIAD_CCD_NOTE_FACES(pt->nfaces);
    if (pt->nmap == 0) break;
  }
  if (face < 0) {
    st->dist = 0;
    return;
  }
  epa_witness(pt, pt->faces[face], st->x1, st->x2);
  st->dist = -sqrt(pt->faces[face].dist2);
}

// ------------------------------------------------------------------------- mjc_ccd

// Moves the witnesses apart by the margins along x2 - x1 and subtracts them from dist (inflate).
template <class T>
MYRIAD_HD void inflate(Status<T>* st, T m1, T m2) {
  T n[3];
  sub3(n, st->x2, st->x1);
  normalize3(n);
  if (m1) set3(st->x1, st->x1[0] + m1 * n[0], st->x1[1] + m1 * n[1], st->x1[2] + m1 * n[2]);
  if (m2) set3(st->x2, st->x2[0] - m2 * n[0], st->x2[1] - m2 * n[1], st->x2[2] - m2 * n[2]);
  st->dist -= (m1 + m2);
}

// Where the EPA builds its polytope (about 28 KB in double). LocalPolytope: a polytope of the
// caller's own, on its stack, what the CPU uses. WarpPolytope: one polytope in CUDA shared
// memory for the lanes of a warp, which take it in turn (collision_ccd, physics/launch.h): the
// stack a GPU thread reserves stays small. try_take() says whether the caller now holds it,
// polytope() is it, give_back() frees it; the EPA does the same arithmetic in either.
template <class T>
struct LocalPolytope {
  Polytope<T> pt;
  MYRIAD_HD LocalPolytope() {}  // user-provided: LocalPolytope() leaves the 28 KB unwritten
  MYRIAD_HD bool try_take() { return true; }
  MYRIAD_HD Polytope<T>* polytope() { return &pt; }
  MYRIAD_HD void give_back() {}
};
template <class T>
struct WarpPolytope {
  Polytope<T>* pt;
  int* taken;  // 1 while a lane holds pt
#if defined(__CUDA_ARCH__)
  // Frees the polytope for a one-warp block: call on each of its lanes that run (`lanes`, a bit
  // per lane; lane 0 always runs) before any takes it.
  __device__ static WarpPolytope open(Polytope<T>* shared_pt, int* shared_taken, unsigned lanes) {
    if ((threadIdx.x & 31) == 0) *shared_taken = 0;
    __syncwarp(lanes);
    return {shared_pt, shared_taken};
  }
  // A lane that finds it held backs off briefly; independent thread scheduling (sm_70 and later)
  // lets the holder run on meanwhile.
  __device__ bool try_take() {
    if (atomicCAS(taken, 0, 1) != 0) {
      __nanosleep(32);
      return false;
    }
    __threadfence_block();
    return true;
  }
  __device__ Polytope<T>* polytope() { return pt; }
  __device__ void give_back() {
    __threadfence_block();
    atomicExch(taken, 0);
  }
#else
  bool try_take() { return true; }
  Polytope<T>* polytope() { return pt; }
  void give_back() {}
#endif
};

// Builds the initial polytope from the GJK simplex and runs the EPA in the arena's polytope;
// st->dist stays 0 (no contact) when the polytope cannot be built. The work is inside the loop
// that takes the polytope: a lane gives it back before the loop ends, where the compiler may have
// a warp's lanes wait for one another (with the work after the loop, the holder could wait there
// for lanes that wait for it).
template <class T, class Arena>
MYRIAD_HD void penetration(Status<T>* st, Obj<T>& o1, Obj<T>& o2, Arena& arena) {
  for (bool done = false; !done;) {
    if (!arena.try_take()) continue;
    Polytope<T>* pt = arena.polytope();
    polytope_clear(pt);
    int ret = kRestartFromFace;
    if (st->nsimplex == 2) {
      ret = polytope2(pt, st, o1, o2);
    } else if (st->nsimplex == 4) {
      ret = polytope4(pt, st, o1, o2);
    }
    if (ret == kRestartFromFace) {  // a triangle, or a face of the polytope begun
      polytope_clear(pt);
      ret = polytope3(pt, st, o1, o2);
    }
    if (ret == kEpaOk) epa(st, pt, o1, o2);
    arena.give_back();
    done = true;
  }
}

// Signed distance between objects o1 and o2 (their margins in o1.margin, o2.margin: each support
// is inflated by half of it) with witnesses x1 on o1 and x2 on o2 (mjc_ccd, one contact,
// dist_cutoff 0): > 0 separated (DBL_MAX when beyond the cutoff), < 0 penetration depth. When
// either object is a sphere or capsule, GJK first runs with each sphere (capsule) shrunk to its
// centre (segment), margin 0, the other object as it is; when that core pass ends outside
// ccd_tolerance, the result is inflated by radius + margin/2 of each shrunk object. arena: where
// the EPA's polytope is (LocalPolytope, WarpPolytope).
template <class T, class Arena = LocalPolytope<T>>
MYRIAD_HD T ccd_distance(Status<T>* st, Obj<T>& o1, Obj<T>& o2, T tolerance, int max_iterations,
                         Arena&& arena = Arena()) {
  obj_center(st->x1, o1);
  obj_center(st->x2, o2);
  st->tolerance = tolerance;
  st->max_iterations = max_iterations;
  st->dist_cutoff = 0;
  st->gjk_iterations = 0;
  const bool core1 = o1.type == kSphere || o1.type == kCapsule;
  const bool core2 = o2.type == kSphere || o2.type == kCapsule;
  if (core1 || core2) {
    const T margin1 = o1.margin, margin2 = o2.margin;
    T full1 = 0, full2 = 0;
    if (core1) {
      full1 = T(0.5) * margin1 + o1.size[0];
      o1.mode = o1.type == kSphere ? kPoint : kLine;
      o1.margin = 0;
    }
    if (core2) {
      full2 = T(0.5) * margin2 + o2.size[0];
      o2.mode = o2.type == kSphere ? kPoint : kLine;
      o2.margin = 0;
    }
    const T full = full1 + full2;
    st->dist_cutoff += full;
    gjk(st, o1, o2);
    st->dist_cutoff = 0;
    o1.margin = margin1;
    o2.margin = margin2;
    o1.mode = o2.mode = kFull;
    if (st->dist > st->tolerance) {  // the cores are apart: shallow or separated
      inflate(st, full1, full2);
      if (st->dist > st->dist_cutoff) st->dist = max_limit<T>();
      return st->dist;
    }
    st->gjk_iterations = 0;
    obj_center(st->x1, o1);
    obj_center(st->x2, o2);
  }
  gjk(st, o1, o2);
  if (st->dist <= tolerance && st->nsimplex > 1) {
    st->dist = 0;
    penetration(st, o1, o2, arena);
  }
  return st->dist;
}

// Signed distance between prism o1 and geom o2 (margin in o2.margin): ccd_distance with a prism,
// which has no core and no margin.
template <class T, class Arena = LocalPolytope<T>>
MYRIAD_HD T distance(Status<T>* st, Obj<T>& o1, Obj<T>& o2, T tolerance, int max_iterations,
                     Arena&& arena = Arena()) {
  return ccd_distance(st, o1, o2, tolerance, max_iterations, arena);
}

}  // namespace myriad::physics::collision::ccd
