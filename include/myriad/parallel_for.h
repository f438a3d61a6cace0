// parallel_for(device, name, n, fn): runs fn(i) for i in [0, n) with OpenMP on the CPU or as a
// CUDA launch (one thread per index). fn is a MYRIAD_HD callable written once for both.
//
// This header is the one place that knows whether it is compiled by nvcc: a host-only
// translation unit can only run CPU loops, and asking it for a CUDA launch is a logic error.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "myriad/device.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>  // header-only NVTX 3: no library to link
#endif

namespace myriad {

#if defined(__CUDACC__)
template <class Fn>
__global__ void parallel_for_kernel(int64_t n, Fn fn) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) fn(i);
}
#endif

#if defined(__CUDACC__)
// Makes GPU `device` current for a scope and restores the previous one, so that a launch for
// cuda:K runs on K whatever the calling thread's current device is (no sync, a few ns).
class CudaDeviceScope {
 public:
  explicit CudaDeviceScope(int device) {
    check(cudaGetDevice(&previous_), device);
    if (previous_ != device) check(cudaSetDevice(device), device);
    device_ = device;
  }
  ~CudaDeviceScope() {
    if (previous_ != device_) cudaSetDevice(previous_);
  }
  CudaDeviceScope(const CudaDeviceScope&) = delete;
  CudaDeviceScope& operator=(const CudaDeviceScope&) = delete;

 private:
  static void check(cudaError_t err, int device) {
    if (err != cudaSuccess)
      throw std::runtime_error("CUDA: cannot select device cuda:" + std::to_string(device) + ": " +
                               cudaGetErrorString(err));
  }
  int previous_ = 0, device_ = 0;
};
#endif

namespace detail {
template <class Fn>
void cpu_for(int64_t n, Fn& fn, int64_t min_parallel) {
#pragma omp parallel for schedule(static) if (n >= min_parallel)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

template <class Fn>
void cuda_for(const char* name, int64_t n, Fn& fn, void* stream) {
#if defined(__CUDACC__)
  constexpr int kBlock = 256;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  // An NVTX range named after the launch: Nsight Systems shows the kernel under this name.
  nvtxRangePushA(name);
  parallel_for_kernel<<<static_cast<unsigned>(blocks), kBlock, 0,
                        static_cast<cudaStream_t>(stream)>>>(n, fn);
  nvtxRangePop();
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("CUDA launch '") + name +
                             "' failed: " + cudaGetErrorString(err));
#else
  (void)n, (void)fn, (void)stream;
  throw std::logic_error(std::string("parallel_for '") + name +
                         "': CUDA launch requested from a host-only translation unit");
#endif
}
}  // namespace detail

// stream: a cudaStream_t passed as void* so host code needs no CUDA headers (nullptr: the
// legacy default stream; callers that share buffers with LibTorch pass its current stream,
// myriad/torch_device.h). The launch is asynchronous: nothing here waits for the GPU.
// min_parallel: below this many indices the CPU loop stays on the calling thread, where waking
// a thread team costs more than the work.
//
// With a DeviceId the launch runs on GPU device.index (made current around it); with a bare
// Device, on the calling thread's current GPU.
template <class Fn>
void parallel_for(DeviceId device, const char* name, int64_t n, Fn fn, void* stream = nullptr,
                  int64_t min_parallel = 1024) {
  if (n <= 0) return;
  if (device.is_cpu()) return detail::cpu_for(n, fn, min_parallel);
#if defined(__CUDACC__)
  const CudaDeviceScope scope(device.index);
#endif
  detail::cuda_for(name, n, fn, stream);
}

template <class Fn>
void parallel_for(Device device, const char* name, int64_t n, Fn fn, void* stream = nullptr,
                  int64_t min_parallel = 1024) {
  if (n <= 0) return;
  if (device == Device::kCpu) return detail::cpu_for(n, fn, min_parallel);
  detail::cuda_for(name, n, fn, stream);
}

}  // namespace myriad
