// ModelView: raw pointers into a Model's arrays, what the per-env kernels read.
#pragma once

#include <cstdint>

#include "myriad/physics/model.h"

namespace myriad::physics {

template <class T>
struct ModelView {
  int32_t nq, nv, nbody, njnt, ngeom, nu;
  T timestep;
  T gravity[3];
  int32_t integrator;
  bool gravity_enabled, passive_enabled, actuation_enabled, clamp_ctrl, any_damping;
  const int32_t *body_parentid, *body_rootid, *body_jntnum, *body_jntadr, *body_dofnum,
      *body_dofadr;
  const T *body_pos, *body_ipos, *body_quat, *body_iquat, *body_mass, *body_subtreemass,
      *body_inertia;
  const int32_t *jnt_type, *jnt_qposadr, *jnt_dofadr, *jnt_bodyid;
  const T *jnt_pos, *jnt_axis, *jnt_stiffness;
  const int32_t *dof_bodyid, *dof_jntid, *dof_parentid;
  const T *dof_armature, *dof_damping;
  const int32_t *geom_bodyid;
  const T *geom_pos, *geom_quat;
  const int32_t *actuator_trnid, *actuator_gaintype, *actuator_biastype;
  const uint8_t *actuator_ctrllimited, *actuator_forcelimited;
  const T *actuator_gear, *actuator_ctrlrange, *actuator_forcerange, *actuator_gainprm,
      *actuator_biasprm;
  const T *qpos0, *qpos_spring;
};

template <class T>
ModelView<T> view_of(const Model<T> &m) {
  ModelView<T> v{};
  v.nq = m.nq, v.nv = m.nv, v.nbody = m.nbody, v.njnt = m.njnt, v.ngeom = m.ngeom, v.nu = m.nu;
  v.timestep = m.timestep;
  for (int k = 0; k < 3; ++k) v.gravity[k] = m.gravity[k];
  v.integrator = m.integrator;
  v.gravity_enabled = m.gravity_enabled;
  v.passive_enabled = m.passive_enabled;
  v.actuation_enabled = m.actuation_enabled;
  v.clamp_ctrl = m.clamp_ctrl;
  v.any_damping = false;
  for (T b : m.dof_damping) v.any_damping = v.any_damping || b > 0;
  v.body_parentid = m.body_parentid.data();
  v.body_rootid = m.body_rootid.data();
  v.body_jntnum = m.body_jntnum.data();
  v.body_jntadr = m.body_jntadr.data();
  v.body_dofnum = m.body_dofnum.data();
  v.body_dofadr = m.body_dofadr.data();
  v.body_pos = m.body_pos.data();
  v.body_ipos = m.body_ipos.data();
  v.body_quat = m.body_quat.data();
  v.body_iquat = m.body_iquat.data();
  v.body_mass = m.body_mass.data();
  v.body_subtreemass = m.body_subtreemass.data();
  v.body_inertia = m.body_inertia.data();
  v.jnt_type = m.jnt_type.data();
  v.jnt_qposadr = m.jnt_qposadr.data();
  v.jnt_dofadr = m.jnt_dofadr.data();
  v.jnt_bodyid = m.jnt_bodyid.data();
  v.jnt_pos = m.jnt_pos.data();
  v.jnt_axis = m.jnt_axis.data();
  v.jnt_stiffness = m.jnt_stiffness.data();
  v.dof_bodyid = m.dof_bodyid.data();
  v.dof_jntid = m.dof_jntid.data();
  v.dof_parentid = m.dof_parentid.data();
  v.dof_armature = m.dof_armature.data();
  v.dof_damping = m.dof_damping.data();
  v.geom_bodyid = m.geom_bodyid.data();
  v.geom_pos = m.geom_pos.data();
  v.geom_quat = m.geom_quat.data();
  v.actuator_trnid = m.actuator_trnid.data();
  v.actuator_gaintype = m.actuator_gaintype.data();
  v.actuator_biastype = m.actuator_biastype.data();
  v.actuator_ctrllimited = m.actuator_ctrllimited.data();
  v.actuator_forcelimited = m.actuator_forcelimited.data();
  v.actuator_gear = m.actuator_gear.data();
  v.actuator_ctrlrange = m.actuator_ctrlrange.data();
  v.actuator_forcerange = m.actuator_forcerange.data();
  v.actuator_gainprm = m.actuator_gainprm.data();
  v.actuator_biasprm = m.actuator_biasprm.data();
  v.qpos0 = m.qpos0.data();
  v.qpos_spring = m.qpos_spring.data();
  return v;
}

}  // namespace myriad::physics
