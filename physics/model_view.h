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

// f(model array, view pointer) for every array of the model: the one list that view_of and the
// device mirror (physics/cuda_batch.cu) share.
template <class T, class F>
void for_each_array(const Model<T> &m, ModelView<T> &v, F &&f) {
  f(m.body_parentid, v.body_parentid);
  f(m.body_rootid, v.body_rootid);
  f(m.body_jntnum, v.body_jntnum);
  f(m.body_jntadr, v.body_jntadr);
  f(m.body_dofnum, v.body_dofnum);
  f(m.body_dofadr, v.body_dofadr);
  f(m.body_pos, v.body_pos);
  f(m.body_ipos, v.body_ipos);
  f(m.body_quat, v.body_quat);
  f(m.body_iquat, v.body_iquat);
  f(m.body_mass, v.body_mass);
  f(m.body_subtreemass, v.body_subtreemass);
  f(m.body_inertia, v.body_inertia);
  f(m.jnt_type, v.jnt_type);
  f(m.jnt_qposadr, v.jnt_qposadr);
  f(m.jnt_dofadr, v.jnt_dofadr);
  f(m.jnt_bodyid, v.jnt_bodyid);
  f(m.jnt_pos, v.jnt_pos);
  f(m.jnt_axis, v.jnt_axis);
  f(m.jnt_stiffness, v.jnt_stiffness);
  f(m.dof_bodyid, v.dof_bodyid);
  f(m.dof_jntid, v.dof_jntid);
  f(m.dof_parentid, v.dof_parentid);
  f(m.dof_armature, v.dof_armature);
  f(m.dof_damping, v.dof_damping);
  f(m.geom_bodyid, v.geom_bodyid);
  f(m.geom_pos, v.geom_pos);
  f(m.geom_quat, v.geom_quat);
  f(m.actuator_trnid, v.actuator_trnid);
  f(m.actuator_gaintype, v.actuator_gaintype);
  f(m.actuator_biastype, v.actuator_biastype);
  f(m.actuator_ctrllimited, v.actuator_ctrllimited);
  f(m.actuator_forcelimited, v.actuator_forcelimited);
  f(m.actuator_gear, v.actuator_gear);
  f(m.actuator_ctrlrange, v.actuator_ctrlrange);
  f(m.actuator_forcerange, v.actuator_forcerange);
  f(m.actuator_gainprm, v.actuator_gainprm);
  f(m.actuator_biasprm, v.actuator_biasprm);
  f(m.qpos0, v.qpos0);
  f(m.qpos_spring, v.qpos_spring);
}

// The scalars of the view, with host pointers to the model's arrays.
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
  for_each_array(m, v, [](const auto &array, auto &pointer) { pointer = array.data(); });
  return v;
}

}  // namespace myriad::physics
