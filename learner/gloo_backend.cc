// Compiled with USE_C10D_GLOO and learner/gloo_shim/ on the include path (learner/CMakeLists.txt).
// ProcessGroupGloo's members that name gloo types are shared pointers, so its layout does not
// depend on gloo's headers; the code that touches gloo objects lives in libtorch_cpu.
#include "learner/gloo_backend.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

namespace myriad::learner {

c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size,
                                                    std::chrono::milliseconds timeout) {
  // create_default picks the transport device: GLOO_SOCKET_IFNAME when set, else this host's
  // resolved address, else loopback.
  auto options = c10d::ProcessGroupGloo::Options::create_default(timeout);
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options);
}

}  // namespace myriad::learner
