// Which geom pairs are collided, in which order, and how many contacts they can make: libmujoco
// 2.2.2's mj_collision / mj_broadphase / mj_contactFilter, with the pose-dependent broad phase
// replaced by its static superset (see docs/architecture.md, "Collision").
//
// Everything the filter looks at is in the model (contype/conaffinity, weld bodies, parents,
// <exclude>, <pair>, option flags), so the list of candidate pairs is built once per model and
// every env walks the same list: the order is fixed and the contact count per env is bounded by
// max_contacts(). The per-env tests that depend on the pose (bounding spheres, plane height) run
// in collide() (collide.h).
#pragma once

#include <cstdint>

#include "physics/collision/contact.h"

namespace myriad::physics::collision {

// mjtDisableBit / mjtEnableBit / mjtCollision values the collision stage reads.
constexpr int32_t kDisableConstraint = 1 << 0;
constexpr int32_t kDisableContact = 1 << 4;
constexpr int32_t kDisableFilterParent = 1 << 10;
constexpr int32_t kDisableMidphase = 1 << 14;
constexpr int32_t kDisableNativeCcd = 1 << 17;  // libccd's MPR instead: not ported, refused
constexpr int32_t kDisableMultiCcd = 1 << 19;
constexpr int32_t kEnableOverride = 1 << 0;
enum CollisionMode : int32_t { kCollideAll = 0, kCollidePairs = 1, kCollideDynamic = 2 };

// The model fields collision reads (the MYRIAD_COLLISION_* lists of
// myriad/physics/model_fields.h): raw pointers with mjModel's names, shapes and meaning (so a
// CollisionModel<double> can point straight into an mjModel). Bodies and geoms are numbered as in
// mjModel; body 0 is the world.
template <class T>
struct CollisionModel {
#define MYRIAD_X(name, init, from) int32_t name = init;
  MYRIAD_COLLISION_INT_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, init, from) bool name = init;
  MYRIAD_COLLISION_FLAGS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, init, from) T name = init;
  MYRIAD_COLLISION_REAL_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, length, from) T name[length] = {};
  MYRIAD_COLLISION_REAL_VECTORS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) const int32_t* name = nullptr;
  MYRIAD_COLLISION_INT_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) const T* name = nullptr;
  MYRIAD_COLLISION_REAL_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) const uint8_t* name = nullptr;
  MYRIAD_COLLISION_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
};

// The collision fields of a view that has them under the same names and types (ModelView<T>,
// physics/model_view.h): pointers shared, scalars copied.
template <class T, class View>
MYRIAD_HD CollisionModel<T> collision_model(const View& v) {
  CollisionModel<T> c;
#define MYRIAD_X(name, init, from) c.name = v.name;
  MYRIAD_COLLISION_INT_SCALARS(MYRIAD_X)
  MYRIAD_COLLISION_FLAGS(MYRIAD_X)
  MYRIAD_COLLISION_REAL_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, length, from) \
  for (int k = 0; k < (length); ++k) c.name[k] = v.name[k];
  MYRIAD_COLLISION_REAL_VECTORS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) c.name = v.name;
  MYRIAD_COLLISION_INT_ARRAYS(MYRIAD_X)
  MYRIAD_COLLISION_REAL_ARRAYS(MYRIAD_X)
  MYRIAD_COLLISION_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
  return c;
}

// One candidate pair: geom1's type <= geom2's type (MuJoCo's order); pair >= 0 for an explicit
// <contact><pair> (its parameters replace the mixed geom ones), -1 for a dynamic pair.
struct CollisionPair {
  int32_t geom1, geom2, pair;
};

// mj_contactFilter: true rejects. Rejects geoms whose contype/conaffinity do not match, geoms on
// the same weld body, and (filterparent) geoms where one weld body is the other's weld parent.
MYRIAD_HD bool contact_filter(int contype1, int conaffinity1, int weld1, int weldparent1,
                              int contype2, int conaffinity2, int weld2, int weldparent2,
                              bool filterparent) {
  if (!(contype1 & conaffinity2) && !(contype2 & conaffinity1)) return true;
  if (weld1 == weld2) return true;
  return filterparent && (weld1 == weldparent2 || weld2 == weldparent1);
}

