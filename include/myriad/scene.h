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
  std::string type;   // plane, sphere, capsule, ellipsoid, cylinder, box, mesh, hfield
  int32_t body = 0;   // 0: the world (static)
  int32_t mesh = -1;  // index into Scene::meshes for type "mesh"
  std::array<float, 3> size{0, 0, 0};
  std::array<float, 3> pos{0, 0, 0};      // in the body's frame
  std::array<float, 4> quat{1, 0, 0, 0};  // w, x, y, z, in the body's frame
  std::array<float, 4> rgba{0.7f, 0.7f, 0.7f, 1};
  int32_t hfield = -1;  // index into Scene::hfields for type "hfield"
};

// A polyline fixed to a body (e.g. MountainCar's hill).
struct SceneLine {
  int32_t body = 0;
  std::vector<std::array<float, 3>> points;
  std::array<float, 4> rgba{0, 0, 0, 1};
};

// A triangle mesh in its geom's frame.
struct SceneMesh {
  std::string name;
  std::vector<float> vertices;  // [V, 3]
  std::vector<int32_t> faces;   // [F, 3] vertex indices
};

// A height field in its geom's frame, as MuJoCo's: sample (r, c) at x = -size[0] + 2 size[0] c /
// (ncol - 1), y = -size[1] + 2 size[1] r / (nrow - 1), z = elevation * size[2] (elevations in
// [0, 1]); the solid reaches down to z = -size[3].
struct SceneHeightField {
  std::string name;
  int32_t nrow = 0, ncol = 0;
  std::array<float, 4> size{0, 0, 0, 0};
  std::vector<float> elevation;  // [nrow, ncol]
};

struct Scene {
  std::vector<std::string> bodies;  // bodies[0] is the world
  std::vector<SceneGeom> geoms;
  std::vector<SceneMesh> meshes;
  std::vector<SceneHeightField> hfields;
  std::vector<SceneLine> lines;
  std::optional<float> ground_z;  // a ground grid at this height, if any
  std::array<float, 3> camera_target{0, 0, 0};
  float camera_distance = 4;
  // From the target toward the camera (any length); unset: the viewer's own, from -y and above.
  std::optional<std::array<float, 3>> camera_direction;
  double frame_dt = 0;  // simulated seconds per env step
};

}  // namespace myriad
