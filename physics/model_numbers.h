// The numbers of a compiled mjModel that Myriad checks before any model is used: one table of
// (mjModel array, element kind, MJCF attribute, rule), declared once below in the manner of
// MuJoCo's mjxmacro.h. check_model_numbers (physics/model_numbers.cc) walks it; the tests
// mutate every row of it. libmujoco 2.2.2 compiles "nan", "inf" and 1e308 wherever MJCF takes a
// number, and only warns once the simulation has diverged; this refuses them at load.
//
// The bounds (also in include/myriad/physics/import.h; every message states its rule's):
//   length       |x| <= 1e6 m (positions, margins, joint and tendon ranges and references)
//   size         0 <= x <= 1e6 m (geom and site sizes)
//   unit         |x| <= 1 (compiled orientations and axes are unit: only NaN/inf fail here)
//   mass         0 <= x <= 1e9 kg
//   inertia      0 <= x <= 1e15 kg m^2 (body inertias; armature, kg m^2 or kg)
//   coefficient  0 <= x <= 1e9 (damping, stiffness, friction, frictionloss, densities, ...)
//   parameter    |x| <= 1e9 (gear, gains, biases, control and force ranges, solref, solimp)
//   acceleration |x| <= 1e4 m/s^2 (gravity: about 1000 g)
//   timestep     1e-6 <= x <= 1 s (a smaller step makes no progress and divides rewards
//                by ~0: x velocity = dx / dt)
#pragma once

#include <mujoco/mujoco.h>

#include <string>

