// Scene: what a replay needs to draw an env — its bodies and their geoms (MuJoCo's geom
// conventions, Z up) — plus where the camera starts. Body poses per frame come from
// BatchEnv::body_poses; the format is in docs/replay-format.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace myriad {

struct SceneGeom {
  std::string name;
  std::string type;  // plane, sphere, capsule, ellipsoid, cylinder, box
  int32_t body = 0;  // 0: the world (static)
  std::array<float, 3> size{0, 0, 0};
  std::array<float, 3> pos{0, 0, 0};      // in the body's frame
  std::array<float, 4> quat{1, 0, 0, 0};  // w, x, y, z, in the body's frame
  std::array<float, 4> rgba{0.7f, 0.7f, 0.7f, 1};
};

// A polyline fixed to a body (e.g. MountainCar's hill).
struct SceneLine {
  int32_t body = 0;
  std::vector<std::array<float, 3>> points;
  std::array<float, 4> rgba{0, 0, 0, 1};
};

struct Scene {
  std::vector<std::string> bodies;  // bodies[0] is the world
  std::vector<SceneGeom> geoms;
  std::vector<SceneLine> lines;
  std::optional<float> ground_z;  // a ground grid at this height, if any
  std::array<float, 3> camera_target{0, 0, 0};
  float camera_distance = 4;
  double frame_dt = 0;  // simulated seconds per env step
};

}  // namespace myriad
