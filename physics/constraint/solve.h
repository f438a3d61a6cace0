// mj_fwdConstraint for one env: (qM, qfrc_smooth, qacc_smooth, qacc_warmstart, efc rows) =>
// (qacc, efc_force, qfrc_constraint, qacc_warmstart, solver_niter) with the primal Newton
// solver (newton.h). Without rows, qacc is qacc_smooth. MYRIAD_HD; templated on the scalar.
#pragma once

#include "myriad/physics/data.h"
#include "physics/collision/contact.h"
#include "physics/constraint/newton.h"
#include "physics/model_view.h"

namespace myriad::physics::constraint {

// mjDSBL_WARMSTART, mjDSBL_ISLAND (import.cc checks them against MuJoCo's).
constexpr int32_t kDisableWarmstart = 1 << 9;
constexpr int32_t kDisableIsland = 1 << 18;

// Scratch per env for solve(): the Newton solver's, then the row types and the elliptic
// contacts' dims as int32 (one T each) and the rows' cone scales (Rows::cone_dim, Rows::cone).
MYRIAD_HD int64_t solver_scratch_size(int nv, int nefc_max) {
  return newton_scratch_size(nv, nefc_max) + 3 * int64_t{nefc_max};
}

// What an env of a blocked batch (EnvData<T, Block> with Block > 1) needs past that, and its
// batch allocates in each env's solver_scratch row: contiguous copies of what the solver reads
// and writes, M [nv, nv], qfrc_smooth, qacc_smooth, qacc and qfrc_constraint [nv] each
// (solve_copies). An env-major batch has none.
MYRIAD_HD int64_t solve_copies_size(int nv) { return int64_t{nv} * nv + 4 * int64_t{nv}; }

// (qM [nv, nv], J [nefc, nv]) => (Σ qM_kk over the dofs of every kinematic tree that a row's J
// touches): the scale MuJoCo 3 gives the Newton cost of a constraint island. Rows that link
// trees make one island of them; trees with rows but no link are separate islands there, each
// solved alone with its own scale, where this solve takes them together with their summed
// inertia (the 8 Gymnasium models and single robots are one tree, so one island).
template <class T>
MYRIAD_HD T island_inertia(const ModelView<T>& m, const T* qM, const T* J, int nefc) {
  const int nv = m.nv;
  bool touched[64];  // nv <= 64 is checked at import
  for (int k = 0; k < nv; ++k) touched[k] = false;
  for (int r = 0; r < nefc; ++r)
    for (int k = 0; k < nv; ++k)
      if (J[int64_t{r} * nv + k] != T(0)) touched[k] = true;
  T inertia = 0;
  for (int k = 0; k < nv; ++k) {
    const int tree = m.body_rootid[m.dof_bodyid[k]];
    bool in_island = false;
    for (int j = 0; j < nv && !in_island; ++j)
      in_island = touched[j] && m.body_rootid[m.dof_bodyid[j]] == tree;
    if (in_island) inertia += qM[k * nv + k];
  }
  return inertia;
}

// The row types, elliptic contacts' dims (int32) and cone scales of env d, in the scratch past
// the solver's own (see solver_scratch_size).
template <class T>
struct SolveRowsScratch {
  int32_t* type;
  int32_t* cone_dim;
  T* cone;
};
template <class T>
struct SolveCopies {
  T* M;
  T* qfrc_smooth;
  T* qacc_smooth;
  T* qacc;
  T* qfrc_constraint;
};
template <class T, int Block>
MYRIAD_HD SolveCopies<T> solve_copies(const ModelView<T>& m, EnvData<T, Block>& d) {
  T* c = d.solver_scratch + solver_scratch_size(m.nv, m.nefc_max);
  const int nv = m.nv;
  return {c, c + nv * nv, c + nv * nv + nv, c + nv * nv + 2 * nv, c + nv * nv + 3 * nv};
}

template <class T, int Block>
MYRIAD_HD SolveRowsScratch<T> solve_rows_scratch(const ModelView<T>& m, EnvData<T, Block>& d) {
  T* extra = d.solver_scratch + newton_scratch_size(m.nv, m.nefc_max);
  return {reinterpret_cast<int32_t*>(extra), reinterpret_cast<int32_t*>(extra + m.nefc_max),
          extra + 2 * m.nefc_max};
}

// (qM, efc rows) => (qM's upper triangle, the rows' types and cone data in the scratch); returns
// whether a row is elliptic. qM holds the tree entries below the diagonal; they are mirrored into
// its upper triangle (scratch: implicitfast's free bodies also write there, implicit.h) so that
// the solver reads the full symmetric matrix.
template <class T, int Block>
MYRIAD_HD bool solve_prepare(const ModelView<T>& m, EnvData<T, Block>& d) {
  const int nv = m.nv;
  const int nefc = static_cast<int>(d.nefc[0]);
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j < i; ++j) d.qM[j * nv + i] = d.qM[i * nv + j];
  const SolveRowsScratch<T> s = solve_rows_scratch(m, d);
  int32_t* type = s.type;
  int32_t* cone_dim = s.cone_dim;
  T* cone = s.cone;
  bool has_cones = false;
  const auto* con = reinterpret_cast<const collision::Contact<T>*>(d.contact);
  for (int r = 0; r < nefc; ++r) {
    type[r] = static_cast<int32_t>(d.efc_type[r]);
    cone_dim[r] = 0;
    cone[r] = 0;
  }
  // Elliptic contacts: mu = friction[0] sqrt(R_1 / R_0) on the normal row (MuJoCo's con->mu),
  // friction[k - 1] on row k.
  for (int r = 0; r < nefc; ++r) {
    if (type[r] != kContactElliptic) continue;
    const collision::Contact<T>& c = con[static_cast<int>(d.efc_id[r])];
    has_cones = true;
    cone_dim[r] = c.dim;
    cone[r] = c.friction[0] * sqrt(d.efc_R[r + 1] / d.efc_R[r]);
    for (int k = 1; k < c.dim; ++k) cone[r + k] = c.friction[k - 1];
    r += c.dim - 1;
  }
  return has_cones;
}

