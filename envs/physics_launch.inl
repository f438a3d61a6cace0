// Launches the physics envs' kernels (envs/physics_kernels.h) over a batch on device D, and the
// runner that owns a sim's data and calls them. Included by the CPU's runners
// (envs/locomotion/runners_cpu.cc) and CUDA's (runners_cuda.cuh), so both run every line of env
// logic.
#pragma once

#include <stdexcept>

#include "envs/physics_kernels.h"
#include "envs/physics_runner.h"
#include "envs/physics_task_kernels.h"
#include "myriad/parallel_for.h"
#include "physics/launch.h"

namespace myriad::envs {

// The per-env kernels of a physics env's step, named (not lambdas) so that a profile and the
// ptxas table (scripts/ptxas-table.py) read like the pipeline; the fused one is the option.
template <class View>
struct PhysicsStepFused {
  View v;
  MYRIAD_HD void operator()(int64_t i) const { physics_step_one(v, i); }
};
template <class View, class Scalar, int kWidth>
struct PhysicsPreStep {
  View v;
  Scalar* before;
  MYRIAD_HD void operator()(int64_t i) const { physics_pre_step_one(v, i, before + i * kWidth); }
};
// kResetNow false: the auto-reset runs in launches of its own (PhysicsEpisode*), and the kernel
// holds no forward pass.
template <class Env, class Sim, int kWidth, bool kResetNow>
struct PhysicsPostStep {
  PhysicsView<Env, Sim> v;
  typename Sim::Scalar* before;
  MYRIAD_HD void operator()(int64_t i) const {
    physics_post_step_one<Env, Sim, kResetNow>(v, i, before + i * kWidth);
  }
};
// The halves of a new episode around its forward pass (physics_episode_state, _observe), for
// the envs `only` keeps: those that ended this step, or all of them at reset().
template <class View>
struct PhysicsEpisodeState {
  View v;
  physics::EnvMask only;
  MYRIAD_HD void operator()(int64_t i) const {
    if (!only.skips(i)) physics_episode_state(v, i);
  }
};
template <class View>
struct PhysicsEpisodeObserve {
  View v;
  physics::EnvMask only;
  MYRIAD_HD void operator()(int64_t i) const {
    if (!only.skips(i)) physics_episode_observe(v, i);
  }
};
// The fused shape's reset and set_state: a forward pass inline, per env.
template <class View>
struct PhysicsResetFused {
  View v;
  MYRIAD_HD void operator()(int64_t i) const { physics_reset_one(v, i); }
};
// A task env's kernels (envs/physics_task_kernels.h): fused (the CPU's) and staged.
template <class View>
struct TaskResetFused {
  View v;
  MYRIAD_HD void operator()(int64_t i) const { task_start_episode(v, i); }
};
template <class View>
struct TaskStepFused {
  View v;
  MYRIAD_HD void operator()(int64_t i) const { task_step_one(v, i); }
};
template <class View>
struct TaskWriteStateFused {
  View v;
  const double* state;
  const int64_t* ids;
  MYRIAD_HD void operator()(int64_t r) const { task_write_state_one(v, state, ids, r); }
};
template <class View>
struct TaskControl {
  View v;
  MYRIAD_HD void operator()(int64_t i) const { task_control_one(v, i); }
};
template <class View>
struct TaskSubstep {
  View v;
  MYRIAD_HD void operator()(int64_t i) const { task_substep_one(v, i); }
};
template <class View>
struct TaskAfterSubsteps {
  View v;
  uint8_t* forward;  // [N]: 1 where the state is finite (its forward pass runs next)
  MYRIAD_HD void operator()(int64_t i) const { task_after_substeps_one(v, i, forward); }
};
template <class View>
struct TaskPush {
  View v;
  MYRIAD_HD void operator()(int64_t i) const { task_push_one(v, i); }
};
template <class View>
struct TaskAfterForward {
  View v;
  const uint8_t* forward;
  MYRIAD_HD void operator()(int64_t i) const { task_after_forward_one(v, i, forward[i] != 0); }
};
// The halves of a task env's new episode (or of its set_state's observation) around the forward
// pass, for the envs `only` keeps.
template <class View>
struct TaskEpisodeState {
  View v;
  physics::EnvMask only;
  MYRIAD_HD void operator()(int64_t i) const {
    if (!only.skips(i)) task_episode_state(v, i);
  }
};
template <class View>
struct TaskEpisodeObserve {
  View v;
  physics::EnvMask only;
  MYRIAD_HD void operator()(int64_t i) const {
    if (!only.skips(i)) task_episode_observe(v, i);
  }
};
template <class View>
struct PhysicsWriteStateFused {
  View v;
  const double* state;
  const int64_t* ids;
  MYRIAD_HD void operator()(int64_t r) const { physics_write_state_one(v, state, ids, r); }
};
// The staged set_state: the rows written, then (after the forward pass by stages) observed.
template <class View>
struct PhysicsWriteRows {
  View v;
  const double* state;
  const int64_t* ids;
  MYRIAD_HD void operator()(int64_t r) const { physics_write_state_row(v, state, ids, r); }
};
template <class Env, class View>
struct PhysicsObserveWritten {
  View v;
  physics::EnvMask only;
  MYRIAD_HD void operator()(int64_t i) const {
    if (only.skips(i)) return;
    auto d = v.sim.env(i);
    Env::observe(v.params, v.sim.model_of(i), d, v.f.obs + i * v.f.obs_dim);
  }
};

template <Device D, class Env, class Sim>
class SimRunner : public PhysicsRunner<Env> {
 public:
  using Params = typename Env::Params;
  using View = PhysicsView<Env, Sim>;

