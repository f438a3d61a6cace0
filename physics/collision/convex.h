// Pairs with an ellipsoid or a cylinder among plane, sphere, capsule, ellipsoid, cylinder and box,
// as libmujoco 3.11 computes them at its default options (native CCD on, multi-CCD not disabled):
//
//   pair                     function         3.11 function                           at most
//   plane-ellipsoid          plane_convex     mjc_PlaneConvex (the support point)           1
//   plane-cylinder           plane_cylinder   mjc_PlaneCylinder                             4
//   sphere-cylinder          sphere_cylinder  mjc_SphereCylinder                            1
//   sphere-ellipsoid         convex_convex    mjc_Convex (mjc_ccd; no multi-CCD)            1
//   capsule-ellipsoid        convex_convex    mjc_Convex (no multi-CCD)                     1
//   ellipsoid-ellipsoid,
//   ellipsoid-cylinder,
//   ellipsoid-box            convex_convex    mjc_Convex (no multi-CCD)                     1
//   capsule-cylinder,
//   cylinder-cylinder,
//   cylinder-box             convex_convex    mjc_Convex + multi-CCD perturbations          5
//   hfield-ellipsoid,
//   hfield-cylinder          hfield_convex    mjc_ConvexHField (hfield.h)                  50
//
// (kMaxPlaneCylinderContacts, kMaxConvexContacts, kMaxHFieldContacts.) In 3.11 multi-CCD is on
// unless mjDSBL_MULTICCD is set (it became a disable flag), so the default takes the perturbation
// contacts; native CCD is on (mjDSBL_NATIVECCD unset), so mjc_fixNormal is not applied.
//
// The pair functions take geom 1 of the lower type (MuJoCo's order: plane < sphere < capsule <
// ellipsoid < cylinder < box), world positions pos [3], world rotations mat [3x3 row-major,
// columns = geom axes] and MuJoCo's geom sizes (ellipsoid: the three radii; cylinder: radius,
// half-height along local z; plane: unused, its normal is local z). They write dist, pos and frame
// rows 0..1 (the normal from geom 1 to geom 2, row 1 zero until make_frame) and return the count.
// margin is the pair's margin; contacts farther apart than it are not reported.
//
// Where the stored upstream source and 3.11's machine code differ (ellipsoid and cylinder supports,
// mjc_Convex's multi-CCD condition, the contact fill of mjc_penetration), this follows the machine
// code of libmujoco.so.3.11.0. Not ported: mjc_fixNormal and libccd's MPR (both only with
// mjDSBL_NATIVECCD), the box-box / box-mesh multi-contact EPA (max_contacts > 1 applies to
// box/mesh pairs only), meshes.
//
// MYRIAD_HD, templated on the scalar, no heap, no recursion, fixed-size buffers (the EPA polytope
// of ccd.h lives on the stack). Bitwise equal to 3.11 in double with -ffp-contract=off
// (tests/physics/test_convex_ccd.cc).
#pragma once

#include <cmath>

#include "physics/collision/ccd.h"
#include "physics/collision/contact.h"
#include "physics/constraint/group.h"

