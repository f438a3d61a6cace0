// The constraint solve by a lane group (physics/constraint/group.h): newton.h's Newton solver
// with each stage's work split over the lanes of one env's group (a warp on CUDA), giving
// newton.h's bits whatever the group's size.
//
// How the work splits, stage by stage (G: the group's lanes):
//   M·x, J·x                 a row per lane (J's over the row's columns, Rows::colmask)
//   row costs and forces     a row (an elliptic contact: its first row) per lane, then every
//                            lane sums the costs in row order
//   qfrc = Jᵀ·force          a dof per lane, over the rows in order
//   H = Jᵀ D J + M           an entry of the lower triangle per lane, over the rows in order;
//                            the cones' J_cᵀ H_c J_c a row of H per lane
//   Cholesky factor          per column: the pivot on every lane, the rows below a lane each
//   rank-1 updates           per dof k: the scalars on every lane, the rows below k a lane each
//   triangular solves        one lane (2 nv² flops, each x_i waits for the one before)
//   line search              each point: a row's terms per lane, then every lane sums them in
//                            row order and takes the same branch of the search
// Bitwise equality with newton.h holds because no sum is split: whatever is summed is summed by
// one lane in newton.h's order, and the split work is element-wise. A lane never reads what
// another lane writes in the same phase (the InterleavedGroup tests run the lanes in reverse to
// show it); every phase ends at a barrier.
#pragma once

#include "physics/constraint/group.h"
#include "physics/constraint/newton.h"
#include "physics/constraint/solve.h"

