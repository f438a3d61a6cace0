// constraint::solve over the dense rows: the rows' sparse structure (efc_J_colmask) ignored, every
// column of every row summed. The same bits as solve() for finite values (newton.h's
// Rows::colmask); what tests/physics/test_solve_group.cc checks and tools/solve_bench.cc times
// against. Not the engine's path.
#pragma once

#include "physics/constraint/solve.h"

namespace myriad::physics::constraint {

template <class T>
void solve_dense_rows(const ModelView<T>& m, EnvData<T>& d) {
  if (d.nefc[0] == T(0)) return solve(m, d);
  NewtonRun<T> run = solve_setup(m, d);
  run.rows.colmask = nullptr;
  const T* warm = m.disableflags & kDisableWarmstart ? d.qacc_smooth : d.qacc_warmstart;
  solve_finish(m, d, newton_finish(run, newton_begin(run, warm)));
}

}  // namespace myriad::physics::constraint
