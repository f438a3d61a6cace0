// The CPU's tiled step: envs in tiles of kTileWidth, the smooth stages of pipeline.h run once per
// tile with one env per SIMD lane (physics/lanes.h), the constraint stages per env. The smooth
// stages do the same work for every env of a model (their loops run over model sizes only), so
// a tile in lockstep wastes nothing there; contacts, rows and solver iterations vary per env and
// stay one env at a time (docs/architecture.md, "Batch layout"), but for the Newton solver's
// [nv, nv] factorizations, which are again model-sized: each round factors the Hessians of the
// envs still iterating together, one per lane (newton_tile).
//
// Within a step the tile is a blocked batch of W envs: every field but the constraint half's
// (data.h's stays_per_env) in lanes, element k of lane l at k * W + l. The smooth stages read
// and write it as Lanes; each env's collision, rows, solve, body forces, sensors and integrator
// read and write its lane with a stride of W (EnvData<S, W>), and the constraint half's fields in
// the batch's own rows. The batch itself is env-major: a tile gathers its envs' fields once at the
// start of the step and scatters them back once at its end. Every lane computes the scalar
// code's operations in the same order, so the step gives the fused step's bits
// (tests/physics/test_tile.cc checks every field).
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

// Whether the tile holds field f in lanes (every field but those that stay per env).
constexpr bool kInTile[] = {
#define MYRIAD_X(name, size, kind) !stays_per_env(#name),
    MYRIAD_DATA_FIELDS(MYRIAD_X)
#undef MYRIAD_X
};

