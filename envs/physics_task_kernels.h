// The framework's per-env kernels for task envs: physics envs that keep state of their own
// besides the physics (a command, timers, the last action, encoder biases) and read the physics
// between substeps, as mjlab's manager-based envs do (envs/legged/velocity_task.h). An env is a
// task env when it declares kTask; it writes, for one env:
//
//   start(params, sim, i, model, data, task)               => qpos, qvel, the task's state of a
//                                                              new episode (before mj_forward)
//   control(params, model, task, action, ctrl)             => ctrl for the step's substeps
//   substep(params, sim, i, model, data, task)             => after every physics substep
//   after_step(params, sim, i, model, data, action, task, reward, terminated, truncated, info)
//                                                           => on the state the substeps left
//                                                              (truncated: the env's own
//                                                              time-out, e.g. leaving a terrain)
//   advance(params, model, data, task)                     => after mj_forward (the command's
//                                                              timers)
//   observe(params, sim, i, model, data, task, obs)        => after mj_forward
//
// and, on the host, build_scene(params, model) (edits of the model at construction: a rough
// task's generated terrain), plays(params) (play mode: the env drops its interval events) and,
// optionally, series_names() and series(params, obs, out) (values a replay plots).
//
// and these kernels wrap them with the substeps, a forward pass before every observation (as
// mjlab's step runs one), the push, auto-reset, final_obs (and the terminal qpos, for drawing),
// truncation, the divergence cut and the episode statistics: fused (an env step per env in one
// pass, the CPU's, on the engine or libmujoco) or staged (the parts below as launches over the
// batch around the engine's staged substeps and forward passes: CUDA's, and launch=staged on the
// CPU). Not tiled: a task reads the contacts between substeps.
//
// TaskRow keys a task's random streams: (seed, env, episode, stream) per episode, and
// (seed, env, kStartupEpisode, stream) for what is drawn once per seed (an encoder's bias).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "envs/physics_kernels.h"

