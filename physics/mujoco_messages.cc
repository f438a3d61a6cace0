#include "myriad/physics/mujoco_messages.h"

#include <mujoco/mujoco.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace myriad::physics {
namespace {

constexpr int64_t kWarningsPrinted = 10;  // a diverging batch warns once per env
std::atomic<int64_t> warnings{0};
thread_local std::vector<std::string>* captured = nullptr;  // MujocoWarningCapture's, if any

void on_warning(const char* message) {
  if (captured) captured->emplace_back(message);
  const int64_t k = warnings.fetch_add(1) + 1;
  if (k <= kWarningsPrinted) {
    std::fprintf(stderr, "myriad: libmujoco warning: %s\n", message);
  } else if (k == kWarningsPrinted + 1) {
    std::fprintf(stderr, "myriad: further libmujoco warnings are counted, not printed\n");
  }
}

// libmujoco's engine is C; x86-64 builds carry unwind tables, so the exception crosses it.
[[noreturn]] void on_error(const char* message) {
  throw std::runtime_error(std::string("libmujoco error: ") + message);
}

}  // namespace

void route_mujoco_messages() {
  static std::once_flag once;
  std::call_once(once, [] {
    mju_user_warning = on_warning;
    mju_user_error = on_error;
  });
}

int64_t mujoco_warning_count() { return warnings.load(); }

MujocoWarningCapture::MujocoWarningCapture() {
  route_mujoco_messages();
  captured = &messages;
}

MujocoWarningCapture::~MujocoWarningCapture() { captured = nullptr; }

}  // namespace myriad::physics
