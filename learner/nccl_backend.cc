// Compiled with USE_C10D_NCCL and the wheel's nccl.h on the include path (learner/CMakeLists.txt):
// NCCLUtils.hpp switches members of ProcessGroupNCCL::Options on NCCL_VERSION_CODE, so the
// header must be the one of the libnccl.so.2 that libtorch_cuda.so loads.
#include "learner/nccl_backend.h"

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

namespace myriad::learner {

bool nccl_compiled() { return true; }

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size, int device,
                                                    std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  auto group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, options);
  // Bound to this rank's GPU, the group creates its communicator now, on that device (an error
  // shows here, while joining, not at the first gradient), instead of at the first collective.
  const c10::Device gpu(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(device));
  group->setBoundDeviceId(gpu);
  group->eagerConnectSingleDevice(gpu);
  return group;
}

}  // namespace myriad::learner
