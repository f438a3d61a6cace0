// MuJoCo's primal Newton constraint solver (3.11's engine_solver.c, mj_solNewton, with the
// warm start of engine_forward.c) for one env, header-only and MYRIAD_HD: no allocation, no
// exceptions, all scratch from the caller. Templated on the scalar (double to match libmujoco,
// float for speed).
//
// The problem: minimize over the joint acceleration a
//   cost(a) = ½(a − a_smooth)ᵀ M (a − a_smooth) + Σ_i s_i(jar_i),   jar = J·a − aref,
// with the row costs s_i
//   equality                        ½ D jar²
//   frictionloss (dof, tendon)      ½ D jar² while |jar| < R·floss, else floss·|jar| − ½ R floss²
//   limit, contact (pyramidal, frictionless)    ½ D jar² while jar < 0, else 0
//   elliptic contact (its dim rows together)    with U = s∘jar (s: mu for the normal row, the
//       friction coefficients for the others), N = U_0, T = ‖U_1..‖:
//       0 where N >= mu T (inside the cone), Σ ½ D jar² where mu N + T <= 0 (below its dual),
//       else ½ Dm (N − mu T)², Dm = D_normal / (mu² (1 + mu²)) (on the cone's surface)
// and the forces f = −∂s/∂jar, qfrc_constraint = Jᵀf. Each iteration takes the Newton direction
// −H⁻¹·grad, H = Jᵀ diag(D on rows in the quadratic zone) J + M (dense Cholesky, refactored every
// iteration where MuJoCo applies rank-1 updates: same matrix, other rounding), then an exact line
// search on the piecewise-quadratic 1-D cost (MuJoCo's CGsearch: Newton steps, then bracketing,
// at most ls_iterations cost evaluations, gradient tolerance ls_tolerance·tolerance; MuJoCo 3
// options, 50 and 0.01 by default). It stops when the line search finds no improvement, or when
// the improvement or ‖grad‖, times the cost scale, falls below the tolerance.
//
// MuJoCo 3 specifics followed: H is assembled as Jᵀ diag(D) J first, M added last (the rounding
// of mju_sqrMatTD + mj_addMDense); with constraint islands the cost is scaled by the island's
// inertia, Σ M_kk over its dofs (SolverOptions::island_inertia), not meaninertia·nv.
//
// Elliptic cones (MuJoCo's mj_constraintUpdate zones and HessianCone): a contact on the cone's
// surface adds J_cᵀ H_c J_c to H (H_c the dim x dim Hessian of its cost in jar) and no D; the line
// search decides each contact's zone anew at every step from five sums along the direction. While
// any row is elliptic the Hessian is assembled and factored in full every iteration (MuJoCo
// updates the factor and adds the cones by rank-1 updates: the same matrix, other rounding).
#pragma once

#include <cmath>
#include <cstdint>

#include "myriad/hd.h"
#include "physics/value.h"

namespace myriad::physics::constraint {

using std::fabs;
using std::sqrt;

// mjtConstraint: the type of each constraint row.
enum RowType : int32_t {
  kEquality = 0,
  kFrictionDof = 1,
  kFrictionTendon = 2,
  kLimitJoint = 3,
  kLimitTendon = 4,
  kContactFrictionless = 5,
  kContactPyramidal = 6,
  kContactElliptic = 7,
};

// One env's constraint rows, in MuJoCo's order (equality, frictionloss, limits, contacts), as
// mj_makeConstraint / mj_referenceConstraint leave them. The caller owns the memory.
template <class T>
struct Rows {
  int nefc = 0;                     // number of rows
  const int32_t* type = nullptr;    // [nefc] RowType
  const T* J = nullptr;             // [nefc, nv] dense, row-major, or packed (packed_at)
  const T* D = nullptr;             // [nefc] 1/R
  const T* R = nullptr;             // [nefc] regularizer
  const T* aref = nullptr;          // [nefc] reference acceleration
  const T* frictionloss = nullptr;  // [nefc] frictionloss rows' floss (read for those only)
  // Elliptic contacts (rows of type kContactElliptic, a contact's dim rows in a row): cone_dim
  // holds its dim on its first row (0 on the others), cone the scale of each row: mu =
  // friction[0] sqrt(R_1 / R_0) for the normal row, friction[k - 1] for row k.
  const int32_t* cone_dim = nullptr;
  const T* cone = nullptr;
  bool has_cones = false;
  // The sparse rows (make.h's efc_J_colmask; null: every row dense): row i can be nonzero only
  // at the columns of its bit set, kColumnWords scalars colmask[kColumnWords i + w] of
  // kColumnBits bits each (row_columns; MuJoCo's sparse structure: a contact's the dofs on one of
  // its bodies' chains but not both). J is dense in the batch, +0 outside the set (make.h);
  // J·x, Jᵀ·force, a row's J_rᵀ D_r J_r and the cones' J_cᵀ H_c J_c read only these columns,
  // which for finite values gives the dense sums' bits (a skipped term is a zero product, and
  // adding a zero leaves a sum as it was; a non-finite qacc or force would make the dense sums
  // NaN where these stay finite) in O(nnz) where the dense row costs O(nv). The lane groups'
  // Jᵀ·force and J_rᵀ D_r J_r (solve_group.h: a dof or an entry per lane) read each row's entry
  // in the column: dense rows directly, packed ones after testing the set.
  const T* colmask = nullptr;
  // The packed rows (null: J dense [nefc, nv]; needs colmask): row i's values at its set's
  // columns only, in column order, from J + packed_at[i] (row_values, value_index): the lane
  // group's copy of its rows where the dense rows do not fit its storage (solve_group.h). Every
  // function here reads either form, with the same bits.
  const int32_t* packed_at = nullptr;
};

// A row's columns as a bit set, bit k for column k (nv <= 64 is checked at import), stored in
// kColumnWords scalars of kColumnBits bits each (exact in float32 too). Visiting a set's columns
// in ascending order: for (ColumnMask w = set; w; w &= w - 1) { const int k = lowest_column(w); }
using ColumnMask = uint64_t;
constexpr int kColumnWords = 4;
constexpr int kColumnBits = 16;

MYRIAD_HD int lowest_column(ColumnMask w) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(w)) - 1;
#else
  return __builtin_ctzll(w);
#endif
}

// The columns 0..i.
MYRIAD_HD ColumnMask columns_to(int i) { return (ColumnMask{2} << i) - 1; }

// The bit set that words [kColumnWords] hold.
template <class T>
MYRIAD_HD ColumnMask column_set(const T* words) {
  ColumnMask set = 0;
  for (int k = 0; k < kColumnWords; ++k)
    set |= ColumnMask{static_cast<uint32_t>(words[k])} << (kColumnBits * k);
  return set;
}

// Row i's columns that can be nonzero (Rows::colmask), or 0..nv-1 where the rows carry none.
template <class T>
MYRIAD_HD ColumnMask row_columns(const Rows<T>& rows, int i, int nv) {
  return rows.colmask ? column_set(rows.colmask + int64_t{kColumnWords} * i) : columns_to(nv - 1);
}

// How many columns a set holds.
MYRIAD_HD int column_count(ColumnMask w) {
#if defined(__CUDA_ARCH__)
  return __popcll(static_cast<unsigned long long>(w));
#else
  return __builtin_popcountll(w);
#endif
}

