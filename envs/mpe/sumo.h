// Sumo: two agents in a ring, each trying to push the other out. No PettingZoo reference; the
// design, kept in mpe2's world (same physics, actions and contact forces):
// - The ring is the disc of radius kRingRadius = 1 around the origin; it is not an entity.
// - Both agents: size 0.15, mass 1, accel 5 (mpe2's default), max speed 1.
// - Reset: agent 0 at distance 0.5 from the centre at a uniform random angle, agent 1 opposite
//   it, both at rest.
// - An agent is out once its centre is farther than kRingRadius from the origin. The episode
//   terminates at the first step after which an agent is out: if only one is out the other
//   wins (+1) and it loses (-1); if both left on the same step it is a draw (0, 0). Every other
//   step rewards 0, so the rewards are zero-sum and the return is the outcome.
// - The time limit (100 steps) ends the episode undecided: a draw (truncation, reward 0).
// Observation of agent i, [8]: vel_i [2], pos_i [2], pos_j - pos_i [2], vel_j [2].
#pragma once

#include <string>

#include "envs/mpe/actions.h"
#include "envs/mpe/world.h"
#include "myriad/hd.h"
#include "myriad/math.h"
#include "myriad/rng.h"

namespace myriad::envs::mpe {

// The result of a Sumo episode so far.
enum class SumoOutcome : int { kUndecided = 0, kWin0 = 1, kWin1 = 2, kDraw = 3 };

template <class Actions = DiscreteActions>
struct Sumo {
  static constexpr int kAgents = 2, kLandmarks = 0, kEntities = 2;
  static constexpr int kStateDim = World<kEntities>::kStateDim;
  static constexpr int kObsDim = 8;
  static constexpr int kActionDim = Actions::kActionDim;
  static constexpr int kMaxEpisodeSteps = 100;
  static constexpr int kTeams = 2;  // one agent each
  static constexpr float kRingRadius = 1.0f, kStartRadius = 0.5f, kAgentSize = 0.15f;
  static constexpr float kPi = 3.14159265358979323846f;
  using Action = typename Actions::Action;
  using ActionDecoder = Actions;
  struct Params {};

  MYRIAD_HD static EntityProps props(int) {
    EntityProps p;
    p.size = kAgentSize, p.accel = kDefaultAccel, p.max_speed = 1.0f, p.movable = true;
    return p;
  }
  MYRIAD_HD static constexpr int team(int i) { return i; }
  MYRIAD_HD static constexpr int obs_size(int) { return kObsDim; }
  static std::string agent_name(int i) { return "wrestler_" + std::to_string(i); }
  static std::string team_name(int t) { return agent_name(t); }

  MYRIAD_HD static void reset(const Params&, float* s, Rng& rng) {
    float sn, cs;
    sin_cos(rng.uniform(-kPi, kPi), &sn, &cs);
    World<kEntities> w;
    w.pos[0][0] = kStartRadius * cs, w.pos[0][1] = kStartRadius * sn;
    w.pos[1][0] = -kStartRadius * cs, w.pos[1][1] = -kStartRadius * sn;
    w.vel[0][0] = w.vel[0][1] = w.vel[1][0] = w.vel[1][1] = 0.0f;
    w.store(s);
  }

  MYRIAD_HD static bool out_of_ring(const float* pos) {
    return pos[0] * pos[0] + pos[1] * pos[1] > kRingRadius * kRingRadius;
  }

  MYRIAD_HD static SumoOutcome outcome(const World<kEntities>& w) {
    const bool out0 = out_of_ring(w.pos[0]), out1 = out_of_ring(w.pos[1]);
    if (out0 && out1) return SumoOutcome::kDraw;
    if (out1) return SumoOutcome::kWin0;
    if (out0) return SumoOutcome::kWin1;
    return SumoOutcome::kUndecided;
  }

  // The outcome of the state row s (for episode statistics: win/loss/draw).
  MYRIAD_HD static SumoOutcome outcome(const float* s) {
    World<kEntities> w;
    w.load(s);
    return outcome(w);
  }

  // The winning agent (its team) of the episode ending in state s, -1 for a draw (both out, or
  // both still in when the time limit or a divergence cut ended it).
  MYRIAD_HD static int winner(const float* s) {
    const SumoOutcome o = outcome(s);
    return o == SumoOutcome::kWin0 ? 0 : (o == SumoOutcome::kWin1 ? 1 : -1);
  }

  // One step under actions [2, kActionDim]: rewards [2] (+1/-1 on a win, else 0).
  MYRIAD_HD static void step(const Params&, float* s, const Action* a, float* reward,
                             bool& terminated) {
    World<kEntities> w;
    w.load(s);
    float u[kAgents][2];
    action_forces<Sumo, Actions>(a, u);
    step_world<Sumo>(w, u);
    w.store(s);
    const SumoOutcome o = outcome(w);
    reward[0] = o == SumoOutcome::kWin0 ? 1.0f : (o == SumoOutcome::kWin1 ? -1.0f : 0.0f);
    reward[1] = -reward[0];
    terminated = o != SumoOutcome::kUndecided;
  }

  // Observations [2, kObsDim].
  MYRIAD_HD static void observe(const Params&, const float* s, float* obs) {
    World<kEntities> w;
    w.load(s);
    MYRIAD_UNROLL
    for (int i = 0; i < kAgents; ++i) {
      const int j = 1 - i;
      float* o = obs + i * kObsDim;
      o[0] = w.vel[i][0], o[1] = w.vel[i][1];
      o[2] = w.pos[i][0], o[3] = w.pos[i][1];
      o[4] = w.pos[j][0] - w.pos[i][0], o[5] = w.pos[j][1] - w.pos[i][1];
      o[6] = w.vel[j][0], o[7] = w.vel[j][1];
    }
  }
};

}  // namespace myriad::envs::mpe
