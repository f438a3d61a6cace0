// Compiled with USE_C10D_GLOO and some gloo headers on the include path (Debian's libgloo-dev,
// or the shim in gloo_shim/). Nothing here calls into gloo itself: ProcessGroupGloo's members
// that mention gloo types are shared_ptrs, so the class layout does not depend on the gloo
// version; the code that touches gloo objects lives in libtorch_cpu.so (which bundles gloo).
#include "gloo_backend.hpp"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

namespace spike {
c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size,
                                                    std::chrono::milliseconds timeout) {
  // create_default (exported by libtorch_cpu) picks the transport device: GLOO_SOCKET_IFNAME
  // when set, else this host's resolved address, else loopback.
  auto opts = c10d::ProcessGroupGloo::Options::create_default(timeout);
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, opts);
}
}  // namespace spike
