// Hopper-v5: Gymnasium's one-legged hopper (hopper_v5.py), on the project's model
// (envs/locomotion/models/hopper.xml); the definition is envs/locomotion/planar_walker.h's.
#pragma once

#include <cmath>

#include "envs/locomotion/planar_walker.h"

namespace myriad::envs::locomotion {

struct HopperVariant {
  static constexpr const char* kId = "Hopper-v5";
  static constexpr const char* kModel = "hopper";
  static constexpr int kNq = 6, kNu = 3;  // nv = nq
  static constexpr float kZRange[2] = {0.7f, INFINITY};
  static constexpr float kAngleRange[2] = {-0.2f, 0.2f};
  static constexpr bool kStateRange = true;  // every state coordinate after qpos[1] in range
};

struct Hopper : PlanarWalker<HopperVariant> {
  static constexpr double kRewardThreshold = 3800.0;  // Gymnasium's registration
};

}  // namespace myriad::envs::locomotion
