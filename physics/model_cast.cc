// Model<double> -> Model<U>: every array converted, integer arrays copied.
#include "myriad/physics/model.h"

namespace myriad::physics {
namespace {

template <class U, class T>
std::vector<U> conv(const std::vector<T>& v) {
  return std::vector<U>(v.begin(), v.end());
}

}  // namespace

template <class T>
template <class U>
Model<U> Model<T>::cast() const {
  Model<U> r;
  r.nq = nq, r.nv = nv, r.nbody = nbody, r.njnt = njnt, r.ngeom = ngeom, r.nu = nu;
  r.timestep = static_cast<U>(timestep);
  for (int k = 0; k < 3; ++k) r.gravity[k] = static_cast<U>(gravity[k]);
  r.integrator = integrator;
  r.gravity_enabled = gravity_enabled, r.passive_enabled = passive_enabled;
  r.actuation_enabled = actuation_enabled, r.clamp_ctrl = clamp_ctrl;
  r.body_parentid = body_parentid, r.body_rootid = body_rootid, r.body_jntnum = body_jntnum;
  r.body_jntadr = body_jntadr, r.body_dofnum = body_dofnum, r.body_dofadr = body_dofadr;
  r.body_pos = conv<U>(body_pos), r.body_ipos = conv<U>(body_ipos);
  r.body_quat = conv<U>(body_quat), r.body_iquat = conv<U>(body_iquat);
  r.body_mass = conv<U>(body_mass), r.body_subtreemass = conv<U>(body_subtreemass);
  r.body_inertia = conv<U>(body_inertia);
  r.jnt_type = jnt_type, r.jnt_qposadr = jnt_qposadr, r.jnt_dofadr = jnt_dofadr;
  r.jnt_bodyid = jnt_bodyid;
  r.jnt_pos = conv<U>(jnt_pos), r.jnt_axis = conv<U>(jnt_axis);
  r.jnt_stiffness = conv<U>(jnt_stiffness);
  r.dof_bodyid = dof_bodyid, r.dof_jntid = dof_jntid, r.dof_parentid = dof_parentid;
  r.dof_armature = conv<U>(dof_armature), r.dof_damping = conv<U>(dof_damping);
  r.geom_type = geom_type, r.geom_bodyid = geom_bodyid;
  r.geom_pos = conv<U>(geom_pos), r.geom_size = conv<U>(geom_size);
  r.geom_quat = conv<U>(geom_quat), r.geom_rgba = conv<U>(geom_rgba);
  r.actuator_trnid = actuator_trnid, r.actuator_gaintype = actuator_gaintype;
  r.actuator_biastype = actuator_biastype, r.actuator_ctrllimited = actuator_ctrllimited;
  r.actuator_forcelimited = actuator_forcelimited;
  r.actuator_gear = conv<U>(actuator_gear), r.actuator_ctrlrange = conv<U>(actuator_ctrlrange);
  r.actuator_forcerange = conv<U>(actuator_forcerange);
  r.actuator_gainprm = conv<U>(actuator_gainprm), r.actuator_biasprm = conv<U>(actuator_biasprm);
  r.qpos0 = conv<U>(qpos0), r.qpos_spring = conv<U>(qpos_spring);
  r.body_names = body_names, r.joint_names = joint_names, r.actuator_names = actuator_names;
  return r;
}

template Model<float> Model<double>::cast<float>() const;
template Model<double> Model<double>::cast<double>() const;

}  // namespace myriad::physics
