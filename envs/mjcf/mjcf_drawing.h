// How an MJCF model is drawn in a replay: its geoms as a Scene, and body poses from
// observations [qpos, qvel] through the engine's kinematics (float64).
#pragma once

#include <ATen/Tensor.h>

#include "myriad/physics/model.h"
#include "myriad/scene.h"

struct mjModel_;
typedef struct mjModel_ mjModel;

namespace myriad::envs {

// Every plane, height field, sphere, capsule, ellipsoid, cylinder, box and mesh geom of the
// compiled model mj (m is its import), the height fields with the elevations mj holds. Geoms of
// bodies welded to the world are the world's, in world coordinates; a height field on the world
// (a terrain) replaces the ground grid. A geom with a material and the default colour takes the
// material's, as MuJoCo draws it, times its texture's mean colour (the viewer draws no
// textures). frame_dt: simulated seconds per env step.
Scene mjcf_scene(const physics::Model<double>& m, const mjModel* mj, double frame_dt);

// obs: float32 CPU [B, nq + nv]; returns [B, nbody, 7] (x, y, z, qw, qx, qy, qz).
at::Tensor mjcf_body_poses(const physics::Model<double>& m, const at::Tensor& obs);

}  // namespace myriad::envs
