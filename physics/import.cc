#include "myriad/physics/import.h"

#include <mujoco/mujoco.h>

#include <cstdint>
#include <stdexcept>

#include "myriad/physics/mujoco_messages.h"

namespace myriad::physics {
namespace {

std::string name_of(const mjModel* m, int adr) {
  const char* s = m->names + adr;
  return *s ? std::string(s) : std::string("<unnamed>");
}

[[noreturn]] void refuse(const std::string& what) {
  throw std::invalid_argument("unsupported model feature: " + what);
}

template <class T>
std::vector<T> copy(const T* p, int64_t n) {
  return std::vector<T>(p, p + n);
}

std::vector<double> copy_d(const mjtNum* p, int64_t n) { return std::vector<double>(p, p + n); }

}  // namespace

MjModelHandle::MjModelHandle(const std::string& path) {
  route_mujoco_messages();  // before libmujoco's first call: no MUJOCO_LOG.TXT, no exit()
  char error[1000] = "";
  m_ = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  if (!m_) throw std::invalid_argument("cannot load MJCF '" + path + "': " + error);
}

MjModelHandle::~MjModelHandle() {
  if (m_) mj_deleteModel(m_);
}

Model<double> load_mjcf(const std::string& path) {
  MjModelHandle handle(path);
  try {
    return import_model(handle.get());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("'" + path + "': " + e.what());
  }
}

Model<double> import_model(const mjModel* m) {
  const int flags = m->opt.disableflags;
  const bool constraints_off = flags & mjDSBL_CONSTRAINT;
  // Features of later physics issues (collision, limits, solver) and ones not supported yet.
  if (m->ntendon > 0) refuse("tendons (tendon '" + name_of(m, m->name_tendonadr[0]) + "')");
  if (m->neq > 0 && !constraints_off && !(flags & mjDSBL_EQUALITY))
    refuse("equality constraints (" + std::to_string(m->neq) + " in the model)");
  if (m->nmocap > 0) refuse("mocap bodies");
  if (m->opt.integrator == mjINT_IMPLICIT) refuse("the implicit integrator (use Euler or RK4)");
  if (m->opt.density > 0 || m->opt.viscosity > 0) refuse("fluid forces (density/viscosity)");
  if (m->na > 0) refuse("actuator activation states (na > 0)");
  if (m->nv > 64) refuse("more than 64 degrees of freedom (nv = " + std::to_string(m->nv) + ")");
  const bool contacts_off = constraints_off || (flags & mjDSBL_CONTACT);
  if (!contacts_off && m->ngeom > 0) {
    // Collisions are possible unless every geom has contype = conaffinity = 0.
    for (int g = 0; g < m->ngeom; ++g)
      if (m->geom_contype[g] || m->geom_conaffinity[g])
        refuse("contacts (geom '" + name_of(m, m->name_geomadr[g]) +
               "' can collide; disable contacts with <flag contact=\"disable\"/>)");
  }
  for (int j = 0; j < m->njnt; ++j) {
    const std::string joint = "joint '" + name_of(m, m->name_jntadr[j]) + "'";
    if (m->jnt_limited[j] && !constraints_off && !(flags & mjDSBL_LIMIT))
      refuse("joint limits (" + joint + " is limited)");
  }
  for (int i = 0; i < m->nv; ++i)
    if (m->dof_frictionloss[i] > 0 && !constraints_off && !(flags & mjDSBL_FRICTIONLOSS))
      refuse("dof friction loss (joint '" + name_of(m, m->name_jntadr[m->dof_jntid[i]]) + "')");
  for (int i = 1; i < m->nbody; ++i)
    if (m->body_jntnum[i] > 1)
      for (int k = 0; k < m->body_jntnum[i]; ++k)
        if (m->jnt_type[m->body_jntadr[i] + k] == mjJNT_FREE)
          refuse("a free joint sharing body '" + name_of(m, m->name_bodyadr[i]) +
                 "' with other joints");
  for (int u = 0; u < m->nu; ++u) {
    const std::string act = "actuator '" + name_of(m, m->name_actuatoradr[u]) + "'";
    if (m->actuator_trntype[u] != mjTRN_JOINT) refuse("non-joint transmission (" + act + ")");
    const int jt = m->jnt_type[m->actuator_trnid[2 * u]];
    if (jt != mjJNT_HINGE && jt != mjJNT_SLIDE)
      refuse("joint transmission on a ball or free joint (" + act + ")");
    if (m->actuator_dyntype[u] != mjDYN_NONE) refuse("activation dynamics (" + act + ")");
    if (m->actuator_gaintype[u] != mjGAIN_FIXED && m->actuator_gaintype[u] != mjGAIN_AFFINE)
      refuse("gain type other than fixed/affine (" + act + ")");
    if (m->actuator_biastype[u] != mjBIAS_NONE && m->actuator_biastype[u] != mjBIAS_AFFINE)
      refuse("bias type other than none/affine (" + act + ")");
  }

  Model<double> r;
  r.nq = m->nq, r.nv = m->nv, r.nbody = m->nbody, r.njnt = m->njnt, r.ngeom = m->ngeom;
  r.nu = m->nu;
  r.timestep = m->opt.timestep;
  for (int k = 0; k < 3; ++k) r.gravity[k] = m->opt.gravity[k];
  r.integrator = m->opt.integrator == mjINT_RK4 ? kRK4 : kEuler;
  r.gravity_enabled = !(flags & mjDSBL_GRAVITY);
  r.passive_enabled = !(flags & mjDSBL_PASSIVE);
  r.actuation_enabled = !(flags & mjDSBL_ACTUATION);
  r.clamp_ctrl = !(flags & mjDSBL_CLAMPCTRL);
  const int nb = m->nbody, nj = m->njnt, nv = m->nv, ng = m->ngeom, nu = m->nu;
  r.body_parentid = copy(m->body_parentid, nb);
  r.body_rootid = copy(m->body_rootid, nb);
  r.body_jntnum = copy(m->body_jntnum, nb);
  r.body_jntadr = copy(m->body_jntadr, nb);
  r.body_dofnum = copy(m->body_dofnum, nb);
  r.body_dofadr = copy(m->body_dofadr, nb);
  r.body_pos = copy_d(m->body_pos, 3 * nb);
  r.body_ipos = copy_d(m->body_ipos, 3 * nb);
  r.body_quat = copy_d(m->body_quat, 4 * nb);
  r.body_iquat = copy_d(m->body_iquat, 4 * nb);
  r.body_mass = copy_d(m->body_mass, nb);
  r.body_subtreemass = copy_d(m->body_subtreemass, nb);
  r.body_inertia = copy_d(m->body_inertia, 3 * nb);
  r.jnt_type = copy(m->jnt_type, nj);
  r.jnt_qposadr = copy(m->jnt_qposadr, nj);
  r.jnt_dofadr = copy(m->jnt_dofadr, nj);
  r.jnt_bodyid = copy(m->jnt_bodyid, nj);
  r.jnt_pos = copy_d(m->jnt_pos, 3 * nj);
  r.jnt_axis = copy_d(m->jnt_axis, 3 * nj);
  r.jnt_stiffness = copy_d(m->jnt_stiffness, nj);
  r.dof_bodyid = copy(m->dof_bodyid, nv);
  r.dof_jntid = copy(m->dof_jntid, nv);
  r.dof_parentid = copy(m->dof_parentid, nv);
  r.dof_armature = copy_d(m->dof_armature, nv);
  r.dof_damping = copy_d(m->dof_damping, nv);
  r.geom_type = copy(m->geom_type, ng);
  r.geom_bodyid = copy(m->geom_bodyid, ng);
  r.geom_pos = copy_d(m->geom_pos, 3 * ng);
  r.geom_size = copy_d(m->geom_size, 3 * ng);
  r.geom_quat = copy_d(m->geom_quat, 4 * ng);
  r.geom_rgba.assign(m->geom_rgba, m->geom_rgba + 4 * ng);
  for (int u = 0; u < nu; ++u) {
    r.actuator_trnid.push_back(m->actuator_trnid[2 * u]);
    r.actuator_gaintype.push_back(m->actuator_gaintype[u] == mjGAIN_FIXED ? kGainFixed
                                                                          : kGainAffine);
    r.actuator_biastype.push_back(m->actuator_biastype[u] == mjBIAS_NONE ? kBiasNone : kBiasAffine);
    r.actuator_ctrllimited.push_back(m->actuator_ctrllimited[u]);
    r.actuator_forcelimited.push_back(m->actuator_forcelimited[u]);
    r.actuator_gear.push_back(m->actuator_gear[6 * u]);
    for (int k = 0; k < 2; ++k) {
      r.actuator_ctrlrange.push_back(m->actuator_ctrlrange[2 * u + k]);
      r.actuator_forcerange.push_back(m->actuator_forcerange[2 * u + k]);
    }
    for (int k = 0; k < 3; ++k) {
      r.actuator_gainprm.push_back(m->actuator_gainprm[mjNGAIN * u + k]);
      r.actuator_biasprm.push_back(m->actuator_biasprm[mjNBIAS * u + k]);
    }
  }
  r.qpos0 = copy_d(m->qpos0, m->nq);
  r.qpos_spring = copy_d(m->qpos_spring, m->nq);
  for (int i = 0; i < nb; ++i) r.body_names.push_back(name_of(m, m->name_bodyadr[i]));
  for (int j = 0; j < nj; ++j) r.joint_names.push_back(name_of(m, m->name_jntadr[j]));
  for (int u = 0; u < nu; ++u) r.actuator_names.push_back(name_of(m, m->name_actuatoradr[u]));
  return r;
}

}  // namespace myriad::physics
