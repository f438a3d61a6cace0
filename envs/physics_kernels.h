// The framework's per-env kernels for physics envs (envs/locomotion/): the counterpart of
// envs/batch_kernels.h for envs whose state is a physics simulation. An env author writes, for
// one env over the physics data (see envs/locomotion/hopper.h):
//
//   reset(params, model, data, rng)                                 => qpos, qvel of a new episode
//   before_step(params, model, data, before)                        => what the reward needs from
//                                                                      the state before the step
//   after_step(params, model, data, action, before, reward, terminated, info)
//   observe(params, model, data, obs)
//
// and these kernels wrap them with the physics step (ctrl, frame_skip substeps), auto-reset,
// final_obs, truncation, the divergence cut and episode statistics, once for every sim:
// the engine (MyriadSim, on the CPU and on CUDA) and libmujoco (MujocoSim, envs/mujoco_sim.h).
// A sim gives env i's data as physics::EnvData<T> and steps it; env code reads only EnvData's
// fields, so the same observation and reward code runs on both.
#pragma once

#include <cstdint>

#include "envs/physics_frame.h"
#include "envs/root_push.h"
#include "myriad/hd.h"
#include "myriad/rng.h"
#include "physics/batch_view.h"
#include "physics/constraint/body_forces.h"
#include "physics/env_params.h"
#include "physics/env_step.h"
#include "physics/model_view.h"
#include "physics/pipeline.h"

namespace myriad::envs {

// The engine as a physics env's sim (CPU or CUDA; `data` points at host or device memory),
// env-major (Block = 1) or in blocks of Block envs (physics/batch_layout.h; CUDA's batch).
template <class T, int Block = 1>
struct MyriadSim {
  using Scalar = T;
  static constexpr int kBlock = Block;
  using EnvView = physics::EnvData<T, Block>;  // env i's data
  physics::ModelView<T> model;
  physics::BatchView<T, Block> data;
  // Per-env model parameters (physics/env_params.h); all null: every env reads `model`.
  physics::EnvParamsView<T> params;
  bool per_env_params = false;

