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
// for a pair without one (GJK/EPA's pairs: collide()). kBoxBox false compiles without box-box (its
// clipping arrays are most of a GPU thread's stack), for models that have no box-box pair.
template <class T, bool kBoxBox = true>
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
  } else if (type1 == kBox && type2 == kBox) {
    if constexpr (kBoxBox) MYRIAD_PAIR(box_box);
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
template <class T>
MYRIAD_HD PairParams<T> pair_params(const CollisionModel<T>& m, const CollisionPair& pr) {
  PairParams<T> o;
  const int g1 = pr.geom1, g2 = pr.geom2;
  if (pr.pair >= 0) {
    const int p = pr.pair;
    o.margin = m.pair_margin[p];
    o.gap = m.pair_gap[p];
    o.condim = m.pair_dim[p];
    for (int i = 0; i < 5; ++i) o.friction[i] = m.pair_friction[5 * p + i];
    for (int i = 0; i < kNRef; ++i) o.solref[i] = m.pair_solref[kNRef * p + i];
    for (int i = 0; i < kNImp; ++i) o.solimp[i] = m.pair_solimp[kNImp * p + i];
  } else {
    o.margin = m.geom_margin[g1] + m.geom_margin[g2];
    o.gap = m.geom_gap[g1] + m.geom_gap[g2];
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
    o.margin = m.o_margin;
    for (int i = 0; i < kNRef; ++i) o.solref[i] = m.o_solref[i];
    for (int i = 0; i < kNImp; ++i) o.solimp[i] = m.o_solimp[i];
  }
  return o;
}

// A height field (g1) against a sphere, capsule, ellipsoid, cylinder or box (g2): hfield.h's
// collider, in double whatever T is (see hfield_convex), its contacts written as T.
template <class T>
MYRIAD_HD int hfield_pair(const CollisionModel<T>& m, int g1, int g2, Contact<T>* found, T margin,
                          const T* pos1, const T* mat1, const T* pos2, const T* mat2) {
  const int h = m.geom_dataid[g1];
  double p1[3], p2[3], m1[9], m2[9], size2[3], hsize[4];
  for (int i = 0; i < 3; ++i) {
    p1[i] = pos1[i];
    p2[i] = pos2[i];
    size2[i] = m.geom_size[3 * g2 + i];
  }
  for (int i = 0; i < 9; ++i) {
    m1[i] = mat1[i];
    m2[i] = mat2[i];
  }
  for (int i = 0; i < 4; ++i) hsize[i] = m.hfield_size[4 * h + i];
  return hfield_convex<double>(found, double(margin), hsize, m.hfield_nrow[h], m.hfield_ncol[h],
                               m.hfield_data + m.hfield_adr[h], p1, m1, m.geom_type[g2],
                               double(m.geom_rbound[g2]), p2, m2, size2, m.ccd_iterations,
                               double(m.ccd_tolerance));
}

// Two convex geoms through GJK/EPA (convex.h's convex_convex: pair_uses_ccd), in double whatever
// T is, as the height field's collider: in float GJK/EPA's decisions near degenerate simplices
// and multi-CCD's 1e-3 rad perturbations go other ways than libmujoco's.
template <class T>
MYRIAD_HD int convex_pair(const CollisionModel<T>& m, int g1, int g2, Contact<T>* found, T margin,
                          const T* pos1, const T* mat1, const T* pos2, const T* mat2) {
  const bool multiccd = !(m.disableflags & kDisableMultiCcd);
  const int type1 = m.geom_type[g1], type2 = m.geom_type[g2];
  if constexpr (sizeof(T) == sizeof(double)) {
    return convex_convex<T>(found, margin, type1, pos1, mat1, m.geom_size + 3 * g1,
                            m.geom_rbound[g1], type2, pos2, mat2, m.geom_size + 3 * g2,
                            m.geom_rbound[g2], m.ccd_iterations, m.ccd_tolerance, multiccd);
  } else {
    double p1[3], p2[3], m1[9], m2[9], s1[3], s2[3];
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
    Contact<double> c[kMaxConvexContacts];
    const int n = convex_convex<double>(
        c, double(margin), type1, p1, m1, s1, double(m.geom_rbound[g1]), type2, p2, m2, s2,
        double(m.geom_rbound[g2]), m.ccd_iterations, double(m.ccd_tolerance), multiccd);
    for (int k = 0; k < n; ++k) {
      found[k].dist = T(c[k].dist);
      for (int i = 0; i < 3; ++i) found[k].pos[i] = T(c[k].pos[i]);
      for (int i = 0; i < 9; ++i) found[k].frame[i] = T(c[k].frame[i]);
    }
    return n;
  }
}

// Collides one env's geoms: geom_xpos [ngeom, 3] and geom_xmat [ngeom, 9] are the world poses
// (mj_kinematics' output), pairs/npair the model's candidate list (collision_pairs). Contacts go
// to out in libmujoco's order and the return value is their number. Each pair function writes in
// place at the end of the list (no stack scratch: a GPU thread's stack stays small), so out needs
// `room` = max_contacts(m, pairs, npair) + pair_scratch(m, pairs, npair) entries; with less, the
// pairs that do not fit are skipped and -1 is returned (a caller's error, never the engine's).
// kCcd false compiles without GJK/EPA (the height-field collider and convex_pair: its polytope is
// tens of KB of a GPU thread's stack), for a model without such a pair (nccd_pairs 0).
template <class T, bool kBoxBox = true, bool kCcd = true>
MYRIAD_HD int collide(const CollisionModel<T>& m, const CollisionPair* pairs, int npair,
                      const T* geom_xpos, const T* geom_xmat, Contact<T>* out, int room) {
  int ncon = 0;
  bool fits = true;
  for (int ip = 0; ip < npair; ++ip) {
    const CollisionPair& pr = pairs[ip];
    const int g1 = pr.geom1, g2 = pr.geom2;
    const int type1 = m.geom_type[g1], type2 = m.geom_type[g2];
    if (max_pair_contacts(type1, type2) == 0) continue;
    if (ncon + max_pair_raw_contacts(type1, type2) > room) {
      fits = false;
      continue;
    }
    const T* pos1 = geom_xpos + 3 * g1;
    const T* pos2 = geom_xpos + 3 * g2;
    const T* mat1 = geom_xmat + 9 * g1;
    const T* mat2 = geom_xmat + 9 * g2;
    const PairParams<T> prm = pair_params(m, pr);
    // Contacts are found within `detect` = margin + gap and act within `include` = margin (the
    // rest are "in the gap"; MuJoCo 2 detected within margin and acted within margin - gap).
    const T detect = prm.margin + prm.gap;
    const T include = prm.margin;
    const T rb1 = m.geom_rbound[g1], rb2 = m.geom_rbound[g2];

    // Bounding spheres, then the height of the other geom's center above a plane.
    if (rb1 > T(0) && rb2 > T(0)) {
      const T d[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
      if (sqrt(dot3(d, d)) > rb1 + rb2 + detect) continue;
    }
    if (type1 == kPlane && rb2 > T(0)) {
      const T d[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
      const T n[3] = {mat1[2], mat1[5], mat1[8]};
      if (dot3(d, n) > detect + rb2) continue;
    }

    Contact<T>* found = out + ncon;
    int num = 0;
    if (type1 == kHField) {
      if constexpr (kCcd) num = hfield_pair(m, g1, g2, found, detect, pos1, mat1, pos2, mat2);
    } else if (pair_uses_ccd(type1, type2)) {
      if constexpr (kCcd) num = convex_pair(m, g1, g2, found, detect, pos1, mat1, pos2, mat2);
    } else {
      num = collide_primitives<T, kBoxBox>(type1, type2, found, detect, pos1, mat1,
                                           m.geom_size + 3 * g1, pos2, mat2, m.geom_size + 3 * g2);
    }
    if (kBoxBox && type1 == kBox && type2 == kBox)
      num = box_box_keep(found, num, detect, pos1, mat1, m.geom_size + 3 * g1, pos2, mat2,
                         m.geom_size + 3 * g2);

    for (int i = 0; i < num; ++i, ++ncon) {
      Contact<T>& c = out[ncon];
      c.dim = prm.condim;
      c.geom1 = g1;
      c.geom2 = g2;
      c.includemargin = include;
      for (int k = 0; k < 5; ++k) c.friction[k] = prm.friction[k];
      for (int k = 0; k < kNRef; ++k) c.solref[k] = prm.solref[k];
      for (int k = 0; k < kNImp; ++k) c.solimp[k] = prm.solimp[k];
      c.exclude = c.dist < c.includemargin ? 0 : 1;
      make_frame(c.frame);
    }
  }
  return fits ? ncon : -1;
}

}  // namespace myriad::physics::collision
