// physics::Model: an immutable, struct-of-arrays copy of the parts of an mjModel that the
// supported smooth dynamics use, in scalar T (double for validation, float for speed). Names
// and shapes follow mjmodel.h so the two can be read side by side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace myriad::physics {

enum JointType : int32_t { kFree = 0, kBall = 1, kSlide = 2, kHinge = 3 };
enum Integrator : int32_t { kEuler = 0, kRK4 = 1 };
enum GainType : int32_t { kGainFixed = 0, kGainAffine = 1 };
enum BiasType : int32_t { kBiasNone = 0, kBiasAffine = 1 };

template <class T>
struct Model {
  int32_t nq = 0, nv = 0, nbody = 0, njnt = 0, ngeom = 0, nu = 0;
  T timestep = 0;
  T gravity[3] = {0, 0, 0};
  int32_t integrator = kEuler;
  bool gravity_enabled = true, passive_enabled = true, actuation_enabled = true;
  bool clamp_ctrl = true;

  // bodies
  std::vector<int32_t> body_parentid, body_rootid, body_jntnum, body_jntadr, body_dofnum,
      body_dofadr;                             // [nbody]
  std::vector<T> body_pos, body_ipos;          // [nbody, 3]
  std::vector<T> body_quat, body_iquat;        // [nbody, 4]
  std::vector<T> body_mass, body_subtreemass;  // [nbody]
  std::vector<T> body_inertia;                 // [nbody, 3] principal
  // joints
  std::vector<int32_t> jnt_type, jnt_qposadr, jnt_dofadr, jnt_bodyid;  // [njnt]
  std::vector<T> jnt_pos, jnt_axis;                                    // [njnt, 3]
  std::vector<T> jnt_stiffness;                                        // [njnt]
  // dofs
  std::vector<int32_t> dof_bodyid, dof_jntid, dof_parentid;  // [nv]
  std::vector<T> dof_armature, dof_damping;                  // [nv]
  // geoms (for kinematics and drawing)
  std::vector<int32_t> geom_type, geom_bodyid;  // [ngeom]
  std::vector<T> geom_pos, geom_size;           // [ngeom, 3]
  std::vector<T> geom_quat;                     // [ngeom, 4]
  std::vector<T> geom_rgba;                     // [ngeom, 4]
  // actuators (joint transmission on hinge/slide, no dynamics)
  std::vector<int32_t> actuator_trnid, actuator_gaintype, actuator_biastype;  // [nu]
  std::vector<uint8_t> actuator_ctrllimited, actuator_forcelimited;           // [nu]
  std::vector<T> actuator_gear;                                               // [nu]
  std::vector<T> actuator_ctrlrange, actuator_forcerange;                     // [nu, 2]
  std::vector<T> actuator_gainprm, actuator_biasprm;                          // [nu, 3]
  // state defaults
  std::vector<T> qpos0, qpos_spring;  // [nq]

  std::vector<std::string> body_names, joint_names, actuator_names;

  template <class U>
  Model<U> cast() const;
};

}  // namespace myriad::physics
