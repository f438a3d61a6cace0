#include "myriad/torch_device.h"

#include <c10/core/Stream.h>
#include <c10/core/impl/VirtualGuardImpl.h>

namespace myriad {

c10::Device torch_device(DeviceId device) {
  if (device.is_cpu()) return c10::Device(c10::kCPU);
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(device.index));
}

c10::Device torch_device(const std::string& name) { return torch_device(resolve_device_id(name)); }

DeviceId device_id(const c10::Device& device) {
  if (device.is_cpu()) return {Device::kCpu, 0};
  if (!device.is_cuda())
    throw std::invalid_argument("device '" + device.str() + "' is neither cpu nor cuda");
  return {Device::kCuda, device.has_index() ? device.index() : cuda_current_device()};
}

void* current_stream(DeviceId device) {
  if (device.is_cpu()) return nullptr;
  // CUDA's guard implementation is registered by LibTorch's CUDA library; getStream is
  // c10::cuda::getCurrentCUDAStream(index) and native_handle its cudaStream_t.
  const c10::impl::VirtualGuardImpl cuda(c10::DeviceType::CUDA);
  return cuda.getStream(torch_device(device)).native_handle();
}

}  // namespace myriad
