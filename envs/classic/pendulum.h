// Pendulum-v1, as Gymnasium defines it (gymnasium/envs/classic_control/pendulum.py): torque
// clipped to +-2, semi-implicit Euler with dt 0.05, speed clipped to +-8, cost
// angle_normalize(th)^2 + 0.1 thdot^2 + 0.001 u^2, never terminates, 200-step limit.
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

struct Pendulum {
  static constexpr int kStateDim = 2;  // theta, theta_dot
  static constexpr int kObsDim = 3;    // cos(theta), sin(theta), theta_dot
  static constexpr int kActionDim = 1;
  using Action = float;
  struct Params {
    float g = 10.0f;  // Gymnasium's `g` option
  };

  static constexpr float kMaxSpeed = 8.0f, kMaxTorque = 2.0f, kDt = 0.05f, kM = 1.0f, kL = 1.0f;
  static constexpr float kPi = 3.14159265358979323846f;

  static EnvSpec spec() {
    EnvSpec s;
    s.id = "Pendulum-v1";
    s.observation_space = Space::box({-1, -1, -kMaxSpeed}, {1, 1, kMaxSpeed});
    s.action_space = Space::box({-kMaxTorque}, {kMaxTorque});
    s.max_episode_steps = 200;
    s.state_names = {"theta", "theta_dot"};
    s.option_names = {"g"};
    return s;
  }
  static void set_option(Params& p, const std::string& key, double v) {
    if (key != "g") unknown_option(spec(), key);
    p.g = static_cast<float>(v);
  }

  MYRIAD_HD static void reset(const Params&, float* s, Rng& rng) {
    s[0] = rng.uniform(-kPi, kPi);
    s[1] = rng.uniform(-1.0f, 1.0f);
  }

  MYRIAD_HD static float angle_normalize(float x) {
    const float two_pi = 2.0f * kPi;
    // Python's % is a floored modulo: the result has the sign of the divisor.
    float m = fmodf(x + kPi, two_pi);
    if (m < 0) m += two_pi;
    return m - kPi;
  }

  MYRIAD_HD static void step(const Params& p, float* s, const Action* a, float& reward,
                             bool& terminated) {
    const float th = s[0], thdot = s[1];
    const float u = clip(a[0], -kMaxTorque, kMaxTorque);
    const float an = angle_normalize(th);
    const float costs = an * an + 0.1f * thdot * thdot + 0.001f * u * u;
    float newthdot =
        thdot + (3.0f * p.g / (2.0f * kL) * sin_f(th) + 3.0f / (kM * kL * kL) * u) * kDt;
    newthdot = clip(newthdot, -kMaxSpeed, kMaxSpeed);
    s[0] = th + newthdot * kDt;
    s[1] = newthdot;
    reward = -costs;
    terminated = false;
  }

  MYRIAD_HD static void observe(const Params&, const float* s, float* obs) {
    obs[0] = cos_f(s[0]);
    obs[1] = sin_f(s[0]);
    obs[2] = s[1];
  }
};

}  // namespace myriad::envs