// Row i's values: J + packed_at[i] for packed rows (Rows::packed_at), J + i nv for dense ones.
// Its value at column col of its set lies at value_index(packed, set, col) from there: the
// column for dense rows, the column's rank in the set for packed ones. A walk over the set in
// ascending order (for (ColumnMask w = set; ...)) meets the ranks 0, 1, ... in turn.
template <class T>
MYRIAD_HD const T* row_values(const Rows<T>& rows, int i, int nv) {
  return rows.J + (rows.packed_at ? int64_t{rows.packed_at[i]} : int64_t{i} * nv);
}
MYRIAD_HD int value_index(bool packed, ColumnMask set, int col) {
  return packed ? column_count(set & ((ColumnMask{1} << col) - 1)) : col;
}

// mjOption.iterations, tolerance, ls_iterations, ls_tolerance; mjStatistic.meaninertia;
// island_inertia: Σ M_kk over the dofs of the trees the rows touch (MuJoCo 3's island scale), 0
// for meaninertia·max(1, nv).
template <class T>
struct SolverOptions {
  int iterations = 100;
  T tolerance = T(1e-8);
  int ls_iterations = 50;
  T ls_tolerance = T(0.01);
  T meaninertia = T(1);
  T island_inertia = T(0);
};

// mjMINVAL: the floor of every denominator (Cholesky pivots, line-search curvature).
constexpr double kMinVal = 1e-15;

// How many T of scratch newton_solve needs for nv dofs and up to nefc_max rows:
// H [nv, nv], Ma, Mv, grad, Mgrad, search [nv] each, Jaref, Jv [nefc], quad [nefc, 3],
// quadratic [nefc] (which rows H's factor holds), and for the lane groups' solve
// (newton_group.h) per_row [nefc, 4] (what each row adds to a sum, before the sum in row order).
MYRIAD_HD int64_t newton_scratch_size(int nv, int nefc_max) {
  return int64_t{nv} * nv + 5 * int64_t{nv} + 10 * int64_t{nefc_max};
}

