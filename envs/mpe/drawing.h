// How each particle-world scenario is drawn in a replay: one body per entity (agents, then
// landmarks or obstacles, in the order of envs/mpe/world.h) on the plane z = 0, seen from above.
// Agents are spheres of their size resting on the ground, coloured by team as PettingZoo renders
// them; landmarks and obstacles are discs (Tag's obstacles taller) in PettingZoo's dark grey;
// Sumo also draws its ring.
//
// Poses come from one env's observations [A, kObsDim] alone, so a terminal frame can be drawn
// from final_obs after the auto-reset. Every scenario here observes, in agent i's row, its own
// position at [2, 4) and then (Spread, Tag) each landmark relative to itself at [4, 4 + 2L):
// - an agent's position is read from its own row, exactly;
// - landmark l is agent 0's position plus the offset agent 0 sees, exact up to the rounding of
//   that subtraction and this addition (a few 1e-7 in a world of size ~1).
// Nothing else is needed: velocities are not drawn, Spread's communication is always zero (the
// agents are silent), and a Tag good agent's padding is never read.
#pragma once

#include <array>
#include <cmath>
#include <string>

#include "envs/mpe/spread.h"
#include "envs/mpe/sumo.h"
#include "envs/mpe/tag.h"
#include "myriad/scene.h"

namespace myriad::envs::mpe {

template <class Scenario>
struct Drawing;  // static Scene scene(); static void pose(const float* obs, float* poses)

namespace drawing {

using Rgba = std::array<float, 4>;
// PettingZoo's colours: Spread's agents, Tag's adversaries and good agents, landmarks.
constexpr Rgba kBlue{0.35f, 0.35f, 0.85f, 1}, kRed{0.85f, 0.35f, 0.35f, 1},
    kGreen{0.35f, 0.85f, 0.35f, 1}, kDark{0.25f, 0.25f, 0.25f, 1};
constexpr float kDiscHalfHeight = 0.005f, kObstacleHalfHeight = 0.05f;

// The scene of scenario S: the world, then one body per entity named as in its state names.
// team_rgba[t] colours team t's agents; landmarks are discs of half-height landmark_half_height.
template <class S, size_t kTeams>
Scene entity_scene(const std::array<Rgba, kTeams>& team_rgba, const std::string& landmark,
                   float landmark_half_height) {
  Scene s;
  s.bodies.push_back("world");
  for (int e = 0; e < S::kEntities; ++e) {
    const bool agent = e < S::kAgents;
    const std::string name =
        agent ? S::agent_name(e) : landmark + "_" + std::to_string(e - S::kAgents);
    const int body = e + 1;
    const float r = S::props(e).size;
    SceneGeom g;
    g.name = name, g.body = body;
    if (agent) {
      g.type = "sphere", g.size = {r, 0, 0}, g.pos = {0, 0, r};
      g.rgba = team_rgba[S::team(e)];
    } else {
      g.type = "cylinder", g.size = {r, landmark_half_height, 0};
      g.pos = {0, 0, landmark_half_height}, g.rgba = kDark;
    }
    s.bodies.push_back(name);
    s.geoms.push_back(g);
  }
  s.ground_z = 0;
  s.camera_target = {0, 0, 0};
  s.camera_distance = 3.2f;
  s.camera_direction = std::array<float, 3>{0, -0.15f, 1};  // from (almost) straight above
  s.frame_dt = std::stod(std::to_string(kDt));              // 0.1, not 0.100000001
  return s;
}

// Writes poses [1 + E, 7] of one env from its observations obs [A, S::kObsDim]; landmarks start
// at landmark_offset in agent 0's row (see the top of this file).
template <class S>
void entity_poses(const float* obs, float* poses, int landmark_offset) {
  const auto put = [poses](int body, float x, float y) {
    float* p = poses + 7 * body;
    p[0] = x, p[1] = y, p[2] = 0, p[3] = 1, p[4] = 0, p[5] = 0, p[6] = 0;
  };
  put(0, 0, 0);
  for (int i = 0; i < S::kAgents; ++i) put(1 + i, obs[i * S::kObsDim + 2], obs[i * S::kObsDim + 3]);
  const float x0 = obs[2], y0 = obs[3];
  for (int l = 0; l < S::kEntities - S::kAgents; ++l)
    put(1 + S::kAgents + l, x0 + obs[landmark_offset + 2 * l],
        y0 + obs[landmark_offset + 2 * l + 1]);
}

}  // namespace drawing

// Blue agents over dark landmark discs.
template <int N, class Actions>
struct Drawing<Spread<N, Actions>> {
  using S = Spread<N, Actions>;
  static Scene scene() {
    return drawing::entity_scene<S, 1>({drawing::kBlue}, "landmark", drawing::kDiscHalfHeight);
  }
  static void pose(const float* obs, float* poses) { drawing::entity_poses<S>(obs, poses, 4); }
};

// Red adversaries, green good agents, dark obstacles (short cylinders).
template <int kGood, int kAdversaries, int kObstacles, class Actions>
struct Drawing<Tag<kGood, kAdversaries, kObstacles, Actions>> {
  using S = Tag<kGood, kAdversaries, kObstacles, Actions>;
  static Scene scene() {
    return drawing::entity_scene<S, 2>({drawing::kRed, drawing::kGreen}, "obstacle",
                                       drawing::kObstacleHalfHeight);
  }
  static void pose(const float* obs, float* poses) { drawing::entity_poses<S>(obs, poses, 4); }
};

// A red and a blue wrestler inside the ring (a circle of radius kRingRadius, just above the
// ground).
template <class Actions>
struct Drawing<Sumo<Actions>> {
  using S = Sumo<Actions>;
  static constexpr int kRingSegments = 96;
  static Scene scene() {
    Scene s = drawing::entity_scene<S, 2>({drawing::kRed, drawing::kBlue}, "landmark", 0);
    SceneLine ring;
    ring.rgba = drawing::kDark;
    for (int k = 0; k < kRingSegments; ++k) {
      const double a = 2 * 3.14159265358979323846 * k / kRingSegments;
      ring.points.push_back({static_cast<float>(S::kRingRadius * std::cos(a)),
                             static_cast<float>(S::kRingRadius * std::sin(a)), 0.002f});
    }
    ring.points.push_back(ring.points.front());  // closed
    s.lines = {ring};
    return s;
  }
  static void pose(const float* obs, float* poses) { drawing::entity_poses<S>(obs, poses, 4); }
};

}  // namespace myriad::envs::mpe