// Whether MuJoCo has a collision function for the two types (none for plane-plane and for
// pairs of planes and height fields).
MYRIAD_HD bool has_collision_function(int type1, int type2) {
  const bool flat1 = type1 == kPlane || type1 == kHField;
  const bool flat2 = type2 == kPlane || type2 == kHField;
  return !(flat1 && flat2);
}

namespace detail {

template <class T>
MYRIAD_HD bool dynamic_pair_passes(const CollisionModel<T>& m, int g1, int g2) {
  const int w1 = m.body_weldid[m.geom_bodyid[g1]];
  const int w2 = m.body_weldid[m.geom_bodyid[g2]];
  const bool filterparent = !(m.disableflags & kDisableFilterParent) && w1 != 0 && w2 != 0;
  return !contact_filter(m.geom_contype[g1], m.geom_conaffinity[g1], w1,
                         m.body_weldid[m.body_parentid[w1]], m.geom_contype[g2],
                         m.geom_conaffinity[g2], w2, m.body_weldid[m.body_parentid[w2]],
                         filterparent);
}

// Appends (g1, g2) ordered by type if MuJoCo has a function for it; returns the new count.
template <class T>
MYRIAD_HD int push_pair(const CollisionModel<T>& m, int g1, int g2, int pair, CollisionPair* out,
                        int cap, int n) {
  if (m.geom_type[g1] > m.geom_type[g2]) {
    const int t = g1;
    g1 = g2;
    g2 = t;
  }
  if (!has_collision_function(m.geom_type[g1], m.geom_type[g2])) return n;
  if (n < cap) out[n] = CollisionPair{g1, g2, pair};
  return n + 1;
}

// Stable insertion sort of pairs by (geom1, geom2).
MYRIAD_HD void sort_pairs(CollisionPair* p, int n) {
  for (int i = 1; i < n; ++i) {
    const CollisionPair x = p[i];
    int j = i;
    for (; j > 0 &&
           (p[j - 1].geom1 > x.geom1 || (p[j - 1].geom1 == x.geom1 && p[j - 1].geom2 > x.geom2));
         --j)
      p[j] = p[j - 1];
    p[j] = x;
  }
}

template <class T>
MYRIAD_HD bool excluded(const CollisionModel<T>& m, int signature) {
  for (int e = 0; e < m.nexclude; ++e)
    if (m.exclude_signature[e] == signature) return true;
  return false;
}

}  // namespace detail