namespace detail {

// V: a scalar, or Lanes (physics/lanes.h) where the tile factors several envs' Hessians at once.
template <class V>
MYRIAD_HD V dot(const V* a, const V* b, int n) {
  V s = V(0);
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// (M [n, n], x [n]) => (res [n] = M·x)
template <class T>
MYRIAD_HD void mul_mat_vec(T* res, const T* M, const T* x, int rows, int cols) {
  for (int i = 0; i < rows; ++i) res[i] = dot(M + int64_t{i} * cols, x, cols);
}

// (row i of J, x [nv]) => (J_i·x, summed over the row's columns in order: dot's bits)
template <class T>
MYRIAD_HD T row_dot(const Rows<T>& rows, int i, int nv, const T* x) {
  const T* Ji = row_values(rows, i, nv);
  const bool packed = rows.packed_at != nullptr;
  T s = T(0);
  int rank = 0;
  for (ColumnMask w = row_columns(rows, i, nv); w; w &= w - 1, ++rank) {
    const int col = lowest_column(w);
    s += Ji[packed ? rank : col] * x[col];
  }
  return s;
}

// Row i's value at column col: 0 outside its set (set: row_columns(rows, i, nv)).
template <class T>
MYRIAD_HD T row_value(const Rows<T>& rows, int i, int nv, ColumnMask set, int col) {
  if (!(set >> col & 1)) return T(0);
  return row_values(rows, i, nv)[value_index(rows.packed_at != nullptr, set, col)];
}

// (row i of J, scale > 0) => (out [nv] = scale·J_i: outside the row's set, row_value's +0 times
// the scale, as the dense row's +0 there)
template <class T>
MYRIAD_HD void row_scaled(const Rows<T>& rows, int i, int nv, T scale, T* out) {
  const ColumnMask set = row_columns(rows, i, nv);
  for (int k = 0; k < nv; ++k) out[k] = row_value(rows, i, nv, set, k) * scale;
}

// (J [nefc, nv], a [nv], aref [nefc]) => (jar [nefc] = J·a − aref)
template <class T>
MYRIAD_HD void jac_times(T* jar, const Rows<T>& rows, int nv, const T* a, const T* aref) {
  for (int i = 0; i < rows.nefc; ++i) {
    jar[i] = row_dot(rows, i, nv, a);
    if (aref) jar[i] -= aref[i];
  }
}

MYRIAD_HD bool is_friction(int type) { return type == kFrictionDof || type == kFrictionTendon; }

// Row i at jar => (its force f = −∂s/∂jar; returns s). *quadratic: the row is in its quadratic
// zone (it then enters the Hessian). MuJoCo's mj_constraintUpdate zones: frictionloss is linear
// from |jar| >= R·floss, an inequality is satisfied from jar >= 0.
template <class T>
MYRIAD_HD T row_cost(const Rows<T>& rows, int i, T jar, T* force, bool* quadratic) {
  const int type = rows.type[i];
  const T D = rows.D[i];
  if (is_friction(type)) {
    const T f = rows.frictionloss[i];
    const T Rf = rows.R[i] * f;
    if (jar <= -Rf) {
      *force = f;
      *quadratic = false;
      return -T(0.5) * Rf * f - f * jar;
    }
    if (jar >= Rf) {
      *force = -f;
      *quadratic = false;
      return -T(0.5) * Rf * f + f * jar;
    }
  } else if (type != kEquality && jar >= 0) {
    *force = 0;
    *quadratic = false;
    return 0;
  }
  *force = -D * jar;
  *quadratic = true;
  return T(0.5) * D * jar * jar;
}

// The zones of an elliptic contact's cost.
enum ConeZone : int { kConeTop = 0, kConeBottom = 1, kConeMiddle = 2 };

// Elliptic contact whose first row is i, at jar [nefc] => (its zone; U [dim] = s∘jar, N = U_0,
// Tn = ‖U_1..U_dim-1‖). MuJoCo's tests, in its order: inside the cone (N >= mu T, or T = 0 and
// N >= 0), below its dual (mu N + T <= 0, or T = 0 and N < 0), else on its surface.
template <class T>
MYRIAD_HD int cone_zone(const Rows<T>& rows, int i, const T* jar, T* U, T* N, T* Tn) {
  const int dim = rows.cone_dim[i];
  const T mu = rows.cone[i];
  T tt = 0;
  for (int j = 0; j < dim; ++j) U[j] = rows.cone[i + j] * jar[i + j];
  for (int j = 1; j < dim; ++j) tt += U[j] * U[j];
  *N = U[0];
  *Tn = sqrt(tt);
  if (*N >= mu * *Tn || (*Tn <= T(0) && *N >= T(0))) return kConeTop;
  if (mu * *N + *Tn <= T(0) || (*Tn <= T(0) && *N < T(0))) return kConeBottom;
  return kConeMiddle;
}

// Elliptic contact whose first row is i, at jar [nefc] => (its cost; force [dim] = −∂s/∂jar of
// its rows; *zone).
template <class T>
MYRIAD_HD T cone_cost(const Rows<T>& rows, int i, const T* jar, T* force, int* zone) {
  const int dim = rows.cone_dim[i];
  T U[6], N, Tn;
  *zone = cone_zone(rows, i, jar, U, &N, &Tn);
  if (*zone == kConeTop) {
    for (int j = 0; j < dim; ++j) force[j] = 0;
    return 0;
  }
  if (*zone == kConeBottom) {
    T cost = 0;
    for (int j = 0; j < dim; ++j) {
      force[j] = -rows.D[i + j] * jar[i + j];
      cost += T(0.5) * rows.D[i + j] * jar[i + j] * jar[i + j];
    }
    return cost;
  }
  const T mu = rows.cone[i];
  const T Dm = rows.D[i] / (mu * mu * (T(1) + mu * mu));
  const T NmT = N - mu * Tn;
  force[0] = -Dm * NmT * mu;
  for (int j = 1; j < dim; ++j) force[j] = -force[0] / Tn * U[j] * rows.cone[i + j];
  return T(0.5) * Dm * NmT * NmT;
}

// (rows, jar [nefc]) => (Σ row costs; force [nefc], qfrc = Jᵀ·force [nv] when given)
template <class T>
MYRIAD_HD T constraint_update(const Rows<T>& rows, int nv, const T* jar, T* force, T* qfrc) {
  T cost = 0;
  if (qfrc)
    for (int k = 0; k < nv; ++k) qfrc[k] = 0;
  for (int i = 0; i < rows.nefc; ++i) {
    T f[6];
    int n = 1;
    if (rows.type[i] == kContactElliptic) {
      int zone;
      n = rows.cone_dim[i];
      cost += cone_cost(rows, i, jar, f, &zone);
    } else {
      bool quadratic;
      cost += row_cost(rows, i, jar[i], f, &quadratic);
    }
    for (int j = 0; j < n; ++j) {
      if (force) force[i + j] = f[j];
      if (qfrc && f[j] != T(0)) {
        const T* Ji = row_values(rows, i + j, nv);
        const bool packed = rows.packed_at != nullptr;
        int rank = 0;
        for (ColumnMask w = row_columns(rows, i + j, nv); w; w &= w - 1, ++rank) {
          const int k = lowest_column(w);
          qfrc[k] += Ji[packed ? rank : k] * f[j];
        }
      }
    }
    i += n - 1;
  }
  return cost;
}

// Gauss cost ½(a − a_smooth)ᵀ(M·a − qfrc_smooth), given Ma = M·a (M·a_smooth = qfrc_smooth).
template <class T>
MYRIAD_HD T gauss_cost(int nv, const T* Ma, const T* qfrc_smooth, const T* a, const T* a_smooth) {
  T g = 0;
  for (int k = 0; k < nv; ++k) g += T(0.5) * (Ma[k] - qfrc_smooth[k]) * (a[k] - a_smooth[k]);
  return g;
}

// Elliptic contact r (its first row) at jar => (Hc [dim, dim] = ∂²s_c/∂jar², both triangles:
// MuJoCo's HessianCone, rank dim − 1, zero along the cone's ray) when the contact is on its
// cone's surface; returns false (Hc untouched) in the other zones.
template <class T>
MYRIAD_HD bool cone_hessian(const Rows<T>& rows, int r, const T* jar, T* Hc) {
  const int dim = rows.cone_dim[r];
  T U[6], N, Tn;
  if (cone_zone(rows, r, jar, U, &N, &Tn) != kConeMiddle) return false;
  const T mu = rows.cone[r];
  const T Dm = rows.D[r] / (mu * mu * (T(1) + mu * mu));
  Hc[0] = 1;
  for (int j = 1; j < dim; ++j) Hc[j] = -mu / Tn * U[j];
  const T c3 = mu * N / (Tn * Tn * Tn);
  for (int k = 1; k < dim; ++k)
    for (int j = k; j < dim; ++j) Hc[k * dim + j] = c3 * U[j] * U[k];
  for (int j = 1; j < dim; ++j) Hc[j * dim + j] += mu * mu - mu * N / Tn;
  for (int k = 0; k < dim; ++k)
    for (int j = k; j < dim; ++j) {
      Hc[k * dim + j] *= Dm * rows.cone[r + k] * rows.cone[r + j];
      Hc[j * dim + k] = Hc[k * dim + j];
    }
  return true;
}

// (row i of H's lower triangle, the contact's rows r .. r + dim − 1, their columns (one set for
// the contact's rows) and Hc) => (H[i, j] += (J_cᵀ H_c J_c)[i, j] for the columns j <= i; nothing
// where column i of H_c J_c is zero). The contact's rows lie one after another in J, nv apart
// when dense, the set's count apart when packed.
template <class T>
MYRIAD_HD void add_cone_hessian_row(T* H, int nv, const Rows<T>& rows, int r, ColumnMask columns,
                                    int dim, const T* Hc, int i) {
  const bool packed = rows.packed_at != nullptr;
  const T* Jc = row_values(rows, r, nv);
  const int stride = packed ? column_count(columns) : nv;
  if (!(columns >> i & 1)) return;  // column i of J_c is zero
  const int at_i = value_index(packed, columns, i);
  T G[6];  // (H_c J_c)[:, i]
  bool any = false;
  for (int b = 0; b < dim; ++b) {
    T g = 0;
    for (int a = 0; a < dim; ++a) g += Hc[a * dim + b] * Jc[a * stride + at_i];
    G[b] = g;
    any = any || g != T(0);
  }
  if (!any) return;
  int rank = 0;
  for (ColumnMask w = columns & columns_to(i); w; w &= w - 1, ++rank) {
    const int j = lowest_column(w);
    const int at_j = packed ? rank : j;
    T s = 0;
    for (int b = 0; b < dim; ++b) s += G[b] * Jc[b * stride + at_j];
    H[i * nv + j] += s;
  }
}

// (H's lower triangle, rows, jar) => (H += J_cᵀ H_c J_c for each elliptic contact c on its cone's
// surface).
template <class T>
MYRIAD_HD void add_cone_hessians(T* H, int nv, const Rows<T>& rows, const T* jar) {
  for (int r = 0; r < rows.nefc; ++r) {
    if (rows.type[r] != kContactElliptic || rows.cone_dim[r] == 0) continue;
    T Hc[36];
    if (!cone_hessian(rows, r, jar, Hc)) continue;
    const int dim = rows.cone_dim[r];
    const ColumnMask columns = row_columns(rows, r, nv);
    for (ColumnMask w = columns; w; w &= w - 1)
      add_cone_hessian_row(H, nv, rows, r, columns, dim, Hc, lowest_column(w));
    r += dim - 1;
  }
}

// Unit roundoff of T: a Cholesky pivot below kEps·H_jj is rounding noise.
template <class T>
constexpr T kEps = sizeof(T) == 4 ? T(1.1920929e-7) : T(2.220446049250313e-16);

// (M [nv, nv], rows, jar [nefc]) => (H [nv, nv]: lower triangle of
// H = Jᵀ diag(D on quadratic rows) J + M, summed in that order as MuJoCo 3 does; the upper
// triangle is not written).
template <class T>
MYRIAD_HD void assemble_hessian(T* H, int nv, const T* M, const Rows<T>& rows, const T* jar) {
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j <= i; ++j) H[i * nv + j] = T(0);
  int cone_rows_left = 0;  // rows left of a bottom-zone elliptic contact (quadratic rows)
  for (int r = 0; r < rows.nefc; ++r) {
    T f[6];
    bool quadratic;
    if (rows.type[r] == kContactElliptic) {
      if (rows.cone_dim[r] > 0) {
        T U[6], N, Tn;
        const int zone = cone_zone(rows, r, jar, U, &N, &Tn);
        cone_rows_left = zone == kConeBottom ? rows.cone_dim[r] : 0;
      }
      quadratic = cone_rows_left > 0;
      if (cone_rows_left > 0) --cone_rows_left;
    } else {
      row_cost(rows, r, jar[r], f, &quadratic);
    }
    if (!quadratic) continue;
    const T* Jr = row_values(rows, r, nv);
    const bool packed = rows.packed_at != nullptr;
    const ColumnMask columns = row_columns(rows, r, nv);
    const T D = rows.D[r];
    int rank_i = 0;
    for (ColumnMask w = columns; w; w &= w - 1, ++rank_i) {
      const int i = lowest_column(w);
      const T Jri = Jr[packed ? rank_i : i];
      if (Jri == T(0)) continue;
      const T DJi = D * Jri;
      int rank_j = 0;
      for (ColumnMask v = columns & columns_to(i); v; v &= v - 1, ++rank_j) {
        const int j = lowest_column(v);
        H[i * nv + j] += DJi * Jr[packed ? rank_j : j];
      }
    }
  }
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j <= i; ++j) H[i * nv + j] += M[i * nv + j];
  if (rows.has_cones) add_cone_hessians(H, nv, rows, jar);
}