  MYRIAD_HD EnvView env(int64_t i) const { return data.env(i); }
  // Env i's model: the shared one, its per-env fields at env i's rows.
  // (physics::env_model's work; written in place here: returning either of two view copies, as a
  // call to it under per_env_params does, gave the reset kernels 48 bytes of stack on CUDA.)
  MYRIAD_HD physics::ModelView<T> model_of(int64_t i) const {
    physics::ModelView<T> m = model;
    if (per_env_params) params.apply(m, i);
    return m;
  }
  // A new episode starts as mj_resetData leaves a state: no warm start, zero controls, time 0.
  MYRIAD_HD void clear(EnvView& d, int64_t) const {
    for (int k = 0; k < model.nv; ++k) d.qacc_warmstart[k] = 0;
    for (int u = 0; u < model.nu; ++u) d.ctrl[u] = 0;
    d.time[0] = 0;
  }
  // The pipeline runs out of line (physics/env_step.h), compiled once, not once per kernel. A
  // blocked sim on the host runs only the staged launch (SimRunner's kFusedShapes), which steps
  // and runs forward passes by stages, never through these.
  MYRIAD_HD void step(EnvView& d, int64_t i) const {
#if defined(__CUDA_ARCH__)
    physics::step_env_device(per_env_params ? model_of(i) : model, d);
#else
    static_assert(Block == 1, "a blocked sim steps by the staged launch");
    physics::step_env(per_env_params ? model_of(i) : model, d);
#endif
  }
  // After the substeps of an env step: the last forward pass already filled cfrc_ext (as
  // mj_rnePostConstraint after mj_step does). False would mean the sim reset a diverged state.
  MYRIAD_HD bool after_steps(EnvView&, int64_t) const { return true; }
  // mj_forward, with cfrc_ext.
  MYRIAD_HD void forward(EnvView& d, int64_t i) const {
#if defined(__CUDA_ARCH__)
    physics::forward_env_device(per_env_params ? model_of(i) : model, d);
#else
    static_assert(Block == 1, "a blocked sim runs its forward passes by the staged launch");
    physics::forward_env(per_env_params ? model_of(i) : model, d);
#endif
  }
  // fn(geom1, geom2, frame [9], force [6]) for every contact with constraint rows, in contact
  // order: its frame (rows: the normal from geom1 to geom2, the tangents) and mj_contactForce's
  // force and torque in that frame.
  template <class Fn>
  MYRIAD_HD void for_each_contact(const EnvView& d, int64_t, Fn&& fn) const {
    namespace c = physics::constraint;
    const physics::collision::Contact<T>* con = c::contacts_of(d);
    const int nefc = static_cast<int>(d.nefc[0]);
    for (int r = 0; r < nefc;) {
      const int type = static_cast<int>(d.efc_type[r]);
      if (type != c::kContactFrictionless && type != c::kContactPyramidal &&
          type != c::kContactElliptic) {
        ++r;
        continue;
      }
      const auto& k = con[static_cast<int>(d.efc_id[r])];
      const bool elliptic = type == c::kContactElliptic;
      T local[6];
      c::contact_force(k, d.efc_force + r, local, elliptic);  // efc_*: per env in any layout
      r += c::contact_rows(k.dim, elliptic);
      fn(k.geom1, k.geom2, k.frame, local);
    }
  }
};

// The sims' data and the framework's buffers of one batch: what every kernel reads.
template <class Env, class Sim>
struct PhysicsView {
  PhysicsFrame f;
  typename Env::Params params;
  Sim sim;
};

// qpos and qvel finite and below MuJoCo's bound on a sane value (mjMAXVAL, 1e10).
template <class T, int B>
MYRIAD_HD bool physics_state_ok(const physics::ModelView<T>& m, const physics::EnvData<T, B>& d) {
  bool ok = true;
  for (int k = 0; k < m.nq; ++k)
    ok = ok & (d.qpos[k] == d.qpos[k]) & (d.qpos[k] < T(1e10)) & (d.qpos[k] > T(-1e10));
  for (int k = 0; k < m.nv; ++k)
    ok = ok & (d.qvel[k] == d.qvel[k]) & (d.qvel[k] < T(1e10)) & (d.qvel[k] > T(-1e10));
  return ok;
}

// A new episode in env i: the sim's reset state, the env's initial qpos and qvel from the
// (seed, env, episode) stream, mj_forward, and the first observation. cfrc_ext reads zero until
// the first step, as after Gymnasium's reset (mj_resetData, then mj_forward, which leaves it).
// In two halves around the forward pass, so that a staged launch runs the forward pass as its
// stages over the envs that reset (envs/physics_launch.inl) and the halves stay light:
//   physics_episode_state:   (seed, env, episode) => the sim's reset state, initial qpos, qvel
//   the sim's forward pass
//   physics_episode_observe: => cfrc_ext zero, counters, the first observation
template <class Env, class Sim>
MYRIAD_HD void physics_episode_state(const PhysicsView<Env, Sim>& v, int64_t i) {
  auto d = v.sim.env(i);
  v.sim.clear(d, i);
  Rng rng(v.f.seed, static_cast<uint32_t>(i), static_cast<uint32_t>(v.f.episode[i]), 0u);
  Env::reset(v.params, v.sim.model_of(i), d, rng);
}
template <class Env, class Sim>
MYRIAD_HD void physics_episode_observe(const PhysicsView<Env, Sim>& v, int64_t i) {
  auto d = v.sim.env(i);
  for (int k = 0; k < 6 * v.sim.model.nbody; ++k) d.cfrc_ext[k] = 0;
  v.f.elapsed[i] = 0;
  v.f.running_return[i] = 0.0f;
  Env::observe(v.params, v.sim.model_of(i), d, v.f.obs + i * v.f.obs_dim);
}
template <class Env, class Sim>
MYRIAD_HD void physics_start_episode(const PhysicsView<Env, Sim>& v, int64_t i) {
  physics_episode_state(v, i);
  auto d = v.sim.env(i);
  v.sim.forward(d, i);
  physics_episode_observe(v, i);
}

template <class Env, class Sim>
MYRIAD_HD void physics_reset_one(const PhysicsView<Env, Sim>& v, int64_t i) {
  physics_start_episode(v, i);
}

// One env step of env i, in three parts that the fused step (physics_step_one: one pass per
// env) and the staged step (envs/physics_launch.inl: the physics substeps as one launch per
// stage over the batch, between a pre-step and a post-step launch) share, so both give the same
// bits:
//   physics_pre_step_one:  (state, action) => before, ctrl
//   the sim's frame_skip substeps
//   physics_post_step_one: (state, action, before) => reward, flags, obs; where the episode
//     ended, final_obs, statistics and (kResetNow; else the caller's launches) a same-step reset.
// A diverged state (non-finite or beyond 1e10, or one the sim had to reset) is never observed or
// rewarded: the episode is cut (truncated, reward 0, counted in diverged) and final_obs keeps
// the last sane observation.
template <class Env>
constexpr int kBeforeWidth = Env::kBeforeDim > 0 ? Env::kBeforeDim : 1;

template <class Env, class Sim>
MYRIAD_HD void physics_pre_step_one(const PhysicsView<Env, Sim>& v, int64_t i,
                                    typename Sim::Scalar* before) {
  using T = typename Sim::Scalar;
  auto d = v.sim.env(i);
  const float* action = v.f.action + i * v.f.action_dim;
  Env::before_step(v.params, v.sim.model_of(i), d, before);
  for (int u = 0; u < v.sim.model.nu; ++u) d.ctrl[u] = static_cast<T>(action[u]);
}

// The push schedule, as mjlab's event manager keeps it per env: a timer drawn from the interval
// at the episode's start and after every push, one env step off it per step, a push when it falls
// below 1e-6 s. Push k of env i's episode e draws its interval from stream (seed, i, e,
// kPushStream + 2k) and its velocity change from kPushStream + 2k + 1. True (and k) when step t
// of the episode (1 for the first) pushes.
constexpr uint32_t kPushStream = 0xA0000000u;
MYRIAD_HD bool physics_push_fires(const PhysicsFrame& f, int64_t i, int32_t t, uint32_t* push) {
  int32_t s = 0;
  for (uint32_t k = 0; s < t; ++k) {
    Rng rng(f.seed, static_cast<uint32_t>(i), static_cast<uint32_t>(f.episode[i]),
            kPushStream + 2 * k);
    const double interval = rng.uniform(f.push.interval[0], f.push.interval[1]);
    // The first whole step count whose time passes the interval less 1e-6 s.
    const int32_t steps = static_cast<int32_t>(floor((interval - 1e-6) / f.push.dt)) + 1;
    s += steps > 1 ? steps : 1;
    if (s == t) {
      *push = k;
      return true;
    }
  }
  return false;
}

// Push k: dv ~ U(lo, hi) [6] from its own stream, through push_root_velocity (root_push.h).
template <class T, int B>
MYRIAD_HD void physics_push(const PhysicsFrame& f, physics::EnvData<T, B>& d, int64_t i,
                            uint32_t k) {
  Rng rng(f.seed, static_cast<uint32_t>(i), static_cast<uint32_t>(f.episode[i]),
          kPushStream + 2 * k + 1);
  T dv[6];
  for (int a = 0; a < 6; ++a) dv[a] = static_cast<T>(rng.uniform(f.push.lo[a], f.push.hi[a]));
  push_root_velocity(dv, d.qpos + f.push.qpos_adr + 3, d.qvel + f.push.qvel_adr);
}

// A step's outcome into the framework's buffers: reward, flags, counters, the running return. A
// step that is not finite is cut: reward 0, truncated (not terminated), counted in diverged.
// Gymnasium's TimeLimit sets truncated at the limit even when the step also terminates. `cut`:
// the env ends the episode as a time-out (a task's out_of_terrain_bounds), unless it terminated.
struct StepOutcome {
  int32_t t;  // the steps of the episode, this one included
  bool terminated, truncated;
};
MYRIAD_HD StepOutcome physics_record_step(const PhysicsFrame& f, int64_t i, bool finite,
                                          float reward, bool terminated, bool cut = false) {
  reward = finite ? reward : 0.0f;
  terminated = terminated && finite;
  const int32_t t = f.elapsed[i] + 1;
  const bool truncated = t >= f.max_steps || !finite || (cut && !terminated);
  f.reward[i] = reward;
  f.terminated[i] = terminated;
  f.truncated[i] = truncated;
  f.diverged[i] += finite ? 0 : 1;
  f.elapsed[i] = t;
  f.running_return[i] += reward;
  return {t, terminated, truncated};
}
// An episode that ended after t steps: final_obs (the step's observation, or the last sane one),
// its return and length, the episode counter (the next episode's streams).
MYRIAD_HD void physics_end_episode(const PhysicsFrame& f, int64_t i, int32_t t) {
  const float* obs = f.obs + i * f.obs_dim;
  float* final_obs = f.final_obs + i * f.obs_dim;
  for (int k = 0; k < f.obs_dim; ++k) final_obs[k] = obs[k];
  f.episode_return[i] = f.running_return[i];
  f.episode_length[i] = t;
  f.episode[i] += 1;
}

template <class Env, class Sim, bool kResetNow = true>
MYRIAD_HD void physics_post_step_one(const PhysicsView<Env, Sim>& v, int64_t i,
                                     const typename Sim::Scalar* before) {
  const auto m = v.sim.model_of(i);
  const PhysicsFrame& f = v.f;
  auto d = v.sim.env(i);
  const float* action = f.action + i * f.action_dim;
  const bool sim_ok = v.sim.after_steps(d, i);
  float reward = 0.0f;
  bool terminated = false;
  Env::after_step(v.params, m, d, action, before, reward, terminated, InfoRow{f.info + i, f.n});
  const bool finite = sim_ok && physics_state_ok(m, d) && is_finite(reward);
  const StepOutcome out = physics_record_step(f, i, finite, reward, terminated);
  const int32_t t = out.t;
  terminated = out.terminated;
  const bool truncated = out.truncated;
  float* obs = f.obs + i * f.obs_dim;
  // The interval push (after the reward, as mjlab's events run), then a forward pass so that the
  // observation sees it. Only where the post-step may run a forward pass (the CPU's fused and
  // tiled launches; the env refuses a push elsewhere); not where the episode ends and resets.
  if constexpr (kResetNow) {
    uint32_t k = 0;
    if (f.push.enabled && finite && !terminated && !truncated && physics_push_fires(f, i, t, &k)) {
      physics_push(f, d, i, k);
      v.sim.forward(d, i);
    }
  }
  if (finite) Env::observe(v.params, m, d, obs);
  if (terminated || truncated) {
    physics_end_episode(f, i, t);
    if constexpr (kResetNow) physics_start_episode(v, i);
  }
}

// The fused env step: the three parts in one pass, `before` on the stack.
template <class Env, class Sim>
MYRIAD_HD void physics_step_one(const PhysicsView<Env, Sim>& v, int64_t i) {
  typename Sim::Scalar before[kBeforeWidth<Env>];
  physics_pre_step_one(v, i, before);
  auto d = v.sim.env(i);
  for (int s = 0; s < v.f.frame_skip; ++s) v.sim.step(d, i);
  physics_post_step_one(v, i, before);
}

// State I/O: row i of state [N, 1 + nq + nv] is (time, qpos, qvel), float64.
template <class Env, class Sim>
MYRIAD_HD void physics_read_state_one(const PhysicsView<Env, Sim>& v, double* state, int64_t i) {
  const auto& m = v.sim.model;
  const auto d = v.sim.env(i);
  double* row = state + i * (1 + m.nq + m.nv);
  row[0] = static_cast<double>(d.time[0]);
  for (int k = 0; k < m.nq; ++k) row[1 + k] = static_cast<double>(d.qpos[k]);
  for (int k = 0; k < m.nv; ++k) row[1 + m.nq + k] = static_cast<double>(d.qvel[k]);
}

// Writes row r of `state` into env ids[r], then mj_forward (with cfrc_ext) and the observation,
// as Gymnasium's set_state does. The warm start is cleared, so a state alone determines the
// next step. ids are distinct and in range (checked by the caller).
// physics_write_state_row is the write alone (a staged launch runs the forward pass by stages).
template <class Env, class Sim>
MYRIAD_HD void physics_write_state_row(const PhysicsView<Env, Sim>& v, const double* state,
                                       const int64_t* ids, int64_t r) {
  using T = typename Sim::Scalar;
  const auto& m = v.sim.model;
  auto d = v.sim.env(ids[r]);
  const double* row = state + r * (1 + m.nq + m.nv);
  d.time[0] = static_cast<T>(row[0]);
  for (int k = 0; k < m.nq; ++k) d.qpos[k] = static_cast<T>(row[1 + k]);
  for (int k = 0; k < m.nv; ++k) d.qvel[k] = static_cast<T>(row[1 + m.nq + k]);
  for (int k = 0; k < m.nv; ++k) d.qacc_warmstart[k] = 0;
}
template <class Env, class Sim>
MYRIAD_HD void physics_write_state_one(const PhysicsView<Env, Sim>& v, const double* state,
                                       const int64_t* ids, int64_t r) {
  physics_write_state_row(v, state, ids, r);
  const int64_t i = ids[r];
  auto d = v.sim.env(i);
  v.sim.forward(d, i);
  Env::observe(v.params, v.sim.model_of(i), d, v.f.obs + i * v.f.obs_dim);
}

// Snapshots, for exact resume: every field of kind `env` (myriad/physics/data.h: the state, the
// warm start, and the poses and forces an env reads, which a step's reward may read before the
// next forward pass) of env i, as float64, row i of [N, width].
template <class T, class M>
int64_t physics_snapshot_width(const M& m) {
  physics::EnvData<T> probe{};
  int64_t width = 0;
  physics::for_each_env_field(probe, m, [&](T*, int64_t size) { width += size; });
  return width;
}

template <class Env, class Sim>
MYRIAD_HD void physics_save_one(const PhysicsView<Env, Sim>& v, double* out, int64_t width,
                                int64_t i) {
  auto d = v.sim.env(i);
  double* row = out + i * width;
  int64_t o = 0;
  physics::for_each_env_field(d, v.sim.model, [&](auto p, int64_t size) {
    for (int64_t k = 0; k < size; ++k) row[o++] = static_cast<double>(p[k]);
  });
}

template <class Env, class Sim>
MYRIAD_HD void physics_load_one(const PhysicsView<Env, Sim>& v, const double* in, int64_t width,
                                int64_t i) {
  using T = typename Sim::Scalar;
  auto d = v.sim.env(i);
  const double* row = in + i * width;
  int64_t o = 0;
  physics::for_each_env_field(d, v.sim.model, [&](auto p, int64_t size) {
    for (int64_t k = 0; k < size; ++k) p[k] = static_cast<T>(row[o++]);
  });
}

}  // namespace myriad::envs
