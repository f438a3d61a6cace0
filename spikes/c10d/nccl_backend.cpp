// Compile/link check for the NCCL path (runs only with a GPU): ProcessGroupNCCL.hpp needs
// USE_C10D_NCCL, the CUDA runtime headers and nccl.h. Use the nvidia-nccl wheel's nccl.h (the
// same NCCL that libtorch_cuda.so loads through its RPATH): NCCLUtils.hpp switches members of
// ProcessGroupNCCL::Options (ncclConfig_t) on NCCL_VERSION_CODE, so a different nccl.h could
// change the class layout.
#include "nccl_backend.hpp"

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

namespace spike {
c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size,
                                                    std::chrono::milliseconds timeout) {
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, opts);
}
}  // namespace spike