// One point of the line search: step, cost, first and second derivative along the search.
template <class T>
struct LinePoint {
  T alpha, cost, d1, d2;
};

// What the line search reads: the rows at the current iterate and along the search direction.
template <class T>
struct LineSearch {
  const Rows<T>* rows;
  const T* Jaref;  // [nefc] J·a − aref at the current iterate
  const T* Jv;     // [nefc] J·search
  // [nefc, 3] ½D·Jaref², D·Jaref·Jv, ½D·Jv²; an elliptic contact's first row holds the sums over
  // its rows, the next two rows U_0, V_0, ΣU_j², ΣU_jV_j, ΣV_j² (j >= 1) and Dm, with U = s∘Jaref
  // and V = s∘Jv (line_prepare).
  const T* quad;
  T gauss[3];  // Gauss cost as a quadratic in alpha
  int neval;
  int max_eval;   // mjOption.ls_iterations
  T improvement;  // cost(0) − cost(returned step), 0 when it returns 0
};

// (quad [nefc, 3] of every row, elliptic contact i: its first row) => (its entries rewritten as
// LineSearch::quad says: its rows' sums at its first row, then U0, V0, UU, UV, VV, Dm).
template <class T>
MYRIAD_HD void line_prepare_cone(const Rows<T>& rows, int i, const T* Jaref, const T* Jv, T* quad) {
  const int dim = rows.cone_dim[i];
  T* q = quad + 3 * i;
  for (int j = 1; j < dim; ++j)
    for (int k = 0; k < 3; ++k) q[k] += q[3 * j + k];
  const T mu = rows.cone[i];
  T UU = 0, UV = 0, VV = 0;
  for (int j = 1; j < dim; ++j) {
    const T u = rows.cone[i + j] * Jaref[i + j], v = rows.cone[i + j] * Jv[i + j];
    UU += u * u;
    UV += u * v;
    VV += v * v;
  }
  T* c = q + 3;
  c[0] = mu * Jaref[i];
  c[1] = mu * Jv[i];
  c[2] = UU;
  c[3] = UV;
  c[4] = VV;
  c[5] = rows.D[i] / (mu * mu * (T(1) + mu * mu));
}

// line_prepare_cone for each elliptic contact (i its first row).
template <class T>
MYRIAD_HD void line_prepare_cones(const Rows<T>& rows, const T* Jaref, const T* Jv, T* quad) {
  for (int i = 0; i < rows.nefc; ++i)
    if (rows.type[i] == kContactElliptic && rows.cone_dim[i] > 0)
      line_prepare_cone(rows, i, Jaref, Jv, quad);
}

// What a row adds to the line search's sums at alpha (line_row's kind): nothing; q[0..2] to the
// quadratic's coefficients (a row in its quadratic zone, an elliptic contact below its dual);
// o[0], o[1] to its constant and linear ones (frictionloss in its linear zone); o[0..2] to the
// cost and derivatives of the contacts on their cone's surface.
enum LineKind : int { kLineNone = 0, kLineQuadratic = 1, kLineLinear = 2, kLineCone = 3 };

// The line search's sums: the 1-D cost's quadratic coefficients, the cone surface's terms.
template <class T>
struct LineSums {
  T q0, q1, q2, cone_cost, cone_d1, cone_d2;
};

// (line search, row i, alpha) => (what row i adds, in o [3]; returns its LineKind). An elliptic
// contact's rows add on its first row (the zone at alpha from N = U0 + alpha V0 and
// T² = UU + alpha (2 UV + alpha VV)), nothing on the others.
template <class T>
MYRIAD_HD int line_row(const LineSearch<T>& ls, int i, T alpha, T* o) {
  const Rows<T>& rows = *ls.rows;
  const T* q = ls.quad + 3 * i;
  const int type = rows.type[i];
  auto quadratic = [&] {
    o[0] = q[0];
    o[1] = q[1];
    o[2] = q[2];
    return kLineQuadratic;
  };
  if (type == kContactElliptic) {
    if (rows.cone_dim[i] == 0) return kLineNone;
    const T* c = q + 3;  // U0, V0, UU, UV, VV, Dm
    const T mu = rows.cone[i];
    const T N = c[0] + alpha * c[1];
    const T Tsq = c[2] + alpha * (T(2) * c[3] + alpha * c[4]);
    if (Tsq <= T(0)) return N < T(0) ? quadratic() : kLineNone;
    const T Tn = sqrt(Tsq);
    if (N >= mu * Tn) return kLineNone;  // inside the cone
    if (mu * N + Tn <= T(0)) return quadratic();
    const T N1 = c[1];
    const T T1 = (c[3] + alpha * c[4]) / Tn;
    const T T2 = c[4] / Tn - (c[3] + alpha * c[4]) * T1 / (Tn * Tn);
    const T Dm = c[5];
    const T NmT = N - mu * Tn, N1mT1 = N1 - mu * T1;
    o[0] = T(0.5) * Dm * NmT * NmT;
    o[1] = Dm * NmT * N1mT1;
    o[2] = Dm * (N1mT1 * N1mT1 + NmT * (-mu * T2));
    return kLineCone;
  }
  const T start = ls.Jaref[i], dir = ls.Jv[i];
  const T x = start + alpha * dir;
  if (is_friction(type)) {
    const T f = rows.frictionloss[i];
    const T Rf = rows.R[i] * f;
    if (x <= -Rf) {
      o[0] = f * (-T(0.5) * Rf - start);
      o[1] = -(f * dir);  // q1 + (−y) is q1 − y, bit for bit
      return kLineLinear;
    }
    if (x >= Rf) {
      o[0] = f * (-T(0.5) * Rf + start);
      o[1] = f * dir;
      return kLineLinear;
    }
  } else if (type != kEquality && x >= 0) {
    return kLineNone;
  }
  return quadratic();
}