namespace myriad::envs {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Whether Env is a task env (declares kTask).
template <class Env, class = void>
struct is_task_env : std::false_type {};
template <class Env>
struct is_task_env<Env, std::void_t<decltype(Env::kTask)>> : std::bool_constant<Env::kTask> {};
template <class Env>
constexpr bool is_task_env_v = is_task_env<Env>::value;

// Whether Env plots series in replays: series_names() and series(params, obs, out) (host).
template <class Env, class = void>
struct has_series : std::false_type {};
template <class Env>
struct has_series<Env, std::void_t<decltype(Env::series_names())>> : std::true_type {};
template <class Env>
constexpr bool has_series_v = has_series<Env>::value;

// Env i's task state and the keys of its random streams; t the steps taken in its episode.
struct TaskRow {
  float* state;
  uint64_t seed;
  uint32_t env;
  uint32_t episode;
  int32_t t;
  static constexpr uint32_t kStartupEpisode = 0xFFFFFFFFu;
  MYRIAD_HD Rng rng(uint32_t stream) const { return Rng(seed, env, episode, stream); }
  MYRIAD_HD Rng startup_rng(uint32_t stream) const {
    return Rng(seed, env, kStartupEpisode, stream);
  }
};

MYRIAD_HD TaskRow task_row(const PhysicsFrame& f, int64_t i) {
  return TaskRow{f.task + i * f.task_dim, f.seed, static_cast<uint32_t>(i),
                 static_cast<uint32_t>(f.episode[i]), f.elapsed[i]};
}

// A new episode in env i: the sim's reset state, the env's start (qpos, qvel, its state) from the
// (seed, env, episode) streams, mj_forward, the first observation. In two halves around the
// forward pass, so that the staged launch runs it as its stages over the envs that start:
//   task_episode_state:   => the sim's reset state, counters, the env's start
//   the sim's forward pass
//   task_episode_observe: => the first observation
template <class Env, class Sim>
MYRIAD_HD void task_episode_state(const PhysicsView<Env, Sim>& v, int64_t i) {
  auto d = v.sim.env(i);
  v.sim.clear(d, i);
  v.f.elapsed[i] = 0;
  v.f.running_return[i] = 0.0f;
  Env::start(v.params, v.sim, i, v.sim.model_of(i), d, task_row(v.f, i));
}
template <class Env, class Sim>
MYRIAD_HD void task_episode_observe(const PhysicsView<Env, Sim>& v, int64_t i) {
  const auto d = v.sim.env(i);
  Env::observe(v.params, v.sim, i, v.sim.model_of(i), d, task_row(v.f, i),
               v.f.obs + i * v.f.obs_dim);
}
template <class Env, class Sim>
MYRIAD_HD void task_start_episode(const PhysicsView<Env, Sim>& v, int64_t i) {
  task_episode_state(v, i);
  auto d = v.sim.env(i);
  v.sim.forward(d, i);
  task_episode_observe(v, i);
}

// One env step of env i: ctrl, the substeps (each followed by the env's substep), the reward and
// termination on the state the last substep left (its kinematics one substep stale, as mjlab's),
// the interval push, then mj_forward and the observation; where the episode ended, the final
// observation (of the terminal state, after its own forward pass) and a new episode. A diverged
// state is never observed or rewarded: the episode is cut (truncated, reward 0, counted) and
// final_obs keeps the last sane observation.
//
// In parts that the fused step (task_step_one: one pass per env) and the staged step
// (envs/physics_launch.inl: the sim's substeps and forward passes as one launch per stage over
// the batch) share, so both give the same bits:
//   task_control_one:         (action, task) => ctrl
//   frame_skip times: the sim's substep, then task_substep_one (the env's contact timers)
//   task_after_substeps_one:  => reward, flags, counters; true (and forward[i] = 1) where the
//                                state is finite and gets a forward pass
//   task_push_one:            => the interval push where the episode goes on
//   the sim's forward pass where the state is finite
//   task_after_forward_one:   => the command's update and obs where finite; where the episode
//                                ended, the terminal qpos, final_obs and statistics
//   where the episode ended: the next episode's state (task_episode_state), the sim's forward
//   pass and task_episode_observe (on the staged step, launches of their own over those envs,
//   so that the per-step kernel carries no reset)
template <class Env, class Sim>
MYRIAD_HD void task_control_one(const PhysicsView<Env, Sim>& v, int64_t i) {
  auto d = v.sim.env(i);
  Env::control(v.params, v.sim.model_of(i), task_row(v.f, i), v.f.action + i * v.f.action_dim,
               d.ctrl);
}
template <class Env, class Sim>
MYRIAD_HD void task_substep_one(const PhysicsView<Env, Sim>& v, int64_t i) {
  const auto d = v.sim.env(i);
  Env::substep(v.params, v.sim, i, v.sim.model_of(i), d, task_row(v.f, i));
}
template <class Env, class Sim>
MYRIAD_HD bool task_after_substeps_one(const PhysicsView<Env, Sim>& v, int64_t i,
                                       uint8_t* forward) {
  const auto m = v.sim.model_of(i);
  const PhysicsFrame& f = v.f;
  auto d = v.sim.env(i);
  const float* action = f.action + i * f.action_dim;
  const bool sim_ok = v.sim.after_steps(d, i);
  float reward = 0.0f;
  bool terminated = false, truncated = false;
  Env::after_step(v.params, v.sim, i, m, d, action, task_row(f, i), reward, terminated, truncated,
                  InfoRow{f.info + i, f.n});
  const bool finite = sim_ok && physics_state_ok(m, d) && is_finite(reward);
  physics_record_step(f, i, finite, reward, terminated, truncated);
  if (forward != nullptr) forward[i] = finite ? 1 : 0;
  return finite;
}
// The interval push (after the reward, as mjlab's events run), where the episode goes on: a part
// of its own (its counter-based draws are a kernel's worth of registers on a GPU).
template <class Env, class Sim>
MYRIAD_HD void task_push_one(const PhysicsView<Env, Sim>& v, int64_t i) {
  const PhysicsFrame& f = v.f;
  uint32_t k = 0;
  if (!f.push.enabled || f.terminated[i] != 0 || f.truncated[i] != 0) return;
  if (!physics_push_fires(f, i, f.elapsed[i], &k)) return;
  auto d = v.sim.env(i);
  physics_push(f, d, i, k);
}
// finite: what task_after_substeps_one returned. An env that ended advances too, so that
// final_obs is the observation the step gives (what a truncated episode's value is bootstrapped
// from); its new episode (task_episode_state) starts after this.
template <class Env, class Sim>
MYRIAD_HD void task_after_forward_one(const PhysicsView<Env, Sim>& v, int64_t i, bool finite) {
  const auto m = v.sim.model_of(i);
  const PhysicsFrame& f = v.f;
  auto d = v.sim.env(i);
  // The step's count is in elapsed (physics_record_step), the episode's number not yet moved on.
  const TaskRow task = task_row(f, i);
  if (finite) {
    Env::advance(v.params, m, d, task);
    Env::observe(v.params, v.sim, i, m, d, task, f.obs + i * f.obs_dim);
  }
  if (f.terminated[i] == 0 && f.truncated[i] == 0) return;
  // The terminal pose, for drawing (the observation holds no root position); NaN where the
  // state diverged (its qpos may be finite: libmujoco resets a bad state, the engine cuts a
  // runaway velocity), as the final observation keeps the last sane one.
  if (f.final_qpos)
    for (int j = 0; j < m.nq; ++j)
      f.final_qpos[i * m.nq + j] = finite ? static_cast<double>(d.qpos[j]) : kNaN;
  physics_end_episode(f, i, task.t);
}

// The fused step: the parts in one pass per env.
template <class Env, class Sim>
MYRIAD_HD void task_step_one(const PhysicsView<Env, Sim>& v, int64_t i) {
  task_control_one(v, i);
  auto d = v.sim.env(i);
  for (int s = 0; s < v.f.frame_skip; ++s) {
    v.sim.step(d, i);
    task_substep_one(v, i);
  }
  const bool finite = task_after_substeps_one(v, i, nullptr);
  task_push_one(v, i);
  if (finite) v.sim.forward(d, i);
  task_after_forward_one(v, i, finite);
  if (v.f.terminated[i] != 0 || v.f.truncated[i] != 0) task_start_episode(v, i);
}

// set_state for task envs: the rows written (physics_write_state_row), mj_forward and the
// observation; the task's state stays as it was.
template <class Env, class Sim>
MYRIAD_HD void task_write_state_one(const PhysicsView<Env, Sim>& v, const double* state,
                                    const int64_t* ids, int64_t r) {
  physics_write_state_row(v, state, ids, r);
  const int64_t i = ids[r];
  auto d = v.sim.env(i);
  v.sim.forward(d, i);
  Env::observe(v.params, v.sim, i, v.sim.model_of(i), d, task_row(v.f, i),
               v.f.obs + i * v.f.obs_dim);
}

}  // namespace myriad::envs