namespace myriad::physics::collision {

// kMaxConvexContacts and kMaxPlaneCylinderContacts: contact.h.

namespace convex_detail {

using ccd::copy3;
using ccd::set3;
using ccd::sub3;

// Plane through p1 with normal column 2 of mat1 against a sphere (pos2, r2) (mjraw_PlaneSphere):
// the contact sits halfway into the overlap.
template <class T>
MYRIAD_HD int plane_sphere_raw(Contact<T>* con, T margin, const T* pos1, const T* mat1,
                               const T* pos2, T r2) {
  Contact<T>& c = con[0];
  set3(c.frame, mat1[2], mat1[5], mat1[8]);
  T tmp[3];
  sub3(tmp, pos2, pos1);
  const T cdist = dot3(tmp, c.frame);
  if (cdist > margin + r2) return 0;
  c.dist = cdist - r2;
  const T s = -c.dist / T(2) - r2;
  for (int i = 0; i < 3; ++i) c.pos[i] = pos2[i] + c.frame[i] * s;
  c.frame[3] = c.frame[4] = c.frame[5] = 0;
  return 1;
}

// Two spheres (mjraw_SphereSphere): with coincident centres the normal is z1 x z2 (+x when those
// are parallel).
template <class T>
MYRIAD_HD int sphere_sphere_raw(Contact<T>* con, T margin, const T* pos1, const T* mat1, T r1,
                                const T* pos2, const T* mat2, T r2) {
  T dif[3];
  sub3(dif, pos1, pos2);
  const T cdist2 = dot3(dif, dif);
  const T min_dist = margin + r1 + r2;
  if (cdist2 > min_dist * min_dist) return 0;
  Contact<T>& c = con[0];
  c.dist = sqrt(cdist2) - r1 - r2;
  sub3(c.frame, pos2, pos1);
  if (normalize3(c.frame) < T(kMinVal)) {
    const T z1[3] = {mat1[2], mat1[5], mat1[8]};
    const T z2[3] = {mat2[2], mat2[5], mat2[8]};
    cross3(c.frame, z1, z2);
    normalize3(c.frame);
  }
  const T s = r1 + c.dist / T(2);
  for (int i = 0; i < 3; ++i) c.pos[i] = c.frame[i] * s + pos1[i];
  c.frame[3] = c.frame[4] = c.frame[5] = 0;
  return 1;
}

// One geom as a CCD object (mjc_initCCDObj): world pose, size, margin.
template <class T>
MYRIAD_HD void init_obj(ccd::Obj<T>* o, int type, const T* pos, const T* mat, const T* size,
                        T margin) {
  o->type = type;
  o->mode = ccd::kFull;
  copy3(o->pos, pos);
  for (int k = 0; k < 9; ++k) o->mat[k] = mat[k];
  copy3(o->size, size);
  o->margin = margin;
  o->vertindex = -1;
}

// One mjc_ccd call and its contact (3.11's mjc_penetration with max_contacts 1): dist + margin,
// normal x1 - x2 normalized, position midway between the witnesses; v.hit 0 or 1.
template <class T, class Arena>
MYRIAD_HD void ccd_contact_values(ContactValues<T>& v, ccd::Obj<T>& o1, ccd::Obj<T>& o2, T margin,
                                  int ccd_iterations, T ccd_tolerance, Arena& arena) {
  ccd::Status<T> st;
  const T dist = ccd::ccd_distance(&st, o1, o2, ccd_tolerance, ccd_iterations, arena);
  v.hit = dist < 0;
  if (!v.hit) return;
  v.dist = dist + margin;
  for (int i = 0; i < 3; ++i) v.pos[i] = (st.x1[i] + st.x2[i]) * T(0.5);
  sub3(v.normal, st.x1, st.x2);
  normalize3(v.normal);
}

// Stores contact values computed in T as C (frame rows 1 and 2 zero: make_frame fills them).
template <class T, class C>
MYRIAD_HD void store_values(Contact<C>& c, const ContactValues<T>& v) {
  c.dist = C(v.dist);
  for (int i = 0; i < 3; ++i) {
    c.pos[i] = C(v.pos[i]);
    c.frame[i] = C(v.normal[i]);
    c.frame[3 + i] = 0;
  }
}

// ccd_contact_values into con[0]: 0 or 1 contacts.
template <class T, class Arena>
MYRIAD_HD int ccd_contact(Contact<T>* con, ccd::Obj<T>& o1, ccd::Obj<T>& o2, T margin,
                          int ccd_iterations, T ccd_tolerance, Arena& arena) {
  ContactValues<T> v;
  ccd_contact_values(v, o1, o2, margin, ccd_iterations, ccd_tolerance, arena);
  if (v.hit) store_values(con[0], v);
  return v.hit;
}

// A plane contact at p, dist along the plane's normal: moved halfway back into the overlap.
template <class T>
MYRIAD_HD void plane_contact(Contact<T>& c, const T* normal, T dist, const T* p) {
  c.dist = dist;
  const T s = -dist * T(0.5);
  for (int i = 0; i < 3; ++i) c.pos[i] = p[i] + normal[i] * s;
  copy3(c.frame, normal);
  c.frame[3] = c.frame[4] = c.frame[5] = 0;
}

// res = a * b (3x3, mju_mulMatMat3).
template <class T>
MYRIAD_HD void mat_mat3(T* res, const T* a, const T* b) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      res[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}

// Rotates the object's frame by rot about origin (mju_rotateFrame).
template <class T>
MYRIAD_HD void rotate_frame(ccd::Obj<T>* o, const T* origin, const T* rot) {
  T mat[9];
  mat_mat3(mat, rot, o->mat);
  for (int k = 0; k < 9; ++k) o->mat[k] = mat[k];
  T rel[3], vec[3];
  sub3(rel, origin, o->pos);
  ccd::mat_vec(vec, rot, rel);
  for (int i = 0; i < 3; ++i) vec[i] -= rel[i];
  for (int i = 0; i < 3; ++i) o->pos[i] -= vec[i];
}

// Multi-CCD's perturbation k (0..3: tangent k / 2 of the first contact's frame, angle -1e-3 rad
// for k even, +1e-3 odd): o1 and o2 rotated about origin, geom 2 inversely (convex_convex).
template <class T>
MYRIAD_HD void perturb(ccd::Obj<T>& o1, ccd::Obj<T>& o2, const T* frame, const T* origin, int k) {
  const T angles[2] = {T(-1e-3), T(1e-3)};
  const T* axis = frame + 3 + 3 * (k / 2);
  const T half = T(0.5) * angles[k % 2];
  const T s = sin(half);
  const T q[4] = {cos(half), s * axis[0], s * axis[1], s * axis[2]};
  T rot[9], inv[9];
  quat2mat(rot, q);  // mju_quat2Mat (spatial.h)
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) inv[3 * i + j] = rot[3 * j + i];
  rotate_frame(&o1, origin, rot);
  rotate_frame(&o2, origin, inv);
}

// Whether multi-CCD's perturbations run for the pair: on, and neither geom a sphere or an
// ellipsoid.
MYRIAD_HD bool multiccd_runs(bool multiccd, int type1, int type2) {
  return multiccd && type1 != kSphere && type1 != kEllipsoid && type2 != kSphere &&
         type2 != kEllipsoid;
}

// The perturbations' frame (rows 1 and 2: the tangents they turn about) from the first contact's
// normal, and their distinct-contact tolerance, 1e-3 of the smaller bounding radius.
template <class T>
MYRIAD_HD T perturbation_frame(T* frame, const T* normal, T rbound1, T rbound2) {
  copy3(frame, normal);
  for (int k = 3; k < 9; ++k) frame[k] = 0;
  make_frame(frame);
  const T rmin = rbound1 <= rbound2 ? rbound1 : rbound2;
  return rmin * T(1e-3);
}

// Whether point p lies farther than tolerance from each of the n points pos(i): a perturbation's
// contact is kept only then.
template <class T, class Pos>
MYRIAD_HD bool distinct_point(const T* p, int n, Pos pos, T tolerance) {
  for (int i = 0; i < n; ++i) {
    T d[3];
    sub3(d, pos(i), p);
    if (sqrt(dot3(d, d)) <= tolerance) return false;
  }
  return true;
}

// Position of the i-th set bit of bits (counting from 0; i below the number of set bits).
MYRIAD_HD int nth_bit(unsigned bits, int i) {
  int k = 0;
  for (;; ++k)
    if ((bits >> k & 1u) && i-- == 0) return k;
}

// Puts the object back at pose (pos, mat) after a perturbation.
template <class T>
MYRIAD_HD void restore_pose(ccd::Obj<T>& o, const T* pos, const T* mat) {
  copy3(o.pos, pos);
  for (int q = 0; q < 9; ++q) o.mat[q] = mat[q];
}

}  // namespace convex_detail