// (sums, a row's kind and terms) => (the sums with the row added).
template <class T>
MYRIAD_HD void line_add(LineSums<T>& s, int kind, const T* o) {
  if (kind == kLineQuadratic) {
    s.q0 += o[0];
    s.q1 += o[1];
    s.q2 += o[2];
  } else if (kind == kLineLinear) {
    s.q0 += o[0];
    s.q1 += o[1];
  } else if (kind == kLineCone) {
    s.cone_cost += o[0];
    s.cone_d1 += o[1];
    s.cone_d2 += o[2];
  }
}

template <class T>
MYRIAD_HD LineSums<T> line_sums_begin(const LineSearch<T>& ls) {
  return LineSums<T>{ls.gauss[0], ls.gauss[1], ls.gauss[2], T(0), T(0), T(0)};
}

// (sums over every row at alpha) => (the line point; ls.neval counted). A curvature that is not
// positive (it is for a nonzero search, M being positive definite, unless it underflows) becomes
// kMinVal, as in MuJoCo.
template <class T>
MYRIAD_HD LinePoint<T> line_point(LineSearch<T>& ls, const LineSums<T>& s, T alpha) {
  LinePoint<T> p;
  p.alpha = alpha;
  p.cost = s.cone_cost + (alpha * alpha * s.q2 + alpha * s.q1 + s.q0);
  p.d1 = s.cone_d1 + (T(2) * alpha * s.q2 + s.q1);
  p.d2 = s.cone_d2 + T(2) * s.q2;
  if (!(p.d2 > T(0))) p.d2 = T(kMinVal);
  ++ls.neval;
  return p;
}

// (line search, alpha) => (cost(a + alpha·search) and its two derivatives), the rows summed in
// their order.
template <class T>
MYRIAD_HD LinePoint<T> line_eval(LineSearch<T>& ls, T alpha) {
  LineSums<T> s = line_sums_begin(ls);
  for (int i = 0; i < ls.rows->nefc; ++i) {
    T o[3];
    line_add(s, line_row(ls, i, alpha, o), o);
  }
  return line_point(ls, s, alpha);
}

// Moves bracket end p to the best of the candidates on its side of the minimum (same derivative
// sign, smaller |derivative|); if it moved, next = the Newton point from it. Returns 0 if not.
template <class T, class Eval>
MYRIAD_HD int update_bracket(Eval& eval, LinePoint<T>& p, const LinePoint<T>* cand,
                             LinePoint<T>& next) {
  int flag = 0;
  MYRIAD_UNROLL
  for (int i = 0; i < 3; ++i) {
    if (p.d1 < 0 && cand[i].d1 < 0 && p.d1 < cand[i].d1) {
      p = cand[i];
      flag = 1;
    } else if (p.d1 > 0 && cand[i].d1 > 0 && p.d1 > cand[i].d1) {
      p = cand[i];
      flag = 2;
    }
  }
  if (flag) next = eval(p.alpha - p.d1 / p.d2);
  return flag;
}

// MuJoCo's CGsearch: the step along the search direction that minimizes the 1-D cost, to
// |derivative| < gtol. One Newton step from 0; then Newton steps while the derivative keeps its
// sign; then bisection of the bracket with the Newton points of both ends as candidates. Returns
// 0 when nothing improves the cost; ls.improvement is what the returned step gains.
// cone_rules: MuJoCo 3.11's variant as measured on elliptic-cone problems (the first Newton
// point taken whatever its cost, the bracket's far end starting at 0). Without cones the engine
// keeps the variant that falls back to 0 and leaves the far end unset until a one-sided step:
// libmujoco's trajectories on pyramidal problems agree with it to 1e-12 in float64, and float32
// needs the fallback where rounding makes the Newton point cost more.
// eval(alpha): the line point at alpha, counting ls.neval (line_eval, or the lane group's
// version of it in newton_group.h).
template <class T, class Eval>
MYRIAD_HD T line_search_with(LineSearch<T>& ls, T gtol, bool cone_rules, Eval& eval) {
  ls.neval = 0;
  ls.improvement = 0;
  const LinePoint<T> p0 = eval(T(0));
  LinePoint<T> p1 = eval(p0.alpha - p0.d1 / p0.d2);
  if (!cone_rules && p0.cost < p1.cost) p1 = p0;
  auto done = [&](const LinePoint<T>& p) {
    ls.improvement = p0.cost - p.cost;
    return p.alpha;
  };
  if (fabs(p1.d1) < gtol) return done(p1);

  // One-sided Newton steps until the derivative changes sign.
  const T dir = p1.d1 < 0 ? T(1) : T(-1);
  LinePoint<T> p2 = p0;
  bool p2_set = cone_rules;
  while (p1.d1 * dir <= -gtol && ls.neval < ls.max_eval) {
    p2 = p1;
    p2_set = true;
    p1 = eval(p1.alpha - p1.d1 / p1.d2);
    if (fabs(p1.d1) < gtol) return done(p1);
  }
  if (ls.neval >= ls.max_eval || !p2_set) return done(p1);

  // Bracketed search between p1 and p2.
  LinePoint<T> p2next = p1;
  LinePoint<T> p1next = eval(p1.alpha - p1.d1 / p1.d2);
  while (ls.neval < ls.max_eval) {
    const LinePoint<T> pmid = eval(T(0.5) * (p1.alpha + p2.alpha));
    const LinePoint<T> cand[3] = {p1next, p2next, pmid};
    // The converged candidate with the lowest cost, if any.
    int best = -1;
    MYRIAD_UNROLL
    for (int i = 0; i < 3; ++i)
      if (fabs(cand[i].d1) < gtol && (best < 0 || cand[i].cost < cand[best].cost)) best = i;
    if (best >= 0) return done(cand[best]);
    const int b1 = update_bracket(eval, p1, cand, p1next);
    const int b2 = update_bracket(eval, p2, cand, p2next);
    // No bracket end moved: numerical accuracy reached.
    if (!b1 && !b2) return done(pmid);
  }
  // Out of evaluations: the better bracket end, if it improves on 0.
  if (p1.cost <= p2.cost && p1.cost < p0.cost) return done(p1);
  if (p2.cost <= p1.cost && p2.cost < p0.cost) return done(p2);
  return 0;
}

template <class T>
MYRIAD_HD T line_search(LineSearch<T>& ls, T gtol, bool cone_rules) {
  auto eval = [&ls](T alpha) { return line_eval(ls, alpha); };
  return line_search_with(ls, gtol, cone_rules, eval);
}

}  // namespace detail

// (H's lower triangle) => (L, in place: the lower triangle of its Cholesky factor; the upper
// triangle is neither read nor written). A pivot below kMinVal is raised to kMinVal
// (mju_cholFactor's mindiag), so every division stays finite. A pivot below kEps·H_jj is raised
// to that too: in exact arithmetic every pivot is at least the matching pivot of M (> 0), so a
// smaller one is cancellation. In double that never happens for a sane M; in float it does when
// D is huge (pyramidal edges at tiny mu have D ~ 1/mu²) and would blow the search direction up
// to inf. No branch on a value (select), so that lanes of envs run it together.
template <class V>
MYRIAD_HD void cholesky_in_place(V* L, int nv) {
  using S = scalar_of<V>;
  for (int j = 0; j < nv; ++j) {
    V* Lj = L + j * nv;
    const V scaled = Lj[j] * detail::kEps<S>;
    const V floor = select(scaled > S(kMinVal), scaled, V(S(kMinVal)));
    V pivot = Lj[j] - detail::dot(Lj, Lj, j);
    pivot = select(pivot < floor, floor, pivot);
    Lj[j] = sqrt(pivot);
    const V inv = S(1) / Lj[j];
    for (int i = j + 1; i < nv; ++i) {
      V* Li = L + i * nv;
      Li[j] = (Li[j] - detail::dot(Li, Lj, j)) * inv;
    }
  }
}

