// Domain randomization of a physics env's model, per env: terms declared in the env's config
// (env.randomize, or the text option `randomize` as JSON), each drawing new values of one model
// field for chosen elements, as mjlab's domain-randomization events do (envs/mdp/dr/). Drawn
// once per env when the seed is set (mjlab's "startup" mode) from the counter-based generator
// keyed by (seed, env): the same values on any thread count and device.
//
//   randomize:
//     foot_friction:                      # the term's name (any)
//       field: geom_friction              # a per-env field (physics/env_params.h), gravity, or
//                                         # a position actuator's actuator_kp (gainprm[0] and
//                                         # -biasprm[1] together) or actuator_kd (-biasprm[2])
//       names: [".*_foot_collision"]      # elements by name, each a regex matched whole;
//                                         # omitted: every element (bodies: every body but the
//                                         # world)
//       axes: [0]                         # columns of the field (friction: slide, spin, roll);
//                                         # omitted: every column
//       range: [0.3, 1.5]                 # [low, high], or per axis {0: [lo, hi], 2: [lo, hi]}
//       distribution: uniform             # uniform (default) or log_uniform (low > 0)
//       operation: abs                    # abs (the value), add (default + value) or scale
//                                         # (default * value); default abs
//       shared: true                      # one draw per env (and axis) for every element;
//                                         # default false: a draw per element and axis
//
//     push:                               # mjlab's push_robot: an interval event on the root's
//       field: root_velocity              # free joint, world-frame [vx vy vz wx wy wz] changes
//       mode: interval
//       interval: [1.0, 3.0]              # seconds between pushes, drawn per push per env
//       operation: add
//       range: {0: [-0.5, 0.5], 1: [-0.5, 0.5], 2: [-0.4, 0.4], 3: [-0.52, 0.52], ...}
//
// Terms apply in name order, each to the model's default values. After the draw, a term that
// changed masses, inertias, centres of mass or armature has mj_setConst's derived constants
// recomputed per env (physics/set_const.h). Bad input is refused naming randomize.<term>.<key>.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "envs/physics_frame.h"
#include "myriad/physics/model.h"
#include "physics/env_params.h"

namespace myriad::envs {

struct RandomTerm {
  enum Mode { kStartup, kInterval };
  enum Distribution { kUniform, kLogUniform };
  enum Operation { kAbs, kAdd, kScale };
  std::string name;
  std::string field;
  std::vector<std::string> names;  // regexes; empty: every element
  bool all_names = true;
  std::map<int, std::pair<double, double>> ranges;  // axis => [low, high]
  Distribution distribution = kUniform;
  Operation operation = kAbs;
  bool shared = false;
  Mode mode = kStartup;
  double interval[2] = {0, 0};  // kInterval: seconds between events, drawn per event
};

// The terms of a JSON object {name: {field, names, axes, range, distribution, operation,
// shared}}. std::invalid_argument naming randomize.<term>.<key> on anything malformed: an unknown
// key or field, a range that is empty, inverted or non-finite, an axis the field lacks.
std::vector<RandomTerm> parse_randomization(const std::string& json_text);

// The per-env fields a term may set, and gravity.
std::vector<std::string> randomizable_fields();

// A term resolved against a model: the elements (rows of the field) it draws for.
struct ResolvedTerm {
  RandomTerm term;
  std::vector<int> rows;  // element rows of the field (a joint's dofs for dof_ fields)
  int cols = 1;           // the field's columns
};

// Names resolved, and each term's extreme values checked against what the field allows
// (masses, inertias, friction, damping, armature, friction loss and stiffness stay >= 0).
// std::invalid_argument naming randomize.<term>.<key> and the model's valid names.
std::vector<ResolvedTerm> resolve_randomization(const std::vector<RandomTerm>& terms,
                                                const physics::Model<double>& model);

// The interval push among the terms (field root_velocity, mode interval; at most one), for an env
// step of dt seconds; disabled if there is none.
PushEvent push_event(const std::vector<ResolvedTerm>& terms, const physics::Model<double>& model,
                     double dt);

// Every env's parameters drawn from (seed, env): Philox stream (seed, env, startup, term).
// Fields no term touches stay empty (shared); derived constants recomputed where needed.
physics::EnvParams<double> draw_env_params(const std::vector<ResolvedTerm>& terms,
                                           const physics::Model<double>& model, int64_t n,
                                           uint64_t seed);

}  // namespace myriad::envs