namespace detail {

// A thread's storage for one tile (kept between tiles, so allocated once): the tile's fields in
// lanes, one after another.
template <class S, int W>
struct TileScratch {
  std::vector<Lanes<S, W>> values;
  int64_t offset[kNumDataFields];   // a field's first lane vector in `values`, or -1
  std::vector<Lanes<S, W>> solver;  // the Newton factorizations' H, grad and step in lanes
};

// Lays out the tile's fields (the batch's sizes) in `scratch`.
template <class S, int W>
void tile_layout(TileScratch<S, W>& scratch, const BatchView<S>& b) {
  int64_t total = 0;
  for (int f = 0; f < kNumDataFields; ++f) {
    scratch.offset[f] = kInTile[f] ? total : -1;
    if (kInTile[f]) total += b.size[f];
  }
  scratch.values.resize(static_cast<size_t>(total));
}

// The smooth stages' view of the tile: its fields in lanes, the per-env fields null.
template <class S, int W>
EnvData<Lanes<S, W>> lanes_view(TileScratch<S, W>& scratch) {
  Lanes<S, W>* pointers[kNumDataFields];
  for (int f = 0; f < kNumDataFields; ++f)
    pointers[f] = kInTile[f] ? scratch.values.data() + scratch.offset[f] : nullptr;
  EnvData<Lanes<S, W>> t;
  static_assert(sizeof(t) == sizeof(pointers), "EnvData is its fields' pointers, in order");
  memcpy(&t, pointers, sizeof(t));
  return t;
}

// Env `env`'s view, lane l of the tile: the tile's fields with a stride of W (Strided: lane l's
// values of the lane vectors, which GCC's vector types let their element type read), the others
// its rows of the batch.
template <class S, int W>
EnvData<S, W> lane_view(TileScratch<S, W>& scratch, const BatchView<S>& b, int64_t env, int l) {
  S* pointers[kNumDataFields];
  for (int f = 0; f < kNumDataFields; ++f)
    pointers[f] = kInTile[f] ? reinterpret_cast<S*>(scratch.values.data() + scratch.offset[f]) + l
                             : b.base[f] + env * b.size[f];
  EnvData<S, W> e;
  static_assert(sizeof(e) == sizeof(pointers), "EnvData is its fields' pointers, in order");
  memcpy(&e, pointers, sizeof(e));
  return e;
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

// The tile's field f back to its count envs.
template <class S, int W>
void scatter(const Lanes<S, W>* src, const BatchView<S>& b, int f, int64_t first, int count) {
  const int64_t size = b.size[f];
  for (int l = 0; l < count; ++l) {
    S* dst = b.base[f] + (first + l) * size;
    for (int64_t k = 0; k < size; ++k) dst[k] = src[k].lane(l);
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

// mj_forward of envs first .. first + count - 1 (count <= W), in the tile: the smooth stages in
// lanes, then the constraint stages per env but for the Newton solver's factorizations, which
// run in lanes (newton_tile).
template <class S, int W>
void forward_tile(const ModelView<S>& m, TileScratch<S, W>& scratch, EnvData<Lanes<S, W>>& t,
                  EnvData<S, W>* envs, int count) {
  // Smooth stages, in lanes: (qpos, qvel, ctrl) => (poses, com quantities, qM and its factor,
  // velocities, passive, bias and actuator forces, qacc_smooth).
  forward_position(m, t);
  forward_velocity_smooth(m, t);
  actuation(m, t);
  forward_acceleration(m, t);
  // Constraint stages: (poses, qvel, qacc_smooth) => (contacts, rows, qacc, efc_force,
  // qfrc_constraint, cfrc_ext).
  constraint::NewtonRun<S> runs[W];
  int status[W];
  for (int l = 0; l < count; ++l) {
    collision_stage(m, envs[l]);
    forward_constraint_rows(m, envs[l]);
    constraint::reference(m, envs[l]);
    status[l] = constraint::solve_begin(m, envs[l], runs[l]);
  }
  newton_tile(runs, status, count, m.nv, scratch.solver);
  for (int l = 0; l < count; ++l) {
    constraint::solve_finish(m, envs[l], constraint::newton_finish(runs[l], status[l]));
    post_constraint(m, envs[l]);
  }
}

// `substeps` mj_step of envs first .. first + count - 1 (count <= W): their fields into the tile
// (lanes past count repeat the last env, so that every lane computes on valid data), forward_tile
// and the integrator per env (RK4's stages with a forward_tile between them, as pipeline.h's
// rk4), then the fields back to the batch.
template <class S, int W>
void step_tile(const ModelView<S>& m, const BatchView<S>& b, int64_t first, int count, int substeps,
               TileScratch<S, W>& scratch) {
  tile_layout(scratch, b);
  for (int f = 0; f < kNumDataFields; ++f)
    if (kInTile[f]) gather(scratch.values.data() + scratch.offset[f], b, f, first, count);
  EnvData<Lanes<S, W>> t = lanes_view(scratch);
  EnvData<S, W> envs[W];
  for (int l = 0; l < count; ++l) envs[l] = lane_view(scratch, b, first + l, l);
  auto each_env = [&](auto&& fn) {
    for (int l = 0; l < count; ++l) fn(envs[l]);
  };
  for (int s = 0; s < substeps; ++s) {
    if (m.integrator != kRK4) {
      forward_tile(m, scratch, t, envs, count);
      each_env([&](EnvData<S, W>& e) { euler(m, e); });
      continue;
    }
    forward_tile(m, scratch, t, envs, count);
    each_env([&](EnvData<S, W>& e) { rk4_begin(m, e); });
    for (int stage = 1; stage < 4; ++stage) {
      each_env([&](EnvData<S, W>& e) { rk4_stage_begin(m, e, stage); });
      forward_tile(m, scratch, t, envs, count);
      each_env([&](EnvData<S, W>& e) { rk4_stage_end(m, e, stage); });
    }
    each_env([&](EnvData<S, W>& e) { rk4_finish(m, e); });
  }
  for (int f = 0; f < kNumDataFields; ++f)
    if (kInTile[f]) scatter(scratch.values.data() + scratch.offset[f], b, f, first, count);
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
