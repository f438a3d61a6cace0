// What PettingZoo cannot check: the scenarios' resets from Myriad's Philox streams (ranges,
// determinism), Tag's observation padding, and Sumo's rules (no reference exists).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "envs/mpe/spread.h"
#include "envs/mpe/sumo.h"
#include "envs/mpe/tag.h"

namespace myriad::envs::mpe {
namespace {

using TagD = Tag<1, 3, 2, DiscreteActions>;
using SumoD = Sumo<DiscreteActions>;

template <class S>
World<S::kEntities> reset_world(uint64_t seed, uint32_t env, uint32_t episode) {
  float s[S::kStateDim];
  Rng rng(seed, env, episode, 0);
  S::reset(typename S::Params{}, s, rng);
  World<S::kEntities> w;
  w.load(s);
  return w;
}

TEST(MpeReset, SpreadAndTagDrawPettingZoosRangesAtRest) {
  for (uint32_t env = 0; env < 200; ++env) {
    const auto spread = reset_world<Spread<>>(3, env, 0);
    for (int e = 0; e < Spread<>::kEntities; ++e)
      for (int k = 0; k < 2; ++k) {
        EXPECT_LE(std::abs(spread.pos[e][k]), 1.0f);
        EXPECT_EQ(spread.vel[e][k], 0.0f);
      }
    const auto tag = reset_world<TagD>(3, env, 0);
    for (int e = 0; e < TagD::kEntities; ++e)
      for (int k = 0; k < 2; ++k) {
        EXPECT_LE(std::abs(tag.pos[e][k]), e < TagD::kAgents ? 1.0f : 0.9f);
        EXPECT_EQ(tag.vel[e][k], 0.0f);
      }
  }
}

// Determinism: a reset is a function of (seed, env, episode) only.
TEST(MpeReset, SameStreamSameWorldOtherStreamOtherWorld) {
  const auto a = reset_world<TagD>(11, 5, 2), b = reset_world<TagD>(11, 5, 2);
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
  const auto c = reset_world<TagD>(11, 6, 2), d = reset_world<TagD>(11, 5, 3);
  EXPECT_NE(std::memcmp(&a, &c, sizeof a), 0);
  EXPECT_NE(std::memcmp(&a, &d, sizeof a), 0);
}

TEST(MpeTag, GoodAgentsRowIsPaddedWithZeros) {
  static_assert(TagD::kObsDim == 16 && TagD::obs_size(0) == 16 && TagD::obs_size(3) == 14);
  static_assert(TagD::kStateDim == 24 && Spread<>::kObsDim == 18);
  float s[TagD::kStateDim], obs[TagD::kAgents * TagD::kObsDim];
  for (int k = 0; k < TagD::kStateDim; ++k) s[k] = 0.1f * (k + 1);
  TagD::observe({}, s, obs);
  EXPECT_EQ(obs[3 * TagD::kObsDim + 14], 0.0f);
  EXPECT_EQ(obs[3 * TagD::kObsDim + 15], 0.0f);
  // An adversary's last two values are the good agent's velocity.
  World<TagD::kEntities> w;
  w.load(s);
  EXPECT_EQ(obs[14], w.vel[3][0]);
  EXPECT_EQ(obs[15], w.vel[3][1]);
}

// ---------------------------------------------------------------------------------------------
// Sumo.

TEST(MpeSumo, ResetPutsTheAgentsOppositeAtHalfTheRing) {
  for (uint32_t env = 0; env < 50; ++env) {
    const auto w = reset_world<SumoD>(1, env, 0);
    EXPECT_NEAR(std::hypot(w.pos[0][0], w.pos[0][1]), 0.5f, 1e-6);
    EXPECT_EQ(w.pos[1][0], -w.pos[0][0]);
    EXPECT_EQ(w.pos[1][1], -w.pos[0][1]);
  }
}

// Agent 0 runs at agent 1 (the discrete action along the larger offset), agent 1 stands still,
// until the episode ends; returns its length (-1: the time limit) and the returns.
int push_until_done(float* s, float* total) {
  total[0] = total[1] = 0;
  for (int t = 0; t < SumoD::kMaxEpisodeSteps; ++t) {
    World<2> w;
    w.load(s);
    const float dx = w.pos[1][0] - w.pos[0][0], dy = w.pos[1][1] - w.pos[0][1];
    const int32_t toward = std::abs(dx) > std::abs(dy) ? (dx > 0 ? 2 : 1) : (dy > 0 ? 4 : 3);
    const int32_t a[2] = {toward, 0};
    float reward[2];
    bool terminated = false;
    SumoD::step({}, s, a, reward, terminated);
    EXPECT_EQ(reward[0], -reward[1]);  // zero-sum
    total[0] += reward[0], total[1] += reward[1];
    if (terminated) return t + 1;
  }
  return -1;
}

TEST(MpeSumo, PushingTheOtherOutWins) {
  float s[SumoD::kStateDim];
  Rng rng(4, 0, 0, 0);
  SumoD::reset({}, s, rng);
  float total[2];
  const int steps = push_until_done(s, total);
  ASSERT_GT(steps, 0) << "agent 0 never pushed agent 1 out";
  EXPECT_EQ(SumoD::outcome(s), SumoOutcome::kWin0);
  EXPECT_EQ(total[0], 1.0f);
  EXPECT_EQ(total[1], -1.0f);
}

TEST(MpeSumo, StandingStillNeverEnds) {
  float s[SumoD::kStateDim];
  Rng rng(4, 1, 0, 0);
  SumoD::reset({}, s, rng);
  const int32_t a[2] = {0, 0};
  for (int t = 0; t < SumoD::kMaxEpisodeSteps; ++t) {
    float reward[2];
    bool terminated = true;
    SumoD::step({}, s, a, reward, terminated);
    EXPECT_FALSE(terminated);
    EXPECT_EQ(reward[0], 0.0f);
  }
  EXPECT_EQ(SumoD::outcome(s), SumoOutcome::kUndecided);
}

TEST(MpeSumo, BothOutOnOneStepIsADraw) {
  // Both at the rim, moving outward: both leave on the first step.
  World<2> w{{{0.99f, 0.0f}, {-0.99f, 0.0f}}, {{1.0f, 0.0f}, {-1.0f, 0.0f}}};
  float s[SumoD::kStateDim];
  w.store(s);
  const int32_t a[2] = {0, 0};
  float reward[2];
  bool terminated = false;
  SumoD::step({}, s, a, reward, terminated);
  EXPECT_TRUE(terminated);
  EXPECT_EQ(SumoD::outcome(s), SumoOutcome::kDraw);
  EXPECT_EQ(reward[0], 0.0f);
  EXPECT_EQ(reward[1], 0.0f);
}

TEST(MpeSumo, ObservationIsSymmetric) {
  World<2> w{{{0.3f, -0.2f}, {-0.1f, 0.4f}}, {{0.5f, 0.1f}, {-0.2f, 0.3f}}};
  float s[SumoD::kStateDim], obs[2 * SumoD::kObsDim];
  w.store(s);
  SumoD::observe({}, s, obs);
  EXPECT_EQ(obs[4], -obs[8 + 4]);
  EXPECT_EQ(obs[6], obs[8 + 0]);
  EXPECT_EQ(obs[8 + 6], obs[0]);
}

// ---------------------------------------------------------------------------------------------
// Throughput on one CPU thread, no framework (run with --gtest_also_run_disabled_tests).

template <class S>
void bench(const char* name) {
  constexpr int kEnvs = 4096, kSteps = 200;
  std::vector<float> state(kEnvs * S::kStateDim), obs(kEnvs * S::kAgents * S::kObsDim);
  std::vector<float> reward(kEnvs * S::kAgents);
  std::vector<int32_t> action(kEnvs * S::kAgents);
  for (int i = 0; i < kEnvs; ++i) {
    Rng rng(1, i, 0, 0);
    S::reset({}, &state[i * S::kStateDim], rng);
  }
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < kSteps; ++t) {
    for (size_t k = 0; k < action.size(); ++k) action[k] = static_cast<int32_t>((k * 7 + t) % 5);
    for (int i = 0; i < kEnvs; ++i) {
      bool terminated;
      float* s = &state[i * S::kStateDim];
      S::step({}, s, &action[i * S::kAgents], &reward[i * S::kAgents], terminated);
      S::observe({}, s, &obs[i * S::kAgents * S::kObsDim]);
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "[ mpe     ] %s: %.3g env steps/s on one thread (%d envs x %d steps, step + observe)\n", name,
      kEnvs * double(kSteps) / secs, kEnvs, kSteps);
}

TEST(MpeBench, DISABLED_StepsPerSecondOneThread) {
  bench<Spread<3, DiscreteActions>>("Spread-v0 (N=3)");
  bench<TagD>("Tag-v0 (3 vs 1, 2 obstacles)");
  bench<SumoD>("Sumo-v0");
}

}  // namespace
}  // namespace myriad::envs::mpe
