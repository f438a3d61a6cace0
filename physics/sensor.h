// Sensors: mj_sensorPos, mj_sensorVel and mj_sensorAcc (engine_sensor.c) for the sensor types
// listed in SensorType, computed once all of forward's outputs exist (what each reads does not
// change after its MuJoCo stage, so computing them together gives libmujoco's values):
//   (poses, subtree_com, qpos) => position sensors;
//   (cvel, qvel, ten_velocity) => velocity sensors (subtree momenta as mj_subtreeVel);
//   (qacc, cfrc_ext, actuator_force) => acceleration sensors (cacc and cfrc_int as
//   mj_rnePostConstraint leaves them);
//   (geom poses) => rangefinder (a ray cast, physics/ray.h);
//   (contact, efc_force) => touch.
// sensordata [nsensordata] holds sensor s at sensor_adr[s], sensor_dim[s] values, with MuJoCo's
// cutoff applied. Noise is not added (libmujoco does not add it either). MYRIAD_HD, templated on
// the scalar.
#pragma once

#include "myriad/physics/data.h"
#include "physics/collision/primitives.h"
#include "physics/constraint/body_forces.h"
#include "physics/model_view.h"
#include "physics/ray.h"
#include "physics/spatial.h"

namespace myriad::physics {

// mjtSensor values of the types the engine computes (import.cc checks them against mjtype.h and
// refuses the others by name).
enum SensorType : int32_t {
  kSensTouch = 0,
  kSensAccelerometer = 1,
  kSensVelocimeter = 2,
  kSensGyro = 3,
  kSensForce = 4,
  kSensTorque = 5,
  kSensMagnetometer = 6,
  kSensRangefinder = 7,
  kSensJointPos = 9,
  kSensJointVel = 10,
  kSensTendonPos = 11,
  kSensTendonVel = 12,
  kSensActuatorFrc = 15,
  kSensJointActFrc = 16,
  kSensBallQuat = 18,
  kSensBallAngVel = 19,
  kSensFramePos = 26,
  kSensFrameQuat = 27,
  kSensFrameXAxis = 28,
  kSensFrameYAxis = 29,
  kSensFrameZAxis = 30,
  kSensFrameLinVel = 31,
  kSensFrameAngVel = 32,
  kSensFrameLinAcc = 33,
  kSensFrameAngAcc = 34,
  kSensSubtreeCom = 35,
  kSensSubtreeLinVel = 36,
  kSensSubtreeAngMom = 37,
  kSensClock = 45,
};

// mjtObj values of the frames a sensor may name, mjtDataType values cutoff reads.
enum SensorObject : int32_t { kObjBody = 1, kObjXBody = 2, kObjGeom = 5, kObjSite = 6 };
enum SensorDataType : int32_t { kDataReal = 0, kDataPositive = 1 };

// The sensors in four parts, each a kernel of its own in the staged launch (physics/launch.h): the
// rangefinder (a ray cast into the scene, height fields included), touch (a ray per contact) and
// the sensors that need mj_rnePostConstraint's body pass hold most of a GPU thread's registers
// and stack, and most models have none of them. kAll: every sensor in one pass (the fused step's).
enum class SensorPart { kAll, kPlain, kAcc, kRangefinder, kTouch };

MYRIAD_HD SensorPart sensor_part(int type) {
  if (type == kSensRangefinder) return SensorPart::kRangefinder;
  if (type == kSensTouch) return SensorPart::kTouch;
  if (type == kSensAccelerometer || type == kSensForce || type == kSensTorque ||
      type == kSensFrameLinAcc || type == kSensFrameAngAcc)
    return SensorPart::kAcc;
  return SensorPart::kPlain;
}

namespace sensor_detail {

using collision::detail::mul_mat_t_vec3;  // res = mat' v: a world vector in a frame's axes

// mju_transformSpatial: a spatial motion (force = false) or force vector [rot; lin] given about
// `from` moved to `to`, then rotated into the frame `rot` (world orientation when null).
template <class T, class V, class F>
MYRIAD_HD void transform_spatial(T* res, V vec, bool force, const T* to, F from, const T* rot) {
  const T dif[3] = {to[0] - from[0], to[1] - from[1], to[2] - from[2]};
  T tran[6], c[3];
  for (int k = 0; k < 6; ++k) tran[k] = vec[k];
  if (force) {
    cross3(c, dif, vec + 3);
    for (int k = 0; k < 3; ++k) tran[k] = vec[k] - c[k];
  } else {
    cross3(c, dif, vec);
    for (int k = 0; k < 3; ++k) tran[3 + k] = vec[3 + k] - c[k];
  }
  if (rot) {
    mul_mat_t_vec3(res, rot, tran);
    mul_mat_t_vec3(res + 3, rot, tran + 3);
  } else {
    for (int k = 0; k < 6; ++k) res[k] = tran[k];
  }
}

// An object's frame: its body, position and orientation (mjOBJ_BODY: the inertial frame,
// mjOBJ_XBODY: the body frame, geoms and sites their own), as values: copied from the data, or
// for a site computed (mj_local2Global). Values, not pointers into the data, so one Frame serves
// both layouts and no pointer chooses between the data and a local copy (which cost the blocked
// layout's float64 sensors kernel stack).
template <class T>
struct Frame {
  int body;
  T pos[3], mat[9];
};

template <class T, int Block>
MYRIAD_HD void frame_of(const ModelView<T>& m, const EnvData<T, Block>& d, int type, int id,
                        Frame<T>& f) {
  const auto copy = [&f](auto pos, auto mat) {
    for (int k = 0; k < 3; ++k) f.pos[k] = pos[k];
    for (int k = 0; k < 9; ++k) f.mat[k] = mat[k];
  };
  if (type == kObjBody) {
    f.body = id;
    copy(d.xipos + 3 * id, d.ximat + 9 * id);
  } else if (type == kObjXBody) {
    f.body = id;
    copy(d.xpos + 3 * id, d.xmat + 9 * id);
  } else if (type == kObjGeom) {
    f.body = m.geom_bodyid[id];
    copy(d.geom_xpos + 3 * id, d.geom_xmat + 9 * id);
  } else {  // site
    const int b = m.site_bodyid[id];
    f.body = b;
    mul_mat_vec3(f.pos, d.xmat + 9 * b, m.site_pos + 3 * id);
    for (int k = 0; k < 3; ++k) f.pos[k] += d.xpos[3 * b + k];
    T q[4];
    mul_quat(q, d.xquat + 4 * b, m.site_quat + 4 * id);
    quat2mat(f.mat, q);
  }
}

// The object's orientation as a quaternion (get_xquat in engine_sensor.c).
template <class T, int Block>
MYRIAD_HD void quat_of(const ModelView<T>& m, const EnvData<T, Block>& d, int type, int id, T* q) {
  if (type == kObjXBody) {
    for (int k = 0; k < 4; ++k) q[k] = d.xquat[4 * id + k];
  } else if (type == kObjBody) {
    mul_quat(q, d.xquat + 4 * id, m.body_iquat + 4 * id);
  } else if (type == kObjGeom) {
    mul_quat(q, d.xquat + 4 * m.geom_bodyid[id], m.geom_quat + 4 * id);
  } else {
    mul_quat(q, d.xquat + 4 * m.site_bodyid[id], m.site_quat + 4 * id);
  }
}

// mj_objectVelocity / mj_objectAcceleration: [rot; lin] at the frame's origin, in world
// orientation (local = false) or the frame's.
template <class T, int Block>
MYRIAD_HD void object_velocity(const ModelView<T>& m, const EnvData<T, Block>& d, const Frame<T>& f,
                               bool local, T* res) {
  transform_spatial(res, d.cvel + 6 * f.body, false, f.pos,
                    d.subtree_com + 3 * m.body_rootid[f.body], local ? f.mat : nullptr);
}

template <class T, int Block>
MYRIAD_HD void object_acceleration(const ModelView<T>& m, const EnvData<T, Block>& d,
                                   const Frame<T>& f, bool local, T* res) {
  const auto com = d.subtree_com + 3 * m.body_rootid[f.body];
  const T* rot = local ? f.mat : nullptr;
  T vel[6], c[3];
  transform_spatial(vel, d.cvel + 6 * f.body, false, f.pos, com, rot);
  transform_spatial(res, d.cacc + 6 * f.body, false, f.pos, com, rot);
  cross3(c, vel, vel + 3);
  for (int k = 0; k < 3; ++k) res[3 + k] += c[k];
}

// mj_rnePostConstraint's body pass: (qvel, qacc, cdof, cdof_dot, cinert, cvel, cfrc_ext) =>
// (cacc with the constraint forces' accelerations, cfrc_int: the force each body's parent
// exerts on it, about the root's subtree com).
template <class T, int Block>
MYRIAD_HD void rne_post_constraint(const ModelView<T>& m, EnvData<T, Block>& d) {
  for (int k = 0; k < 6; ++k) d.cacc[k] = d.cfrc_int[k] = 0;
  if (m.gravity_enabled)
    for (int k = 0; k < 3; ++k) d.cacc[3 + k] = -m.gravity[k];
  for (int j = 1; j < m.nbody; ++j) {
    auto cacc = d.cacc + 6 * j;
    T vq[6] = {0, 0, 0, 0, 0, 0}, aq[6] = {0, 0, 0, 0, 0, 0};
    for (int r = 0; r < m.body_dofnum[j]; ++r) {
      const int dof = m.body_dofadr[j] + r;
      for (int k = 0; k < 6; ++k) {
        vq[k] += d.cdof_dot[6 * dof + k] * d.qvel[dof];
        aq[k] += d.cdof[6 * dof + k] * d.qacc[dof];
      }
    }
    for (int k = 0; k < 6; ++k) cacc[k] = d.cacc[6 * m.body_parentid[j] + k] + vq[k] + aq[k];
    T f1[6], f2[6], tmp[6];
    mul_inert_vec(f1, d.cinert + 10 * j, cacc);
    mul_inert_vec(tmp, d.cinert + 10 * j, d.cvel + 6 * j);
    cross_force(f2, d.cvel + 6 * j, tmp);
    for (int k = 0; k < 6; ++k) d.cfrc_int[6 * j + k] = f1[k] + f2[k] - d.cfrc_ext[6 * j + k];
  }
  for (int j = m.nbody - 1; j > 0; --j)
    for (int k = 0; k < 6; ++k) d.cfrc_int[6 * m.body_parentid[j] + k] += d.cfrc_int[6 * j + k];
}

// mj_subtreeVel: (cvel, xipos, ximat, subtree_com) => (subtree_linvel [nbody, 3], subtree_angmom
// [nbody, 3]: about each subtree's com).
template <class T, int Block>
MYRIAD_HD void subtree_velocity(const ModelView<T>& m, EnvData<T, Block>& d) {
  auto linvel = d.subtree_linvel;
  auto angmom = d.subtree_angmom;
  for (int i = 0; i < m.nbody; ++i) {
    Frame<T> f;
    frame_of(m, d, kObjBody, i, f);
    T v[6], w[3], iw[3];
    object_velocity(m, d, f, false, v);
    for (int k = 0; k < 3; ++k) linvel[3 * i + k] = v[3 + k] * m.body_mass[i];
    // angular momentum about the body's com: ximat diag(inertia) ximat' w
    mul_mat_t_vec3(w, d.ximat + 9 * i, v);
    for (int k = 0; k < 3; ++k) w[k] *= m.body_inertia[3 * i + k];
    mul_mat_vec3(iw, d.ximat + 9 * i, w);
    for (int k = 0; k < 3; ++k) angmom[3 * i + k] = iw[k];
  }
  for (int i = m.nbody - 1; i >= 0; --i) {
    if (i > 0)
      for (int k = 0; k < 3; ++k) linvel[3 * m.body_parentid[i] + k] += linvel[3 * i + k];
    const T mass = m.body_subtreemass[i] > T(1e-15) ? m.body_subtreemass[i] : T(1e-15);
    for (int k = 0; k < 3; ++k) linvel[3 * i + k] *= T(1) / mass;
  }
  for (int i = m.nbody - 1; i > 0; --i) {
    const int p = m.body_parentid[i];
    Frame<T> f;
    frame_of(m, d, kObjBody, i, f);
    T v[6], dx[3], dv[3], dl[3];
    object_velocity(m, d, f, false, v);
    for (int k = 0; k < 3; ++k) {
      dx[k] = d.xipos[3 * i + k] - d.subtree_com[3 * i + k];
      dv[k] = (v[3 + k] - linvel[3 * i + k]) * m.body_mass[i];
    }
    cross3(dl, dx, dv);
    for (int k = 0; k < 3; ++k) angmom[3 * i + k] += dl[k];
    for (int k = 0; k < 3; ++k) angmom[3 * p + k] += angmom[3 * i + k];
    for (int k = 0; k < 3; ++k) {
      dx[k] = d.subtree_com[3 * i + k] - d.subtree_com[3 * p + k];
      dv[k] = (linvel[3 * i + k] - linvel[3 * p + k]) * m.body_subtreemass[i];
    }
    cross3(dl, dx, dv);
    for (int k = 0; k < 3; ++k) angmom[3 * p + k] += dl[k];
  }
}

// Touch: the normal forces of the contacts on the site's body whose point, pushed along the
// force's direction into the body, meets the site's zone (a ray cast against the site's shape;
// always true from inside it), summed in contact order. Contacts in the gap have no rows and
// count nothing.
template <class T, int Block>
MYRIAD_HD T touch(const ModelView<T>& m, const EnvData<T, Block>& d, const Frame<T>& site,
                  int site_id) {
  const collision::Contact<T>* con = constraint::contacts_of(d);
  const int nefc = static_cast<int>(d.nefc[0]);
  T sum = 0;
  for (int r = 0; r < nefc;) {
    const int type = static_cast<int>(d.efc_type[r]);
    if (type != constraint::kContactFrictionless && type != constraint::kContactPyramidal &&
        type != constraint::kContactElliptic) {
      ++r;
      continue;
    }
    const collision::Contact<T>& c = con[static_cast<int>(d.efc_id[r])];
    const bool elliptic = type == constraint::kContactElliptic;
    T local[6];
    constraint::contact_force(c, d.efc_force + r, local, elliptic);
    r += constraint::contact_rows(c.dim, elliptic);
    const int body1 = m.geom_bodyid[c.geom1], body2 = m.geom_bodyid[c.geom2];
    if (site.body != body1 && site.body != body2) continue;
    if (local[0] <= T(0)) continue;
    T dir[3] = {c.frame[0] * local[0], c.frame[1] * local[0], c.frame[2] * local[0]};
    normalize3(dir);
    if (site.body == body2)
      for (int k = 0; k < 3; ++k) dir[k] = -dir[k];
    if (ray::geom(m.site_type[site_id], site.pos, site.mat, m.site_size + 3 * site_id, c.pos,
                  dir) >= T(0))
      sum += local[0];
  }
  return sum;
}

// Sensor s of the plain part: positions, velocities, forces read from forward's outputs, the
// clock.
template <class T, int Block>
MYRIAD_HD void plain_sensor(const ModelView<T>& m, const EnvData<T, Block>& d, int s, T* out) {
  const int type = m.sensor_type[s], obj = m.sensor_objid[s], objtype = m.sensor_objtype[s];
  const int ref = m.sensor_refid[s], reftype = m.sensor_reftype[s];
  switch (type) {
    case kSensMagnetometer: {
      Frame<T> f;
      frame_of(m, d, kObjSite, obj, f);
      mul_mat_t_vec3(out, f.mat, m.magnetic);
      break;
    }
    case kSensJointPos:
      out[0] = d.qpos[m.jnt_qposadr[obj]];
      break;
    case kSensJointVel:
      out[0] = d.qvel[m.jnt_dofadr[obj]];
      break;
    case kSensTendonPos:
      out[0] = d.ten_length[obj];
      break;
    case kSensTendonVel:
      out[0] = d.ten_velocity[obj];
      break;
    case kSensActuatorFrc:
      out[0] = d.actuator_force[obj];
      break;
    case kSensJointActFrc:
      out[0] = d.qfrc_actuator[m.jnt_dofadr[obj]];
      break;
    case kSensBallQuat:
      for (int k = 0; k < 4; ++k) out[k] = d.qpos[m.jnt_qposadr[obj] + k];
      normalize4(out);
      break;
    case kSensBallAngVel:
      for (int k = 0; k < 3; ++k) out[k] = d.qvel[m.jnt_dofadr[obj] + k];
      break;
    case kSensFramePos:
    case kSensFrameXAxis:
    case kSensFrameYAxis:
    case kSensFrameZAxis: {
      Frame<T> f;
      frame_of(m, d, objtype, obj, f);
      T v[3];
      if (type == kSensFramePos) {
        for (int k = 0; k < 3; ++k) v[k] = f.pos[k];
      } else {
        const int a = type - kSensFrameXAxis;
        for (int k = 0; k < 3; ++k) v[k] = f.mat[a + 3 * k];
      }
      if (ref < 0) {
        for (int k = 0; k < 3; ++k) out[k] = v[k];
      } else {
        Frame<T> r;
        frame_of(m, d, reftype, ref, r);
        if (type == kSensFramePos)
          for (int k = 0; k < 3; ++k) v[k] -= r.pos[k];
        mul_mat_t_vec3(out, r.mat, v);
      }
      break;
    }
    case kSensFrameQuat: {
      T q[4];
      quat_of(m, d, objtype, obj, q);
      if (ref < 0) {
        for (int k = 0; k < 4; ++k) out[k] = q[k];
      } else {
        T rq[4];
        quat_of(m, d, reftype, ref, rq);
        for (int k = 1; k < 4; ++k) rq[k] = -rq[k];
        mul_quat(out, rq, q);
      }
      break;
    }
    case kSensSubtreeCom:
      for (int k = 0; k < 3; ++k) out[k] = d.subtree_com[3 * obj + k];
      break;
    case kSensVelocimeter:
    case kSensGyro: {
      Frame<T> f;
      frame_of(m, d, kObjSite, obj, f);
      T v[6];
      object_velocity(m, d, f, true, v);
      for (int k = 0; k < 3; ++k) out[k] = v[(type == kSensGyro ? 0 : 3) + k];
      break;
    }
    case kSensFrameLinVel:
    case kSensFrameAngVel: {
      Frame<T> f;
      frame_of(m, d, objtype, obj, f);
      T v[6];
      object_velocity(m, d, f, false, v);
      if (ref >= 0) {
        Frame<T> r;
        frame_of(m, d, reftype, ref, r);
        T vr[6], rel[6], arm[3], c[3];
        object_velocity(m, d, r, false, vr);
        for (int k = 0; k < 6; ++k) rel[k] = v[k] - vr[k];
        for (int k = 0; k < 3; ++k) arm[k] = f.pos[k] - r.pos[k];
        cross3(c, arm, vr);
        for (int k = 0; k < 3; ++k) rel[3 + k] += c[k];
        mul_mat_t_vec3(v, r.mat, rel);
        mul_mat_t_vec3(v + 3, r.mat, rel + 3);
      }
      for (int k = 0; k < 3; ++k) out[k] = v[(type == kSensFrameAngVel ? 0 : 3) + k];
      break;
    }
    case kSensSubtreeLinVel:
      for (int k = 0; k < 3; ++k) out[k] = d.subtree_linvel[3 * obj + k];
      break;
    case kSensSubtreeAngMom:
      for (int k = 0; k < 3; ++k) out[k] = d.subtree_angmom[3 * obj + k];
      break;
    case kSensClock:
      out[0] = d.time[0];
      break;
    default:
      break;
  }
}

// Sensor s of the acceleration part: from mj_rnePostConstraint's cacc and cfrc_int.
template <class T, int Block>
MYRIAD_HD void acc_sensor(const ModelView<T>& m, const EnvData<T, Block>& d, int s, T* out) {
  const int type = m.sensor_type[s], obj = m.sensor_objid[s], objtype = m.sensor_objtype[s];
  switch (type) {
    case kSensAccelerometer:
    case kSensFrameLinAcc:
    case kSensFrameAngAcc: {
      Frame<T> f;
      frame_of(m, d, type == kSensAccelerometer ? int(kObjSite) : objtype, obj, f);
      T a[6];
      object_acceleration(m, d, f, type == kSensAccelerometer, a);
      for (int k = 0; k < 3; ++k) out[k] = a[(type == kSensFrameAngAcc ? 0 : 3) + k];
      break;
    }
    case kSensForce:
    case kSensTorque: {
      Frame<T> f;
      frame_of(m, d, kObjSite, obj, f);
      const int b = m.site_bodyid[obj];
      T w[6];
      transform_spatial(w, d.cfrc_int + 6 * b, true, f.pos, d.subtree_com + 3 * m.body_rootid[b],
                        f.mat);
      for (int k = 0; k < 3; ++k) out[k] = w[(type == kSensTorque ? 0 : 3) + k];
      break;
    }
    default:
      break;
  }
}

// Rangefinder s: along the site's z axis, every geom group, static geoms included, not the
// site's body.
template <class T, int Block>
MYRIAD_HD void rangefinder(const ModelView<T>& m, const EnvData<T, Block>& d, int s, T* out) {
  Frame<T> f;
  frame_of(m, d, kObjSite, m.sensor_objid[s], f);
  const T dir[3] = {f.mat[2], f.mat[5], f.mat[8]};
  ray::RayFilter filter;
  filter.exclude_body = f.body;
  out[0] = ray::scene(m, d.geom_xpos, d.geom_xmat, f.pos, dir, filter);
}

// Touch sensor s (touch() above).
template <class T, int Block>
MYRIAD_HD void touch_sensor(const ModelView<T>& m, const EnvData<T, Block>& d, int s, T* out) {
  Frame<T> f;
  frame_of(m, d, kObjSite, m.sensor_objid[s], f);
  out[0] = touch(m, d, f, m.sensor_objid[s]);
}

// MuJoCo's cutoff: real values clipped to [-cutoff, cutoff], positive ones to cutoff.
template <class T>
MYRIAD_HD void sensor_cutoff(const ModelView<T>& m, int s, T* out) {
  const T cutoff = m.sensor_cutoff[s];
  if (cutoff <= T(0)) return;
  for (int k = 0; k < m.sensor_dim[s]; ++k) {
    if (m.sensor_datatype[s] == kDataReal) {
      out[k] = out[k] < -cutoff ? -cutoff : out[k] > cutoff ? cutoff : out[k];
    } else if (m.sensor_datatype[s] == kDataPositive && out[k] > cutoff) {
      out[k] = cutoff;
    }
  }
}

}  // namespace sensor_detail

// Every sensor of the model, or one part of them: (forward's outputs) => sensordata. A no-op
// without sensors. Each sensor writes only its own values, so the parts may run in any order.
template <class T, SensorPart P = SensorPart::kAll, int Block>
MYRIAD_HD void sensors(const ModelView<T>& m, EnvData<T, Block>& d) {
  using namespace sensor_detail;
  if (m.nsensor == 0) return;
  constexpr bool kPlain = P == SensorPart::kAll || P == SensorPart::kPlain;
  constexpr bool kAcc = P == SensorPart::kAll || P == SensorPart::kAcc;
  constexpr bool kRangefinder = P == SensorPart::kAll || P == SensorPart::kRangefinder;
  constexpr bool kTouch = P == SensorPart::kAll || P == SensorPart::kTouch;
  bool need_rne_post = false, need_subtree = false;
  for (int s = 0; s < m.nsensor; ++s) {
    const int type = m.sensor_type[s];
    need_rne_post = need_rne_post || sensor_part(type) == SensorPart::kAcc;
    need_subtree = need_subtree || type == kSensSubtreeLinVel || type == kSensSubtreeAngMom;
  }
  if (kAcc && need_rne_post) rne_post_constraint(m, d);
  if (kPlain && need_subtree) subtree_velocity(m, d);
  for (int s = 0; s < m.nsensor; ++s) {
    const SensorPart part = sensor_part(m.sensor_type[s]);
    // A blocked batch's env: into buf, then copied (the supported sensors have at most 4 values).
    T buf[4];
    T* out = nullptr;
    if constexpr (Block == 1)
      out = d.sensordata + m.sensor_adr[s];
    else
      out = buf;
    if (kPlain && part == SensorPart::kPlain)
      plain_sensor(m, d, s, out);
    else if (kAcc && part == SensorPart::kAcc)
      acc_sensor(m, d, s, out);
    else if (kRangefinder && part == SensorPart::kRangefinder)
      rangefinder(m, d, s, out);
    else if (kTouch && part == SensorPart::kTouch)
      touch_sensor(m, d, s, out);
    else
      continue;
    sensor_cutoff(m, s, out);
    if constexpr (Block > 1)
      for (int k = 0; k < m.sensor_dim[s]; ++k) d.sensordata[m.sensor_adr[s] + k] = buf[k];
  }
}

}  // namespace myriad::physics
