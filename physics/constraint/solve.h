// mj_fwdConstraint for one env: (qM, qfrc_smooth, qacc_smooth, qacc_warmstart, efc rows) =>
// (qacc, efc_force, qfrc_constraint, qacc_warmstart, solver_niter) with the primal Newton
// solver (newton.h). Without rows, qacc is qacc_smooth. MYRIAD_HD; templated on the scalar.
#pragma once

#include "physics/constraint/newton.h"

namespace myriad::physics::constraint {

// Scratch per env for solve(): the Newton solver's plus the row types as int32 (one T each).
MYRIAD_HD int64_t solver_scratch_size(int nv, int nefc_max) {
  return newton_scratch_size(nv, nefc_max) + nefc_max;
}

template <class T>
MYRIAD_HD void solve(const ModelView<T>& m, EnvData<T>& d) {
  const int nv = m.nv;
  const int nefc = static_cast<int>(d.nefc[0]);
  int niter = 0;
  if (nefc == 0) {
    for (int i = 0; i < nv; ++i) {
      d.qacc[i] = d.qacc_smooth[i];
      d.qfrc_constraint[i] = 0;
    }
  } else {
    // qM holds the tree entries below the diagonal; mirror them into its (unused) upper triangle
    // so that the solver reads the full symmetric matrix.
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < i; ++j) d.qM[j * nv + i] = d.qM[i * nv + j];
    // The row types as int32, in the scratch past the solver's own (see solver_scratch_size).
    int32_t* type =
        reinterpret_cast<int32_t*>(d.solver_scratch + newton_scratch_size(nv, m.nefc_max));
    for (int r = 0; r < nefc; ++r) type[r] = static_cast<int32_t>(d.efc_type[r]);
    Rows<T> rows;
    rows.nefc = nefc;
    rows.type = type;
    rows.J = d.efc_J;
    rows.D = d.efc_D;
    rows.R = d.efc_R;
    rows.aref = d.efc_aref;
    rows.frictionloss = d.efc_frictionloss;
    SolverOptions<T> opt;
    opt.iterations = m.iterations;
    opt.tolerance = m.tolerance;
    opt.meaninertia = m.meaninertia;
    niter = newton_solve(nv, d.qM, d.qfrc_smooth, d.qacc_smooth, d.qacc_warmstart, rows, opt,
                         d.solver_scratch, d.qacc, d.efc_force, d.qfrc_constraint);
  }
  for (int i = 0; i < nv; ++i) d.qacc_warmstart[i] = d.qacc[i];
  d.solver_niter[0] = T(niter);
}

}  // namespace myriad::physics::constraint