// A blocked batch's env (Block > 1): (qM after solve_prepare, qfrc_smooth, qacc_smooth) =>
// (their contiguous copies, which the solver reads). each(n, f) runs f(k) for k < n: a loop, or
// a lane group's group_for.
template <class T, int Block, class Each>
MYRIAD_HD void solve_copy_in(const ModelView<T>& m, EnvData<T, Block>& d, Each&& each) {
  const SolveCopies<T> c = solve_copies(m, d);
  each(m.nv * m.nv, [&](int k) { c.M[k] = d.qM[k]; });
  each(m.nv, [&](int k) {
    c.qfrc_smooth[k] = d.qfrc_smooth[k];
    c.qacc_smooth[k] = d.qacc_smooth[k];
  });
}

// (prepared rows: solve_prepare's outputs) => (run, ready for newton_begin) for env d. Reads
// only (a blocked env's copies are solve_copy_in's), so that every lane of a group builds its
// own.
template <class T, int Block>
MYRIAD_HD NewtonRun<T> solve_run(const ModelView<T>& m, EnvData<T, Block>& d, bool has_cones) {
  const int nv = m.nv;
  const int nefc = static_cast<int>(d.nefc[0]);
  const SolveRowsScratch<T> s = solve_rows_scratch(m, d);
  NewtonRun<T> run;
  run.nv = nv;
  if constexpr (Block == 1) {
    run.M = d.qM;
    run.qfrc_smooth = d.qfrc_smooth;
    run.qacc_smooth = d.qacc_smooth;
    run.qacc = d.qacc;
    run.qfrc_constraint = d.qfrc_constraint;
  } else {  // a blocked batch's env: the solver reads and writes contiguous copies
    const SolveCopies<T> c = solve_copies(m, d);
    run.M = c.M;
    run.qfrc_smooth = c.qfrc_smooth;
    run.qacc_smooth = c.qacc_smooth;
    run.qacc = c.qacc;
    run.qfrc_constraint = c.qfrc_constraint;
  }
  run.rows.nefc = nefc;
  run.rows.type = s.type;
  run.rows.J = d.efc_J;
  run.rows.D = d.efc_D;
  run.rows.R = d.efc_R;
  run.rows.aref = d.efc_aref;
  run.rows.frictionloss = d.efc_frictionloss;
  run.rows.cone_dim = s.cone_dim;
  run.rows.cone = s.cone;
  run.rows.has_cones = has_cones;
  run.rows.colmask = d.efc_J_colmask;
  run.opt.iterations = m.iterations;
  run.opt.tolerance = m.tolerance;
  run.opt.ls_iterations = m.ls_iterations;
  run.opt.ls_tolerance = m.ls_tolerance;
  run.opt.meaninertia = m.meaninertia;
  // Without islands (option flag island) MuJoCo scales the cost by meaninertia nv.
  run.opt.island_inertia =
      m.disableflags & kDisableIsland ? T(0) : island_inertia(m, run.M, d.efc_J, nefc);
  run.scratch = d.solver_scratch;
  run.H = run.scratch;
  run.efc_force = d.efc_force;
  return run;
}

