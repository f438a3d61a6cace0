// The CPU's tiled step: envs in tiles of kTileWidth, the smooth stages of pipeline.h run once per
// tile with one env per SIMD lane (physics/lanes.h), the constraint stages per env. The smooth
// stages do the same work for every env of a model (their loops run over model sizes only), so
// a tile in lockstep wastes nothing there; contacts, rows and solver iterations vary per env and
// stay one env at a time (docs/architecture.md, "Batch layout"), but for the Newton solver's
// [nv, nv] factorizations, which are again model-sized: each round factors the Hessians of the
// envs still iterating together, one per lane (newton_tile).
//
// The batch stays env-major: a tile gathers its envs' inputs (qpos, qvel, ctrl) into a
// lane-major scratch, runs position, velocity, actuation and acceleration there, and scatters
// the outputs back before each env's collision, rows, solve, body forces and Euler step. Every
// lane computes the scalar code's operations in the same order, so the step gives the fused
// step's bits (tests/physics/test_tile.cc checks every field).
//
// CPU only (never included by a .cu file): physics/engine.cc instantiates it.
#pragma once

#include <cstdint>
#include <vector>

#include "myriad/parallel_for.h"
#include "physics/batch_view.h"
#include "physics/lanes.h"
#include "physics/pipeline.h"

