// The framework's per-env kernels for multi-agent envs (envs/multi_agent_batch_env.h): the
// multi-agent counterpart of envs/batch_kernels.h, with rewards and returns per agent and
// episodes ending per env. An env here is a scenario of envs/mpe/ (kAgents, reset/step/observe
// over [A, ...] arrays) with a spec; these wrap it with auto-reset, episode statistics and
// divergence checks, for env index i of a batch. Written once for CPU and CUDA.
#pragma once

#include <cstdint>
#include <type_traits>

#include "envs/batch_kernels.h"
#include "myriad/hd.h"
#include "myriad/rng.h"

namespace myriad::envs {

// Raw views of one multi-agent batch's buffers (device pointers, row-major, batch index first,
// agent index second). A = Env::kAgents, D = Env::kObsDim, K = Env::kActionDim.
template <class Env>
struct MultiAgentView {
  using Action = typename Env::Action;
  int64_t n = 0;
  uint64_t seed = 0;
  int32_t max_steps = 0;
  typename Env::Params params{};
  float* state = nullptr;             // [N, S]
  const Action* action = nullptr;     // [N, A, K]
  float* obs = nullptr;               // [N, A, D]
  float* final_obs = nullptr;         // [N, A, D]
  float* reward = nullptr;            // [N, A]
  uint8_t* terminated = nullptr;      // [N]
  uint8_t* truncated = nullptr;       // [N]
  int32_t* elapsed = nullptr;         // [N] steps taken in the current episode
  int32_t* episode = nullptr;         // [N] episodes started since the seed was set
  float* running_return = nullptr;    // [N, A] each agent's return of the current episode so far
  float* episode_return = nullptr;    // [N, A] each agent's return of the last finished episode
  int32_t* episode_length = nullptr;  // [N] length of the last finished episode
  int32_t* diverged = nullptr;        // [N] episodes cut because the state went non-finite
  int32_t* winner = nullptr;          // [N] winning team of the last finished episode, -1: draw
                                      //     (envs with Env::winner only)
};

// Whether Env decides matches: `static int winner(const float* state)` gives the winning team of
// a finished episode's last state, -1 for a draw (an episode cut by the time limit included).
template <class Env, class = void>
struct HasWinner : std::false_type {};
template <class Env>
struct HasWinner<Env, std::void_t<decltype(Env::winner(static_cast<const float*>(nullptr)))>>
    : std::true_type {};

// The view type the kernels of Env take: MultiAgentView for envs that declare kAgents.
template <class Env, class = void>
struct ViewOf {
  using type = BatchView<Env>;
};
template <class Env>
struct ViewOf<Env, std::void_t<decltype(Env::kAgents)>> {
  using type = MultiAgentView<Env>;
};
template <class Env>
using ViewOfT = typename ViewOf<Env>::type;

template <class Env>
MYRIAD_HD void start_episode(const MultiAgentView<Env>& b, int64_t i, float* s) {
  // Reset draws sit at step 0 of the episode's stream, as for the single-agent envs.
  Rng rng(b.seed, static_cast<uint32_t>(i), static_cast<uint32_t>(b.episode[i]), 0u);
  Env::reset(b.params, s, rng);
  b.elapsed[i] = 0;
  MYRIAD_UNROLL
  for (int a = 0; a < Env::kAgents; ++a) b.running_return[i * Env::kAgents + a] = 0.0f;
  Env::observe(b.params, s, b.obs + i * Env::kAgents * Env::kObsDim);
}

template <class Env>
MYRIAD_HD void reset_one(const MultiAgentView<Env>& b, int64_t i) {
  start_episode(b, i, b.state + i * Env::kStateDim);
}

// Phase 1 (see envs/batch_kernels.h): the scenario's step, flags, rewards, statistics; returns
// whether the episode ended. A non-finite state or reward is never stored: the episode is cut
// (truncated, every agent's reward 0) and counted.
template <class Env>
MYRIAD_HD bool advance_one(const MultiAgentView<Env>& b, int64_t i) {
  constexpr int A = Env::kAgents;
  float old[Env::kStateDim], s[Env::kStateDim], reward[A];
  float* row = b.state + i * Env::kStateDim;
  MYRIAD_UNROLL
  for (int k = 0; k < Env::kStateDim; ++k) old[k] = s[k] = row[k];
  bool terminated = false;
  Env::step(b.params, s, b.action + i * A * Env::kActionDim, reward, terminated);
  const int32_t t = b.elapsed[i] + 1;
  bool finite = true;
  MYRIAD_UNROLL
  for (int a = 0; a < A; ++a) finite = finite & is_finite(reward[a]);
  MYRIAD_UNROLL
  for (int k = 0; k < Env::kStateDim; ++k) finite = finite & is_finite(s[k]);
  terminated = terminated & finite;
  const bool truncated = t >= b.max_steps || !finite;
  MYRIAD_UNROLL
  for (int a = 0; a < A; ++a) {
    const float r = finite ? reward[a] : 0.0f;
    b.reward[i * A + a] = r;
    b.running_return[i * A + a] += r;
  }
  b.terminated[i] = terminated;
  b.truncated[i] = truncated;
  b.diverged[i] += finite ? 0 : 1;
  b.elapsed[i] = t;
  MYRIAD_UNROLL
  for (int k = 0; k < Env::kStateDim; ++k) row[k] = finite ? s[k] : old[k];
  Env::observe(b.params, row, b.obs + i * A * Env::kObsDim);
  return terminated | truncated;
}

// Phase 2, for an env whose episode ended: final_obs and statistics, then same-step reset.
template <class Env>
MYRIAD_HD void finish_one(const MultiAgentView<Env>& b, int64_t i) {
  constexpr int A = Env::kAgents;
  float* row = b.state + i * Env::kStateDim;
  Env::observe(b.params, row, b.final_obs + i * A * Env::kObsDim);
  MYRIAD_UNROLL
  for (int a = 0; a < A; ++a) b.episode_return[i * A + a] = b.running_return[i * A + a];
  b.episode_length[i] = b.elapsed[i];
  if constexpr (HasWinner<Env>::value) b.winner[i] = Env::winner(row);
  b.episode[i] += 1;
  start_episode(b, i, row);
}

template <class Env>
MYRIAD_HD void step_one(const MultiAgentView<Env>& b, int64_t i) {
  if (advance_one(b, i)) finish_one(b, i);
}

// Recomputes the observations of env i from its state (after set_state).
template <class Env>
MYRIAD_HD void observe_one(const MultiAgentView<Env>& b, int64_t i) {
  Env::observe(b.params, b.state + i * Env::kStateDim, b.obs + i * Env::kAgents * Env::kObsDim);
}

}  // namespace myriad::envs
