// Height field against a sphere, capsule, ellipsoid, cylinder or box as libmujoco 3.11 computes it
// (mjc_ConvexHField with native CCD: ccd.h), ported from spikes/hfield_ccd/hfield_ccd.py. The
// ellipsoid and cylinder take the same path as the box (no core pass: that is only for spheres and
// capsules), with their own supports for the bounding box and the CCD. Bitwise equal to 3.11 in
// double with -ffp-contract=off at default ccd settings (tests/physics/test_hfield_ccd.cc,
// tests/physics/test_convex_ccd.cc).
#pragma once

#include <cmath>

#include "physics/collision/ccd.h"
#include "physics/collision/contact.h"
#include "physics/constraint/group.h"

namespace myriad::physics::collision {

namespace hfield_detail {

// The height field's grid as mjModel stores it: size = (x, y half-extents, elevation scale, base
// depth), nrow x ncol elevations in [0, 1], row-major, row <-> y, column <-> x. E: the elevations'
// type (float in an mjModel, T in the engine's model: the same values).
template <class T, class E>
struct Grid {
  const T* size;
  int nrow;
  int ncol;
  const E* data;
};

// Whether the sphere of radius r around pos (hfield frame) misses the field's box.
template <class T>
MYRIAD_HD bool sphere_outside(const T* s, const T* pos, T r) {
  return s[0] < pos[0] - r || -s[0] > pos[0] + r || s[1] < pos[1] - r || -s[1] > pos[1] + r ||
         s[2] < pos[2] - r || -s[3] > pos[2] + r;
}

// Axis-aligned box of the geom in the hfield frame from 6 supports without margin:
// lo = (xmin, ymin, zmin), hi = (xmax, ymax, zmax).
template <class T>
MYRIAD_HD void geom_aabb(ccd::Obj<T>& o, T* lo, T* hi) {
  for (int a = 0; a < 3; ++a) {
    T d[3] = {0, 0, 0}, p[3];
    d[a] = 1;
    ccd::obj_support(p, o, d);
    hi[a] = p[a];
    d[a] = -1;
    ccd::obj_support(p, o, d);
    lo[a] = p[a];
  }
}

// Whether the margin-widened box misses the field's box.
template <class T>
MYRIAD_HD bool aabb_outside(const T* s, const T* lo, const T* hi, T margin) {
  return lo[0] - margin > s[0] || hi[0] + margin < -s[0] || lo[1] - margin > s[1] ||
         hi[1] + margin < -s[1] || lo[2] - margin > s[2] || hi[2] + margin < -s[3];
}

// Grid cells under the box: columns [cmin, cmax], rows [rmin, rmax] (clamped to the grid).
struct SubGrid {
  int cmin, cmax, rmin, rmax;
};

template <class T, class E>
MYRIAD_HD SubGrid sub_grid(const Grid<T, E>& g, const T* lo, const T* hi) {
  using std::ceil;
  using std::floor;
  const T* s = g.size;
  SubGrid r;
  r.cmin = static_cast<int>(floor((lo[0] + s[0]) / (T(2) * s[0]) * T(g.ncol - 1)));
  r.cmax = static_cast<int>(ceil((hi[0] + s[0]) / (T(2) * s[0]) * T(g.ncol - 1)));
  r.rmin = static_cast<int>(floor((lo[1] + s[1]) / (T(2) * s[1]) * T(g.nrow - 1)));
  r.rmax = static_cast<int>(ceil((hi[1] + s[1]) / (T(2) * s[1]) * T(g.nrow - 1)));
  if (r.cmin < 0) r.cmin = 0;
  if (r.cmax > g.ncol - 1) r.cmax = g.ncol - 1;
  if (r.rmin < 0) r.rmin = 0;
  if (r.rmax > g.nrow - 1) r.rmax = g.nrow - 1;
  return r;
}

// Slides the prism window by one grid point (addPrismVert): vertices 0..2 keep the base (z =
// -base depth), 3..5 the surface raised by the margin; i = 0 takes row r+1, i = 1 row r.
template <class T, class E>
MYRIAD_HD void push_prism(ccd::Obj<T>& o, const Grid<T, E>& g, T dx, T dy, T margin, int r, int c,
                          int i) {
  T(*p)[3] = o.prism;
  for (int k = 0; k < 3; ++k) {
    p[0][k] = p[1][k];
    p[1][k] = p[2][k];
    p[3][k] = p[4][k];
    p[4][k] = p[5][k];
  }
  const int row = r + 1 - i;
  const T x = dx * T(c) - g.size[0];
  const T y = dy * T(row) - g.size[1];
  p[2][0] = x;
  p[2][1] = y;
  const T z = T(g.data[row * g.ncol + c]) * g.size[2];
  ccd::set3(p[5], x, y, z + margin);
}

// The prism (r, c, i) of hfield_convex's walk built from scratch: the window's three pushes that
// end at it, so its vertices have the walk's bits.
template <class T, class E>
MYRIAD_HD void prism_at(ccd::Obj<T>& o, const Grid<T, E>& g, T dx, T dy, T margin, int r, int c,
                        int i) {
  o.prism[0][2] = o.prism[1][2] = o.prism[2][2] = -g.size[3];
  push_prism(o, g, dx, dy, margin, r, c - 1, i);
  push_prism(o, g, dx, dy, margin, r, i == 0 ? c - 1 : c, 1 - i);
  push_prism(o, g, dx, dy, margin, r, c, i);
}

// A penetrating CCD result back in the world frame (mjc_penetration's fill): normal from the
// hfield to the geom, position midway between the witnesses.
template <class T>
MYRIAD_HD void contact_values(const ccd::Status<T>& st, const T* pos1, const T* mat1, T* pos,
                              T* normal) {
  T dir[3], mid[3], wp[3];
  ccd::sub3(dir, st.x1, st.x2);
  normalize3(dir);
  for (int q = 0; q < 3; ++q) mid[q] = T(0.5) * (st.x1[q] + st.x2[q]);
  ccd::mat_vec(normal, mat1, dir);
  ccd::mat_vec(wp, mat1, mid);
  for (int q = 0; q < 3; ++q) pos[q] = wp[q] + pos1[q];
}

// Stores a contact computed in T as C.
template <class T, class C>
MYRIAD_HD void store_contact(Contact<C>& con, T dist, const T* pos, const T* normal) {
  con.dist = C(dist);
  for (int q = 0; q < 3; ++q) {
    con.frame[q] = C(normal[q]);
    con.pos[q] = C(pos[q]);
    con.frame[3 + q] = 0;
  }
}

// Writes the contact of a penetrating CCD result: computed in T, stored as C.
template <class T, class C>
MYRIAD_HD void write_contact(Contact<C>& con, const ccd::Status<T>& st, T dist, const T* pos1,
                             const T* mat1) {
  T pos[3], normal[3];
  contact_values(st, pos1, mat1, pos, normal);
  store_contact(con, dist, pos, normal);
}

// The geom (sphere, capsule, ellipsoid, cylinder or box) as a CCD object in the hfield frame.
template <class T>
MYRIAD_HD void geom_in_hfield_frame(ccd::Obj<T>* o, int type, const T* pos1, const T* mat1,
                                    const T* pos2, const T* mat2, const T* size2) {
  o->type = type;
  T dif[3];
  ccd::sub3(dif, pos2, pos1);
  ccd::mat_t_vec(o->pos, mat1, dif);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      o->mat[3 * i + j] = mat1[i] * mat2[j] + mat1[3 + i] * mat2[3 + j] + mat1[6 + i] * mat2[6 + j];
  ccd::copy3(o->size, size2);
}

// What the walk over a pair's prisms starts from: the geom as a CCD object in the hfield frame
// (margin set), the grid cells under its box, the grid's spacing and the geom's lowest point.
template <class T>
struct Walk {
  ccd::Obj<T> geom;
  SubGrid cells;
  T dx, dy, zmin;
};

// Fills w for the geom (type2, pose, bounding radius, size) against the height field g; false when
// the geom misses the field's box (no contact).
template <class T, class E>
MYRIAD_HD bool start_walk(Walk<T>& w, const Grid<T, E>& g, T margin, const T* pos1, const T* mat1,
                          int type2, T rbound2, const T* pos2, const T* mat2, const T* size2) {
  geom_in_hfield_frame(&w.geom, type2, pos1, mat1, pos2, mat2, size2);
  if (sphere_outside(g.size, w.geom.pos, rbound2 + margin)) return false;
  T lo[3], hi[3];
  geom_aabb(w.geom, lo, hi);
  if (aabb_outside(g.size, lo, hi, margin)) return false;
  w.cells = sub_grid(g, lo, hi);
  w.geom.margin = margin;
  w.geom.vertindex = -1;
  w.dx = (T(2) * g.size[0]) / T(g.ncol - 1);
  w.dy = (T(2) * g.size[1]) / T(g.nrow - 1);
  w.zmin = lo[2];
  return true;
}

}  // namespace hfield_detail

// Contacts between a height field (geom 1) and a sphere, capsule, ellipsoid, cylinder or box (geom
// 2) (mjc_ConvexHField): every triangular prism of the grid under the geom's bounding box whose top
// reaches the geom's lowest point runs mjc_ccd against the geom; each penetration gives one
// contact, in prism order, at most kMaxHFieldContacts (mjMAXCONPAIR). margin is the pair's margin
// (the sum of the geom margins); it raises the prisms' tops and inflates the geom by margin/2.
// hsize [4], nrow, ncol, data: the height field (hfield_size, hfield_nrow, hfield_ncol, the
// float elevations at hfield_adr); pos/mat: world poses; type2, rbound2, size2: geom 2's type,
// bounding radius (geom_rbound) and size; ccd_iterations, ccd_tolerance: mjOption's. con has room
// for kMaxHFieldContacts; writes dist, pos and frame rows 0..1 (row 1 zero); returns the count.
// T is the arithmetic, C the contacts' scalar: collide.h runs it in double for a float model too,
// as in float GJK/EPA's decisions near degenerate simplices go other ways than libmujoco's (a
// penetration depth off by millimetres on Go1's feet). arena: where the EPA's polytope is
// (ccd.h's LocalPolytope, WarpPolytope).
template <class T, class E, class C = T, class Arena = ccd::LocalPolytope<T>>
MYRIAD_HD int hfield_convex(Contact<C>* con, T margin, const T* hsize, int nrow, int ncol,
                            const E* data, const T* pos1, const T* mat1, int type2, T rbound2,
                            const T* pos2, const T* mat2, const T* size2, int ccd_iterations,
                            T ccd_tolerance, Arena&& arena = Arena()) {
  using namespace hfield_detail;
  const Grid<T, E> g{hsize, nrow, ncol, data};
  Walk<T> w;
  if (!start_walk(w, g, margin, pos1, mat1, type2, rbound2, pos2, mat2, size2)) return 0;
  ccd::Obj<T>& o2 = w.geom;
  const SubGrid& sg = w.cells;
  const T dx = w.dx, dy = w.dy, zmin = w.zmin;
  ccd::Obj<T> o1;  // the prism (type kHField, no margin)
  o1.prism[0][2] = o1.prism[1][2] = o1.prism[2][2] = -hsize[3];
  int n = 0;
  for (int r = sg.rmin; r < sg.rmax; ++r) {
    push_prism(o1, g, dx, dy, margin, r, sg.cmin, 0);
    push_prism(o1, g, dx, dy, margin, r, sg.cmin, 1);
    for (int c = sg.cmin + 1; c <= sg.cmax; ++c) {
      for (int i = 0; i < 2; ++i) {
        push_prism(o1, g, dx, dy, margin, r, c, i);
        const T(*p)[3] = o1.prism;
        if (p[3][2] < zmin && p[4][2] < zmin && p[5][2] < zmin) continue;
        ccd::Status<T> st;
        const T dist = ccd::distance(&st, o1, o2, ccd_tolerance, ccd_iterations, arena);
        if (!(dist < 0)) continue;
        write_contact(con[n], st, dist, pos1, mat1);
        if (++n >= kMaxHFieldContacts) return n;
      }
    }
  }
  return n;
}

// hfield_convex by a lane group (physics/constraint/group.h: SerialGroup, InterleavedGroup, a
// warp or part of one), as the GPU runs a pair: the prisms go in rounds of as many as the group has
// lanes, one prism per lane, each run as hfield_convex runs it; then every lane walks the round's
// results in prism order and the group's leader writes the hits, so the contacts are
// hfield_convex's (the first kMaxHFieldContacts hits in prism order) whatever the group's size.
// round: room for the group's size, seen by all its lanes (shared memory on a GPU). Every lane
// returns the count.
template <class T, class E, class C, class G, class Arena>
MYRIAD_HD int hfield_convex_group(const G& grp, ContactValues<T>* round, Contact<C>* con, T margin,
                                  const T* hsize, int nrow, int ncol, const E* data, const T* pos1,
                                  const T* mat1, int type2, T rbound2, const T* pos2, const T* mat2,
                                  const T* size2, int ccd_iterations, T ccd_tolerance,
                                  Arena& arena) {
  using namespace hfield_detail;
  const Grid<T, E> g{hsize, nrow, ncol, data};
  Walk<T> w;
  if (!start_walk(w, g, margin, pos1, mat1, type2, rbound2, pos2, mat2, size2)) return 0;
  // hfield_convex's walk: rows [rmin, rmax), columns (cmin, cmax], two prisms per cell.
  const SubGrid& sg = w.cells;
  const int ncell = sg.cmax - sg.cmin, nrows = sg.rmax - sg.rmin;
  const int nprism = ncell > 0 && nrows > 0 ? 2 * ncell * nrows : 0;
  int n = 0;
  for (int first = 0; first < nprism && n < kMaxHFieldContacts; first += grp.size()) {
    const int count = nprism - first < grp.size() ? nprism - first : grp.size();
    constraint::group_for(grp, count, [&](int k) {
      const int p = first + k;
      ContactValues<T>& h = round[k];
      h.hit = 0;
      ccd::Obj<T> o1;  // the prism (type kHField, no margin)
      prism_at(o1, g, w.dx, w.dy, margin, sg.rmin + p / (2 * ncell), sg.cmin + 1 + (p / 2) % ncell,
               p % 2);
      const T(*q)[3] = o1.prism;
      if (q[3][2] < w.zmin && q[4][2] < w.zmin && q[5][2] < w.zmin) return;
      ccd::Status<T> st;
      const T dist = ccd::distance(&st, o1, w.geom, ccd_tolerance, ccd_iterations, arena);
      if (!(dist < 0)) return;
      h.hit = 1;
      h.dist = dist;
      contact_values(st, pos1, mat1, h.pos, h.normal);
    });
    for (int k = 0; k < count && n < kMaxHFieldContacts; ++k) {
      if (!round[k].hit) continue;
      if (constraint::group_leader(grp))
        store_contact(con[n], round[k].dist, round[k].pos, round[k].normal);
      ++n;
    }
    grp.sync();  // the round is read before the next one overwrites it
  }
  return n;
}

}  // namespace myriad::physics::collision
