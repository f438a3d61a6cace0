// Acrobot-v1, as Gymnasium defines it (gymnasium/envs/classic_control/acrobot.py): "book"
// dynamics, torque in {-1, 0, +1}, one RK4 step of dt 0.2, angles wrapped to [-pi, pi],
// velocities bounded to 4 pi and 9 pi, reward -1 until the tip rises above the bar,
// 500-step limit, threshold -100.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "envs/env_options.h"
#include "myriad/env_spec.h"
#include "myriad/hd.h"
#include "myriad/math.h"
#include "myriad/rng.h"

namespace myriad::envs {

struct Acrobot {
  static constexpr int kStateDim = 4;  // theta1, theta2, dtheta1, dtheta2
  static constexpr int kObsDim = 6;    // cos t1, sin t1, cos t2, sin t2, dt1, dt2
  static constexpr int kActionDim = 1;
  using Action = int32_t;
  struct Params {};

  static constexpr float kPi = 3.14159265358979323846f;
  static constexpr float kDt = 0.2f;
  static constexpr float kLink1 = 1.0f, kMass1 = 1.0f, kMass2 = 1.0f;
  static constexpr float kCom1 = 0.5f, kCom2 = 0.5f, kMoi = 1.0f, kG = 9.8f;
  static constexpr float kMaxVel1 = 4 * kPi, kMaxVel2 = 9 * kPi;

  static EnvSpec spec() {
    EnvSpec s;
    s.id = "Acrobot-v1";
    s.observation_space =
        Space::box({-1, -1, -1, -1, -kMaxVel1, -kMaxVel2}, {1, 1, 1, 1, kMaxVel1, kMaxVel2});
    s.action_space = Space::discrete(3);
    s.max_episode_steps = 500;
    s.reward_threshold = -100.0;
    s.state_names = {"theta1", "theta2", "dtheta1", "dtheta2"};
    return s;
  }
  static void set_option(Params&, const std::string& key, double) { unknown_option(spec(), key); }

  MYRIAD_HD static void reset(const Params&, float* s, Rng& rng) {
    MYRIAD_UNROLL
    for (int k = 0; k < 4; ++k) s[k] = rng.uniform(-0.1f, 0.1f);
  }

  // Time derivative of (theta1, theta2, dtheta1, dtheta2) under torque a (Gymnasium's _dsdt).
  MYRIAD_HD static void dsdt(const float* s, float a, float* d) {
    const float m1 = kMass1, m2 = kMass2, l1 = kLink1, lc1 = kCom1, lc2 = kCom2;
    const float I1 = kMoi, I2 = kMoi, g = kG;
    const float theta1 = s[0], theta2 = s[1], dtheta1 = s[2], dtheta2 = s[3];
    const float c2 = cos_f(theta2), s2 = sin_f(theta2);
    const float d1 = m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * c2) + I1 + I2;
    const float d2 = m2 * (lc2 * lc2 + l1 * lc2 * c2) + I2;
    const float phi2 = m2 * lc2 * g * cos_f(theta1 + theta2 - kPi / 2);
    const float phi1 = -m2 * l1 * lc2 * dtheta2 * dtheta2 * s2 -
                       2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * s2 +
                       (m1 * lc1 + m2 * l1) * g * cos_f(theta1 - kPi / 2) + phi2;
    const float ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1 * dtheta1 * s2 - phi2) /
                           (m2 * lc2 * lc2 + I2 - d2 * d2 / d1);
    const float ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    d[0] = dtheta1;
    d[1] = dtheta2;
    d[2] = ddtheta1;
    d[3] = ddtheta2;
  }

  MYRIAD_HD static float wrap(float x, float lo, float hi) {
    const float diff = hi - lo;
    while (x > hi) x -= diff;
    while (x < lo) x += diff;
    return x;
  }

  MYRIAD_HD static void step(const Params&, float* s, const Action* a, float& reward,
                             bool& terminated) {
    const float torque = static_cast<float>(a[0]) - 1.0f;  // actions 0,1,2 -> -1,0,+1
    float k1[4], k2[4], k3[4], k4[4], y[4];
    const float h = kDt, h2 = kDt / 2;
    dsdt(s, torque, k1);
    MYRIAD_UNROLL
    for (int k = 0; k < 4; ++k) y[k] = s[k] + h2 * k1[k];
    dsdt(y, torque, k2);
    MYRIAD_UNROLL
    for (int k = 0; k < 4; ++k) y[k] = s[k] + h2 * k2[k];
    dsdt(y, torque, k3);
    MYRIAD_UNROLL
    for (int k = 0; k < 4; ++k) y[k] = s[k] + h * k3[k];
    dsdt(y, torque, k4);
    MYRIAD_UNROLL
    for (int k = 0; k < 4; ++k) y[k] = s[k] + h / 6.0f * (k1[k] + 2 * k2[k] + 2 * k3[k] + k4[k]);
    s[0] = wrap(y[0], -kPi, kPi);
    s[1] = wrap(y[1], -kPi, kPi);
    s[2] = clip(y[2], -kMaxVel1, kMaxVel1);
    s[3] = clip(y[3], -kMaxVel2, kMaxVel2);
    terminated = -cos_f(s[0]) - cos_f(s[1] + s[0]) > 1.0f;
    reward = terminated ? 0.0f : -1.0f;
  }

  MYRIAD_HD static void observe(const Params&, const float* s, float* obs) {
    obs[0] = cos_f(s[0]);
    obs[1] = sin_f(s[0]);
    obs[2] = cos_f(s[1]);
    obs[3] = sin_f(s[1]);
    obs[4] = s[2];
    obs[5] = s[3];
  }
};

}  // namespace myriad::envs
