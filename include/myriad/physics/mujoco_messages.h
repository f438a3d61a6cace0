// libmujoco reports through two global callbacks. Unset, a warning appends to MUJOCO_LOG.TXT in
// the working directory, and an error writes there too, waits for Enter on stdin and exits the
// process. Myriad sets both before it first calls libmujoco: warnings go to stderr (the first
// few, then a count), errors throw std::runtime_error. No file is written.
#pragma once

#include <cstdint>

namespace myriad::physics {

// Installs the callbacks (once per process; later calls do nothing).
void route_mujoco_messages();

// libmujoco warnings seen so far in this process.
int64_t mujoco_warning_count();

}  // namespace myriad::physics
