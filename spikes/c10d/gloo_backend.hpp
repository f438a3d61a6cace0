// The one place that knows about ProcessGroupGloo. Only this translation unit includes
// ProcessGroupGloo.hpp (and therefore gloo's headers); everything else talks to the abstract
// c10d::Backend interface, whose headers the torch wheel ships complete.
#pragma once
#include <chrono>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace spike {
c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size,
                                                    std::chrono::milliseconds timeout);
}