// mju_cholUpdate: (L, x [nv]) => (L: the factor of L Lᵀ + x xᵀ (plus) or L Lᵀ − x xᵀ; x is
// overwritten). Returns false where a pivot falls below kMinVal (in float: below 64 ulps of the
// old one, where a downdate has lost the matrix to cancellation); the caller then factors H
// anew, as MuJoCo does when the rank drops.
template <class T>
struct CholRotation {
  T r, c, cinv, s;  // the new L_kk, and the rotation that updates the rows below it
};

// Step k of chol_update: (L_kk, x_k) => (its rotation); returns false where the pivot fell below
// the floor (and was raised to it).
template <class T>
MYRIAD_HD bool chol_rotation(T Lkk, T xk, bool plus, CholRotation<T>* rot) {
  bool full_rank = true;
  T tmp = Lkk * Lkk + (plus ? xk * xk : -xk * xk);
  const T floor = sizeof(T) == 4 ? T(64) * detail::kEps<T> * Lkk * Lkk : T(0);
  if (tmp < T(kMinVal) || tmp < floor) {
    tmp = T(kMinVal) > floor ? T(kMinVal) : floor;
    full_rank = false;
  }
  rot->r = sqrt(tmp);
  rot->c = rot->r / Lkk;
  rot->cinv = T(1) / rot->c;
  rot->s = xk / Lkk;
  return full_rank;
}

// Step k of chol_update on row i > k: (L_ik, x_i) => (both rotated).
template <class T>
MYRIAD_HD void chol_rotate_row(const CholRotation<T>& rot, bool plus, T* Lik, T* xi) {
  *Lik = plus ? (*Lik + rot.s * *xi) * rot.cinv : (*Lik - rot.s * *xi) * rot.cinv;
  *xi = rot.c * *xi - rot.s * *Lik;
}

template <class T>
MYRIAD_HD bool chol_update(T* L, T* x, int nv, bool plus) {
  bool full_rank = true;
  for (int k = 0; k < nv; ++k) {
    if (x[k] == T(0)) continue;
    CholRotation<T> rot;
    if (!chol_rotation(L[k * nv + k], x[k], plus, &rot)) full_rank = false;
    L[k * nv + k] = rot.r;
    for (int i = k + 1; i < nv; ++i) chol_rotate_row(rot, plus, &L[i * nv + k], &x[i]);
  }
  return full_rank;
}

// (L from cholesky_in_place, b [nv]) => (x [nv] = (L Lᵀ)⁻¹ b); x may alias b.
template <class V>
MYRIAD_HD void chol_solve(V* x, const V* L, const V* b, int nv) {
  for (int i = 0; i < nv; ++i) x[i] = (b[i] - detail::dot(L + i * nv, x, i)) / L[i * nv + i];
  for (int i = nv - 1; i >= 0; --i) {
    V s = x[i];
    for (int k = i + 1; k < nv; ++k) s -= L[k * nv + i] * x[k];
    x[i] = s / L[i * nv + i];
  }
}

// One env's Newton solve between its Hessian factorizations, so that a caller can factor
// several envs' Hessians together (physics/tile.h: in SIMD lanes) between the steps:
//   status = newton_begin(run, qacc_warmstart);
//   while (status == kNewtonFactor) {
//     newton_factor(run);  // newton_update, cholesky_in_place if asked, chol_solve: H⁻¹·grad
//     status = newton_continue(run);
//   }
// As MuJoCo, the Hessian is factored in full at the start; later iterations update the factor
// by one rank-1 update (or downdate) per row that entered (or left) its quadratic zone, and
// factor anew only when an update loses rank.
// which is newton_finish, and with newton_begin, newton_solve. The caller sets every field
// above `cost` before newton_begin.
template <class T>
struct NewtonRun {
  int nv;
  const T* M;            // [nv, nv] full symmetric
  const T* qfrc_smooth;  // [nv]
  const T* qacc_smooth;  // [nv]
  Rows<T> rows;
  SolverOptions<T> opt;
  T* scratch;          // [newton_scratch_size(nv, nefc_max)], nefc_max >= rows.nefc
  T* H;                // [nv, nv]: the Hessian, then its factor; scratch's start, or storage the
                       // caller places nearer (a CUDA block's shared memory: solve_group.h)
  T* qacc;             // [nv] out; may alias qacc_warmstart
  T* efc_force;        // [nefc] out
  T* qfrc_constraint;  // [nv] out
  T cost;              // the solver's state between calls
  T scale;
  int iter;
  int small_improvements;  // float: consecutive improvements within the cost's rounding
  bool refactor;  // hessian() holds H, to be factored in full (else: its factor, to update)

  // Scratch: H [nv, nv], Ma, Mv, grad, Mgrad, search [nv] each, Jaref, Jv [nefc], quad [nefc, 3],
  // quadratic [nefc] (1 where the factor holds the row, else 0), per_row [nefc, 4] (the lane
  // groups' solve only).
  MYRIAD_HD T* hessian() const { return H; }
  MYRIAD_HD T* Ma() const { return scratch + int64_t{nv} * nv; }
  MYRIAD_HD T* Mv() const { return Ma() + nv; }
  MYRIAD_HD T* gradient() const { return Mv() + nv; }
  MYRIAD_HD T* newton_step() const { return gradient() + nv; }  // H⁻¹·grad
  MYRIAD_HD T* search() const { return newton_step() + nv; }
  MYRIAD_HD T* Jaref() const { return search() + nv; }
  MYRIAD_HD T* Jv() const { return Jaref() + rows.nefc; }
  MYRIAD_HD T* quad() const { return Jv() + rows.nefc; }
  MYRIAD_HD T* quadratic() const { return quad() + 3 * rows.nefc; }
  MYRIAD_HD T* per_row() const { return quadratic() + rows.nefc; }  // [nefc, 4]
};

