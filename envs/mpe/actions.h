// How an agent's action becomes its action force, as mpe2's SimpleEnv._set_action decodes a
// movable, silent agent's action (mpe2/_mpe_utils/simple_env.py). A scenario takes one of these
// as its `Actions` parameter; both give the force already scaled by the agent's accel.
#pragma once

#include <cstdint>

#include "envs/mpe/world.h"
#include "myriad/hd.h"
#include "myriad/math.h"

namespace myriad::envs::mpe {

// Discrete(5): 0 no-op, 1 left (-x), 2 right (+x), 3 down (-y), 4 up (+y). Values outside
// [0, 4] act as the no-op (PettingZoo's wrapper rejects them with an assertion).
struct DiscreteActions {
  using Action = int32_t;
  static constexpr int kActionDim = 1;
  static constexpr bool kContinuous = false;
  static constexpr int kNumActions = 5;

  MYRIAD_HD static void force(const Action* a, float accel, float* u) {
    const int32_t k = a[0];
    u[0] = k == 1 ? -accel : (k == 2 ? accel : 0.0f);
    u[1] = k == 3 ? -accel : (k == 4 ? accel : 0.0f);
  }
};

// Box(0, 1, (5,)): [no-op, left, right, down, up] intensities, clipped to [0, 1] as
// PettingZoo's ClipOutOfBoundsWrapper does; the force is (right - left, up - down) * accel.
struct ContinuousActions {
  using Action = float;
  static constexpr int kActionDim = 5;
  static constexpr bool kContinuous = true;

  MYRIAD_HD static void force(const Action* a, float accel, float* u) {
    u[0] = (clip(a[2], 0.0f, 1.0f) - clip(a[1], 0.0f, 1.0f)) * accel;
    u[1] = (clip(a[4], 0.0f, 1.0f) - clip(a[3], 0.0f, 1.0f)) * accel;
  }
};

// The action forces of all agents of a scenario: u [A][2] from actions [A, kActionDim].
template <class Scenario, class Actions>
MYRIAD_HD void action_forces(const typename Actions::Action* actions, float (*u)[2]) {
  MYRIAD_UNROLL
  for (int i = 0; i < Scenario::kAgents; ++i)
    Actions::force(actions + i * Actions::kActionDim, Scenario::props(i).accel, u[i]);
}

}  // namespace myriad::envs::mpe
