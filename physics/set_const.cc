// mj_setConst's derived constants on the engine's own stages (physics/pipeline.h).
#include "physics/set_const.h"

#include <vector>

#include "physics/constraint/make.h"
#include "physics/pipeline.h"

namespace myriad::physics {

void set_const(const ModelView<double>& m, const Model<double>& shape, Data<double>& scratch,
               const DerivedConstants& out) {
  const int nv = m.nv;
  // Subtree masses (mj_setConst's setFixed), which the centre-of-mass stage reads.
  for (int b = 0; b < m.nbody; ++b) out.body_subtreemass[b] = m.body_mass[b];
  for (int b = m.nbody - 1; b > 0; --b)
    out.body_subtreemass[m.body_parentid[b]] += out.body_subtreemass[b];
  ModelView<double> v = m;
  v.body_subtreemass = out.body_subtreemass;

  // (qpos0) => (poses, cdof, M with armature, its factor): set0's kinematics, comPos, makeM,
  // factorM.
  EnvData<double> d = scratch.env(shape, 0);
  for (int k = 0; k < m.nq; ++k) d.qpos[k] = m.qpos0[k];
  forward_position(v, d);

  // x' M^-1 x for a dense x [nv].
  std::vector<double> tmp(nv);
  auto inverse_quadratic = [&](const double* x) {
    for (int k = 0; k < nv; ++k) tmp[k] = x[k];
    solve(v, d.qLD, d.qLDiagInv, tmp.data());
    double s = 0;
    for (int k = 0; k < nv; ++k) s += x[k] * tmp[k];
    return s;
  };

  // body_invweight0: the body's Jacobian at its centre of mass, rows x, y, z, then rotations.
  std::vector<double> jac(6 * static_cast<size_t>(nv));
  const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  out.body_invweight0[0] = out.body_invweight0[1] = 0;
  for (int b = 1; b < m.nbody; ++b) {
    double* w = out.body_invweight0 + 2 * b;
    if (m.body_weldid[b] == 0 || nv == 0) {
      w[0] = w[1] = 0;
      continue;
    }
    for (double& x : jac) x = 0;
    constraint::add_frame_jacobian(v, d, b, d.xipos + 3 * b, identity, 3, 1.0, jac.data());
    constraint::add_frame_angular(v, d, b, identity, 3, 1.0, jac.data() + 3 * nv);
    double tran = 0, rot = 0;
    for (int r = 0; r < 3; ++r) tran += inverse_quadratic(jac.data() + r * nv);
    for (int r = 3; r < 6; ++r) rot += inverse_quadratic(jac.data() + r * nv);
    w[0] = tran / 3;
    w[1] = rot / 3;
  }

  // dof_invweight0: diagonal entries of M^-1, averaged per free joint half and per ball joint.
  std::vector<double> unit(nv, 0.0);
  auto inverse_diagonal = [&](int dof) {
    unit[dof] = 1;
    const double a = inverse_quadratic(unit.data());
    unit[dof] = 0;
    return a;
  };
  for (int j = 0; j < m.njnt; ++j) {
    const int id = m.jnt_dofadr[j];
    const int type = m.jnt_type[j];
    if (type == kFree) {
      const double tran =
          (inverse_diagonal(id) + inverse_diagonal(id + 1) + inverse_diagonal(id + 2)) / 3;
      const double rot =
          (inverse_diagonal(id + 3) + inverse_diagonal(id + 4) + inverse_diagonal(id + 5)) / 3;
      for (int k = 0; k < 3; ++k) out.dof_invweight0[id + k] = tran;
      for (int k = 3; k < 6; ++k) out.dof_invweight0[id + k] = rot;
    } else if (type == kBall) {
      const double rot =
          (inverse_diagonal(id) + inverse_diagonal(id + 1) + inverse_diagonal(id + 2)) / 3;
      for (int k = 0; k < 3; ++k) out.dof_invweight0[id + k] = rot;
    } else {
      out.dof_invweight0[id] = inverse_diagonal(id);
    }
  }

  // meaninertia: the mean of M's diagonal (armature included).
  double trace = 0;
  for (int k = 0; k < nv; ++k) trace += mat(d.qM, nv, k, k);
  *out.meaninertia = nv > 0 ? trace / nv : 1.0;

  // tendon_invweight0: the tendon's Jacobian row at qpos0.
  for (int t = 0; t < m.ntendon; ++t)
    out.tendon_invweight0[t] = nv == 0 ? 0 : inverse_quadratic(d.ten_J + t * nv);
}

void set_const(Model<double>& m) {
  Data<double> scratch(m, 1);
  std::vector<double> subtreemass(m.body_subtreemass.size()), dof(m.dof_invweight0.size()),
      body(m.body_invweight0.size()), tendon(m.tendon_invweight0.size());
  double meaninertia = 1;
  set_const(
      view_of(m), m, scratch,
      DerivedConstants{subtreemass.data(), dof.data(), body.data(), tendon.data(), &meaninertia});
  m.meaninertia = meaninertia;
  m.body_subtreemass = subtreemass;
  m.dof_invweight0 = dof;
  m.body_invweight0 = body;
  m.tendon_invweight0 = tendon;
}

}  // namespace myriad::physics
