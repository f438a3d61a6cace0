// Contacts as MuJoCo 2.2.2's collision stage produces them (mjContact, mju_makeFrame), the geom
// types, and how many contacts each pair function can return. MYRIAD_HD; templated on the scalar.
#pragma once

#include <cmath>
#include <cstdint>

#include "myriad/hd.h"
#include "myriad/physics/model_fields.h"
#include "physics/spatial.h"

namespace myriad::physics::collision {

using std::fabs;

// mjtGeom, in MuJoCo's order: the pair functions expect type1 <= type2.
enum GeomType : int32_t {
  kPlane = 0,
  kHField = 1,
  kSphere = 2,
  kCapsule = 3,
  kEllipsoid = 4,
  kCylinder = 5,
  kBox = 6,
  kMesh = 7,
  kNumGeomTypes = 8,
};

// mjMINVAL: below this a length or determinant counts as zero.
constexpr double kMinVal = 1e-15;
// mjMINMU: every friction coefficient is at least this.
constexpr double kMinMu = 1e-5;
// kNRef, kNImp (mjNREF, mjNIMP) come from myriad/physics/model_fields.h.
// Most contacts box_box can write (its clipping loops give at most 16 edge points, 4 corners of
// the reference face and 4 corners of the incident face); every other pair function writes <= 4.
constexpr int kMaxBoxBoxContacts = 24;
// Most of them mj_collideGeoms keeps (collide.h's box_box_keep).
constexpr int kMaxBoxBoxKept = 8;

// MuJoCo's name of a geom type ("plane", "box", ...), "unknown" outside the enum.
MYRIAD_HD const char* geom_type_name(int type) {
  switch (type) {
    case kPlane:
      return "plane";
    case kHField:
      return "hfield";
    case kSphere:
      return "sphere";
    case kCapsule:
      return "capsule";
    case kEllipsoid:
      return "ellipsoid";
    case kCylinder:
      return "cylinder";
    case kBox:
      return "box";
    case kMesh:
      return "mesh";
    default:
      return "unknown";
  }
}

// The types with a pair function here among themselves: every type but the mesh (MuJoCo's
// convex collision of meshes is not ported) and the height field, which collides with the others
// but not with a plane or another height field.
MYRIAD_HD bool geom_type_supported(int type) {
  return type == kPlane || type == kSphere || type == kCapsule || type == kEllipsoid ||
         type == kCylinder || type == kBox;
}

// Most contacts one height-field pair gives (mjMAXCONPAIR).
constexpr int kMaxHFieldContacts = 50;
// Most contacts convex_convex gives (convex.h: mjc_ccd's one and four from multi-CCD's
// perturbations, where a capsule, cylinder or box meets a cylinder), and plane_cylinder.
constexpr int kMaxConvexContacts = 5;
constexpr int kMaxPlaneCylinderContacts = 4;

// Whether a pair of geoms of these types (either order) has a pair function here.
MYRIAD_HD bool pair_supported(int type1, int type2) {
  if (type1 > type2) {
    const int t = type1;
    type1 = type2;
    type2 = t;
  }
  if (type1 == kHField) return type2 != kHField && geom_type_supported(type2) && type2 != kPlane;
  return geom_type_supported(type1) && geom_type_supported(type2);
}

// Whether the pair (type1 <= type2) goes through the general GJK/EPA (convex.h's convex_convex):
// two of sphere, capsule, ellipsoid, cylinder, box with an ellipsoid or a cylinder, except
// sphere-cylinder (its own function). Height-field pairs use GJK/EPA too (hfield.h).
MYRIAD_HD bool pair_uses_ccd(int type1, int type2) {
  if (type1 < kSphere || type2 > kBox || type1 > type2) return false;
  const bool convex =
      type1 == kEllipsoid || type1 == kCylinder || type2 == kEllipsoid || type2 == kCylinder;
  return convex && !(type1 == kSphere && type2 == kCylinder);
}

// Most contacts one pair of geoms of (type1, type2) gives (order-free; for box-box what
// box_box_keep keeps); 0 where MuJoCo has no function (plane-plane) or the pair is not supported.
MYRIAD_HD int max_pair_contacts(int type1, int type2) {
  if (type1 > type2) {
    const int t = type1;
    type1 = type2;
    type2 = t;
  }
  if (!pair_supported(type1, type2)) return 0;
  if (type1 == kHField) return kMaxHFieldContacts;
  if (pair_uses_ccd(type1, type2))  // one, or five with multi-CCD where a cylinder meets no sphere
    return type1 == kEllipsoid || type2 == kEllipsoid ? 1 : kMaxConvexContacts;
  if (type1 == kPlane) {
    if (type2 == kSphere || type2 == kEllipsoid) return 1;
    if (type2 == kCapsule) return 2;
    if (type2 == kCylinder) return kMaxPlaneCylinderContacts;
    if (type2 == kBox) return 4;
    return 0;  // plane-plane
  }
  if (type1 == kSphere) return 1;   // sphere-sphere, sphere-capsule, sphere-cylinder, sphere-box
  if (type1 == kCapsule) return 2;  // capsule-capsule, capsule-box
  return kMaxBoxBoxKept;            // box-box
}

// Most contacts one pair function call writes before mj_collideGeoms thins them: box-box writes
// up to kMaxBoxBoxContacts and keeps at most kMaxBoxBoxKept; every other pair keeps all it writes.
MYRIAD_HD int max_pair_raw_contacts(int type1, int type2) {
  const int kept = max_pair_contacts(type1, type2);
  return kept == kMaxBoxBoxKept && type1 == type2 ? kMaxBoxBoxContacts : kept;
}

// The staged launch's collision kernels (physics/launch.h), one per group of pair functions, each
// over (env, candidate pair of its group), so that no kernel carries a heavier pair function than
// its own: the analytic pairs but box-box, box-box (its clipping), GJK/EPA's between two geoms
// (ellipsoids, cylinders) and the height field's (its prisms through GJK/EPA). -1: a pair without
// contacts (max_pair_contacts 0). type1 <= type2.
enum PairGroup : int32_t {
  kPairsPrimitive = 0,
  kPairsBoxBox = 1,
  kPairsCcd = 2,
  kPairsHfield = 3,
  kNumPairGroups
};
MYRIAD_HD int pair_group(int type1, int type2) {
  if (max_pair_contacts(type1, type2) == 0) return -1;
  if (type1 == kHField) return kPairsHfield;
  if (pair_uses_ccd(type1, type2)) return kPairsCcd;
  if (type1 == kBox && type2 == kBox) return kPairsBoxBox;
  return kPairsPrimitive;
}

// One contact (mjContact without the solver's scratch: mu, H, efc_address).
template <class T>
struct Contact {
  T dist;                // signed distance between the surfaces; negative: penetration
  T pos[3];              // world position, midway between the surfaces
  T frame[9];            // rows: normal (from geom1 to geom2), tangent 1, tangent 2
  T includemargin;       // margin - gap: the contact is active when dist < includemargin
  T friction[5];         // tangent 1, tangent 2, torsion, rolling 1, rolling 2 (each >= kMinMu)
  T solref[kNRef];       // solver reference (mixed from the two geoms, or the pair's)
  T solimp[kNImp];       // solver impedance
  int32_t dim;           // condim: 1, 3, 4 or 6
  int32_t geom1, geom2;  // geom ids; type(geom1) <= type(geom2)
  int32_t exclude;       // 0: active (dist < includemargin), 1: in the gap
};

// One contact as a pair function computes it, in its arithmetic T, before it is stored as a
// Contact: a lane's entry in a lane group's round (hfield.h's hfield_convex_group, convex.h's
// convex_convex_group). hit 0: no contact.
template <class T>
struct ContactValues {
  int hit;
  T dist;
  T pos[3];
  T normal[3];
};

// mju_makeFrame: normalizes the normal (row 0); if the first tangent (row 1) is unset (squared
// norm < 0.25) picks (0,1,0), or (0,0,1) when |normal_y| >= 0.5; makes it orthogonal to the
// normal and unit; row 2 = row 0 x row 1.
template <class T>
MYRIAD_HD void make_frame(T* frame) {
  normalize3(frame);
  T* y = frame + 3;
  if (dot3(y, y) < T(0.25)) {
    y[0] = y[1] = y[2] = 0;
    if (frame[1] < T(0.5) && frame[1] > T(-0.5)) {
      y[1] = 1;
    } else {
      y[2] = 1;
    }
  }
  const T proj = dot3(frame, y);
  for (int k = 0; k < 3; ++k) y[k] -= frame[k] * proj;
  normalize3(y);
  cross3(frame + 6, frame, y);
}

}  // namespace myriad::physics::collision