namespace detail {

// (rows, jar [nefc]) => (quadratic [nefc]: 1 where the row is in its quadratic zone, else 0).
template <class T>
MYRIAD_HD void record_quadratic(const Rows<T>& rows, const T* jar, T* quadratic) {
  for (int i = 0; i < rows.nefc; ++i) {
    T f;
    bool q;
    row_cost(rows, i, jar[i], &f, &q);
    quadratic[i] = q ? T(1) : T(0);
  }
}

// (run at the current iterate, its search, Mv = M·search, Jv = J·search) => (the line search's
// inputs, the Gauss cost's coefficients along the search; quad is filled by line_quad_row).
template <class T>
MYRIAD_HD LineSearch<T> line_setup(const NewtonRun<T>& r) {
  const int nv = r.nv;
  LineSearch<T> ls;
  ls.rows = &r.rows;
  ls.Jaref = r.Jaref();
  ls.Jv = r.Jv();
  ls.quad = r.quad();
  ls.max_eval = r.opt.ls_iterations;
  ls.gauss[0] = gauss_cost(nv, r.Ma(), r.qfrc_smooth, r.qacc, r.qacc_smooth);
  ls.gauss[1] = dot(r.search(), r.Ma(), nv) - dot(r.search(), r.qfrc_smooth, nv);
  ls.gauss[2] = T(0.5) * dot(r.search(), r.Mv(), nv);
  return ls;
}

// (row i's Jaref, Jv, D) => (quad [3 i .. 3 i + 2]: ½D·Jaref², D·Jaref·Jv, ½D·Jv²).
template <class T>
MYRIAD_HD void line_quad_row(const Rows<T>& rows, int i, const T* Jaref, const T* Jv, T* quad) {
  const T DJ0 = rows.D[i] * Jaref[i];
  quad[3 * i + 0] = T(0.5) * Jaref[i] * DJ0;
  quad[3 * i + 1] = Jv[i] * DJ0;
  quad[3 * i + 2] = T(0.5) * Jv[i] * rows.D[i] * Jv[i];
}

// (the line search's step) => (true: the solve stops at the current iterate). No improvement,
// or, in float, an overflowed step. With elliptic cones also an improvement below the
// tolerance: MuJoCo 3.11 then stops before the step (its iteration counts on cone problems match
// only so; on pyramidal problems, which Newton solves exactly, the same rule would stop at
// rounding-level improvements where libmujoco does not, and its trajectories drift 1e-6 from
// libmujoco's where they otherwise agree to 1e-12).
template <class T>
MYRIAD_HD bool step_rejected(const NewtonRun<T>& r, const LineSearch<T>& ls, T alpha) {
  return alpha == T(0) || !(fabs(alpha) <= T(1e30)) ||
         (r.rows.has_cones && sizeof(T) == 8 && ls.improvement * r.scale < r.opt.tolerance);
}

// (run after its move: cost, grad; the cost before; grad_noise = Σ (|M·a| + |qfrc_smooth| +
// |qfrc_constraint|)², grad's rounding scale) => (true: stop). Stops on a small improvement or
// gradient (both scaled as MuJoCo's rescale). Neither test asks for less than the rounding of T
// can show: an improvement within a few ulps of the cost, or a gradient within a few ulps of the
// forces it is the difference of, is zero. In double these floors sit far below any tolerance a
// model asks for, so libmujoco's stopping (and iteration count) is kept; in float they end the
// iterations that only chase rounding noise under a tolerance of 1e-8. In float one improvement
// under the rounding floor (but not under the tolerance) can still be a real step, cut short by
// a kink of the 1-D cost near its start while the gradient is far from small (the next full
// Newton step then moves forces by percents: implicitfast.xml, and the elliptic cone's steps on
// Go1), so only two in a row stop it. An improvement under the tolerance (zero or negative
// included) stops at once in both precisions, as in MuJoCo. Measured on the states of physics-check
// (160 per model, mjlab's 10 iterations and 20 line-search evaluations): on Go1 on a height
// field 4.25 iterations to libmujoco's 3.79, never the cap, forces 2.2e-5 of the largest from the
// optimum, where stopping by the gradient alone took 6.75 and hit the cap on 43 states for the same
// forces, and one improvement under the floor stopped 2.2e-3 away.
template <class T>
MYRIAD_HD bool converged(NewtonRun<T>& r, T old_cost, T grad_noise) {
  const T improvement = (old_cost - r.cost) * r.scale;
  const T gradient = sqrt(dot(r.gradient(), r.gradient(), r.nv)) * r.scale;
  const T improvement_floor = T(16) * kEps<T> * fabs(r.cost) * r.scale;
  const T gradient_floor = T(4) * kEps<T> * sqrt(grad_noise) * r.scale;
  if (improvement < r.opt.tolerance) return true;
  if (improvement < improvement_floor) {
    if (sizeof(T) == 8 || ++r.small_improvements >= 2) return true;
  } else {
    r.small_improvements = 0;
  }
  return gradient < r.opt.tolerance || gradient < gradient_floor;
}

}  // namespace detail

// What newton_begin and newton_continue ask for next (-1: a row is elliptic or unknown).
enum NewtonStatus : int { kNewtonDone = 0, kNewtonFactor = 1 };

// (run's inputs, qacc_warmstart) => (qacc, efc_force, qfrc_constraint at the start; grad and
// the lower triangle of H there). Starts from qacc_warmstart, or from qacc_smooth if that costs
// less (the tie goes to the warm start); with no rows, qacc = qacc_smooth, qfrc_constraint = 0
// and efc_force (may be null) is not touched. Returns kNewtonFactor, kNewtonDone (no rows) or -1
// if a row is elliptic or of an unknown type (outputs untouched).
template <class T>
MYRIAD_HD int newton_begin(NewtonRun<T>& r, const T* qacc_warmstart) {
  using namespace detail;
  const int nv = r.nv, nefc = r.rows.nefc;
  const Rows<T>& rows = r.rows;
  r.iter = 0;
  r.small_improvements = 0;
  for (int i = 0; i < nefc; ++i)
    if (rows.type[i] < kEquality || rows.type[i] > kContactElliptic ||
        (rows.type[i] == kContactElliptic && !rows.has_cones))
      return -1;
  if (nefc == 0) {
    for (int k = 0; k < nv; ++k) {
      r.qacc[k] = r.qacc_smooth[k];
      r.qfrc_constraint[k] = 0;
    }
    return kNewtonDone;
  }
  T* qacc = r.qacc;
  T* Ma = r.Ma();
  T* Jaref = r.Jaref();
  T* Jv = r.Jv();

  // Warm start: qacc_warmstart unless qacc_smooth costs less (Gauss cost 0 there).
  for (int k = 0; k < nv; ++k) qacc[k] = qacc_warmstart[k];
  mul_mat_vec(Ma, r.M, qacc, nv, nv);
  jac_times(Jaref, rows, nv, qacc, rows.aref);
  const T cost_warm = constraint_update<T>(rows, nv, Jaref, nullptr, nullptr) +
                      gauss_cost(nv, Ma, r.qfrc_smooth, qacc, r.qacc_smooth);
  jac_times(Jv, rows, nv, r.qacc_smooth, rows.aref);
  const T cost_smooth = constraint_update<T>(rows, nv, Jv, nullptr, nullptr);
  if (cost_warm > cost_smooth) {
    for (int k = 0; k < nv; ++k) qacc[k] = r.qacc_smooth[k];
    mul_mat_vec(Ma, r.M, qacc, nv, nv);
    for (int i = 0; i < nefc; ++i) Jaref[i] = Jv[i];
  }

  r.scale = r.opt.island_inertia > T(0) ? T(1) / r.opt.island_inertia
                                        : T(1) / (r.opt.meaninertia * T(nv > 1 ? nv : 1));
  r.cost = constraint_update(rows, nv, Jaref, r.efc_force, r.qfrc_constraint) +
           gauss_cost(nv, Ma, r.qfrc_smooth, qacc, r.qacc_smooth);
  // grad = M·a − qfrc_smooth − qfrc_constraint; the caller then solves H·step = grad.
  T* grad = r.gradient();
  for (int k = 0; k < nv; ++k) grad[k] = Ma[k] - r.qfrc_smooth[k] - r.qfrc_constraint[k];
  assemble_hessian(r.hessian(), nv, r.M, rows, Jaref);
  record_quadratic(rows, Jaref, r.quadratic());
  r.refactor = true;
  return kNewtonFactor;
}