// The candidate pairs of mj_collision, in its order: body pairs (b1 < b2) by signature
// (b1 << 16) + b2, within one the geom pairs by index (by (geom1, geom2) once ordered by type
// where MuJoCo's midphase sorts them: either body has several geoms), with the explicit pairs
// merged in by signature (an explicit pair comes before the dynamic pairs of its body pair, and a
// dynamic geom pair that is also an explicit pair is not repeated). Dynamic pairs pass
// contact_filter and skip excluded body pairs; explicit pairs are not filtered. opt.collision
// selects both, explicit only or dynamic only; disabled contacts (or constraints) give no pairs.
// Writes up to cap pairs to out and returns the full count (call with cap = 0 to size out). Pairs
// of types without a pair function here (pair_supported) are listed too, so that an importer
// can refuse them by name (first_unsupported_pair).
template <class T>
MYRIAD_HD int collision_pairs(const CollisionModel<T>& m, CollisionPair* out, int cap) {
  using detail::push_pair;
  int n = 0;
  if ((m.disableflags & (kDisableConstraint | kDisableContact)) || m.nbody < 2) return 0;
  if (m.collision == kCollidePairs) {
    for (int p = 0; p < m.npair; ++p)
      n = push_pair(m, m.pair_geom1[p], m.pair_geom2[p], p, out, cap, n);
    return n;
  }
  const bool merge = m.collision == kCollideAll && m.npair > 0;
  int next_pair = 0;
  for (int b1 = 0; b1 < m.nbody; ++b1) {
    for (int b2 = b1 + 1; b2 < m.nbody; ++b2) {
      const int signature = (b1 << 16) + b2;  // MuJoCo 3's pair_signature (2.2.2 added 1 to each)
      const int first_pair = next_pair;
      bool merged = false;
      if (merge) {
        while (next_pair < m.npair && m.pair_signature[next_pair] <= signature) {
          if (m.pair_signature[next_pair] == signature) merged = true;
          n = push_pair(m, m.pair_geom1[next_pair], m.pair_geom2[next_pair], next_pair, out, cap,
                        n);
          ++next_pair;
        }
      }
      if (detail::excluded(m, signature)) continue;
      const int end1 = m.body_geomadr[b1] + m.body_geomnum[b1];
      const int end2 = m.body_geomadr[b2] + m.body_geomnum[b2];
      const int first_dynamic = n;
      for (int g1 = m.body_geomadr[b1]; g1 < end1; ++g1) {
        for (int g2 = m.body_geomadr[b2]; g2 < end2; ++g2) {
          if (!detail::dynamic_pair_passes(m, g1, g2)) continue;
          bool repeated = false;
          for (int p = first_pair; merged && p < next_pair; ++p)
            if ((m.pair_geom1[p] == g1 && m.pair_geom2[p] == g2) ||
                (m.pair_geom1[p] == g2 && m.pair_geom2[p] == g1))
              repeated = true;
          if (!repeated) n = push_pair(m, g1, g2, -1, out, cap, n);
        }
      }
      // MuJoCo's midphase (a tree over each body's geoms) then sorts the body pair's contacts
      // by (geom1, geom2), stably; sorting the pairs gives that order.
      const bool midphase = !(m.disableflags & kDisableMidphase) &&
                            !(m.body_geomnum[b1] == 1 && m.body_geomnum[b2] == 1);
      if (midphase && n <= cap) detail::sort_pairs(out + first_dynamic, n - first_dynamic);
    }
  }
  if (merge)
    for (; next_pair < m.npair; ++next_pair)
      n = push_pair(m, m.pair_geom1[next_pair], m.pair_geom2[next_pair], next_pair, out, cap, n);
  return n;
}

// Index of the first pair of geom types that has no pair function here (pair_supported), or -1.
// An importer refuses the model naming geom_type_name(type) of the offending geom.
template <class T>
MYRIAD_HD int first_unsupported_pair(const CollisionModel<T>& m, const CollisionPair* pairs,
                                     int n) {
  for (int i = 0; i < n; ++i)
    if (!pair_supported(m.geom_type[pairs[i].geom1], m.geom_type[pairs[i].geom2])) return i;
  return -1;
}

// Upper bound on the contacts of one env: the sum over the candidate pairs of the most contacts
// their pair function returns.
template <class T>
MYRIAD_HD int max_contacts(const CollisionModel<T>& m, const CollisionPair* pairs, int n) {
  int total = 0;
  for (int i = 0; i < n; ++i)
    total += max_pair_contacts(m.geom_type[pairs[i].geom1], m.geom_type[pairs[i].geom2]);
  return total;
}

// Contact room past max_contacts(): what the pairs write beyond what they keep, summed (16 per
// box-box pair, else 0). collide() needs the most of one pair (a pair function writes its contacts
// in place at the end of the list before they are thinned); the staged collision, which gives
// every pair its own slot of max_pair_raw_contacts (candidate_slots), needs the sum.
template <class T>
MYRIAD_HD int pair_scratch(const CollisionModel<T>& m, const CollisionPair* pairs, int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    const int t1 = m.geom_type[pairs[i].geom1], t2 = m.geom_type[pairs[i].geom2];
    sum += max_pair_raw_contacts(t1, t2) - max_pair_contacts(t1, t2);
  }
  return sum;
}

// Each candidate pair's slot in the contact list for the staged collision: slot[i] the sum of
// max_pair_raw_contacts over the pairs before i, so the slots fill max_contacts() + pair_scratch()
// entries and a pair's contacts, gathered in pair order, never move to a later entry.
template <class T>
void candidate_slots(const CollisionModel<T>& m, const CollisionPair* pairs, int n, int32_t* slot) {
  int at = 0;
  for (int i = 0; i < n; ++i) {
    slot[i] = at;
    at += max_pair_raw_contacts(m.geom_type[pairs[i].geom1], m.geom_type[pairs[i].geom2]);
  }
}

}  // namespace myriad::physics::collision
