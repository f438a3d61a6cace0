// The framework's per-env kernels: an env author writes reset/step/observe for one instance
// (see envs/classic/cartpole.h); these wrap them with auto-reset, episode statistics and
// divergence checks, for env index i of a batch. Written once for CPU and CUDA.
#pragma once

#include <cmath>
#include <cstdint>

#include "myriad/device.h"
#include "myriad/hd.h"
#include "myriad/rng.h"

namespace myriad::envs {

// Raw views of one batch's buffers (all device pointers, row-major, batch index first).
template <class Env>
struct BatchView {
  using Action = typename Env::Action;
  int64_t n = 0;
  uint64_t seed = 0;
  int32_t max_steps = 0;
  typename Env::Params params{};
  float* state = nullptr;             // [N, S]
  const Action* action = nullptr;     // [N, A]
  float* obs = nullptr;               // [N, O]
  float* final_obs = nullptr;         // [N, O]
  float* reward = nullptr;            // [N]
  uint8_t* terminated = nullptr;      // [N]
  uint8_t* truncated = nullptr;       // [N]
  int32_t* elapsed = nullptr;         // [N] steps taken in the current episode
  int32_t* episode = nullptr;         // [N] episodes started since the seed was set
  float* running_return = nullptr;    // [N] return of the current episode so far
  float* episode_return = nullptr;    // [N] return of the last finished episode
  int32_t* episode_length = nullptr;  // [N] length of the last finished episode
  int32_t* diverged = nullptr;        // [N] episodes cut because the state went non-finite
};

template <class Env>
MYRIAD_HD void start_episode(const BatchView<Env>& b, int64_t i, float* s) {
  // Reset draws sit at step 0 of the episode's stream.
  Rng rng(b.seed, static_cast<uint32_t>(i), static_cast<uint32_t>(b.episode[i]), 0u);
  Env::reset(b.params, s, rng);
  b.elapsed[i] = 0;
  b.running_return[i] = 0.0f;
  Env::observe(b.params, s, b.obs + i * Env::kObsDim);
}

template <class Env>
MYRIAD_HD void reset_one(const BatchView<Env>& b, int64_t i) {
  start_episode(b, i, b.state + i * Env::kStateDim);
}

// A step in two phases, so a CPU loop can run the first in SIMD lanes and the second only for
// the few envs whose episode ended; on CUDA step_one runs both in one thread.
//
// Phase 1: the env's step, flags, reward, statistics; returns whether the episode ended. A
// non-finite state is never stored: the episode is cut (truncated, reward 0) and counted.
template <class Env>
MYRIAD_HD bool advance_one(const BatchView<Env>& b, int64_t i) {
  // `old` keeps the loaded state, so the store below never re-reads the buffer: that re-read
  // kept GCC from vectorizing the CPU loop (3x slower).
  float old[Env::kStateDim], s[Env::kStateDim];
  float* row = b.state + i * Env::kStateDim;
  MYRIAD_UNROLL
  for (int k = 0; k < Env::kStateDim; ++k) old[k] = s[k] = row[k];
  float reward = 0.0f;
  bool terminated = false;
  Env::step(b.params, s, b.action + i * Env::kActionDim, reward, terminated);
  const int32_t t = b.elapsed[i] + 1;
  bool finite = is_finite(reward);
  MYRIAD_UNROLL
  for (int k = 0; k < Env::kStateDim; ++k) finite = finite & is_finite(s[k]);
  reward = finite ? reward : 0.0f;
  terminated = terminated & finite;
  // Gymnasium's TimeLimit sets truncated at the limit even when the step also terminates.
  const bool truncated = t >= b.max_steps || !finite;
  b.reward[i] = reward;
  b.terminated[i] = terminated;
  b.truncated[i] = truncated;
  b.diverged[i] += finite ? 0 : 1;
  b.elapsed[i] = t;
  b.running_return[i] += reward;
  MYRIAD_UNROLL
  for (int k = 0; k < Env::kStateDim; ++k) row[k] = finite ? s[k] : old[k];
  Env::observe(b.params, s, b.obs + i * Env::kObsDim);
  return terminated | truncated;
}

// Phase 2, for an env whose episode ended: final_obs and statistics, then same-step reset.
template <class Env>
MYRIAD_HD void finish_one(const BatchView<Env>& b, int64_t i) {
  float* row = b.state + i * Env::kStateDim;
  Env::observe(b.params, row, b.final_obs + i * Env::kObsDim);
  b.episode_return[i] = b.running_return[i];
  b.episode_length[i] = b.elapsed[i];
  b.episode[i] += 1;
  start_episode(b, i, row);
}

template <class Env>
MYRIAD_HD void step_one(const BatchView<Env>& b, int64_t i) {
  if (advance_one(b, i)) finish_one(b, i);
}

// Recomputes the observation of env i from its state (after set_state).
template <class Env>
MYRIAD_HD void observe_one(const BatchView<Env>& b, int64_t i) {
  Env::observe(b.params, b.state + i * Env::kStateDim, b.obs + i * Env::kObsDim);
}

}  // namespace myriad::envs
