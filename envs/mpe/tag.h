// Tag (PettingZoo's simple_tag_v3, mpe2/simple_tag/simple_tag.py): kAdversaries predators
// (size 0.075, accel 3, max speed 1) chase kGood prey (size 0.05, accel 4, max speed 1.3) among
// kObstacles fixed obstacles (size 0.2). Agents 0..kAdversaries-1 are the adversaries, then
// the good agents, then the obstacles.
//
// Rewards, per step:
//   adversary: +10 for every (good agent, adversary) pair that overlaps, the same for all of
//     them (PettingZoo counts every pair, not only the adversary's own catches);
//   good agent: -10 per adversary overlapping it, minus bound(|x|) + bound(|y|) with
//     bound(v) = 0 below 0.9, (v - 0.9) * 10 below 1, min(exp(2v - 2), 10) beyond.
// No termination; episodes end by the time limit (25 steps).
//
// Observation of agent i, in PettingZoo's order:
//   vel_i [2], pos_i [2], obstacle o - pos_i [O, 2], agent j - pos_i for j != i [A-1, 2],
//   vel_j of each good agent j != i [., 2].
// Adversaries see kGood good velocities (16 values by default), good agents kGood - 1 (14):
// rows are [A, kObsDim] with a good agent's row zero-padded after its obs_size(i) values.
#pragma once

#include <cmath>
#include <string>

#include "envs/mpe/actions.h"
#include "envs/mpe/world.h"
#include "myriad/hd.h"
#include "myriad/rng.h"

namespace myriad::envs::mpe {

template <int kGood = 1, int kAdversaries = 3, int kObstacles = 2, class Actions = DiscreteActions>
struct Tag {
  static constexpr int kAgents = kAdversaries + kGood, kLandmarks = kObstacles;
  static constexpr int kEntities = kAgents + kLandmarks;
  static constexpr int kStateDim = World<kEntities>::kStateDim;
  static constexpr int kObsDim = 4 + 2 * kObstacles + 2 * (kAgents - 1) + 2 * kGood;
  static constexpr int kActionDim = Actions::kActionDim;
  static constexpr int kMaxEpisodeSteps = 25;
  static constexpr int kTeams = 2;  // 0: adversaries, 1: good agents
  static constexpr float kCatchReward = 10.0f;
  using Action = typename Actions::Action;
  using ActionDecoder = Actions;
  struct Params {};

  MYRIAD_HD static constexpr bool adversary(int i) { return i < kAdversaries; }
  MYRIAD_HD static constexpr int team(int i) { return adversary(i) ? 0 : 1; }
  MYRIAD_HD static constexpr int obs_size(int i) { return adversary(i) ? kObsDim : kObsDim - 2; }
  static std::string team_name(int t) { return t == 0 ? "adversaries" : "good"; }
  static std::string agent_name(int i) {
    return adversary(i) ? "adversary_" + std::to_string(i)
                        : "agent_" + std::to_string(i - kAdversaries);
  }

  MYRIAD_HD static EntityProps props(int e) {
    EntityProps p;
    if (e < kAdversaries) {
      p.size = 0.075f, p.accel = 3.0f, p.max_speed = 1.0f, p.movable = true;
    } else if (e < kAgents) {
      p.size = 0.05f, p.accel = 4.0f, p.max_speed = 1.3f, p.movable = true;
    } else {
      p.size = 0.2f;
    }
    return p;
  }

  // reset_world: agents uniform in [-1, 1]^2, obstacles in [-0.9, 0.9]^2, all at rest.
  MYRIAD_HD static void reset(const Params&, float* s, Rng& rng) {
    World<kEntities> w;
    MYRIAD_UNROLL
    for (int e = 0; e < kEntities; ++e) {
      const float r = e < kAgents ? 1.0f : 0.9f;
      w.pos[e][0] = rng.uniform(-r, r);
      w.pos[e][1] = rng.uniform(-r, r);
      w.vel[e][0] = w.vel[e][1] = 0.0f;
    }
    w.store(s);
  }

  // One step under actions [A, kActionDim]: rewards [A]; never terminates.
  MYRIAD_HD static void step(const Params&, float* s, const Action* a, float* reward,
                             bool& terminated) {
    World<kEntities> w;
    w.load(s);
    float u[kAgents][2];
    action_forces<Tag, Actions>(a, u);
    step_world<Tag>(w, u);
    w.store(s);
    rewards(w, reward);
    terminated = false;
  }

  // PettingZoo's penalty for a good agent at |coordinate| v.
  MYRIAD_HD static float boundary_penalty(float v) {
    if (v < 0.9f) return 0.0f;
    if (v < 1.0f) return (v - 0.9f) * 10.0f;
    return fminf(expf(2.0f * v - 2.0f), 10.0f);
  }

  MYRIAD_HD static bool caught(const World<kEntities>& w, int adv, int good) {
    return overlapping(w.pos[good], w.pos[adv], props(good).size, props(adv).size);
  }

  MYRIAD_HD static void rewards(const World<kEntities>& w, float* reward) {
    float catches = 0.0f;
    MYRIAD_UNROLL
    for (int g = kAdversaries; g < kAgents; ++g) {
      float penalty = 0.0f;
      MYRIAD_UNROLL
      for (int a = 0; a < kAdversaries; ++a)
        if (caught(w, a, g)) penalty -= kCatchReward, catches += kCatchReward;
      penalty -= boundary_penalty(fabsf(w.pos[g][0]));
      penalty -= boundary_penalty(fabsf(w.pos[g][1]));
      reward[g] = penalty;
    }
    MYRIAD_UNROLL
    for (int a = 0; a < kAdversaries; ++a) reward[a] = catches;
  }

  // Observations [A, kObsDim].
  MYRIAD_HD static void observe(const Params&, const float* s, float* obs) {
    World<kEntities> w;
    w.load(s);
    MYRIAD_UNROLL
    for (int i = 0; i < kAgents; ++i) {
      float* o = obs + i * kObsDim;
      int k = 0;
      o[k++] = w.vel[i][0], o[k++] = w.vel[i][1];
      o[k++] = w.pos[i][0], o[k++] = w.pos[i][1];
      MYRIAD_UNROLL
      for (int l = kAgents; l < kEntities; ++l)
        o[k++] = w.pos[l][0] - w.pos[i][0], o[k++] = w.pos[l][1] - w.pos[i][1];
      MYRIAD_UNROLL
      for (int j = 0; j < kAgents; ++j)
        if (j != i) o[k++] = w.pos[j][0] - w.pos[i][0], o[k++] = w.pos[j][1] - w.pos[i][1];
      MYRIAD_UNROLL
      for (int j = kAdversaries; j < kAgents; ++j)
        if (j != i) o[k++] = w.vel[j][0], o[k++] = w.vel[j][1];
      while (k < kObsDim) o[k++] = 0.0f;
    }
  }
};

}  // namespace myriad::envs::mpe