// Plane (geom 1, normal = its z axis) and ellipsoid (mjc_PlaneConvex): the ellipsoid's support
// point along -normal (libccd's mjccd_support: local direction scaled by the radii, normalized,
// scaled again), one contact, halfway into the overlap. Returns 0 or 1.
template <class T>
MYRIAD_HD int plane_convex(Contact<T>* con, T margin, const T* pos1, const T* mat1,
                           const T* /*size1*/, const T* pos2, const T* mat2, const T* size2) {
  const T normal[3] = {mat1[2], mat1[5], mat1[8]};
  const T dir[3] = {-mat1[2], -mat1[5], -mat1[8]};
  T ld[3], r[3], p[3];
  ccd::mat_t_vec(ld, mat2, dir);
  for (int i = 0; i < 3; ++i) r[i] = ld[i] * size2[i];
  normalize3(r);
  for (int i = 0; i < 3; ++i) r[i] = r[i] * size2[i];
  for (int i = 0; i < 3; ++i) r[i] = r[i] + ld[i] * T(0) * T(0.5);  // margin 0, as MuJoCo adds it
  ccd::mat_vec(p, mat2, r);
  for (int i = 0; i < 3; ++i) p[i] = p[i] + pos2[i];
  T dif[3];
  ccd::sub3(dif, p, pos1);
  const T dist = dot3(normal, dif);
  if (dist > margin) return 0;
  Contact<T>& c = con[0];
  c.dist = dist;
  const T s = dist * T(-0.5);
  for (int i = 0; i < 3; ++i) c.pos[i] = p[i] + normal[i] * s;
  ccd::copy3(c.frame, normal);
  c.frame[3] = c.frame[4] = c.frame[5] = 0;
  return 1;
}