// (qM, qfrc_smooth, qacc_smooth, qacc_warmstart, efc rows) => (run, ready for newton_begin).
template <class T, int Block>
MYRIAD_HD NewtonRun<T> solve_setup(const ModelView<T>& m, EnvData<T, Block>& d) {
  const bool has_cones = solve_prepare(m, d);
  if constexpr (Block > 1)
    solve_copy_in(m, d, [](int n, auto&& f) {
      for (int k = 0; k < n; ++k) f(k);
    });
  return solve_run(m, d, has_cones);
}

// (the solver's iteration count or -1) => (solver_niter). qacc_warmstart is the integrator's
// to save, once per step (MuJoCo 3).
template <class T, int Block>
MYRIAD_HD void solve_finish(const ModelView<T>& m, EnvData<T, Block>& d, int niter) {
  if constexpr (Block > 1) {  // the copies' results (none without rows or when the solve refused)
    if (d.nefc[0] != T(0) && niter >= 0) {
      const SolveCopies<T> c = solve_copies(m, d);
      for (int k = 0; k < m.nv; ++k) {
        d.qacc[k] = c.qacc[k];
        d.qfrc_constraint[k] = c.qfrc_constraint[k];
      }
    }
  }
  d.solver_niter[0] = T(niter);
}

// (qM, qfrc_smooth, qacc_smooth, qacc_warmstart, efc rows) => (the solve begun: run and its
// newton_begin status). Without rows: qacc = qacc_smooth, qfrc_constraint = 0, done at once.
template <class T, int Block>
MYRIAD_HD int solve_begin(const ModelView<T>& m, EnvData<T, Block>& d, NewtonRun<T>& run) {
  if (d.nefc[0] == T(0)) {
    for (int i = 0; i < m.nv; ++i) {
      d.qacc[i] = d.qacc_smooth[i];
      d.qfrc_constraint[i] = 0;
    }
    run.iter = 0;
    return kNewtonDone;
  }
  run = solve_setup(m, d);
  // With the warm start disabled (option flag warmstart) the solve starts from qacc_smooth.
  if constexpr (Block == 1) {
    return newton_begin(run, m.disableflags & kDisableWarmstart ? d.qacc_smooth : d.qacc_warmstart);
  } else {  // from the copy, into which qacc goes (newton_begin allows the alias)
    const auto warm = m.disableflags & kDisableWarmstart ? d.qacc_smooth : d.qacc_warmstart;
    for (int k = 0; k < m.nv; ++k) run.qacc[k] = warm[k];
    return newton_begin(run, static_cast<const T*>(run.qacc));
  }
}

template <class T, int Block>
MYRIAD_HD void solve(const ModelView<T>& m, EnvData<T, Block>& d) {
  NewtonRun<T> run;
  solve_finish(m, d, newton_finish(run, solve_begin(m, d, run)));
}

}  // namespace myriad::physics::constraint
