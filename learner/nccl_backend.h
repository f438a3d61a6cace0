// The one place that knows ProcessGroupNCCL (LibTorch's NCCL backend, in libtorch_cuda): only
// nccl_backend.cc includes its header, compiled with USE_C10D_NCCL and the nccl.h that matches
// the NCCL libtorch_cuda loads (learner/CMakeLists.txt). A build without it compiles
// nccl_backend_stub.cc instead, whose make_nccl_backend says so.
#pragma once

#include <chrono>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace myriad::learner {

// True when this build has the NCCL backend.
bool nccl_compiled();

// The NCCL process group of `world_size` ranks on CUDA device `device` (this rank's GPU).
// Collectives that wait longer than `timeout` are aborted by ProcessGroupNCCL's watchdog.
// Throws std::runtime_error in a build without NCCL.
c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size, int device,
                                                    std::chrono::milliseconds timeout);

}  // namespace myriad::learner
