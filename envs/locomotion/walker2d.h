// Walker2d-v5: Gymnasium's planar biped (walker2d_v5.py, both feet with friction 1.9), on the
// project's model (envs/locomotion/models/walker2d.xml); the definition is
// envs/locomotion/planar_walker.h's. Gymnasium registers no reward threshold for it.
#pragma once

#include "envs/locomotion/planar_walker.h"

namespace myriad::envs::locomotion {

struct Walker2dVariant {
  static constexpr const char* kId = "Walker2d-v5";
  static constexpr const char* kModel = "walker2d";
  static constexpr int kNq = 9, kNu = 6;  // nv = nq
  static constexpr float kZRange[2] = {0.8f, 2.0f};
  static constexpr float kAngleRange[2] = {-1.0f, 1.0f};
  static constexpr bool kStateRange = false;
};

struct Walker2d : PlanarWalker<Walker2dVariant> {};

}  // namespace myriad::envs::locomotion
