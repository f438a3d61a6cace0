// A push of a floating base's root (mjlab's push_by_setting_velocity), as a function of plain
// values: physics_kernels.h draws dv and calls it, tests/envs/test_velocity_terms.cc checks it
// against mjlab's own function.
#pragma once

#include "myriad/hd.h"

namespace myriad::envs {

// mjlab's push_by_setting_velocity: the root link's world-frame velocity changes by dv = (linear,
// angular); a free joint's qvel [6] holds the linear part in the world frame and the angular
// one in the body frame, so the latter changes by R^T dv[3:6], R the root's orientation
// quat = (w, x, y, z). quat and qvel: pointers, or an env's lane of a blocked batch.
template <class T, class Q, class V>
MYRIAD_HD void push_root_velocity(const T dv[6], Q quat, V qvel) {
  for (int a = 0; a < 3; ++a) qvel[a] += dv[a];
  const T w = quat[0], x = quat[1], y = quat[2], z = quat[3];
  const T R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                  2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                  2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  for (int a = 0; a < 3; ++a) qvel[3 + a] += R[a] * dv[3] + R[3 + a] * dv[4] + R[6 + a] * dv[5];
}

}  // namespace myriad::envs
