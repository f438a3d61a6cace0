// Parity of Myriad's engine with libmujoco on one MJCF model: kinematics and qacc from random
// states, and trajectories from the same state and controls. Used by `myriad physics-check` and
// by the parity tests.
#pragma once

#include <string>
#include <vector>

namespace myriad::physics {

struct CheckOptions {
  int samples = 20;      // random states for the kinematics / qacc comparison
  int steps = 200;       // trajectory length
  int trajectories = 4;  // trajectories (random start states and constant random controls)
  bool float32 = false;  // run the engine in float32 instead of float64
  unsigned seed = 1;
  bool explain = false;  // print the first contact set and trajectory step that differ (stderr)
  // Float64 trajectory tolerance (absolute); 0: max(1e-6, 10 x libmujoco's divergence from
  // itself nudged one ulp per step).
  double trajectory_tolerance = 0;
};

struct CheckRow {
  std::string quantity;  // e.g. "xpos", "qacc", "trajectory qpos"
  double max_error;      // relative (norm(ours - mujoco) / norm(mujoco)) or absolute, see kind
  std::string kind;      // "relative" or "absolute"
  double tolerance;
  std::string detail = "";  // what was compared (e.g. how many states had contacts)
  // float32 only, where measured (else -1): libmujoco against itself, the same states with qpos
  // and qvel moved one float32 ulp, in the row's kind; what rounding alone moves the quantity by.
  double self_error = -1;
  // float32, random states only: states left out of max_error because libmujoco against itself
  // (the state moved one float32 ulp) moves the quantity by more than the tolerance there, so
  // that no float32 engine can be held to it; of those, the one where ours is the largest
  // multiple of libmujoco's own movement: ours and libmujoco's own there. Such states still fail
  // the row where ours is more than twice libmujoco's own.
  int ill_conditioned = 0;
  double ill_conditioned_error = 0;
  double ill_conditioned_self = 0;
  bool ill_conditioned_ok() const {
    return ill_conditioned == 0 || ill_conditioned_error <= 2 * ill_conditioned_self;
  }
  bool ok() const { return max_error <= tolerance && ill_conditioned_ok(); }
  // Within the tolerance, or no farther than twice what libmujoco moves under float32 rounding
  // (self_error, taken over the states that enter max_error).
  bool ok_or_within_rounding() const {
    return ok() || (self_error >= 0 && max_error <= 2 * self_error && ill_conditioned_ok());
  }
};

// Throws std::invalid_argument for a file libmujoco cannot load or the engine cannot import.
std::vector<CheckRow> check_against_mujoco(const std::string& mjcf_path, const CheckOptions& o);

// The libmujoco the check compares with, e.g. "3.11.0".
std::string mujoco_version();

// The failing row whose error is the largest multiple of its tolerance; nullptr if all pass.
const CheckRow* worst_failure(const std::vector<CheckRow>& rows);

}  // namespace myriad::physics