  // On CUDA every launch is staged (kFusedShapes false): the kernels that would inline a whole
  // forward pass or step (the fused step, reset and set_state) are not even compiled there.
  // Nor on any blocked batch (launch=blocked, on either device).
  static constexpr bool kFusedShapes = D == Device::kCpu && Sim::kBlock == 1;

  void reset(const PhysicsFrame& f, const Params& p, void* stream) override {
    const View v{f, p, sim_};
    if constexpr (is_task_env_v<Env>) {
      if constexpr (kFusedShapes) {
        if (!staged_)
          return parallel_for(device_, "task_env.reset", f.n, TaskResetFused<View>{v}, stream, 2);
      }
      require_task_staged();
      start_task_episodes(v, physics::EnvMask{}, stream);
    } else {
      if constexpr (kFusedShapes) {
        if (!reset_launch_)
          return parallel_for(device_, "physics_env.reset", f.n, PhysicsResetFused<View>{v}, stream,
                              2);
      }
      start_episodes(v, physics::EnvMask{}, stream);
    }
  }
  // Fused (CPU): one pass per env through the whole env step (an env's data stays in cache).
  // Staged: a pre-step launch, the physics substeps as one launch per stage over the batch
  // (physics/launch.h; on CUDA each stage gets its own register count and NVTX range), a
  // post-step launch and, with reset_launch_, the auto-reset's launches (start_episodes); the
  // env's `before` values wait in before_. Tiled (CPU): the staged shape with the substeps in
  // SIMD tiles and the reset inline. Same bits every way.
  void step(const PhysicsFrame& f, const Params& p, void* stream) override {
    const View v{f, p, sim_};
    if constexpr (is_task_env_v<Env>) {
      if constexpr (kFusedShapes) {
        if (!staged_)
          return parallel_for(device_, "task_env.step", f.n, TaskStepFused<View>{v}, stream, 2);
      }
      require_task_staged();
      step_task_staged(v, stream);
    } else {
      step_untasked(v, stream);
    }
  }
  // A task env's staged step (envs/physics_task_kernels.h's parts): the env's substep after
  // every physics substep, forward passes by stages where the state is finite and where a new
  // episode starts.
  void step_task_staged(const View& v, void* stream) {
    const PhysicsFrame& f = v.f;
    parallel_for(device_, "task_env.control", f.n, TaskControl<View>{v}, stream, 2);
    for (int s = 0; s < f.frame_skip; ++s) {
      step_substeps_staged(1, stream);
      parallel_for(device_, "task_env.substep", f.n, TaskSubstep<View>{v}, stream, 2);
    }
    parallel_for(device_, "task_env.after_substeps", f.n, TaskAfterSubsteps<View>{v, forward_},
                 stream, 2);
    if (f.push.enabled) parallel_for(device_, "task_env.push", f.n, TaskPush<View>{v}, stream, 2);
    forward_staged(physics::EnvMask{forward_, nullptr}, stream);
    parallel_for(device_, "task_env.after_forward", f.n, TaskAfterForward<View>{v, forward_},
                 stream, 2);
    // Auto-reset in launches of its own over the envs that ended (their flags are the mask).
    start_task_episodes(v, physics::EnvMask{f.terminated, f.truncated}, stream);
  }
  void step_untasked(const View& v, void* stream) {
    const PhysicsFrame& f = v.f;
    constexpr int kWidth = kBeforeWidth<Env>;
    if constexpr (kFusedShapes) {
      if (!staged_)
        return parallel_for(device_, "physics_env.step", f.n, PhysicsStepFused<View>{v}, stream, 2);
    }
    parallel_for(device_, "physics_env.pre_step", f.n,
                 PhysicsPreStep<View, Scalar, kWidth>{v, before_}, stream, 2);
    step_substeps_staged(f.frame_skip, stream);
    if constexpr (kFusedShapes) {
      if (!reset_launch_)
        return parallel_for(device_, "physics_env.post_step", f.n,
                            PhysicsPostStep<Env, Sim, kWidth, true>{v, before_}, stream, 2);
    }
    parallel_for(device_, "physics_env.post_step", f.n,
                 PhysicsPostStep<Env, Sim, kWidth, false>{v, before_}, stream, 2);
    // Auto-reset in launches of its own over the envs that ended (their flags are the mask), so
    // the post-step kernel carries no forward pass.
    start_episodes(v, physics::EnvMask{f.terminated, f.truncated}, stream);
  }
  void read_state(const PhysicsFrame& f, const Params& p, double* state, void* stream) override {
    const View v{f, p, sim_};
    parallel_for(
        device_, "physics_env.read_state", f.n,
        [v, state] MYRIAD_HD_LAMBDA(int64_t i) { physics_read_state_one(v, state, i); }, stream,
        1 << 30);
  }
  void write_state(const PhysicsFrame& f, const Params& p, const double* state, const int64_t* ids,
                   int64_t rows, const uint8_t* written, void* stream) override {
    const View v{f, p, sim_};
    if constexpr (is_task_env_v<Env>) {
      if constexpr (kFusedShapes) {
        if (!staged_)
          return parallel_for(device_, "task_env.write_state", rows,
                              TaskWriteStateFused<View>{v, state, ids}, stream, 2);
      }
      require_task_staged();
      parallel_for(device_, "task_env.write_rows", rows, PhysicsWriteRows<View>{v, state, ids},
                   stream, 2);
      const physics::EnvMask only{written, nullptr};
      forward_staged(only, stream);
      parallel_for(device_, "task_env.observe_written", v.f.n, TaskEpisodeObserve<View>{v, only},
                   stream, 2);
    } else {
      write_state_untasked(v, state, ids, rows, written, stream);
    }
  }
  void write_state_untasked(const View& v, const double* state, const int64_t* ids, int64_t rows,
                            const uint8_t* written, void* stream) {
    if constexpr (kFusedShapes) {
      if (!reset_launch_)
        return parallel_for(device_, "physics_env.write_state", rows,
                            PhysicsWriteStateFused<View>{v, state, ids}, stream, 2);
    }
    // As the auto-reset: the rows written, the forward pass by stages over the written envs, obs.
    parallel_for(device_, "physics_env.write_rows", rows, PhysicsWriteRows<View>{v, state, ids},
                 stream, 2);
    const physics::EnvMask only{written, nullptr};
    forward_staged(only, stream);
    parallel_for(device_, "physics_env.observe_written", v.f.n,
                 PhysicsObserveWritten<Env, View>{v, only}, stream, 2);
  }