// Plane (geom 1) and cylinder (mjc_PlaneCylinder): the rim point nearest the plane on the end
// nearer it, then the same rim point on the other end, then two more points of the near end's rim
// (120 degrees either side) when the near end is within margin. Returns 0..4
// (kMaxPlaneCylinderContacts); nothing when the nearest point is beyond margin.
template <class T>
MYRIAD_HD int plane_cylinder(Contact<T>* con, T margin, const T* pos1, const T* mat1,
                             const T* /*size1*/, const T* pos2, const T* mat2, const T* size2) {
  const T normal[3] = {mat1[2], mat1[5], mat1[8]};
  T axis[3] = {mat2[2], mat2[5], mat2[8]};
  T prjaxis = dot3(normal, axis);
  if (prjaxis > 0) {
    for (int i = 0; i < 3; ++i) axis[i] = axis[i] * T(-1);
    prjaxis = -prjaxis;
  }
  T vec[3];
  ccd::sub3(vec, pos2, pos1);
  const T dist0 = dot3(vec, normal);
  for (int i = 0; i < 3; ++i) vec[i] = axis[i] * prjaxis;
  for (int i = 0; i < 3; ++i) vec[i] = vec[i] - normal[i];
  const T len2 = dot3(vec, vec);
  if (len2 >= ccd::min_val2<T>()) {
    const T scl = size2[0] / sqrt(len2);
    for (int i = 0; i < 3; ++i) vec[i] *= scl;
  } else {  // disk parallel to the plane: the cylinder's x axis
    ccd::set3(vec, mat2[0] * size2[0], mat2[3] * size2[0], mat2[6] * size2[0]);
  }
  const T prjvec = dot3(vec, normal);
  for (int i = 0; i < 3; ++i) axis[i] = axis[i] * size2[1];
  prjaxis *= size2[1];

  int n = 0;
  T p[3];
  const T d1 = dist0 + prjaxis + prjvec;
  if (!(d1 <= margin)) return 0;
  for (int i = 0; i < 3; ++i) p[i] = (pos2[i] + vec[i]) + axis[i];
  convex_detail::plane_contact(con[n++], normal, d1, p);
  const T d2 = dist0 - prjaxis + prjvec;
  if (d2 <= margin) {
    for (int i = 0; i < 3; ++i) p[i] = (pos2[i] + vec[i]) - axis[i];
    convex_detail::plane_contact(con[n++], normal, d2, p);
  }
  const T prjvec1 = -prjvec * T(0.5);
  const T d3 = dist0 + prjaxis + prjvec1;
  if (d3 <= margin) {
    T vec1[3];
    cross3(vec1, vec, axis);
    normalize3(vec1);
    const T s = size2[0] * sqrt(T(3)) / T(2);
    for (int i = 0; i < 3; ++i) vec1[i] = vec1[i] * s;
    for (int i = 0; i < 3; ++i) p[i] = ((pos2[i] + vec1[i]) + axis[i]) + vec[i] * T(-0.5);
    convex_detail::plane_contact(con[n++], normal, d3, p);
    for (int i = 0; i < 3; ++i) p[i] = ((pos2[i] - vec1[i]) + axis[i]) + vec[i] * T(-0.5);
    convex_detail::plane_contact(con[n++], normal, d3, p);
  }
  return n;
}