namespace myriad::physics::constraint {
namespace group_detail {

using detail::dot;

// (M [n, n], x [n]) => (res = M·x)
template <class G, class T>
MYRIAD_HD void mul_mat_vec(const G& g, T* res, const T* M, const T* x, int n) {
  group_for(g, n, [&](int i) { res[i] = dot(M + int64_t{i} * n, x, n); });
}

// (J, a [nv], aref [nefc] or null) => (jar = J·a − aref)
template <class G, class T>
MYRIAD_HD void jac_times(const G& g, T* jar, const Rows<T>& rows, int nv, const T* a,
                         const T* aref) {
  group_for(g, rows.nefc, [&](int i) {
    jar[i] = detail::row_dot(rows, i, nv, a);
    if (aref) jar[i] -= aref[i];
  });
}

MYRIAD_HD bool row_starts_cost(const int32_t* type, const int32_t* cone_dim, int i) {
  return type[i] != kContactElliptic || cone_dim[i] > 0;
}

// detail::constraint_update by group g: (rows, jar) => (Σ row costs, on every lane; force and
// qfrc = Jᵀ·force when given: both or neither). per_row [nefc, 4]: scratch.
template <class G, class T>
MYRIAD_HD T constraint_update(const G& g, const Rows<T>& rows, int nv, const T* jar, T* force,
                              T* qfrc, T* per_row) {
  group_for(g, rows.nefc, [&](int i) {
    if (!row_starts_cost(rows.type, rows.cone_dim, i)) return;
    T f[6];
    int n = 1;
    if (rows.type[i] == kContactElliptic) {
      int zone;
      n = rows.cone_dim[i];
      per_row[4 * i] = detail::cone_cost(rows, i, jar, f, &zone);
    } else {
      bool quadratic;
      per_row[4 * i] = detail::row_cost(rows, i, jar[i], f, &quadratic);
    }
    if (force)
      for (int j = 0; j < n; ++j) force[i + j] = f[j];
  });
  T cost = 0;
  for (int i = 0; i < rows.nefc; ++i)
    if (row_starts_cost(rows.type, rows.cone_dim, i)) cost += per_row[4 * i];
  if (qfrc) {
    group_for(g, nv, [&](int k) {
      T s = 0;
      if (rows.packed_at) {
        for (int i = 0; i < rows.nefc; ++i) {
          if (force[i] == T(0)) continue;
          const ColumnMask set = row_columns(rows, i, nv);
          if (set >> k & 1) s += detail::row_value(rows, i, nv, set, k) * force[i];
        }
      } else {
        for (int i = 0; i < rows.nefc; ++i)
          if (force[i] != T(0)) s += rows.J[int64_t{i} * nv + k] * force[i];
      }
      qfrc[k] = s;
    });
  } else {
    g.sync();  // per_row is read above; the caller's next phase may write it
  }
  return cost;
}

// detail::record_quadratic by group g.
template <class G, class T>
MYRIAD_HD void record_quadratic(const G& g, const Rows<T>& rows, const T* jar, T* quadratic) {
  group_for(g, rows.nefc, [&](int i) {
    T f;
    bool q;
    detail::row_cost(rows, i, jar[i], &f, &q);
    quadratic[i] = q ? T(1) : T(0);
  });
}

// detail::assemble_hessian by group g: (M, rows, jar) => (H's lower triangle). per_row: scratch
// (column 0: 1 where the row enters Jᵀ D J).
template <class G, class T>
MYRIAD_HD void assemble_hessian(const G& g, T* H, int nv, const T* M, const Rows<T>& rows,
                                const T* jar, T* per_row) {
  group_for(g, rows.nefc, [&](int r) {
    if (rows.type[r] == kContactElliptic) {
      if (rows.cone_dim[r] == 0) return;  // its first row decides for it
      T U[6], N, Tn;
      const bool bottom = detail::cone_zone(rows, r, jar, U, &N, &Tn) == detail::kConeBottom;
      for (int j = 0; j < rows.cone_dim[r]; ++j) per_row[4 * (r + j)] = bottom ? T(1) : T(0);
      return;
    }
    T f;
    bool quadratic;
    detail::row_cost(rows, r, jar[r], &f, &quadratic);
    per_row[4 * r] = quadratic ? T(1) : T(0);
  });
  group_for(g, nv * nv, [&](int t) {
    const int i = t / nv, j = t % nv;
    if (j > i) return;
    T h = 0;
    for (int r = 0; r < rows.nefc; ++r) {
      if (per_row[4 * r] == T(0)) continue;
      if (rows.packed_at) {
        const ColumnMask set = row_columns(rows, r, nv);
        if (!(set >> i & 1) || !(set >> j & 1)) continue;
        const T Jri = detail::row_value(rows, r, nv, set, i);
        if (Jri == T(0)) continue;
        const T DJi = rows.D[r] * Jri;
        h += DJi * detail::row_value(rows, r, nv, set, j);
      } else {
        const T* Jr = rows.J + int64_t{r} * nv;
        if (Jr[i] == T(0)) continue;
        const T DJi = rows.D[r] * Jr[i];
        h += DJi * Jr[j];
      }
    }
    H[i * nv + j] = h + M[i * nv + j];
  });
  if (!rows.has_cones) return;
  group_for(g, nv, [&](int i) {
    for (int r = 0; r < rows.nefc; ++r) {
      if (rows.type[r] != kContactElliptic || rows.cone_dim[r] == 0) continue;
      T Hc[36];
      if (!detail::cone_hessian(rows, r, jar, Hc)) continue;
      detail::add_cone_hessian_row(H, nv, rows, r, row_columns(rows, r, nv), rows.cone_dim[r], Hc,
                                   i);
    }
  });
}

// cholesky_in_place by group g.
template <class G, class T>
MYRIAD_HD void cholesky_in_place(const G& g, T* L, int nv) {
  for (int j = 0; j < nv; ++j) {
    T* Lj = L + j * nv;
    const T scaled = Lj[j] * detail::kEps<T>;
    const T floor = select(scaled > T(kMinVal), scaled, T(kMinVal));
    T pivot = Lj[j] - dot(Lj, Lj, j);
    pivot = select(pivot < floor, floor, pivot);
    const T ljj = sqrt(pivot);
    const T inv = T(1) / ljj;
    g.sync();  // every lane has read L_jj
    if (group_leader(g)) Lj[j] = ljj;
    group_for(g, nv - j - 1, [&](int k) {
      T* Li = L + (j + 1 + k) * nv;
      Li[j] = (Li[j] - dot(Li, Lj, j)) * inv;
    });
  }
}

// chol_update by group g.
template <class G, class T>
MYRIAD_HD bool chol_update(const G& g, T* L, T* x, int nv, bool plus) {
  bool full_rank = true;
  for (int k = 0; k < nv; ++k) {
    if (x[k] == T(0)) continue;
    CholRotation<T> rot;
    if (!chol_rotation(L[k * nv + k], x[k], plus, &rot)) full_rank = false;
    g.sync();  // every lane has read L_kk and x_k
    if (group_leader(g)) L[k * nv + k] = rot.r;
    group_for(g, nv - k - 1, [&](int t) {
      const int i = k + 1 + t;
      chol_rotate_row(rot, plus, &L[i * nv + k], &x[i]);
    });
  }
  return full_rank;
}

// chol_solve on one lane: each x_i needs the one before it, and its sum keeps its order.
template <class G, class T>
MYRIAD_HD void chol_solve(const G& g, T* x, const T* L, const T* b, int nv) {
  if (group_leader(g)) constraint::chol_solve(x, L, b, nv);
  g.sync();
}

// detail::line_eval by group g: a row's terms per lane into per_row, then the sums in row order
// on every lane.
template <class G, class T>
MYRIAD_HD detail::LinePoint<T> line_eval(const G& g, detail::LineSearch<T>& ls, T alpha,
                                         T* per_row) {
  const int nefc = ls.rows->nefc;
  group_for(g, nefc, [&](int i) {
    T* o = per_row + 4 * i;
    o[3] = T(detail::line_row(ls, i, alpha, o));
  });
  detail::LineSums<T> s = detail::line_sums_begin(ls);
  for (int i = 0; i < nefc; ++i) {
    const T* o = per_row + 4 * i;
    detail::line_add(s, static_cast<int>(o[3]), o);
  }
  g.sync();  // the next point's terms overwrite per_row
  return detail::line_point(ls, s, alpha);
}

}  // namespace group_detail

// newton_begin by group g (same contract; every lane returns the same status).
template <class G, class T>
MYRIAD_HD int newton_begin(const G& g, NewtonRun<T>& r, const T* qacc_warmstart) {
  const int nv = r.nv, nefc = r.rows.nefc;
  const Rows<T>& rows = r.rows;
  r.iter = 0;
  r.small_improvements = 0;
  for (int i = 0; i < nefc; ++i)
    if (rows.type[i] < kEquality || rows.type[i] > kContactElliptic ||
        (rows.type[i] == kContactElliptic && !rows.has_cones))
      return -1;
  T* qacc = r.qacc;
  if (nefc == 0) {
    group_for(g, nv, [&](int k) {
      qacc[k] = r.qacc_smooth[k];
      r.qfrc_constraint[k] = 0;
    });
    return kNewtonDone;
  }
  T* Ma = r.Ma();
  T* Jaref = r.Jaref();
  T* Jv = r.Jv();
  T* per_row = r.per_row();

  // Warm start: qacc_warmstart unless qacc_smooth costs less (Gauss cost 0 there).
  group_for(g, nv, [&](int k) { qacc[k] = qacc_warmstart[k]; });
  group_detail::mul_mat_vec(g, Ma, r.M, qacc, nv);
  group_detail::jac_times(g, Jaref, rows, nv, qacc, rows.aref);
  T cost_warm =
      group_detail::constraint_update<G, T>(g, rows, nv, Jaref, nullptr, nullptr, per_row);
  cost_warm += detail::gauss_cost(nv, Ma, r.qfrc_smooth, qacc, r.qacc_smooth);
  group_detail::jac_times(g, Jv, rows, nv, r.qacc_smooth, rows.aref);
  const T cost_smooth =
      group_detail::constraint_update<G, T>(g, rows, nv, Jv, nullptr, nullptr, per_row);
  if (cost_warm > cost_smooth) {
    group_for(g, nv, [&](int k) { qacc[k] = r.qacc_smooth[k]; });
    group_detail::mul_mat_vec(g, Ma, r.M, qacc, nv);
    group_for(g, nefc, [&](int i) { Jaref[i] = Jv[i]; });
  }

  r.scale = r.opt.island_inertia > T(0) ? T(1) / r.opt.island_inertia
                                        : T(1) / (r.opt.meaninertia * T(nv > 1 ? nv : 1));
  r.cost =
      group_detail::constraint_update(g, rows, nv, Jaref, r.efc_force, r.qfrc_constraint, per_row);
  r.cost += detail::gauss_cost(nv, Ma, r.qfrc_smooth, qacc, r.qacc_smooth);
  T* grad = r.gradient();
  group_for(g, nv, [&](int k) { grad[k] = Ma[k] - r.qfrc_smooth[k] - r.qfrc_constraint[k]; });
  group_detail::assemble_hessian(g, r.hessian(), nv, r.M, rows, Jaref, per_row);
  group_detail::record_quadratic(g, rows, Jaref, r.quadratic());
  r.refactor = true;
  return kNewtonFactor;
}

// newton_continue by group g.
template <class G, class T>
MYRIAD_HD int newton_continue(const G& g, NewtonRun<T>& r) {
  const int nv = r.nv, nefc = r.rows.nefc;
  const Rows<T>& rows = r.rows;
  T* qacc = r.qacc;
  T* Ma = r.Ma();
  T* Mv = r.Mv();
  T* grad = r.gradient();
  T* search = r.search();
  T* Jaref = r.Jaref();
  T* Jv = r.Jv();
  T* quad = r.quad();
  T* per_row = r.per_row();
  const T* Mgrad = r.newton_step();
  group_for(g, nv, [&](int k) { search[k] = -Mgrad[k]; });
  if (r.iter >= r.opt.iterations) return kNewtonDone;

  // Line search along `search`.
  const T snorm = sqrt(detail::dot(search, search, nv));
  if (snorm < T(kMinVal)) return kNewtonDone;
  const T gtol = r.opt.tolerance * r.opt.ls_tolerance * snorm / r.scale;
  group_detail::mul_mat_vec(g, Mv, r.M, search, nv);
  group_detail::jac_times<G, T>(g, Jv, rows, nv, search, nullptr);
  detail::LineSearch<T> ls = detail::line_setup(r);
  group_for(g, nefc, [&](int i) { detail::line_quad_row(rows, i, Jaref, Jv, quad); });
  if (rows.has_cones)
    group_for(g, nefc, [&](int i) {
      if (rows.type[i] == kContactElliptic && rows.cone_dim[i] > 0)
        detail::line_prepare_cone(rows, i, Jaref, Jv, quad);
    });
  auto eval = [&](T alpha) { return group_detail::line_eval(g, ls, alpha, per_row); };
  const T alpha = detail::line_search_with(ls, gtol, rows.has_cones, eval);
  if (detail::step_rejected(r, ls, alpha)) return kNewtonDone;

  // Move to the new point and update forces, cost and gradient there.
  group_for(g, nv, [&](int k) {
    qacc[k] += alpha * search[k];
    Ma[k] += alpha * Mv[k];
  });
  group_for(g, nefc, [&](int i) { Jaref[i] += alpha * Jv[i]; });
  const T old_cost = r.cost;
  r.cost =
      group_detail::constraint_update(g, rows, nv, Jaref, r.efc_force, r.qfrc_constraint, per_row);
  r.cost += detail::gauss_cost(nv, Ma, r.qfrc_smooth, qacc, r.qacc_smooth);
  group_for(g, nv, [&](int k) { grad[k] = Ma[k] - r.qfrc_smooth[k] - r.qfrc_constraint[k]; });
  T grad_noise = 0;  // as newton_continue
  for (int k = 0; k < nv; ++k) {
    const T size = fabs(Ma[k]) + fabs(r.qfrc_smooth[k]) + fabs(r.qfrc_constraint[k]);
    grad_noise += size * size;
  }
  ++r.iter;
  if (detail::converged(r, old_cost, grad_noise)) return kNewtonDone;
  r.refactor = false;
  return kNewtonFactor;
}

// newton_update by group g: the rows whose zone changed are found a row per lane, then updated
// into the factor one after another (each update is a group's rank-1 update).
template <class G, class T>
MYRIAD_HD bool newton_update(const G& g, NewtonRun<T>& r) {
  if (r.refactor) return true;
  const int nv = r.nv;
  const Rows<T>& rows = r.rows;
  const T* Jaref = r.Jaref();
  T* per_row = r.per_row();
  if (rows.has_cones) {
    group_detail::assemble_hessian(g, r.hessian(), nv, r.M, rows, Jaref, per_row);
    r.refactor = true;
    return true;
  }
  T* quadratic = r.quadratic();
  T* vec = r.Mv();
  // per_row column 0: 0 unchanged, 1 left its quadratic zone, 2 entered it.
  group_for(g, rows.nefc, [&](int i) {
    T f;
    bool q;
    detail::row_cost(rows, i, Jaref[i], &f, &q);
    per_row[4 * i] = q == (quadratic[i] != T(0)) ? T(0) : q ? T(2) : T(1);
  });
  for (int i = 0; i < rows.nefc; ++i) {
    const T change = per_row[4 * i];
    if (change == T(0)) continue;
    const bool q = change == T(2);
    if (group_leader(g)) quadratic[i] = q ? T(1) : T(0);
    const T root = sqrt(rows.D[i]);
    const ColumnMask set = row_columns(rows, i, nv);
    group_for(g, nv, [&](int k) { vec[k] = detail::row_value(rows, i, nv, set, k) * root; });
    if (!group_detail::chol_update(g, r.hessian(), vec, nv, q)) {
      group_detail::assemble_hessian(g, r.hessian(), nv, r.M, rows, Jaref, per_row);
      group_detail::record_quadratic(g, rows, Jaref, quadratic);
      r.refactor = true;
      return true;
    }
  }
  return false;
}

// newton_factor by group g.
template <class G, class T>
MYRIAD_HD void newton_factor(const G& g, NewtonRun<T>& r) {
  if (newton_update(g, r)) group_detail::cholesky_in_place(g, r.hessian(), r.nv);
  group_detail::chol_solve(g, r.newton_step(), r.hessian(), r.gradient(), r.nv);
}

// newton_finish by group g.
template <class G, class T>
MYRIAD_HD int newton_finish(const G& g, NewtonRun<T>& r, int status) {
  while (status == kNewtonFactor) {
    newton_factor(g, r);
    status = newton_continue(g, r);
  }
  return status < 0 ? -1 : r.iter;
}

// The group's own storage (on CUDA its block's shared memory): size scalars that solve() fills,
// for one env's solve, with what the solve reads most, in this order and as far as it fits:
//   kHessian     H [nv, nv], the Hessian and its factor (assembly, Cholesky, rank-1 updates and
//                the triangular solves read and write it whole, every iteration);
//   kScratch     then the rest of the Newton scratch for this env's nefc rows (NewtonRun's
//                accessors: Ma .. per_row, 5 nv + 10 nefc; every line-search point reads quad
//                and per_row);
//   kRowsPacked  then a copy of the rows with J packed (Rows::packed_at: each row's values at its
//                set's columns only, at offsets summed in row order by one lane), where the dense
//                copy does not fit: colmask [kColumnWords nefc], D, R, aref, frictionloss, cone
//                [nefc] each, type, cone_dim and packed_at (int32, a T's room each), then J's nnz
//                values (the rows' sets' sizes summed);
//   kRows        or a copy of the rows with J dense [nefc, nv] after the same arrays but
//                packed_at, which J·x, Jᵀ·force, the Hessian's assembly and the line search read.
// Each level is taken only with the ones before it, for the env's own nefc (and nnz), so a step
// whose contacts overflow the storage solves from global memory with the same code. Every placed
// array holds what it would hold in the env's scratch, or a copy of its rows: the same bits.
template <class T>
struct GroupStorage {
  T* data = nullptr;
  int64_t size = 0;  // scalars
};

enum class Placed { kNothing, kHessian, kScratch, kRowsPacked, kRows };

// The storage CUDA's warp solve gives each env, in bytes: its one-warp block's share of the SM's
// smem_per_sm bytes when `blocks` such blocks run an SM (the count its registers allow), less
// the runtime's `reserved` bytes a block, in whole KiB, at most max_per_block (the device's
// opt-in limit). physics/launch.h's solve_storage_bytes computes it for the GPU at hand (the
// device's figures, the occupancy of the kernel as compiled) and says why this size.
MYRIAD_HD constexpr int64_t warp_solve_storage_bytes(int64_t smem_per_sm, int blocks,
                                                     int64_t reserved, int64_t max_per_block) {
  const int64_t share = smem_per_sm / (blocks > 1 ? blocks : 1) - reserved;
  const int64_t kib = share > 0 ? share / 1024 * 1024 : 0;
  return kib < max_per_block ? kib : max_per_block;
}

// That storage in scalars on sm_90 (an H100's or H200's 228 KiB an SM, 1 KiB reserved a block, 227
// KiB at most a block) at the solve's registers in this build (scripts/ptxas-table.py: 133 in
// float32, 180 in float64; registers are allocated per quarter of the SM, so 12 and 8 one-warp
// blocks an SM): 18 and 27 KiB. What solve_bench and the tests take for a GPU's; the GPU itself
// sizes it at its first solve.
template <class T>
constexpr int64_t kWarpSolveStorage = warp_solve_storage_bytes(228 * 1024, sizeof(T) == 4 ? 12 : 8,
                                                               1024, 227 * 1024) /
                                      static_cast<int64_t>(sizeof(T));

// The scalars a rows copy of nefc rows takes besides J: colmask, the five scalar arrays, type and
// cone_dim, and for a packed copy packed_at.
MYRIAD_HD int64_t rows_copy_rest(int nefc, bool packed) {
  return int64_t{nefc} * (kColumnWords + 7 + (packed ? 1 : 0));
}

// The scalars a dense rows copy of nefc rows takes (kRows).
MYRIAD_HD int64_t placed_rows_size(int nv, int nefc) {
  return int64_t{nefc} * nv + rows_copy_rest(nefc, false);
}

// The scalars a packed rows copy of nefc rows with nnz values in their sets takes (kRowsPacked).
MYRIAD_HD int64_t packed_rows_size(int nefc, int64_t nnz) {
  return nnz + rows_copy_rest(nefc, true);
}

// The values in rows' sets, summed over its rows (Rows::colmask; needs it).
template <class T>
MYRIAD_HD int64_t row_values_count(const Rows<T>& rows) {
  int64_t nnz = 0;
  for (int i = 0; i < rows.nefc; ++i)
    nnz += column_count(column_set(rows.colmask + int64_t{kColumnWords} * i));
  return nnz;
}

// How far an env with nefc rows fills storage of `size` scalars. nnz: its rows' values in their
// sets (row_values_count), or -1 where its rows carry no sets (no packed copy).
MYRIAD_HD Placed placement(int nv, int nefc, int64_t size, int64_t nnz = -1) {
  const int64_t hessian = int64_t{nv} * nv, scratch = newton_scratch_size(nv, nefc);
  if (size < hessian) return Placed::kNothing;
  if (size < scratch) return Placed::kHessian;
  if (size >= scratch + placed_rows_size(nv, nefc)) return Placed::kRows;
  if (nnz >= 0 && size >= scratch + packed_rows_size(nefc, nnz)) return Placed::kRowsPacked;
  return Placed::kScratch;
}

// (run, as solve_run made it; own) => (run's H, scratch and rows in own as placement says; the
// rows copied by the group, J packed where only that fits). Returns the placement.
template <class G, class T>
MYRIAD_HD Placed place_in_storage(const G& g, NewtonRun<T>& run, const GroupStorage<T>& own) {
  const int nv = run.nv, nefc = run.rows.nefc;
  Placed placed = own.data ? placement(nv, nefc, own.size) : Placed::kNothing;
  if (placed == Placed::kScratch && run.rows.colmask)  // the dense rows do not fit: packed?
    placed = placement(nv, nefc, own.size, row_values_count(run.rows));
  if (placed == Placed::kNothing) return placed;
  run.H = own.data;
  if (placed == Placed::kHessian) return placed;
  run.scratch = own.data;  // H at the start, then the accessors' arrays (NewtonRun)
  if (placed == Placed::kScratch) return placed;
  const bool packed = placed == Placed::kRowsPacked;
  Rows<T>& rows = run.rows;
  T* colmask = own.data + newton_scratch_size(nv, nefc);
  T* D = colmask + int64_t{kColumnWords} * nefc;
  T* R = D + nefc;
  T* aref = R + nefc;
  T* frictionloss = aref + nefc;
  T* cone = frictionloss + nefc;
  // The int32 arrays in T slots, a T's room each (as solve.h's solve_rows_scratch): only ever
  // read and written as int32.
  int32_t* type = reinterpret_cast<int32_t*>(cone + nefc);
  int32_t* cone_dim = reinterpret_cast<int32_t*>(cone + 2 * nefc);
  int32_t* packed_at = packed ? reinterpret_cast<int32_t*>(cone + 3 * nefc) : nullptr;
  T* J = cone + (packed ? 4 : 3) * int64_t{nefc};
  const Rows<T> from = rows;
  if (packed) {  // each row's offset, summed in row order by one lane: the same on any group
    if (group_leader(g)) {
      int32_t at = 0;
      for (int i = 0; i < nefc; ++i) {
        packed_at[i] = at;
        at += column_count(row_columns(from, i, nv));
      }
    }
    g.sync();
    group_for(g, nefc, [&](int i) {
      const T* Ji = from.J + int64_t{i} * nv;
      T* to = J + packed_at[i];
      for (ColumnMask w = row_columns(from, i, nv); w; w &= w - 1) *to++ = Ji[lowest_column(w)];
    });
  } else {
    group_for(g, nefc * nv, [&](int k) { J[k] = from.J[k]; });
  }
  group_for(g, nefc, [&](int i) {
    if (from.colmask)
      for (int w = 0; w < kColumnWords; ++w)
        colmask[kColumnWords * i + w] = from.colmask[kColumnWords * i + w];
    D[i] = from.D[i];
    R[i] = from.R[i];
    aref[i] = from.aref[i];
    frictionloss[i] = from.frictionloss[i];
    cone[i] = from.cone[i];
    type[i] = from.type[i];
    cone_dim[i] = from.cone_dim[i];
  });
  rows.J = J;
  rows.colmask = from.colmask ? colmask : nullptr;
  rows.packed_at = packed_at;
  rows.D = D;
  rows.R = R;
  rows.aref = aref;
  rows.frictionloss = frictionloss;
  rows.cone = cone;
  rows.type = type;
  rows.cone_dim = cone_dim;
  return placed;
}

// solve (solve.h) by group g: the same outputs, bit for bit, on an env-major batch's env or a
// blocked batch's (Block > 1: the solver's contiguous copies filled and read back by the
// group). The rows' preparation (qM's mirror, the row types and cones: O(nv² + nefc)) runs on
// one lane. own: the group's storage (GroupStorage: the Hessian, the scratch, the rows as far as
// they fit); none: everything in the env's solver scratch. Returns what own took (every lane).
template <class G, class T, int Block>
MYRIAD_HD Placed solve(const G& g, const ModelView<T>& m, EnvData<T, Block>& d,
                       const GroupStorage<T>& own = GroupStorage<T>{}) {
  if (d.nefc[0] == T(0)) {
    group_for(g, m.nv, [&](int k) {
      d.qacc[k] = d.qacc_smooth[k];
      d.qfrc_constraint[k] = 0;
    });
    if (group_leader(g)) solve_finish(m, d, 0);
    return Placed::kNothing;
  }
  if (group_leader(g)) solve_prepare(m, d);
  g.sync();
  if constexpr (Block > 1) solve_copy_in(m, d, [&](int n, auto&& f) { group_for(g, n, f); });
  const SolveRowsScratch<T> s = solve_rows_scratch(m, d);
  bool has_cones = false;
  for (int r = 0; r < static_cast<int>(d.nefc[0]); ++r)
    has_cones = has_cones || s.type[r] == kContactElliptic;
  NewtonRun<T> run = solve_run(m, d, has_cones);
  const Placed placed = place_in_storage(g, run, own);
  const auto warm = m.disableflags & kDisableWarmstart ? d.qacc_smooth : d.qacc_warmstart;
  int niter;
  if constexpr (Block == 1) {
    niter = newton_finish(g, run, newton_begin(g, run, warm));
  } else {  // from the copy, into which qacc goes (newton_begin allows the alias)
    group_for(g, m.nv, [&](int k) { run.qacc[k] = warm[k]; });
    niter = newton_finish(g, run, newton_begin(g, run, static_cast<const T*>(run.qacc)));
  }
  // solve_finish's copy-back reads the copies every lane wrote.
  if constexpr (Block > 1) g.sync();
  if (group_leader(g)) solve_finish(m, d, niter);
  return placed;
}

}  // namespace myriad::physics::constraint