namespace myriad::physics {

// What an array's rows are: the MJCF element a message names.
enum class NumberElement {
  kOption,
  kBody,
  kJoint,
  kDof,
  kQpos,
  kGeom,
  kSite,
  kPair,
  kEquality,
  kTendon,
  kActuator
};
// The rules of the list above; their bounds live once, in model_numbers.cc (kRules).
enum class NumberRule {
  kLength,
  kSize,
  kUnit,
  kMass,
  kInertia,
  kCoefficient,
  kParameter,
  kAcceleration,
  kTimestep
};

// X(mjModel array, rows, values per row, element, MJCF attribute, rule). The first refused value
// is the one named, so causes come before what the compiler derives from them: geom sizes before
// the body masses and inertias they give, a body's mass before its inertial frame, bodies before
// qpos0 (a free joint's is its body's pos and quat).
#define MYRIAD_MODEL_NUMBERS(X)                                                         \
  X(geom_size, ngeom, 3, kGeom, "size", kSize)                                          \
  X(geom_pos, ngeom, 3, kGeom, "pos", kLength)                                          \
  X(geom_quat, ngeom, 4, kGeom, "quat (orientation)", kUnit)                            \
  X(geom_friction, ngeom, 3, kGeom, "friction", kCoefficient)                           \
  X(geom_margin, ngeom, 1, kGeom, "margin", kLength)                                    \
  X(geom_gap, ngeom, 1, kGeom, "gap", kLength)                                          \
  X(geom_solmix, ngeom, 1, kGeom, "solmix", kCoefficient)                               \
  X(geom_solref, ngeom, mjNREF, kGeom, "solref", kParameter)                            \
  X(geom_solimp, ngeom, mjNIMP, kGeom, "solimp", kParameter)                            \
  X(site_size, nsite, 3, kSite, "size", kSize)                                          \
  X(site_pos, nsite, 3, kSite, "pos", kLength)                                          \
  X(site_quat, nsite, 4, kSite, "quat (orientation)", kUnit)                            \
  X(body_mass, nbody, 1, kBody, "mass (its inertial's or its geoms')", kMass)           \
  X(body_inertia, nbody, 3, kBody, "inertia", kInertia)                                 \
  X(body_pos, nbody, 3, kBody, "pos", kLength)                                          \
  X(body_quat, nbody, 4, kBody, "quat (orientation)", kUnit)                            \
  X(body_ipos, nbody, 3, kBody, "inertial pos", kLength)                                \
  X(body_iquat, nbody, 4, kBody, "inertial quat", kUnit)                                \
  X(jnt_pos, njnt, 3, kJoint, "pos", kLength)                                           \
  X(jnt_axis, njnt, 3, kJoint, "axis", kUnit)                                           \
  X(jnt_stiffness, njnt, 1, kJoint, "stiffness", kCoefficient)                          \
  X(jnt_range, njnt, 2, kJoint, "range", kLength)                                       \
  X(jnt_margin, njnt, 1, kJoint, "margin", kLength)                                     \
  X(jnt_solref, njnt, mjNREF, kJoint, "solreflimit", kParameter)                        \
  X(jnt_solimp, njnt, mjNIMP, kJoint, "solimplimit", kParameter)                        \
  X(dof_armature, nv, 1, kDof, "armature", kInertia)                                    \
  X(dof_damping, nv, 1, kDof, "damping", kCoefficient)                                  \
  X(dof_frictionloss, nv, 1, kDof, "frictionloss", kCoefficient)                        \
  X(dof_solref, nv, mjNREF, kDof, "solreffriction", kParameter)                         \
  X(dof_solimp, nv, mjNIMP, kDof, "solimpfriction", kParameter)                         \
  X(qpos0, nq, 1, kQpos, "ref (qpos0)", kLength)                                        \
  X(qpos_spring, nq, 1, kQpos, "springref", kLength)                                    \
  X(pair_solref, npair, mjNREF, kPair, "solref", kParameter)                            \
  X(pair_solimp, npair, mjNIMP, kPair, "solimp", kParameter)                            \
  X(pair_margin, npair, 1, kPair, "margin", kLength)                                    \
  X(pair_gap, npair, 1, kPair, "gap", kLength)                                          \
  X(pair_friction, npair, 5, kPair, "friction", kCoefficient)                           \
  X(eq_solref, neq, mjNREF, kEquality, "solref", kParameter)                            \
  X(eq_solimp, neq, mjNIMP, kEquality, "solimp", kParameter)                            \
  X(eq_data, neq, mjNEQDATA, kEquality, "data (anchor, relpose, polycoef)", kParameter) \
  X(tendon_range, ntendon, 2, kTendon, "range", kLength)                                \
  X(tendon_margin, ntendon, 1, kTendon, "margin", kLength)                              \
  X(tendon_stiffness, ntendon, 1, kTendon, "stiffness", kCoefficient)                   \
  X(tendon_damping, ntendon, 1, kTendon, "damping", kCoefficient)                       \
  X(tendon_frictionloss, ntendon, 1, kTendon, "frictionloss", kCoefficient)             \
  X(tendon_lengthspring, ntendon, 1, kTendon, "springlength", kLength)                  \
  X(tendon_solref_lim, ntendon, mjNREF, kTendon, "solreflimit", kParameter)             \
  X(tendon_solimp_lim, ntendon, mjNIMP, kTendon, "solimplimit", kParameter)             \
  X(tendon_solref_fri, ntendon, mjNREF, kTendon, "solreffriction", kParameter)          \
  X(tendon_solimp_fri, ntendon, mjNIMP, kTendon, "solimpfriction", kParameter)          \
  X(actuator_gear, nu, 6, kActuator, "gear", kParameter)                                \
  X(actuator_ctrlrange, nu, 2, kActuator, "ctrlrange", kParameter)                      \
  X(actuator_forcerange, nu, 2, kActuator, "forcerange", kParameter)                    \
  X(actuator_actrange, nu, 2, kActuator, "actrange", kParameter)                        \
  X(actuator_gainprm, nu, mjNGAIN, kActuator, "gainprm (kp, ...)", kParameter)          \
  X(actuator_biasprm, nu, mjNBIAS, kActuator, "biasprm (kp, kv, ...)", kParameter)      \
  X(actuator_dynprm, nu, mjNDYN, kActuator, "dynprm", kParameter)                       \
  X(actuator_cranklength, nu, 1, kActuator, "cranklength", kLength)

// The convex-collision tolerance (mpr_tolerance before MuJoCo 3.0).
#define MYRIAD_OPTION_CCD_TOLERANCE(X) X(ccd_tolerance, 1, "ccd_tolerance", kCoefficient)

// X(mjOption field, values, MJCF attribute of <option>, rule).
#define MYRIAD_OPTION_NUMBERS(X)                           \
  X(timestep, 1, "timestep", kTimestep)                    \
  X(gravity, 3, "gravity", kAcceleration)                  \
  X(wind, 3, "wind", kParameter)                           \
  X(magnetic, 3, "magnetic", kParameter)                   \
  X(density, 1, "density", kCoefficient)                   \
  X(viscosity, 1, "viscosity", kCoefficient)               \
  X(impratio, 1, "impratio", kCoefficient)                 \
  X(tolerance, 1, "tolerance", kCoefficient)               \
  X(noslip_tolerance, 1, "noslip_tolerance", kCoefficient) \
  MYRIAD_OPTION_CCD_TOLERANCE(X)                           \
  X(o_margin, 1, "o_margin", kLength)                      \
  X(o_solref, mjNREF, "o_solref", kParameter)              \
  X(o_solimp, mjNIMP, "o_solimp", kParameter)

// One row of the two tables above, for code that walks them (the check, the tests).
struct NumberField {
  const char* array;      // "body_pos", or "opt.timestep"
  NumberElement element;  // kOption for the option table
  const char* attribute;  // the MJCF attribute, as a message names it
  NumberRule rule;
  int width;                    // values per element
  int (*rows)(const mjModel*);  // elements (1 for the options)
  mjtNum* (*values)(mjModel*);  // the array (row-major, rows x width)
};

// Every row of MYRIAD_MODEL_NUMBERS then MYRIAD_OPTION_NUMBERS, in order.
const NumberField* number_fields(int* count);

// The bound a rule names in a message, e.g. "lengths are within +-1e6 m".
const char* number_rule_text(NumberRule rule);

// libmujoco 2.2.2 reads some attributes holding a NaN as absent (its default, e.g. a body at
// the origin) with only the warning "XML contains a 'NaN'": no compiled array shows it. This
// finds, in MJCF text, the first attribute whose value is all numbers with a NaN or an infinity
// among them, e.g. `body 'ball' (line 5): pos = "nan 0 1" is not finite`; "" if none.
std::string first_nonfinite_attribute(const std::string& xml);

}  // namespace myriad::physics
