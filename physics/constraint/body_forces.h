// Constraint forces per body as libmujoco's mj_rnePostConstraint leaves them in cfrc_ext: each
// active contact's force and torque (torsional and rolling friction, condim 4 and 6), decoded
// from its rows' forces (mj_contactForce), in world orientation as (torque, force) about the
// subtree center of mass of the body's root, subtracted
// from body 1 and added to body 2 (the world body gets nothing). Gymnasium's Ant and Humanoid
// observe it. MYRIAD_HD; templated on the scalar.
#pragma once

#include "physics/constraint/make.h"

namespace myriad::physics::constraint {

// mj_contactForce: (efc_force of the contact's rows) => out [6]: (normal, tangent 1, tangent 2)
// force and (torsional, rolling 1, rolling 2) torque in the contact frame; what the contact's
// condim lacks is 0. The pyramid's normal force is the sum of its edge forces and component k
// is mu_k (f(2k-2) - f(2k-1)); the elliptic cone's rows are the components.
template <class T>
MYRIAD_HD void contact_force(const collision::Contact<T>& con, const T* force, T* out,
                             bool elliptic) {
  for (int k = 0; k < 6; ++k) out[k] = 0;
  if (con.dim == 1 || elliptic) {
    for (int k = 0; k < con.dim; ++k) out[k] = force[k];
    return;
  }
  for (int r = 0; r < contact_rows(con.dim); ++r) out[0] += force[r];
  for (int k = 1; k < con.dim; ++k)
    out[k] = (force[2 * k - 2] - force[2 * k - 1]) * con.friction[k - 1];
}

// (contact, efc_force, subtree_com) => (cfrc_ext [nbody, 6]: torque, force).
template <class T, int Block>
MYRIAD_HD void body_forces(const ModelView<T>& m, EnvData<T, Block>& d) {
  for (int k = 0; k < 6 * m.nbody; ++k) d.cfrc_ext[k] = 0;
  const collision::Contact<T>* con = contacts_of(d);
  const int nefc = static_cast<int>(d.nefc[0]);
  for (int r = 0; r < nefc;) {
    const int type = static_cast<int>(d.efc_type[r]);
    if (type != kContactFrictionless && type != kContactPyramidal && type != kContactElliptic) {
      ++r;
      continue;
    }
    const collision::Contact<T>& c = con[static_cast<int>(d.efc_id[r])];
    T local[6], world[3], spin[3];
    const bool elliptic = type == kContactElliptic;
    contact_force(c, d.efc_force + r, local, elliptic);
    r += contact_rows(c.dim, elliptic);
    // world = frame' local (the frame's rows are the normal and the tangents); spin, the same for
    // the contact's own torque.
    for (int k = 0; k < 3; ++k) {
      world[k] = c.frame[k] * local[0] + c.frame[3 + k] * local[1] + c.frame[6 + k] * local[2];
      spin[k] = c.frame[k] * local[3] + c.frame[3 + k] * local[4] + c.frame[6 + k] * local[5];
    }
    const int bodies[2] = {m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2]};
    for (int side = 0; side < 2; ++side) {
      const int b = bodies[side];
      if (b == 0) continue;
      // The torque about the root's subtree com: spin - (com - pos) x force.
      const auto com = d.subtree_com + 3 * m.body_rootid[b];
      const T arm[3] = {com[0] - c.pos[0], com[1] - c.pos[1], com[2] - c.pos[2]};
      T torque[3];
      cross3(torque, arm, world);
      const T sign = side == 0 ? T(-1) : T(1);
      auto out = d.cfrc_ext + 6 * b;
      for (int k = 0; k < 3; ++k) {
        out[k] += sign * (spin[k] - torque[k]);
        out[3 + k] += sign * world[k];
      }
    }
  }
}

}  // namespace myriad::physics::constraint
