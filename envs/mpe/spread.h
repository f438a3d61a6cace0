// Spread (PettingZoo's simple_spread_v3, mpe2/simple_spread/simple_spread.py): N agents
// (size 0.15, accel 5, no speed clamp) cover N landmarks that do not collide. Every agent's
// reward mixes the shared coverage term, minus the sum over landmarks of the nearest agent's
// distance, with its own collision term, -1 per other agent it overlaps:
//   reward_i = coverage * (1 - local_ratio) + collisions_i * local_ratio.
// No termination; episodes end by the time limit (25 steps).
//
// Observation of agent i, [kObsDim] (18 for N = 3), in PettingZoo's order:
//   vel_i [2], pos_i [2], landmark l - pos_i [N, 2], agent j - pos_i for j != i [N-1, 2],
//   communication of each other agent [N-1, 2] (always 0: the agents are silent).
#pragma once

#include <string>

#include "envs/mpe/actions.h"
#include "envs/mpe/world.h"
#include "myriad/hd.h"
#include "myriad/rng.h"

namespace myriad::envs::mpe {

template <int N = 3, class Actions = DiscreteActions>
struct Spread {
  static constexpr int kAgents = N, kLandmarks = N, kEntities = 2 * N;
  static constexpr int kStateDim = World<kEntities>::kStateDim;
  static constexpr int kObsDim = 4 + 2 * N + 4 * (N - 1);
  static constexpr int kActionDim = Actions::kActionDim;
  static constexpr int kMaxEpisodeSteps = 25;
  static constexpr int kTeams = 1;
  static constexpr float kAgentSize = 0.15f;
  using Action = typename Actions::Action;
  using ActionDecoder = Actions;
  struct Params {
    float local_ratio = 0.5f;  // PettingZoo's local_ratio, in [0, 1]
  };

  MYRIAD_HD static EntityProps props(int e) {
    EntityProps p;
    if (e < kAgents) {
      p.size = kAgentSize;
      p.accel = kDefaultAccel;
      p.movable = true;
    } else {
      p.collide = false;
    }
    return p;
  }
  MYRIAD_HD static constexpr int team(int) { return 0; }
  MYRIAD_HD static constexpr int obs_size(int) { return kObsDim; }
  static std::string agent_name(int i) { return "agent_" + std::to_string(i); }
  static std::string team_name(int) { return "agents"; }

  // reset_world: agents and landmarks uniform in [-1, 1]^2, at rest.
  MYRIAD_HD static void reset(const Params&, float* s, Rng& rng) {
    World<kEntities> w;
    MYRIAD_UNROLL
    for (int e = 0; e < kEntities; ++e) {
      w.pos[e][0] = rng.uniform(-1.0f, 1.0f);
      w.pos[e][1] = rng.uniform(-1.0f, 1.0f);
      w.vel[e][0] = w.vel[e][1] = 0.0f;
    }
    w.store(s);
  }

  // One step under actions [A, kActionDim]: rewards [A]; never terminates.
  MYRIAD_HD static void step(const Params& p, float* s, const Action* a, float* reward,
                             bool& terminated) {
    World<kEntities> w;
    w.load(s);
    float u[kAgents][2];
    action_forces<Spread, Actions>(a, u);
    step_world<Spread>(w, u);
    w.store(s);
    rewards(p, w, reward);
    terminated = false;
  }

  MYRIAD_HD static void rewards(const Params& p, const World<kEntities>& w, float* reward) {
    float coverage = 0.0f;
    MYRIAD_UNROLL
    for (int l = kAgents; l < kEntities; ++l) {
      float nearest = distance(w.pos[0], w.pos[l]);
      MYRIAD_UNROLL
      for (int i = 1; i < kAgents; ++i) nearest = fminf(nearest, distance(w.pos[i], w.pos[l]));
      coverage -= nearest;
    }
    MYRIAD_UNROLL
    for (int i = 0; i < kAgents; ++i) {
      float collisions = 0.0f;
      MYRIAD_UNROLL
      for (int j = 0; j < kAgents; ++j)
        if (j != i && overlapping(w.pos[j], w.pos[i], kAgentSize, kAgentSize)) collisions -= 1.0f;
      reward[i] = coverage * (1.0f - p.local_ratio) + collisions * p.local_ratio;
    }
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
      for (int j = 0; j < 2 * (kAgents - 1); ++j) o[k++] = 0.0f;
    }
  }
};

}  // namespace myriad::envs::mpe
