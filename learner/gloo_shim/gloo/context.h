#pragma once
// Stand-in: ProcessGroupGloo.hpp holds gloo::Context through std::shared_ptr and calls
// setTimeout() in an inline member (defined in libtorch_cpu.so's bundled gloo, exported).
#include <chrono>
namespace gloo {
class Context {
 public:
  void setTimeout(std::chrono::milliseconds timeout);
};
}  // namespace gloo