// Sphere (geom 1) and cylinder (mjc_SphereCylinder): against the side (sphere-sphere with the
// centre's projection on the axis), a cap (plane-sphere, normal flipped) or the rim (sphere-sphere
// with a point), whichever region holds the sphere's centre; a centre inside the cylinder takes the
// nearer of side and cap. Returns 0 or 1.
template <class T>
MYRIAD_HD int sphere_cylinder(Contact<T>* con, T margin, const T* pos1, const T* mat1,
                              const T* size1, const T* pos2, const T* mat2, const T* size2) {
  using namespace convex_detail;
  const T radius = size2[0], height = size2[1];
  const T axis[3] = {mat2[2], mat2[5], mat2[8]};
  T vec[3];
  sub3(vec, pos1, pos2);
  const T x = dot3(axis, vec);
  T a_proj[3], p_proj[3];
  for (int i = 0; i < 3; ++i) a_proj[i] = axis[i] * x;
  sub3(p_proj, vec, a_proj);
  const T p_proj2 = dot3(p_proj, p_proj);
  bool side = fabs(x) < height;
  bool cap = p_proj2 < radius * radius;
  if (side && cap) {  // the centre is inside: the nearer wall wins
    const T dist_cap = height - fabs(x);
    const T dist_radius = radius - sqrt(p_proj2);
    if (dist_cap < dist_radius) {
      side = false;
    } else {
      cap = false;
    }
  }
  if (side) {
    for (int i = 0; i < 3; ++i) a_proj[i] = a_proj[i] + pos2[i];
    return sphere_sphere_raw(con, margin, pos1, mat1, size1[0], a_proj, mat2, size2[0]);
  }
  if (cap) {
    const T flip[9] = {-mat2[0], mat2[1],  -mat2[2], -mat2[3], mat2[4],
                       -mat2[5], -mat2[6], mat2[7],  -mat2[8]};
    T pos_cap[3];
    const T* mat_cap;
    if (x > 0) {
      for (int i = 0; i < 3; ++i) pos_cap[i] = pos2[i] + axis[i] * height;
      mat_cap = mat2;
    } else {
      for (int i = 0; i < 3; ++i) pos_cap[i] = pos2[i] + axis[i] * -height;
      mat_cap = flip;
    }
    const int n = plane_sphere_raw(con, margin, pos_cap, mat_cap, pos1, size1[0]);
    if (n) {
      for (int i = 0; i < 3; ++i) con[0].frame[i] = con[0].frame[i] * T(-1);
    }
    return n;
  }
  const T scl = size2[0] / sqrt(p_proj2);
  for (int i = 0; i < 3; ++i) p_proj[i] = p_proj[i] * scl;
  const T h = x > 0 ? height : -height;
  for (int i = 0; i < 3; ++i) vec[i] = axis[i] * h;
  for (int i = 0; i < 3; ++i) vec[i] = vec[i] + p_proj[i];
  for (int i = 0; i < 3; ++i) vec[i] = vec[i] + pos2[i];
  return sphere_sphere_raw(con, margin, pos1, mat1, size1[0], vec, mat2, T(0));
}

// Two convex geoms through mjc_ccd (mjc_Convex): type1 <= type2 among sphere, capsule, ellipsoid,
// cylinder and box, with an ellipsoid or a cylinder (box-box and the primitive pairs have their own
// functions). Both geoms are inflated by margin/2; one penetration gives one contact with dist +
// margin. Then, unless multiccd is false (mjDSBL_MULTICCD) or either geom is a sphere or an
// ellipsoid, the geoms are rotated by -+1e-3 rad (geom 2 inversely) about the two tangents of the
// first contact's frame around its position, and each new contact farther than 1e-3 *
// min(rbound1, rbound2) from all earlier ones is added with the first contact's dist: at most
// kMaxConvexContacts. rbound: geom_rbound. arena: where the EPA's polytope is (ccd.h's
// LocalPolytope, WarpPolytope).
template <class T, class Arena = ccd::LocalPolytope<T>>
MYRIAD_HD int convex_convex(Contact<T>* con, T margin, int type1, const T* pos1, const T* mat1,
                            const T* size1, T rbound1, int type2, const T* pos2, const T* mat2,
                            const T* size2, T rbound2, int ccd_iterations, T ccd_tolerance,
                            bool multiccd = true, Arena&& arena = Arena()) {
  using namespace convex_detail;
  ccd::Obj<T> o1, o2;
  init_obj(&o1, type1, pos1, mat1, size1, margin);
  init_obj(&o2, type2, pos2, mat2, size2, margin);
  int n = ccd_contact(con, o1, o2, margin, ccd_iterations, ccd_tolerance, arena);
  if (n != 1 || !multiccd_runs(multiccd, type1, type2)) return n;

  T frame[9];
  const T tolerance = perturbation_frame(frame, con[0].frame, rbound1, rbound2);
  const T origin[3] = {con[0].pos[0], con[0].pos[1], con[0].pos[2]};
  for (int k = 0; k < 4; ++k) {
    perturb(o1, o2, frame, origin, k);
    if (ccd_contact(con + n, o1, o2, margin, ccd_iterations, ccd_tolerance, arena) &&
        distinct_point(
            con[n].pos, n, [&](int i) { return con[i].pos; }, tolerance)) {
      con[n].dist = con[0].dist;
      ++n;
    }
    restore_pose(o1, pos1, mat1);
    restore_pose(o2, pos2, mat2);
  }
  return n;
}

