// What the physics envs' kernels (envs/physics_kernels.h) and their runners
// (envs/physics_runner.h) share with the torch side: the framework's buffers as raw pointers,
// and where an env writes its info values. No physics or torch headers.
#pragma once

#include <cstdint>

#include "myriad/hd.h"

namespace myriad::envs {

// An interval event that pushes the root by adding to its velocity (mjlab's
// push_by_setting_velocity): every env draws its own push times and velocity changes from
// (seed, env, episode), so the schedule needs no state. It adds the change to the root's
// velocity after the step; mjlab adds it to the root velocity its sensors last computed (one
// substep stale), so its push also drops the last substep's change of the root's velocity. The root
// is a free joint at qpos_adr, qvel_adr; lo, hi [6]: the world-frame linear then angular velocity
// change's ranges.
struct PushEvent {
  int32_t enabled = 0;
  int32_t qpos_adr = 0;
  int32_t qvel_adr = 0;
  float interval[2] = {0, 0};  // seconds between pushes, drawn per push
  float lo[6] = {};
  float hi[6] = {};
  double dt = 0;  // seconds per env step
};

// The framework's buffers of one batch, as raw pointers (device pointers on CUDA), batch index
// first. Sizes that options change (observation, info) are runtime values.
struct PhysicsFrame {
  int64_t n = 0;
  uint64_t seed = 0;
  int32_t max_steps = 0;
  int32_t frame_skip = 1;
  int32_t obs_dim = 0;
  int32_t action_dim = 0;
  const float* action = nullptr;      // [N, action_dim]
  float* obs = nullptr;               // [N, obs_dim]
  float* final_obs = nullptr;         // [N, obs_dim]
  float* reward = nullptr;            // [N]
  uint8_t* terminated = nullptr;      // [N]
  uint8_t* truncated = nullptr;       // [N]
  int32_t* elapsed = nullptr;         // [N] steps taken in the current episode
  int32_t* episode = nullptr;         // [N] episodes started since the seed was set
  float* running_return = nullptr;    // [N]
  float* episode_return = nullptr;    // [N] return of the last finished episode
  int32_t* episode_length = nullptr;  // [N]
  int32_t* diverged = nullptr;        // [N] episodes cut because the state diverged
  float* info = nullptr;              // [info_dim, N]: value k of env i at info[k * n + i]
  PushEvent push;                     // env.randomize's interval push (disabled by default)
  float* task = nullptr;              // [N, task_dim]: a task env's own per-env state
  int32_t task_dim = 0;               // (envs/physics_task_kernels.h); 0 for the others
  double* final_qpos = nullptr;       // [N, nq] a task env's terminal qpos, for drawing
};

// Where after_step writes env i's info values: value k at p[k * stride].
struct InfoRow {
  float* p;
  int64_t stride;
  MYRIAD_HD void set(int k, float v) const { p[k * stride] = v; }
};

}  // namespace myriad::envs
