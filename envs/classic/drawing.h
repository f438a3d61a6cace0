// How each classic env is drawn in a replay: a small scene (cart and pole, pendulum, acrobot
// links, mountain car on its hill) and the body poses an observation puts it in. Layouts follow
// Gymnasium's renderers (angles, lengths, the goal line and flag), in 3D with Z up.
#pragma once

#include <array>
#include <cmath>
#include <string>

#include "envs/env_list.h"
#include "myriad/scene.h"

namespace myriad::envs {

template <class Env>
struct Drawing;  // static Scene scene(); static void pose(const float* obs, float* poses)

namespace drawing {

constexpr std::array<float, 4> kWood{0.80f, 0.60f, 0.40f, 1}, kBlue{0.25f, 0.45f, 0.85f, 1},
    kDark{0.25f, 0.25f, 0.28f, 1}, kRed{0.85f, 0.25f, 0.2f, 1}, kGold{0.95f, 0.75f, 0.2f, 1};

inline SceneGeom geom(const char* name, const char* type, int body, std::array<float, 3> size,
                      std::array<float, 3> pos, std::array<float, 4> rgba) {
  SceneGeom g;
  g.name = name, g.type = type, g.body = body, g.size = size, g.pos = pos, g.rgba = rgba;
  return g;
}

// Writes body b's pose: position and a rotation by phi about +y (which takes +z toward +x).
inline void pose_y(float* poses, int body, float x, float y, float z, float phi) {
  float* p = poses + 7 * body;
  p[0] = x, p[1] = y, p[2] = z;
  p[3] = std::cos(phi / 2), p[4] = 0, p[5] = std::sin(phi / 2), p[6] = 0;
}

inline void world_pose(float* poses) { pose_y(poses, 0, 0, 0, 0, 0); }

// Ground at z = 0, the camera's starting target and distance, and seconds per step.
inline void set_view(Scene& s, std::array<float, 3> target, float distance, double frame_dt) {
  s.ground_z = 0;
  s.camera_target = target;
  s.camera_distance = distance;
  s.frame_dt = frame_dt;
}

// A float constant as the decimal it was written as (0.02f -> 0.02, not 0.0199999995).
inline double decimal(float x) { return std::stod(std::to_string(x)); }

}  // namespace drawing

// Cart on a track (limits at +-2.4 in red); the pole leans toward +x as theta grows.
template <>
struct Drawing<CartPole> {
  static constexpr float kCartZ = 0.2f, kPivotZ = 0.3f;
  static Scene scene() {
    using namespace drawing;
    Scene s;
    s.bodies = {"world", "cart", "pole"};
    const float limit = CartPole::kXThreshold;
    s.geoms = {geom("track", "box", 0, {limit + 0.3f, 0.03f, 0.03f}, {0, 0, 0.07f}, kDark),
               geom("limit_left", "box", 0, {0.02f, 0.2f, 0.1f}, {-limit, 0, 0.1f}, kRed),
               geom("limit_right", "box", 0, {0.02f, 0.2f, 0.1f}, {limit, 0, 0.1f}, kRed),
               geom("cart", "box", 1, {0.25f, 0.15f, 0.1f}, {0, 0, 0}, kBlue),
               geom("pole", "capsule", 2, {0.04f, CartPole::kLength, 0}, {0, 0, CartPole::kLength},
                    kWood)};
    set_view(s, {0, 0, 0.6f}, 5, decimal(CartPole::kTau));
    return s;
  }
  static void pose(const float* obs, float* poses) {
    drawing::world_pose(poses);
    drawing::pose_y(poses, 1, obs[0], 0, kCartZ, 0);
    drawing::pose_y(poses, 2, obs[0], 0, kPivotZ, obs[2]);
  }
};

// A rod hanging from a pivot; theta 0 is upright and grows counter-clockwise (toward -x).
template <>
struct Drawing<Pendulum> {
  static constexpr float kPivotZ = 1.2f;
  static Scene scene() {
    using namespace drawing;
    Scene s;
    s.bodies = {"world", "rod"};
    s.geoms = {
        geom("pivot", "sphere", 0, {0.06f, 0, 0}, {0, 0, kPivotZ}, kDark),
        geom("stand", "cylinder", 0, {0.02f, kPivotZ / 2, 0}, {0, 0.1f, kPivotZ / 2}, kDark),
        geom("rod", "capsule", 1, {0.05f, Pendulum::kL / 2, 0}, {0, 0, Pendulum::kL / 2}, kRed)};
    set_view(s, {0, 0, kPivotZ}, 3.5f, decimal(Pendulum::kDt));
    return s;
  }
  static void pose(const float* obs, float* poses) {
    drawing::world_pose(poses);
    drawing::pose_y(poses, 1, 0, 0, kPivotZ, -std::atan2(obs[1], obs[0]));
  }
};

// Two links hanging from a pivot; the goal line is one link length above the pivot.
template <>
struct Drawing<Acrobot> {
  static constexpr float kPivotZ = 2.2f;
  static Scene scene() {
    using namespace drawing;
    Scene s;
    s.bodies = {"world", "link1", "link2"};
    const float half = Acrobot::kLink1 / 2;
    s.geoms = {
        geom("pivot", "sphere", 0, {0.07f, 0, 0}, {0, 0, kPivotZ}, kDark),
        geom("goal", "box", 0, {1.5f, 0.01f, 0.01f}, {0, 0, kPivotZ + Acrobot::kLink1}, kRed),
        geom("link1", "capsule", 1, {0.06f, half, 0}, {0, 0, -half}, kBlue),
        geom("link2", "capsule", 2, {0.06f, half, 0}, {0, 0, -half}, kBlue)};
    set_view(s, {0, 0, kPivotZ}, 7, decimal(Acrobot::kDt));
    return s;
  }
  static void pose(const float* obs, float* poses) {
    const float t1 = std::atan2(obs[1], obs[0]), t2 = std::atan2(obs[3], obs[2]);
    drawing::world_pose(poses);
    drawing::pose_y(poses, 1, 0, 0, kPivotZ, -t1);
    const float l = Acrobot::kLink1;
    drawing::pose_y(poses, 2, l * std::sin(t1), 0, kPivotZ - l * std::cos(t1), -(t1 + t2));
  }
};

// The car on the hill height(x) = 0.45 sin(3x) + 0.55, tilted along the slope; flag at the goal.
template <class Env>
struct MountainCarDrawing {
  static float height(float x) { return 0.45f * std::sin(3 * x) + 0.55f; }
  static Scene scene() {
    using namespace drawing;
    Scene s;
    s.bodies = {"world", "car"};
    SceneLine hill;
    hill.rgba = kDark;
    for (int k = 0; k <= 120; ++k) {
      const float x = Env::kMinPosition + (Env::kMaxPosition - Env::kMinPosition) * k / 120;
      hill.points.push_back({x, 0, height(x)});
    }
    s.lines = {hill};
    const float goal = Env::kGoalPosition, top = height(goal);
    s.geoms = {
        geom("car", "box", 1, {0.06f, 0.04f, 0.025f}, {0, 0, 0.045f}, kBlue),
        geom("wheel_back", "sphere", 1, {0.02f, 0, 0}, {-0.04f, 0, 0.02f}, kDark),
        geom("wheel_front", "sphere", 1, {0.02f, 0, 0}, {0.04f, 0, 0.02f}, kDark),
        geom("flagpole", "cylinder", 0, {0.004f, 0.1f, 0}, {goal, 0, top + 0.1f}, kDark),
        geom("flag", "box", 0, {0.03f, 0.002f, 0.02f}, {goal + 0.03f, 0, top + 0.18f}, kGold)};
    set_view(s, {-0.3f, 0, 0.55f}, 2.6f, 1.0 / 30);  // Gymnasium's render_fps
    return s;
  }
  static void pose(const float* obs, float* poses) {
    const float x = obs[0];
    drawing::world_pose(poses);
    drawing::pose_y(poses, 1, x, 0, height(x), -std::atan(1.35f * std::cos(3 * x)));
  }
};
template <>
struct Drawing<MountainCar> : MountainCarDrawing<MountainCar> {};
template <>
struct Drawing<MountainCarContinuous> : MountainCarDrawing<MountainCarContinuous> {};

}  // namespace myriad::envs
