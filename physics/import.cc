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
  // The plain copies (from copy or opt in myriad/physics/model_fields.h), sizes first.
#define MYRIAD_IMPORT_copy(name) r.name = m->name;
#define MYRIAD_IMPORT_opt(name) r.name = m->opt.name;
#define MYRIAD_IMPORT_custom(name)
#define MYRIAD_X(name, init, from) MYRIAD_IMPORT_##from(name)
  MYRIAD_MODEL_INT_SCALARS(MYRIAD_X)
  MYRIAD_MODEL_FLAGS(MYRIAD_X)
  MYRIAD_MODEL_REAL_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#undef MYRIAD_IMPORT_copy
#undef MYRIAD_IMPORT_opt
#undef MYRIAD_IMPORT_custom
#define MYRIAD_IMPORT_copy(name, length) \
  for (int k = 0; k < (length); ++k) r.name[k] = m->name[k];
#define MYRIAD_IMPORT_opt(name, length) \
  for (int k = 0; k < (length); ++k) r.name[k] = m->opt.name[k];
#define MYRIAD_IMPORT_custom(name, length)
#define MYRIAD_X(name, length, from) MYRIAD_IMPORT_##from(name, length)
  MYRIAD_MODEL_REAL_VECTORS(MYRIAD_X)
#undef MYRIAD_X
#undef MYRIAD_IMPORT_copy
#undef MYRIAD_IMPORT_opt
#undef MYRIAD_IMPORT_custom
#define MYRIAD_IMPORT_copy(name, size) r.name.assign(m->name, m->name + (size));
#define MYRIAD_IMPORT_custom(name, size)
#define MYRIAD_X(name, rows, cols, from) MYRIAD_IMPORT_##from(name, int64_t{r.rows} * (cols))
  MYRIAD_MODEL_INT_ARRAYS(MYRIAD_X)
  MYRIAD_MODEL_REAL_ARRAYS(MYRIAD_X)
  MYRIAD_MODEL_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#undef MYRIAD_IMPORT_copy
#undef MYRIAD_IMPORT_custom
#define MYRIAD_X(name, rows, adr) \
  for (int i = 0; i < r.rows; ++i) r.name.push_back(name_of(m, m->adr[i]));
  MYRIAD_MODEL_NAMES(MYRIAD_X)
#undef MYRIAD_X

  // The custom fields.
  r.integrator = m->opt.integrator == mjINT_RK4 ? kRK4 : kEuler;
  r.gravity_enabled = !(flags & mjDSBL_GRAVITY);
  r.passive_enabled = !(flags & mjDSBL_PASSIVE);
  r.actuation_enabled = !(flags & mjDSBL_ACTUATION);
  r.clamp_ctrl = !(flags & mjDSBL_CLAMPCTRL);
  for (int u = 0; u < m->nu; ++u) {
    r.actuator_trnid.push_back(m->actuator_trnid[2 * u]);
    r.actuator_gaintype.push_back(m->actuator_gaintype[u] == mjGAIN_FIXED ? kGainFixed
                                                                          : kGainAffine);
    r.actuator_biastype.push_back(m->actuator_biastype[u] == mjBIAS_NONE ? kBiasNone : kBiasAffine);
    r.actuator_gear.push_back(m->actuator_gear[6 * u]);
    for (int k = 0; k < 3; ++k) {
      r.actuator_gainprm.push_back(m->actuator_gainprm[mjNGAIN * u + k]);
      r.actuator_biasprm.push_back(m->actuator_biasprm[mjNBIAS * u + k]);
    }
  }
  return r;
}

}  // namespace myriad::physics
