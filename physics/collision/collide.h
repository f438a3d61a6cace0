// Collision for one env: libmujoco's mj_collideGeoms over the model's candidate pairs
// (filter.h): bounding-sphere and plane-height tests, the pair function, removal of repeated
// box-box contacts, and the contact parameters (margin, gap, condim, friction, solref, solimp)
// mixed from the two geoms or taken from the explicit pair.
#pragma once

#include "physics/collision/box.h"
#include "physics/collision/convex.h"
#include "physics/collision/filter.h"
#include "physics/collision/hfield.h"

namespace myriad::physics::collision {

// Runs the analytic pair function for (geom types) type1 <= type2; returns the contact count, 0
// for a pair without one (GJK/EPA's pairs, and box-box: collide_pair() calls those itself, box-box
// with its thinning, so that a kernel without them does not carry their registers and stack).
template <class T>
MYRIAD_HD int collide_primitives(int type1, int type2, Contact<T>* con, T margin, const T* pos1,
                                 const T* mat1, const T* size1, const T* pos2, const T* mat2,
                                 const T* size2) {
#define MYRIAD_PAIR(fn) return fn(con, margin, pos1, mat1, size1, pos2, mat2, size2)
  if (type1 == kPlane) {
    if (type2 == kSphere) MYRIAD_PAIR(plane_sphere);
    if (type2 == kCapsule) MYRIAD_PAIR(plane_capsule);
    if (type2 == kEllipsoid) MYRIAD_PAIR(plane_convex);
    if (type2 == kCylinder) MYRIAD_PAIR(plane_cylinder);
    if (type2 == kBox) MYRIAD_PAIR(plane_box);
  } else if (type1 == kSphere) {
    if (type2 == kSphere) MYRIAD_PAIR(sphere_sphere);
    if (type2 == kCapsule) MYRIAD_PAIR(sphere_capsule);
    if (type2 == kCylinder) MYRIAD_PAIR(sphere_cylinder);
    if (type2 == kBox) MYRIAD_PAIR(sphere_box);
  } else if (type1 == kCapsule) {
    if (type2 == kCapsule) MYRIAD_PAIR(capsule_capsule);
    if (type2 == kBox) MYRIAD_PAIR(capsule_box);
  }
#undef MYRIAD_PAIR
  return 0;
}

// The parameters every contact of one pair shares (mj_collideGeoms' mixing rules).
template <class T>
struct PairParams {
  T margin, gap;
  int32_t condim;
  T friction[5], solref[kNRef], solimp[kNImp];
};

// Explicit pair: its compiled values. Dynamic pair: margin and gap the sums of the two geoms'
// (MuJoCo 3; MuJoCo 2 took the larger); a higher-priority geom supplies condim, friction, solref,
// solimp; at equal priority condim and friction are the element-wise max, solimp is mixed by mix =
// solmix1 / (solmix1 + solmix2) (0.5 if both are below kMinVal, 0 or 1 if one is), solref too when
// both solref[0] > 0 (else the element-wise min). Friction becomes [slide, slide, torsion, roll,
// roll], each >= kMinMu. With the override flag margin, friction, solref and solimp are opt.o_*.
// pair_margin: the margin and gap alone (what the bounding tests need), as pair_params gives them.
template <class T>
struct PairMargin {
  T margin, gap;
};
template <class T>
MYRIAD_HD PairMargin<T> pair_margin(const CollisionModel<T>& m, const CollisionPair& pr) {
  if (m.enableflags & kEnableOverride)
    return {m.o_margin,
            pr.pair >= 0 ? m.pair_gap[pr.pair] : m.geom_gap[pr.geom1] + m.geom_gap[pr.geom2]};
  if (pr.pair >= 0) return {m.pair_margin[pr.pair], m.pair_gap[pr.pair]};
  return {m.geom_margin[pr.geom1] + m.geom_margin[pr.geom2],
          m.geom_gap[pr.geom1] + m.geom_gap[pr.geom2]};
}
template <class T>
MYRIAD_HD PairParams<T> pair_params(const CollisionModel<T>& m, const CollisionPair& pr) {
  PairParams<T> o;
  const int g1 = pr.geom1, g2 = pr.geom2;
  const PairMargin<T> mg = pair_margin(m, pr);
  o.margin = mg.margin;
  o.gap = mg.gap;
  if (pr.pair >= 0) {
    const int p = pr.pair;
    o.condim = m.pair_dim[p];
    for (int i = 0; i < 5; ++i) o.friction[i] = m.pair_friction[5 * p + i];
    for (int i = 0; i < kNRef; ++i) o.solref[i] = m.pair_solref[kNRef * p + i];
    for (int i = 0; i < kNImp; ++i) o.solimp[i] = m.pair_solimp[kNImp * p + i];
  } else {
    T fric[3];
    if (m.geom_priority[g1] != m.geom_priority[g2]) {
      const int gp = m.geom_priority[g1] > m.geom_priority[g2] ? g1 : g2;
      o.condim = m.geom_condim[gp];
      for (int i = 0; i < 3; ++i) fric[i] = m.geom_friction[3 * gp + i];
      for (int i = 0; i < kNRef; ++i) o.solref[i] = m.geom_solref[kNRef * gp + i];
      for (int i = 0; i < kNImp; ++i) o.solimp[i] = m.geom_solimp[kNImp * gp + i];
    } else {
      o.condim = m.geom_condim[g1] > m.geom_condim[g2] ? m.geom_condim[g1] : m.geom_condim[g2];
      for (int i = 0; i < 3; ++i) {
        const T f1 = m.geom_friction[3 * g1 + i], f2 = m.geom_friction[3 * g2 + i];
        fric[i] = f1 > f2 ? f1 : f2;
      }
      const T s1 = m.geom_solmix[g1], s2 = m.geom_solmix[g2];
      T mix;
      if (s1 >= T(kMinVal) && s2 >= T(kMinVal)) {
        mix = s1 / (s1 + s2);
      } else if (s1 < T(kMinVal) && s2 < T(kMinVal)) {
        mix = T(0.5);
      } else {
        mix = s1 < T(kMinVal) ? T(0) : T(1);
      }
      const T* r1 = m.geom_solref + kNRef * g1;
      const T* r2 = m.geom_solref + kNRef * g2;
      for (int i = 0; i < kNRef; ++i) {
        if (r1[0] > T(0) && r2[0] > T(0)) {
          o.solref[i] = mix * r1[i] + (1 - mix) * r2[i];
        } else {
          o.solref[i] = r1[i] < r2[i] ? r1[i] : r2[i];
        }
      }
      const T* i1 = m.geom_solimp + kNImp * g1;
      const T* i2 = m.geom_solimp + kNImp * g2;
      for (int i = 0; i < kNImp; ++i) o.solimp[i] = i1[i] * mix + i2[i] * (1 - mix);
    }
    o.friction[0] = o.friction[1] = fric[0];
    o.friction[2] = fric[1];
    o.friction[3] = o.friction[4] = fric[2];
  }
  if (m.enableflags & kEnableOverride)
    for (int i = 0; i < 5; ++i) o.friction[i] = m.o_friction[i];
  for (int i = 0; i < 5; ++i)
    if (o.friction[i] < T(kMinMu)) o.friction[i] = T(kMinMu);
  if (m.enableflags & kEnableOverride) {
    for (int i = 0; i < kNRef; ++i) o.solref[i] = m.o_solref[i];
    for (int i = 0; i < kNImp; ++i) o.solimp[i] = m.o_solimp[i];
  }
  return o;
}

// GJK/EPA's pairs run in double whatever T is: in float GJK/EPA's decisions near degenerate
// simplices and multi-CCD's 1e-3 rad perturbations go other ways than libmujoco's (a penetration
// depth off by millimetres on Go1's feet). in_double calls f with pair (g1, g2)'s values in
// double: (pos1, mat1, size1, rbound1, pos2, mat2, size2, rbound2, margin, ccd_tolerance, hsize:
// geom 1's height-field size, or null when it is no height field). For a float model they are
// copies; for a double one the model's and data's own arrays (no copies: a GPU thread's stack
// stays small).
template <class T, class F>
MYRIAD_HD int in_double(const CollisionModel<T>& m, int g1, int g2, T margin, const T* pos1,
                        const T* mat1, const T* pos2, const T* mat2, F&& f) {
  const int h = m.geom_type[g1] == kHField ? m.geom_dataid[g1] : -1;
  if constexpr (sizeof(T) == sizeof(double)) {
    return f(pos1, mat1, m.geom_size + 3 * g1, m.geom_rbound[g1], pos2, mat2, m.geom_size + 3 * g2,
             m.geom_rbound[g2], margin, m.ccd_tolerance, h >= 0 ? m.hfield_size + 4 * h : nullptr);
  } else {
    double p1[3], p2[3], m1[9], m2[9], s1[3], s2[3], hsize[4];
    for (int i = 0; i < 3; ++i) {
      p1[i] = pos1[i];
      p2[i] = pos2[i];
      s1[i] = m.geom_size[3 * g1 + i];
      s2[i] = m.geom_size[3 * g2 + i];
    }
    for (int i = 0; i < 9; ++i) {
      m1[i] = mat1[i];
      m2[i] = mat2[i];
    }
    for (int i = 0; i < 4 && h >= 0; ++i) hsize[i] = m.hfield_size[4 * h + i];
    return f(p1, m1, s1, double(m.geom_rbound[g1]), p2, m2, s2, double(m.geom_rbound[g2]),
             double(margin), double(m.ccd_tolerance), h >= 0 ? hsize : nullptr);
  }
}

// A height field (g1) against a sphere, capsule, ellipsoid, cylinder or box (g2): hfield.h's
// collider in double, its contacts written as T; the EPA's polytope in arena (ccd.h's
// LocalPolytope<double>, WarpPolytope<double>).
template <class T, class Arena>
MYRIAD_HD int hfield_pair(const CollisionModel<T>& m, int g1, int g2, Contact<T>* found, T margin,
                          const T* pos1, const T* mat1, const T* pos2, const T* mat2,
                          Arena& arena) {
  const int h = m.geom_dataid[g1];
  return in_double(m, g1, g2, margin, pos1, mat1, pos2, mat2,
                   [&](const double* p1, const double* m1, const double*, double, const double* p2,
                       const double* m2, const double* s2, double rb2, double mg, double tol,
                       const double* hsize) {
                     return hfield_convex<double>(found, mg, hsize, m.hfield_nrow[h],
                                                  m.hfield_ncol[h], m.hfield_data + m.hfield_adr[h],
                                                  p1, m1, m.geom_type[g2], rb2, p2, m2, s2,
                                                  m.ccd_iterations, tol, arena);
                   });
}

// hfield_pair by a lane group (hfield.h's hfield_convex_group; round: the group's shared room).
template <class T, class G, class Arena>
MYRIAD_HD int hfield_pair_group(const G& grp, ContactValues<double>* round,
                                const CollisionModel<T>& m, int g1, int g2, Contact<T>* found,
                                T margin, const T* pos1, const T* mat1, const T* pos2,
                                const T* mat2, Arena& arena) {
  const int h = m.geom_dataid[g1];
  return in_double(m, g1, g2, margin, pos1, mat1, pos2, mat2,
                   [&](const double* p1, const double* m1, const double*, double, const double* p2,
                       const double* m2, const double* s2, double rb2, double mg, double tol,
                       const double* hsize) {
                     return hfield_convex_group<double>(
                         grp, round, found, mg, hsize, m.hfield_nrow[h], m.hfield_ncol[h],
                         m.hfield_data + m.hfield_adr[h], p1, m1, m.geom_type[g2], rb2, p2, m2, s2,
                         m.ccd_iterations, tol, arena);
                   });
}

// Two convex geoms through GJK/EPA (convex.h's convex_convex: pair_uses_ccd), in double (a float
// model's contacts computed in a double list, then written as T). The EPA's polytope in arena, as
// hfield_pair's.
template <class T, class Arena>
MYRIAD_HD int convex_pair(const CollisionModel<T>& m, int g1, int g2, Contact<T>* found, T margin,
                          const T* pos1, const T* mat1, const T* pos2, const T* mat2,
                          Arena& arena) {
  const bool multiccd = !(m.disableflags & kDisableMultiCcd);
  const int type1 = m.geom_type[g1], type2 = m.geom_type[g2];
  return in_double(
      m, g1, g2, margin, pos1, mat1, pos2, mat2,
      [&](const double* p1, const double* m1, const double* s1, double rb1, const double* p2,
          const double* m2, const double* s2, double rb2, double mg, double tol, const double*) {
        if constexpr (sizeof(T) == sizeof(double)) {
          return convex_convex<double>(found, mg, type1, p1, m1, s1, rb1, type2, p2, m2, s2, rb2,
                                       m.ccd_iterations, tol, multiccd, arena);
        } else {
          Contact<double> c[kMaxConvexContacts];
          const int n = convex_convex<double>(c, mg, type1, p1, m1, s1, rb1, type2, p2, m2, s2, rb2,
                                              m.ccd_iterations, tol, multiccd, arena);
          for (int k = 0; k < n; ++k) {
            found[k].dist = T(c[k].dist);
            for (int i = 0; i < 3; ++i) found[k].pos[i] = T(c[k].pos[i]);
            for (int i = 0; i < 9; ++i) found[k].frame[i] = T(c[k].frame[i]);
          }
          return n;
        }
      });
}

// convex_pair by a lane group (convex.h's convex_convex_group, which writes T contacts from its
// double values; round: room for kConvexRound shared by the group's lanes).
template <class T, class G, class Arena>
MYRIAD_HD int convex_pair_group(const G& grp, ContactValues<double>* round,
                                const CollisionModel<T>& m, int g1, int g2, Contact<T>* found,
                                T margin, const T* pos1, const T* mat1, const T* pos2,
                                const T* mat2, Arena& arena) {
  const bool multiccd = !(m.disableflags & kDisableMultiCcd);
  const int type1 = m.geom_type[g1], type2 = m.geom_type[g2];
  return in_double(
      m, g1, g2, margin, pos1, mat1, pos2, mat2,
      [&](const double* p1, const double* m1, const double* s1, double rb1, const double* p2,
          const double* m2, const double* s2, double rb2, double mg, double tol, const double*) {
        return convex_convex_group<double>(grp, round, found, mg, type1, p1, m1, s1, rb1, type2, p2,
                                           m2, s2, rb2, m.ccd_iterations, tol, multiccd, arena);
      });
}

// The bounding-sphere and plane-height tests at distance `detect` of geoms 1 and 2 (type1, world
// poses, bounding radii rb1, rb2): true when they are apart (no contact).
template <class T>
MYRIAD_HD bool bounds_apart(int type1, const T* pos1, const T* mat1, T rb1, const T* pos2, T rb2,
                            T detect) {
  // Bounding spheres, then the height of the other geom's center above a plane.
  if (rb1 > T(0) && rb2 > T(0)) {
    const T d[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
    if (sqrt(dot3(d, d)) > rb1 + rb2 + detect) return true;
  }
  if (type1 == kPlane && rb2 > T(0)) {
    const T d[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
    const T n[3] = {mat1[2], mat1[5], mat1[8]};
    if (dot3(d, n) > detect + rb2) return true;
  }
  return false;
}

// One candidate pair of one env: the bounding-sphere and plane-height tests at distance `detect`
// (the pair's margin + gap), then the pair function, its contacts written from `found` on (room
// for max_pair_raw_contacts) and thinned (box-box); returns how many it keeps. Only position,
// distance and normal are set (finish_contacts sets the rest). kPrimitive, kBoxBox, kCcd, kHfield:
// which pair functions are compiled in (the analytic pairs but box-box; box-box; GJK/EPA's between
// two geoms; the height field's, kCcd's by default); a pair whose function is left out gives none.
// arena: where GJK/EPA's polytope is (ccd.h's LocalPolytope<double>, WarpPolytope<double>).
template <class T, bool kPrimitive, bool kBoxBox, bool kCcd, bool kHfield = kCcd,
          class Arena = ccd::LocalPolytope<double>>
MYRIAD_HD int collide_pair(const CollisionModel<T>& m, const CollisionPair& pr, T detect,
                           const T* geom_xpos, const T* geom_xmat, Contact<T>* found,
                           Arena&& arena = Arena()) {
  const int g1 = pr.geom1, g2 = pr.geom2;
  const int type1 = m.geom_type[g1], type2 = m.geom_type[g2];
  const T* pos1 = geom_xpos + 3 * g1;
  const T* pos2 = geom_xpos + 3 * g2;
  const T* mat1 = geom_xmat + 9 * g1;
  const T* mat2 = geom_xmat + 9 * g2;
  const T rb1 = m.geom_rbound[g1], rb2 = m.geom_rbound[g2];
  // bounds_apart's tests, written out: as a call, ptxas gives box-box 2 registers more (82 in
  // float32, past the 80 at which 3 blocks of 256 threads fit an SM).
  if (rb1 > T(0) && rb2 > T(0)) {
    const T d[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
    if (sqrt(dot3(d, d)) > rb1 + rb2 + detect) return 0;
  }
  if (type1 == kPlane && rb2 > T(0)) {
    const T d[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
    const T n[3] = {mat1[2], mat1[5], mat1[8]};
    if (dot3(d, n) > detect + rb2) return 0;
  }
  const T* size1 = m.geom_size + 3 * g1;
  const T* size2 = m.geom_size + 3 * g2;
  if (type1 == kHField) {
    if constexpr (kHfield)
      return hfield_pair(m, g1, g2, found, detect, pos1, mat1, pos2, mat2, arena);
  } else if (pair_uses_ccd(type1, type2)) {
    if constexpr (kCcd) return convex_pair(m, g1, g2, found, detect, pos1, mat1, pos2, mat2, arena);
  } else if (type1 == kBox && type2 == kBox) {
    if constexpr (kBoxBox) {
      const int num = box_box(found, detect, pos1, mat1, size1, pos2, mat2, size2);
      return box_box_keep(found, num, detect, pos1, mat1, size1, pos2, mat2, size2);
    }
  } else if constexpr (kPrimitive) {
    return collide_primitives(type1, type2, found, detect, pos1, mat1, size1, pos2, mat2, size2);
  }
  return 0;
}

// The rest of each of a pair's num contacts: the pair's parameters, its geoms, whether it acts
// (within margin) or is in the gap, and its tangent frame.
template <class T>
MYRIAD_HD void finish_contacts(const PairParams<T>& prm, const CollisionPair& pr, Contact<T>* con,
                               int num) {
  for (int i = 0; i < num; ++i) {
    Contact<T>& c = con[i];
    c.dim = prm.condim;
    c.geom1 = pr.geom1;
    c.geom2 = pr.geom2;
    c.includemargin = prm.margin;
    for (int k = 0; k < 5; ++k) c.friction[k] = prm.friction[k];
    for (int k = 0; k < kNRef; ++k) c.solref[k] = prm.solref[k];
    for (int k = 0; k < kNImp; ++k) c.solimp[k] = prm.solimp[k];
    c.exclude = c.dist < c.includemargin ? 0 : 1;
    make_frame(c.frame);
  }
}

// Collision for one env: geom_xpos [ngeom, 3] and geom_xmat [ngeom, 9] are the world poses
// (mj_kinematics' output), pairs/npair the model's candidate list (collision_pairs), every pair
// collided in order. The contacts (found within margin + gap, acting within margin: MuJoCo 3;
// MuJoCo 2 detected within margin and acted within margin - gap) go to out in libmujoco's order
// and the return value is their number. Each pair function writes in place at the end of the list
// (no stack scratch: a GPU thread's stack stays small), so out needs `room` = max_contacts(m,
// pairs, npair) + the most one pair writes beyond what it keeps (pair_scratch() is enough); with
// less, the pairs that do not fit are skipped and -1 is returned (a caller's error, never the
// engine's). kBoxBox false compiles without box-box, kCcd false without GJK/EPA (the height-field
// collider and convex_pair: its polytope is tens of KB of a GPU thread's stack), for a model
// without such a pair.
template <class T, bool kBoxBox = true, bool kCcd = true>
MYRIAD_HD int collide(const CollisionModel<T>& m, const CollisionPair* pairs, int npair,
                      const T* geom_xpos, const T* geom_xmat, Contact<T>* out, int room) {
  int ncon = 0;
  bool fits = true;
  for (int ip = 0; ip < npair; ++ip) {
    const CollisionPair& pr = pairs[ip];
    const int type1 = m.geom_type[pr.geom1], type2 = m.geom_type[pr.geom2];
    if (max_pair_contacts(type1, type2) == 0) continue;
    if (ncon + max_pair_raw_contacts(type1, type2) > room) {
      fits = false;
      continue;
    }
    const PairParams<T> prm = pair_params(m, pr);
    const int num = collide_pair<T, true, kBoxBox, kCcd>(m, pr, prm.margin + prm.gap, geom_xpos,
                                                         geom_xmat, out + ncon);
    finish_contacts(prm, pr, out + ncon, num);
    ncon += num;
  }
  return fits ? ncon : -1;
}

// The staged collision (physics/launch.h), in two launches that together write collide()'s list
// bit for bit. First, over (env, candidate pair of group kGroup): pair ip's contacts into its own
// slot of the list (slot[ip], candidate_slots), their number into pair_ncon[ip]. arena: as
// collide_pair's.
template <class T, int kGroup, class Arena = ccd::LocalPolytope<double>>
MYRIAD_HD void collide_into_slot(const CollisionModel<T>& m, const CollisionPair* pairs,
                                 const int32_t* slot, int ip, const T* geom_xpos,
                                 const T* geom_xmat, Contact<T>* out, T* pair_ncon,
                                 Arena&& arena = Arena()) {
  const CollisionPair& pr = pairs[ip];
  const PairMargin<T> mg = pair_margin(m, pr);
  pair_ncon[ip] = T(collide_pair<T, kGroup == kPairsPrimitive, kGroup == kPairsBoxBox,
                                 kGroup == kPairsCcd, kGroup == kPairsHfield>(
      m, pr, mg.margin + mg.gap, geom_xpos, geom_xmat, out + slot[ip], arena));
}

// collide_into_slot for a GJK/EPA pair (PairGroup kPairsHfield or kPairsCcd) by a lane group:
// every lane runs the bounding tests and hfield_pair_group or convex_pair_group, the leader writes
// the count.
template <int kGroup, class T, class G, class Arena>
MYRIAD_HD void collide_ccd_into_slot(const G& grp, const CollisionModel<T>& m,
                                     const CollisionPair* pairs, const int32_t* slot, int ip,
                                     const T* geom_xpos, const T* geom_xmat, Contact<T>* out,
                                     T* pair_ncon, ContactValues<double>* round, Arena& arena) {
  const CollisionPair& pr = pairs[ip];
  const PairMargin<T> mg = pair_margin(m, pr);
  const T detect = mg.margin + mg.gap;
  const int g1 = pr.geom1, g2 = pr.geom2;
  int num = 0;
  static_assert(kGroup == kPairsHfield || kGroup == kPairsCcd, "a GJK/EPA pair group");
  const T* pos1 = geom_xpos + 3 * g1;
  const T* mat1 = geom_xmat + 9 * g1;
  const T* pos2 = geom_xpos + 3 * g2;
  const T* mat2 = geom_xmat + 9 * g2;
  if (!bounds_apart(m.geom_type[g1], pos1, mat1, m.geom_rbound[g1], pos2, m.geom_rbound[g2],
                    detect)) {
    if constexpr (kGroup == kPairsHfield)
      num = hfield_pair_group(grp, round, m, g1, g2, out + slot[ip], detect, pos1, mat1, pos2, mat2,
                              arena);
    else
      num = convex_pair_group(grp, round, m, g1, g2, out + slot[ip], detect, pos1, mat1, pos2, mat2,
                              arena);
  }
  if (constraint::group_leader(grp)) pair_ncon[ip] = T(num);
}

// Then, per env: every pair's contacts moved from its slot to the front of the list in pair order
// (a slot never starts before its contacts' place), with the pair's parameters; returns ncon.
template <class T>
MYRIAD_HD int gather_contacts(const CollisionModel<T>& m, const CollisionPair* pairs,
                              const int32_t* slot, int npair, const T* pair_ncon, Contact<T>* out) {
  int ncon = 0;
  for (int ip = 0; ip < npair; ++ip) {
    const CollisionPair& pr = pairs[ip];
    if (pair_group(m.geom_type[pr.geom1], m.geom_type[pr.geom2]) < 0) continue;
    const int num = static_cast<int>(pair_ncon[ip]);
    if (num == 0) continue;
    if (slot[ip] != ncon)
      for (int k = 0; k < num; ++k) out[ncon + k] = out[slot[ip] + k];
    finish_contacts(pair_params(m, pr), pr, out + ncon, num);
    ncon += num;
  }
  return ncon;
}

}  // namespace myriad::physics::collision