  int64_t snapshot_width() const override {
    return physics_snapshot_width<typename Sim::Scalar>(sim_.model);
  }
  void save_snapshot(const PhysicsFrame& f, const Params& p, double* out, void* stream) override {
    const View v{f, p, sim_};
    const int64_t width = snapshot_width();
    parallel_for(
        device_, "physics_env.save", f.n,
        [v, out, width] MYRIAD_HD_LAMBDA(int64_t i) { physics_save_one(v, out, width, i); }, stream,
        1 << 30);
  }
  void load_snapshot(const PhysicsFrame& f, const Params& p, const double* in,
                     void* stream) override {
    const View v{f, p, sim_};
    const int64_t width = snapshot_width();
    parallel_for(
        device_, "physics_env.load", f.n,
        [v, in, width] MYRIAD_HD_LAMBDA(int64_t i) { physics_load_one(v, in, width, i); }, stream,
        1 << 30);
  }

 protected:
  using Scalar = typename Sim::Scalar;
  explicit SimRunner(DeviceId device) : device_{D, device.index} {}
  // The staged step's physics: `substeps` steps of every env, one launch per stage, on `stream`.
  // A runner that sets staged_ overrides it (and points before_ at kBeforeWidth<Env> values per
  // env on its device).
  virtual void step_substeps_staged(int /*substeps*/, void* /*stream*/) {
    throw std::logic_error("physics env runner: this sim has no staged step");
  }
  // The forward pass of the envs `only` keeps, one launch per stage on `stream`. A runner that
  // sets reset_launch_ overrides it.
  virtual void forward_staged(physics::EnvMask /*only*/, void* /*stream*/) {
    throw std::logic_error("physics env runner: this sim has no staged forward pass");
  }
  // A task env's staged kernels need the staged forward pass (reset_launch_) and forward_: not
  // the tiled launch (on CUDA the fused kernels are not even compiled: kFusedShapes).
  void require_task_staged() const {
    if (!reset_launch_ || forward_ == nullptr)
      throw std::logic_error("task envs run the fused or the staged launch (not tiled)");
  }
  void start_task_episodes(const View& v, physics::EnvMask only, void* stream) {
    parallel_for(device_, "task_env.episode_state", v.f.n, TaskEpisodeState<View>{v, only}, stream,
                 2);
    forward_staged(only, stream);
    parallel_for(device_, "task_env.episode_observe", v.f.n, TaskEpisodeObserve<View>{v, only},
                 stream, 2);
  }
  // New episodes in the envs `only` keeps: the state, the forward pass by stages, the first
  // observation (three launch groups instead of a kernel that inlines a forward pass).
  void start_episodes(const View& v, physics::EnvMask only, void* stream) {
    parallel_for(device_, "physics_env.episode_state", v.f.n, PhysicsEpisodeState<View>{v, only},
                 stream, 2);
    forward_staged(only, stream);
    parallel_for(device_, "physics_env.episode_observe", v.f.n,
                 PhysicsEpisodeObserve<View>{v, only}, stream, 2);
  }
  Sim sim_{};
  DeviceId device_;
  bool staged_ = false;
  bool reset_launch_ = false;  // staged auto-reset (start_episodes), set with staged_
  Scalar* before_ = nullptr;
  uint8_t* forward_ = nullptr;  // [N] on the device: a task env's staged step's finite flags
};

}  // namespace myriad::envs
