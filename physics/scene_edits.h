#pragma once
// MJCF files the way the project's robot scenes write them (envs/robots/models/):
//  - "mjlab:<path>" in a file attribute names a file of the mjlab package (the robot models it
//    ships), wherever it is installed: $MYRIAD_MJLAB_DIR, else the package the build found;
//  - scene edits: MJCF cannot change an element of a model it includes or attaches (a robot's
//    joint armature, its collision geoms' condim or friction), so a scene declares such changes
//    as custom numerics named "myriad:<joint|geom> <attribute> <name pattern>" whose data is the
//    value, e.g. <numeric name="myriad:joint armature .*_calf_joint" data="0.00906"/>. They
//    apply in file order to every element whose whole name matches the pattern (ECMAScript
//    regex); a pattern that matches nothing, an unknown attribute or a wrong value count is an
//    error naming the numeric. libmujoco (physics=mujoco, physics-check) sees the edited model.
#include <mujoco/mujoco.h>

#include <string>
#include <vector>

namespace myriad::physics {

// `text` (the MJCF file `path`) with each file="mjlab:<path>" made the file's path in the mjlab
// package; throws std::invalid_argument naming the path when the package or file is missing.
std::string with_package_paths(const std::string& path, const std::string& text);

struct SceneEdit {
  std::string numeric;  // the custom numeric's name, for messages
  std::string element;  // "joint" or "geom"
  std::string attribute;
  std::string pattern;
  std::vector<double> values;
};

// Whether the compiled model declares scene edits, and which (in file order; throws
// std::invalid_argument for a malformed one).
bool has_scene_edits(const mjModel* m);
std::vector<SceneEdit> scene_edits(const mjModel* m);

// Parses the MJCF file `name` (through vfs), applies the edits and compiles it; nullptr with the
// reason in error (libmujoco's, or the edit's) when that fails.
mjModel* compile_with_edits(const std::string& name, const mjVFS* vfs,
                            const std::vector<SceneEdit>& edits, char* error, int error_size);

}  // namespace myriad::physics