// Room convex_convex_group's round needs: the first mjc_ccd call's result and the four
// perturbations'.
constexpr int kConvexRound = 5;

// convex_convex by a lane group (physics/constraint/group.h), as the GPU runs a pair: one lane
// runs the first mjc_ccd call, then the four multi-CCD perturbations go one per lane, each from the
// geoms' own poses as convex_convex restores them, and every lane walks their results in order
// while the leader writes the distinct ones, so the contacts are convex_convex's whatever the
// group's size. round: room for kConvexRound, seen by all the group's lanes (the first call's
// result in round[0], perturbation k's in round[1 + k]; a lane keeps no copy of them, its stack
// on a GPU being the scarce room). T is the arithmetic, C the contacts' scalar (collide.h runs it
// in double for a float model, as convex_pair does). Every lane returns the count.
template <class T, class C, class G, class Arena>
MYRIAD_HD int convex_convex_group(const G& grp, ContactValues<T>* round, Contact<C>* con, T margin,
                                  int type1, const T* pos1, const T* mat1, const T* size1,
                                  T rbound1, int type2, const T* pos2, const T* mat2,
                                  const T* size2, T rbound2, int ccd_iterations, T ccd_tolerance,
                                  bool multiccd, Arena& arena) {
  using namespace convex_detail;
  ccd::Obj<T> o1, o2;
  init_obj(&o1, type1, pos1, mat1, size1, margin);
  init_obj(&o2, type2, pos2, mat2, size2, margin);
  // One call site for the five mjc_ccd calls (one copy of GJK/EPA on a GPU): a first round of one
  // item, the unperturbed call, whose result every lane then reads; a second of four, the
  // perturbations.
  const ContactValues<T>& first = round[0];
  T frame[9], tolerance = 0;
  for (int phase = 0; phase < 2; ++phase) {
    constraint::group_for(grp, phase == 0 ? 1 : 4, [&](int k) {
      if (phase > 0) perturb(o1, o2, frame, first.pos, k);
      ccd_contact_values(round[phase + k], o1, o2, margin, ccd_iterations, ccd_tolerance, arena);
      if (phase > 0) {
        restore_pose(o1, pos1, mat1);  // for the lane's next perturbation, as convex_convex does
        restore_pose(o2, pos2, mat2);
      }
    });
    if (phase > 0) break;
    if (!first.hit) {
      grp.sync();  // every lane has read round[0] before a later call may overwrite it
      return 0;
    }
    if (constraint::group_leader(grp)) store_values(con[0], first);
    if (!multiccd_runs(multiccd, type1, type2)) {
      grp.sync();  // as above
      return 1;
    }
    tolerance = perturbation_frame(frame, first.normal, rbound1, rbound2);
  }
  // The kept contacts: round entries, a bit each (bit 0 the first call's).
  unsigned kept = 1;
  int n = 1;
  for (int k = 1; k < kConvexRound; ++k) {
    const ContactValues<T>& v = round[k];
    if (!v.hit || !distinct_point(
                      v.pos, n, [&](int i) { return round[nth_bit(kept, i)].pos; }, tolerance))
      continue;
    kept |= 1u << k;
    if (constraint::group_leader(grp)) {
      store_values(con[n], v);
      con[n].dist = C(first.dist);
    }
    ++n;
  }
  grp.sync();  // the round is read before a later call overwrites it
  return n;
}

}  // namespace myriad::physics::collision