namespace myriad::physics {

// Envs per tile: 8 float32 lanes are one AVX2 register (two SSE registers at the x86-64 base).
constexpr int kTileWidth = 8;

// Field numbers of MYRIAD_DATA_FIELDS (BatchView's index).
enum DataField : int {
#define MYRIAD_X(name, size, kind) kField_##name,
  MYRIAD_DATA_FIELDS(MYRIAD_X)
#undef MYRIAD_X
};

// What the smooth stages read from an env (gathered into the tile) and write (scattered back).
// Every output entry the stages write is rewritten each step without reading its old value, and
// the entries they never write (the world body's cfrc, qM off the tree) are zero on both sides.
// qM's upper triangle is scratch (the solver mirrors the lower one into it, constraint/solve.h;
// implicitfast writes its free bodies' unsymmetric matrices there): not scattered. The outputs that
// the constraint stages and the integrators read are scattered after every forward (implicitfast's
// own only for a model that integrates with it); the rest (what envs and users read, and what the
// sensors read: a forward before the step's last computes sensors that the step then discards)
// after the step's last forward only, which is the forward whose values mj_step leaves in mjData.
// clang-format off
#define MYRIAD_TILE_INPUTS(X) X(qpos) X(qvel) X(ctrl)
#define MYRIAD_TILE_CONSTRAINT_INPUTS(X)                                          \
  X(qpos) X(geom_xpos) X(geom_xmat) X(cdof) X(subtree_com) X(ten_length) X(ten_J) \
  X(qM) X(qfrc_smooth) X(qacc_smooth)
#define MYRIAD_TILE_IMPLICITFAST_INPUTS(X) \
  X(actuator_force) X(xpos) X(xmat) X(xipos) X(ximat)
#define MYRIAD_TILE_OUTPUTS(X)                                                         \
  X(qpos) X(xpos) X(xquat) X(xmat) X(xipos) X(ximat) X(xanchor) X(xaxis)               \
  X(geom_xpos) X(geom_xmat) X(subtree_com) X(cinert) X(crb) X(cdof) X(cdof_dot)        \
  X(cvel) X(cacc) X(cfrc) X(qM) X(qLD) X(qLDiagInv) X(qfrc_bias) X(qfrc_passive)       \
  X(qfrc_actuator) X(qfrc_smooth) X(qacc_smooth) X(actuator_force) X(ten_length)       \
  X(ten_J) X(ten_velocity)
// clang-format on

namespace detail {

// A thread's lane-major storage for one tile (kept between tiles, so allocated once).
template <class S, int W>
struct TileScratch {
  std::vector<Lanes<S, W>> values;
  int64_t offset[kNumDataFields];   // a field's first lane vector in `values`, or -1
  std::vector<Lanes<S, W>> solver;  // the Newton factorizations' H, grad and step in lanes
};

// The tile's EnvData over `scratch`, zeroed: the smooth fields in lanes, every other field null.
// Zeroed per tile, as a fresh batch is: the entries the smooth stages never write (qM off the
// model's tree, which the solver reads as zeros) must be zero.
template <class S, int W>
EnvData<Lanes<S, W>> tile_view(TileScratch<S, W>& scratch, const BatchView<S>& b) {
  int64_t total = 0;
  for (int f = 0; f < kNumDataFields; ++f) scratch.offset[f] = -1;
#define MYRIAD_X(name)                   \
  scratch.offset[kField_##name] = total; \
  total += b.size[kField_##name];
  MYRIAD_TILE_OUTPUTS(MYRIAD_X)
  MYRIAD_X(qvel)
  MYRIAD_X(ctrl)
#undef MYRIAD_X
  scratch.values.assign(static_cast<size_t>(total), Lanes<S, W>(S(0)));
  Lanes<S, W>* pointers[kNumDataFields];
  for (int f = 0; f < kNumDataFields; ++f)
    pointers[f] = scratch.offset[f] < 0 ? nullptr : scratch.values.data() + scratch.offset[f];
  EnvData<Lanes<S, W>> t;
  static_assert(sizeof(t) == sizeof(pointers), "EnvData is its fields' pointers, in order");
  memcpy(&t, pointers, sizeof(t));
  return t;
}

// Field f of envs first .. first + count - 1 into the tile's lanes (lanes past count repeat the
// last env, so that every lane computes on valid data).
template <class S, int W>
void gather(Lanes<S, W>* dst, const BatchView<S>& b, int f, int64_t first, int count) {
  const int64_t size = b.size[f];
  for (int l = 0; l < W; ++l) {
    const S* src = b.base[f] + (first + (l < count ? l : count - 1)) * size;
    for (int64_t k = 0; k < size; ++k) dst[k].set_lane(l, src[k]);
  }
}

// The tile's field f back to its count envs; rows: scatter only entries (i, j <= i) of an
// [rows, rows] matrix (qM's lower triangle).
template <class S, int W>
void scatter(const Lanes<S, W>* src, const BatchView<S>& b, int f, int64_t first, int count,
             int rows = 0) {
  const int64_t size = b.size[f];
  for (int l = 0; l < count; ++l) {
    S* dst = b.base[f] + (first + l) * size;
    if (rows == 0) {
      for (int64_t k = 0; k < size; ++k) dst[k] = src[k].lane(l);
    } else {
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j <= i; ++j) dst[i * rows + j] = src[i * rows + j].lane(l);
    }
  }
}

// The Newton solves of a tile's envs, begun (status kNewtonFactor), run to their ends. Each
// round brings every env still iterating to its next Newton step: the envs whose Hessian is to
// be factored in full (at the start, or after an update lost rank) are factored together, one
// env per lane (cholesky_in_place has no branch on a value, so each lane computes its env's
// scalar bits); the others update their factor by rank-1 updates on their own
// (constraint::newton_update, which decides which). Each env then solves for its step and takes
// its next iteration on its own: the line search, the move and the stopping tests differ per env.
template <class S, int W>
void newton_tile(constraint::NewtonRun<S>* runs, int* status, int count, int nv,
                 std::vector<Lanes<S, W>>& lanes) {
  using constraint::kNewtonFactor;
  lanes.resize(static_cast<size_t>(nv) * nv);
  Lanes<S, W>* H = lanes.data();
  for (;;) {
    int active[W], full[W];
    int n = 0, nfull = 0;
    for (int l = 0; l < count; ++l)
      if (status[l] == kNewtonFactor) {
        active[n++] = l;
        if (constraint::newton_update(runs[l])) full[nfull++] = l;
      }
    if (n == 0) return;
    if (nfull == 1) {
      constraint::cholesky_in_place(runs[full[0]].hessian(), nv);
    } else if (nfull > 1) {
      // Lanes past nfull repeat the first env, so that every lane factors a valid matrix.
      for (int q = 0; q < W; ++q) {
        const S* h = runs[full[q < nfull ? q : 0]].hessian();
        for (int i = 0; i < nv; ++i)
          for (int j = 0; j <= i; ++j) H[i * nv + j].set_lane(q, h[i * nv + j]);
      }
      constraint::cholesky_in_place(H, nv);
      for (int q = 0; q < nfull; ++q) {
        S* h = runs[full[q]].hessian();
        for (int i = 0; i < nv; ++i)
          for (int j = 0; j <= i; ++j) h[i * nv + j] = H[i * nv + j].lane(q);
      }
    }
    for (int q = 0; q < n; ++q) {
      constraint::NewtonRun<S>& r = runs[active[q]];
      constraint::chol_solve(r.newton_step(), r.hessian(), r.gradient(), nv);
      status[active[q]] = constraint::newton_continue(r);
    }
  }
}

// mj_forward of envs first .. first + count - 1 (count <= W): the smooth stages in the tile's
// lanes, then the constraint stages per env but for the Newton solver's factorizations, which
// run in lanes (newton_tile). all_outputs: scatter every smooth output, not only what the
// constraint stages and the integrators read.
template <class S, int W>
void forward_tile(const ModelView<S>& m, const BatchView<S>& b, int64_t first, int count,
                  EnvData<Lanes<S, W>>& t, std::vector<Lanes<S, W>>& solver_lanes,
                  bool all_outputs) {
#define MYRIAD_X(name) gather(t.name, b, kField_##name, first, count);
  MYRIAD_TILE_INPUTS(MYRIAD_X)
#undef MYRIAD_X
  // Smooth stages, in lanes: (qpos, qvel, ctrl) => (poses, com quantities, qM and its factor,
  // velocities, passive, bias and actuator forces, qacc_smooth).
  forward_position(m, t);
  forward_velocity_smooth(m, t);
  actuation(m, t);
  forward_acceleration(m, t);
#define MYRIAD_X(name) \
  scatter(t.name, b, kField_##name, first, count, kField_##name == kField_qM ? m.nv : 0);
  if (all_outputs) {
    MYRIAD_TILE_OUTPUTS(MYRIAD_X)
  } else {
    MYRIAD_TILE_CONSTRAINT_INPUTS(MYRIAD_X)
    if (m.integrator == kImplicitFast) {
      MYRIAD_TILE_IMPLICITFAST_INPUTS(MYRIAD_X)
    }
  }
#undef MYRIAD_X
  // Constraint stages: (poses, qvel, qacc_smooth) => (contacts, rows, qacc, efc_force,
  // qfrc_constraint, cfrc_ext).
  constraint::NewtonRun<S> runs[W];
  int status[W];
  for (int l = 0; l < count; ++l) {
    EnvData<S> e = b.env(first + l);
    collision_stage(m, e);
    forward_constraint_rows(m, e);
    constraint::reference(m, e);
    status[l] = constraint::solve_begin(m, e, runs[l]);
  }
  newton_tile(runs, status, count, m.nv, solver_lanes);
  for (int l = 0; l < count; ++l) {
    EnvData<S> e = b.env(first + l);
    constraint::solve_finish(m, e, constraint::newton_finish(runs[l], status[l]));
    post_constraint(m, e);
  }
}

// `substeps` mj_step of envs first .. first + count - 1 (count <= W): forward_tile, then the
// integrator per env (RK4's stages with a forward_tile between them, as pipeline.h's rk4).
template <class S, int W>
void step_tile(const ModelView<S>& m, const BatchView<S>& b, int64_t first, int count, int substeps,
               TileScratch<S, W>& scratch) {
  EnvData<Lanes<S, W>> t = tile_view(scratch, b);
  auto each_env = [&](auto&& fn) {
    for (int l = 0; l < count; ++l) {
      EnvData<S> e = b.env(first + l);
      fn(e);
    }
  };
  for (int s = 0; s < substeps; ++s) {
    const bool last = s == substeps - 1;
    if (m.integrator != kRK4) {
      forward_tile(m, b, first, count, t, scratch.solver, last);
      each_env([&](EnvData<S>& e) { euler(m, e); });
      continue;
    }
    // The last substep's first forward scatters every output: its sensors are the ones rk4_begin
    // keeps and rk4_finish leaves in the data (mj_RungeKutta's), and they read poses and
    // velocities the constraint stages do not.
    forward_tile(m, b, first, count, t, scratch.solver, last);
    each_env([&](EnvData<S>& e) { rk4_begin(m, e); });
    for (int stage = 1; stage < 4; ++stage) {
      each_env([&](EnvData<S>& e) { rk4_stage_begin(m, e, stage); });
      forward_tile(m, b, first, count, t, scratch.solver, last && stage == 3);
      each_env([&](EnvData<S>& e) { rk4_stage_end(m, e, stage); });
    }
    each_env([&](EnvData<S>& e) { rk4_finish(m, e); });
  }
}

}  // namespace detail

// `substeps` mj_step on n envs in tiles of kTileWidth on the CPU (OpenMP over tiles).
template <class S>
void launch_step_tiled(const ModelView<S>& m, const BatchView<S>& b, int64_t n, int substeps) {
  constexpr int W = kTileWidth;
  const int64_t tiles = (n + W - 1) / W;
  parallel_for(
      DeviceId{Device::kCpu, 0}, "physics.step_tiled", tiles,
      [&m, &b, n, substeps](int64_t tile) {
        thread_local detail::TileScratch<S, W> scratch;
        const int64_t first = tile * W;
        const int count = static_cast<int>(n - first < W ? n - first : W);
        detail::step_tile(m, b, first, count, substeps, scratch);
      },
      nullptr, /*min_parallel=*/2);
}

}  // namespace myriad::physics
