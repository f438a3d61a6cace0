// MuJoCo's mj_setConst for the fields a per-env parameter changes (physics/env_params.h): the
// subtree masses, the inverse weights at qpos0 that scale the constraint rows' regularizer
// (dof_invweight0, body_invweight0, tendon_invweight0) and the solver's scale (meaninertia).
// MuJoCo computes them when it compiles a model; a task that randomizes masses, centres of mass,
// inertias or armature per env recomputes them per env, as mjlab does (set_const) after such an
// event.
#pragma once

#include "myriad/physics/data.h"
#include "myriad/physics/model.h"
#include "physics/model_view.h"

namespace myriad::physics {

// Where set_const writes: body_subtreemass [nbody], dof_invweight0 [nv], body_invweight0
// [nbody, 2], tendon_invweight0 [ntendon], meaninertia [1].
struct DerivedConstants {
  double* body_subtreemass;
  double* dof_invweight0;
  double* body_invweight0;
  double* tendon_invweight0;
  double* meaninertia;
};

// (m's masses, inertias, centres of mass, armature at qpos0) => out. scratch: one env's data of
// `shape`, a model with m's sizes (the view's own arrays may point elsewhere).
//   body_subtreemass:  mass of the body and its descendants
//   body_invweight0:   mean diagonal of J M^-1 J' over the translational and the rotational rows
//                      of the body's Jacobian at its centre of mass (0 for bodies welded to the
//                      world)
//   dof_invweight0:    diagonal of M^-1 (a free joint's means over its translations and its
//                      rotations, a ball joint's mean)
//   tendon_invweight0: J M^-1 J' of the tendon's Jacobian
//   meaninertia:       trace(M) / nv (m->stat.meaninertia, the solver's scale; 1 without dofs)
// MuJoCo's shortcut for "simple" bodies (1/mass) is not taken: the full expression is the same
// quantity (without armature).
void set_const(const ModelView<double>& m, const Model<double>& shape, Data<double>& scratch,
               const DerivedConstants& out);

// The same, in place: m's derived fields recomputed from its own values.
void set_const(Model<double>& m);

}  // namespace myriad::physics
