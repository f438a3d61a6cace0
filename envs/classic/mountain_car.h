// MountainCar-v0 and MountainCarContinuous-v0, as Gymnasium defines them
// (gymnasium/envs/classic_control/mountain_car.py, continuous_mountain_car.py).
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

// What both cars share: the track, the speed limit, the start and the goal test.
struct MountainCarTrack {
  static constexpr int kStateDim = 2;  // position, velocity
  static constexpr int kObsDim = 2;
  static constexpr float kMinPosition = -1.2f, kMaxPosition = 0.6f, kMaxSpeed = 0.07f;

  static Space observation_space() {
    return Space::box({kMinPosition, -kMaxSpeed}, {kMaxPosition, kMaxSpeed});
  }
  MYRIAD_HD static void start(float* s, Rng& rng) {
    s[0] = rng.uniform(-0.6f, -0.4f);
    s[1] = 0.0f;
  }
  // Clips velocity, moves, clips position and stops the car against the left wall.
  MYRIAD_HD static void move(float* s, float velocity) {
    velocity = clip(velocity, -kMaxSpeed, kMaxSpeed);
    float position = s[0] + velocity;
    position = clip(position, kMinPosition, kMaxPosition);
    if (position == kMinPosition && velocity < 0) velocity = 0;
    s[0] = position;
    s[1] = velocity;
  }
  MYRIAD_HD static void observe(const float* s, float* obs) {
    obs[0] = s[0];
    obs[1] = s[1];
  }
};

// Discrete: push left, none, right; reward -1 per step; goal at 0.5; 200 steps; threshold -110.
struct MountainCar : MountainCarTrack {
  static constexpr int kActionDim = 1;
  using Action = int32_t;
  struct Params {};
  static constexpr float kGoalPosition = 0.5f, kForce = 0.001f, kGravity = 0.0025f;

  static EnvSpec spec() {
    EnvSpec s;
    s.id = "MountainCar-v0";
    s.observation_space = observation_space();
    s.action_space = Space::discrete(3);
    s.max_episode_steps = 200;
    s.reward_threshold = -110.0;
    s.state_names = {"position", "velocity"};
    return s;
  }
  static void set_option(Params&, const std::string& key, double) { unknown_option(spec(), key); }
  MYRIAD_HD static void reset(const Params&, float* s, Rng& rng) { start(s, rng); }
  MYRIAD_HD static void step(const Params&, float* s, const Action* a, float& reward,
                             bool& terminated) {
    move(s, s[1] + static_cast<float>(a[0] - 1) * kForce + cos_f(3 * s[0]) * (-kGravity));
    terminated = s[0] >= kGoalPosition && s[1] >= 0.0f;
    reward = -1.0f;
  }
  MYRIAD_HD static void observe(const Params&, const float* s, float* obs) {
    MountainCarTrack::observe(s, obs);
  }
};

// Continuous: force = clip(a, -1, 1) * 0.0015; reward 100 at the goal (0.45) minus 0.1 a^2 of
// the unclipped action, as Gymnasium computes it; 999 steps; threshold 90.
struct MountainCarContinuous : MountainCarTrack {
  static constexpr int kActionDim = 1;
  using Action = float;
  struct Params {};
  static constexpr float kGoalPosition = 0.45f, kPower = 0.0015f;

  static EnvSpec spec() {
    EnvSpec s;
    s.id = "MountainCarContinuous-v0";
    s.observation_space = observation_space();
    s.action_space = Space::box({-1.0f}, {1.0f});
    s.max_episode_steps = 999;
    s.reward_threshold = 90.0;
    s.state_names = {"position", "velocity"};
    return s;
  }
  static void set_option(Params&, const std::string& key, double) { unknown_option(spec(), key); }
  MYRIAD_HD static void reset(const Params&, float* s, Rng& rng) { start(s, rng); }
  MYRIAD_HD static void step(const Params&, float* s, const Action* a, float& reward,
                             bool& terminated) {
    const float force = clip(a[0], -1.0f, 1.0f);
    move(s, s[1] + force * kPower - 0.0025f * cos_f(3 * s[0]));
    terminated = s[0] >= kGoalPosition && s[1] >= 0.0f;
    reward = (terminated ? 100.0f : 0.0f) - a[0] * a[0] * 0.1f;
  }
  MYRIAD_HD static void observe(const Params&, const float* s, float* obs) {
    MountainCarTrack::observe(s, obs);
  }
};

}  // namespace myriad::envs
