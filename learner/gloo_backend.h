// The one place that knows ProcessGroupGloo: only gloo_backend.cc includes its header (with the
// declaration-only gloo headers of learner/gloo_shim/, which the torch wheel does not ship);
// everything else uses the abstract c10d::Backend. libtorch_cpu bundles gloo itself: nothing
// links a gloo library (a second copy's symbols would interpose on libtorch's).
#pragma once

#include <chrono>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace myriad::learner {

c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size,
                                                    std::chrono::milliseconds timeout);

}  // namespace myriad::learner
