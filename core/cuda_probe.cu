#include <cuda_runtime.h>

#include "core/cuda_probe.h"

namespace myriad {
bool cuda_probe_compiled() { return true; }
int cuda_probe_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}
int cuda_probe_current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return device;
}
}  // namespace myriad
