// How an MJCF model is drawn in a replay: its geoms as a Scene, and body poses from
// observations [qpos, qvel] through the engine's kinematics (float64).
#pragma once

#include <ATen/Tensor.h>

#include "myriad/physics/model.h"
#include "myriad/scene.h"

namespace myriad::envs {

// Every sphere, capsule, ellipsoid, cylinder, box and plane geom; height fields and meshes are
// not drawn yet (a warning names them). frame_dt: simulated seconds per env step.
Scene mjcf_scene(const physics::Model<double>& m, double frame_dt);

// obs: float32 CPU [B, nq + nv]; returns [B, nbody, 7] (x, y, z, qw, qx, qy, qz).
at::Tensor mjcf_body_poses(const physics::Model<double>& m, const at::Tensor& obs);

}  // namespace myriad::envs
