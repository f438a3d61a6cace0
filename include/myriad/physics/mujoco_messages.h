// libmujoco reports through two global callbacks. Unset, a warning appends to MUJOCO_LOG.TXT in
// the working directory, and an error writes there too, waits for Enter on stdin and exits the
// process. Myriad sets both before it first calls libmujoco: warnings go to stderr (the first
// few, then a count), errors throw std::runtime_error. No file is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace myriad::physics {

// Installs the callbacks (once per process; later calls do nothing).
void route_mujoco_messages();

// libmujoco warnings seen so far in this process.
int64_t mujoco_warning_count();

// While alive, the libmujoco warnings raised on this thread are also kept in `messages` (they
// are still printed): a compile's own warnings, e.g. "XML contains a 'NaN'" for a number that
// libmujoco then ignores. Installs the callbacks. Not nestable.
class MujocoWarningCapture {
 public:
  MujocoWarningCapture();
  ~MujocoWarningCapture();
  MujocoWarningCapture(const MujocoWarningCapture&) = delete;
  MujocoWarningCapture& operator=(const MujocoWarningCapture&) = delete;
  std::vector<std::string> messages;
};

}  // namespace myriad::physics
