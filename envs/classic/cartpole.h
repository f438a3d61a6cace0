// CartPole-v1, as Gymnasium defines it (gymnasium/envs/classic_control/cartpole.py): Euler
// integration, force +-10 N, terminated past |x| > 2.4 or |theta| > 12 degrees, reward 1 on
// every step (including the terminating one), 500-step limit, threshold 475.
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

struct CartPole {
  static constexpr int kStateDim = 4;  // x, x_dot, theta, theta_dot
  static constexpr int kObsDim = 4;
  static constexpr int kActionDim = 1;
  using Action = int32_t;
  struct Params {};

  static constexpr float kGravity = 9.8f, kMassCart = 1.0f, kMassPole = 0.1f;
  static constexpr float kTotalMass = kMassPole + kMassCart;
  static constexpr float kLength = 0.5f;  // half the pole's length
  static constexpr float kPoleMassLength = kMassPole * kLength;
  static constexpr float kForceMag = 10.0f, kTau = 0.02f;
  static constexpr float kThetaThreshold = 12.0f * 2.0f * 3.14159265358979323846f / 360.0f;
  static constexpr float kXThreshold = 2.4f;

  static EnvSpec spec() {
    const float inf = INFINITY;
    const float x = kXThreshold * 2, th = kThetaThreshold * 2;
    EnvSpec s;
    s.id = "CartPole-v1";
    s.observation_space = Space::box({-x, -inf, -th, -inf}, {x, inf, th, inf});
    s.action_space = Space::discrete(2);
    s.max_episode_steps = 500;
    s.reward_threshold = 475.0;
    s.state_names = {"x", "x_dot", "theta", "theta_dot"};
    return s;
  }
  static void set_option(Params&, const std::string& key, double) { unknown_option(spec(), key); }

  MYRIAD_HD static void reset(const Params&, float* s, Rng& rng) {
    MYRIAD_UNROLL
    for (int k = 0; k < 4; ++k) s[k] = rng.uniform(-0.05f, 0.05f);
  }

  MYRIAD_HD static void step(const Params&, float* s, const Action* a, float& reward,
                             bool& terminated) {
    const float x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
    const float force = a[0] == 1 ? kForceMag : -kForceMag;
    float sintheta, costheta;
    sin_cos(theta, &sintheta, &costheta);
    const float temp = (force + kPoleMassLength * theta_dot * theta_dot * sintheta) / kTotalMass;
    const float thetaacc = (kGravity * sintheta - costheta * temp) /
                           (kLength * (4.0f / 3.0f - kMassPole * costheta * costheta / kTotalMass));
    const float xacc = temp - kPoleMassLength * thetaacc * costheta / kTotalMass;
    // Gymnasium's default kinematics_integrator is "euler": positions use the old velocities.
    s[0] = x + kTau * x_dot;
    s[1] = x_dot + kTau * xacc;
    s[2] = theta + kTau * theta_dot;
    s[3] = theta_dot + kTau * thetaacc;
    terminated = (s[0] < -kXThreshold) | (s[0] > kXThreshold) | (s[2] < -kThetaThreshold) |
                 (s[2] > kThetaThreshold);
    reward = 1.0f;
  }

  MYRIAD_HD static void observe(const Params&, const float* s, float* obs) {
    MYRIAD_UNROLL
    for (int k = 0; k < 4; ++k) obs[k] = s[k];
  }
};

}  // namespace myriad::envs
