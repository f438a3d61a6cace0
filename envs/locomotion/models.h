// The locomotion envs' MJCF models (envs/locomotion/models/*.xml), compiled into the binary so
// that an env needs no files at run time (envs/CMakeLists.txt generates the table).
#pragma once

#include <string>

namespace myriad::envs::locomotion {

// The text of models/<name>.xml; std::invalid_argument naming the known models otherwise.
const std::string& embedded_model(const std::string& name);

}  // namespace myriad::envs::locomotion