// (run after newton_begin or newton_continue, its newton_step = H⁻¹·grad) => (the next
// iteration: search = −newton_step, line search, move; qacc, efc_force, qfrc_constraint there;
// then, unless it stops, grad and H's lower triangle at the new point). Returns kNewtonFactor
// or kNewtonDone.
template <class T>
MYRIAD_HD int newton_continue(NewtonRun<T>& r) {
  using namespace detail;
  const int nv = r.nv, nefc = r.rows.nefc;
  const Rows<T>& rows = r.rows;
  const SolverOptions<T>& opt = r.opt;
  T* qacc = r.qacc;
  T* Ma = r.Ma();
  T* Mv = r.Mv();
  T* grad = r.gradient();
  T* search = r.search();
  T* Jaref = r.Jaref();
  T* Jv = r.Jv();
  T* quad = r.quad();
  const T* Mgrad = r.newton_step();
  for (int k = 0; k < nv; ++k) search[k] = -Mgrad[k];
  if (r.iter >= opt.iterations) return kNewtonDone;

  // Line search along `search`.
  const T snorm = sqrt(dot(search, search, nv));
  if (snorm < T(kMinVal)) return kNewtonDone;
  const T gtol = opt.tolerance * opt.ls_tolerance * snorm / r.scale;
  mul_mat_vec(Mv, r.M, search, nv, nv);
  jac_times<T>(Jv, rows, nv, search, nullptr);
  LineSearch<T> ls = line_setup(r);
  for (int i = 0; i < nefc; ++i) line_quad_row(rows, i, Jaref, Jv, quad);
  if (rows.has_cones) line_prepare_cones(rows, Jaref, Jv, quad);
  const T alpha = line_search(ls, gtol, rows.has_cones);
  if (step_rejected(r, ls, alpha)) return kNewtonDone;

  // Move to the new point and update forces, cost and gradient there.
  for (int k = 0; k < nv; ++k) {
    qacc[k] += alpha * search[k];
    Ma[k] += alpha * Mv[k];
  }
  for (int i = 0; i < nefc; ++i) Jaref[i] += alpha * Jv[i];
  const T old_cost = r.cost;
  r.cost = constraint_update(rows, nv, Jaref, r.efc_force, r.qfrc_constraint) +
           gauss_cost(nv, Ma, r.qfrc_smooth, qacc, r.qacc_smooth);
  T grad_noise = 0;  // Σ (|M·a| + |qfrc_smooth| + |qfrc_constraint|)²: grad's rounding scale
  for (int k = 0; k < nv; ++k) {
    grad[k] = Ma[k] - r.qfrc_smooth[k] - r.qfrc_constraint[k];
    const T size = fabs(Ma[k]) + fabs(r.qfrc_smooth[k]) + fabs(r.qfrc_constraint[k]);
    grad_noise += size * size;
  }
  ++r.iter;
  if (converged(r, old_cost, grad_noise)) return kNewtonDone;
  r.refactor = false;  // hessian() holds the last factor; newton_update brings it here
  return kNewtonFactor;
}

// HessianIncremental: (run whose hessian() holds the factor of the previous iterate's H) =>
// (the factor of H at the current iterate, by a rank-1 update with J_i·sqrt(D_i) for each row i
// that entered its quadratic zone and a downdate for each that left it, in row order). Returns
// true when hessian() instead holds H itself, to be factored in full: at the start, or when an
// update lost rank (H is then assembled anew at the current iterate).
template <class T>
MYRIAD_HD bool newton_update(NewtonRun<T>& r) {
  using namespace detail;
  if (r.refactor) return true;
  if (r.rows.has_cones) {  // the cones' Hessians change with every iterate: assembled anew
    assemble_hessian(r.hessian(), r.nv, r.M, r.rows, r.Jaref());
    r.refactor = true;
    return true;
  }
  const int nv = r.nv;
  const Rows<T>& rows = r.rows;
  T* quadratic = r.quadratic();
  T* vec = r.Mv();  // free until the next line search
  const T* Jaref = r.Jaref();
  for (int i = 0; i < rows.nefc; ++i) {
    T f;
    bool q;
    row_cost(rows, i, Jaref[i], &f, &q);
    if (q == (quadratic[i] != T(0))) continue;
    quadratic[i] = q ? T(1) : T(0);
    const T root = sqrt(rows.D[i]);
    row_scaled(rows, i, nv, root, vec);
    if (!chol_update(r.hessian(), vec, nv, q)) {
      assemble_hessian(r.hessian(), nv, r.M, rows, Jaref);
      record_quadratic(rows, Jaref, quadratic);
      r.refactor = true;
      return true;
    }
  }
  return false;
}

// (run after newton_begin or newton_continue) => (H's factor at the current iterate,
// newton_step = H⁻¹·grad): one env's, where the caller does not batch the factorizations.
template <class T>
MYRIAD_HD void newton_factor(NewtonRun<T>& r) {
  if (newton_update(r)) cholesky_in_place(r.hessian(), r.nv);
  chol_solve(r.newton_step(), r.hessian(), r.gradient(), r.nv);
}

// (run, the status of newton_begin or newton_continue) => (the solve run to its end); returns
// the iteration count, or -1 for the status -1.
template <class T>
MYRIAD_HD int newton_finish(NewtonRun<T>& r, int status) {
  while (status == kNewtonFactor) {
    newton_factor(r);
    status = newton_continue(r);
  }
  return status < 0 ? -1 : r.iter;
}

// (M [nv, nv] full symmetric, qfrc_smooth [nv], qacc_smooth [nv], qacc_warmstart [nv], rows,
//  opt, scratch [newton_scratch_size(nv, nefc_max)] with nefc_max >= rows.nefc)
//   => (qacc [nv], efc_force [nefc], qfrc_constraint [nv]); returns the iteration count
// (mjData.solver_iter), or -1 if a row is elliptic or of an unknown type (outputs untouched).
// newton_begin says where it starts and what it does without rows. qacc may alias
// qacc_warmstart; no other output may alias an input. Work per iteration: O(Σ nnz²) over the
// rows for the Hessian (nnz: a row's columns; nv² for dense rows), O(nv³) for its factor, O(nefc)
// per line-search point; on CUDA one thread runs one env, its scratch wherever the caller put it
// (global memory).
template <class T>
MYRIAD_HD int newton_solve(int nv, const T* M, const T* qfrc_smooth, const T* qacc_smooth,
                           const T* qacc_warmstart, const Rows<T>& rows,
                           const SolverOptions<T>& opt, T* scratch, T* qacc, T* efc_force,
                           T* qfrc_constraint) {
  NewtonRun<T> r;
  r.nv = nv;
  r.M = M;
  r.qfrc_smooth = qfrc_smooth;
  r.qacc_smooth = qacc_smooth;
  r.rows = rows;
  r.opt = opt;
  r.scratch = scratch;
  r.H = scratch;
  r.qacc = qacc;
  r.efc_force = efc_force;
  r.qfrc_constraint = qfrc_constraint;
  return newton_finish(r, newton_begin(r, qacc_warmstart));
}

}  // namespace myriad::physics::constraint
