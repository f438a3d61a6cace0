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

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>
#endif

// myriad::cpu_threads() under a C name: the CPU kernels' x86-64-v3 copy renames namespace myriad
// (envs/backend_cpu.cc) and still links to the one setting (core/device.cc).
extern "C" int myriad_cpu_threads();

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
#if defined(__CUDACC__)
// MYRIAD_CUDA_CHECK=1: every launch waits for its stream and names the stage that faulted (a
// kernel fault otherwise surfaces at a later, unrelated call). Read once per process.
inline bool cuda_check_each_stage() {
  static const bool on = [] {
    const char* v = std::getenv("MYRIAD_CUDA_CHECK");
    return v != nullptr && v[0] == '1';
  }();
  return on;
}

// Raises the device's per-thread stack limit to what `kernel` needs, once per (kernel, device),
// before its first launch: the runtime would otherwise resize the stack lazily inside the launch
// (a device-wide sync, and an error inside a CUDA graph capture). devices: a bit per ordinal.
template <class Kernel>
void reserve_stack(Kernel kernel, std::atomic<uint64_t>& devices, int device) {
  const uint64_t bit = device < 64 ? uint64_t{1} << device : 0;
  if (bit != 0 && (devices.load(std::memory_order_acquire) & bit) != 0) return;
  cudaFuncAttributes attr{};
  size_t limit = 0;
  if (cudaFuncGetAttributes(&attr, kernel) == cudaSuccess &&
      cudaDeviceGetLimit(&limit, cudaLimitStackSize) == cudaSuccess &&
      attr.localSizeBytes > limit) {
    const cudaError_t err = cudaDeviceSetLimit(cudaLimitStackSize, attr.localSizeBytes);
    if (err != cudaSuccess)
      throw std::runtime_error("CUDA: cannot raise the stack limit to " +
                               std::to_string(attr.localSizeBytes) +
                               " bytes per thread: " + cudaGetErrorString(err));
  }
  devices.fetch_or(bit, std::memory_order_acq_rel);
}

// Lets `kernel` take `bytes` of dynamic shared memory on `device` before its launch: past 48 KiB
// a kernel must opt in (cudaFuncAttributeMaxDynamicSharedMemorySize). raised: the largest bytes
// already allowed, per device ordinal (0..63), so each size asks the driver once a device.
template <class Kernel>
void allow_shared(const char* name, Kernel kernel, int bytes, std::atomic<int> (&raised)[64],
                  int device) {
  constexpr int kWithoutOptIn = 48 * 1024;
  const bool kept = device >= 0 && device < 64;  // past 64 devices: asked every launch
  if (bytes <= kWithoutOptIn || (kept && raised[device].load(std::memory_order_acquire) >= bytes))
    return;
  const cudaError_t err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("CUDA launch '") + name + "': cannot give it " +
                             std::to_string(bytes) +
                             " bytes of shared memory a block: " + cudaGetErrorString(err));
  if (kept) raised[device].store(bytes, std::memory_order_release);
}
#endif

#if defined(__CUDACC__)
// The launches timed while myriad/stage_times.h's timing is on (core/cuda_probe.cu reads them).
struct StageEvents {
  struct Launch {
    const char* name;
    cudaEvent_t start, stop;
  };
  std::atomic<bool> on{false};
  std::mutex mutex;
  std::vector<Launch> launches;
};
inline StageEvents& stage_events() {
  static StageEvents events;
  return events;
}
#endif

// The team's size is myriad's own setting (set_cpu_threads), not OpenMP's per-thread default:
// LibTorch shares the OpenMP runtime, and torch::set_num_threads(1) for the learner would
// otherwise step the envs on one core.
template <class Fn>
void cpu_for(int64_t n, Fn& fn, int64_t min_parallel) {
#pragma omp parallel for schedule(static) num_threads(myriad_cpu_threads()) if (n >= min_parallel)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

template <class Fn>
void cuda_for(const char* name, int64_t n, Fn& fn, void* stream, int block, int shared_bytes) {
#if defined(__CUDACC__)
  const int64_t blocks = (n + block - 1) / block;
  static std::atomic<uint64_t> stack_reserved{0};
  static std::atomic<int> shared_allowed[64];  // zero: static storage
  int device = 0;
  cudaGetDevice(&device);
  reserve_stack(parallel_for_kernel<Fn>, stack_reserved, device);
  allow_shared(name, parallel_for_kernel<Fn>, shared_bytes, shared_allowed, device);
  // Neither the timing events nor the check's wait belong in a CUDA graph being captured.
  const bool check = cuda_check_each_stage();
  StageEvents& timed = stage_events();
  const bool timing = timed.on.load(std::memory_order_relaxed);
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (check || timing) cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capturing);
  const bool plain = capturing == cudaStreamCaptureStatusNone;
  StageEvents::Launch events{name, nullptr, nullptr};
  if (timing && plain && cudaEventCreate(&events.start) == cudaSuccess &&
      cudaEventCreate(&events.stop) == cudaSuccess)
    cudaEventRecord(events.start, static_cast<cudaStream_t>(stream));
  // An NVTX range named after the launch: Nsight Systems shows the kernel under this name.
  nvtxRangePushA(name);
  parallel_for_kernel<<<static_cast<unsigned>(blocks), block, static_cast<size_t>(shared_bytes),
                        static_cast<cudaStream_t>(stream)>>>(n, fn);
  nvtxRangePop();
  if (events.stop != nullptr) {
    cudaEventRecord(events.stop, static_cast<cudaStream_t>(stream));
    const std::lock_guard<std::mutex> lock(timed.mutex);
    timed.launches.push_back(events);
  }
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("CUDA launch '") + name +
                             "' failed: " + cudaGetErrorString(err));
  if (check && plain) {
    err = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
    if (err == cudaSuccess) err = cudaGetLastError();
    if (err != cudaSuccess)
      throw std::runtime_error(
          std::string("CUDA stage '") + name +
          "' faulted (MYRIAD_CUDA_CHECK=1 waits after every stage): " + cudaGetErrorString(err));
  }
#else
  (void)n, (void)fn, (void)stream, (void)block, (void)shared_bytes;
  throw std::logic_error(std::string("parallel_for '") + name +
                         "': CUDA launch requested from a host-only translation unit");
#endif
}
}  // namespace detail

// stream: a cudaStream_t passed as void* so host code needs no CUDA headers (nullptr: the
// legacy default stream; callers that share buffers with LibTorch pass its current stream,
// myriad/torch_device.h). The launch is asynchronous: nothing here waits for the GPU.
// min_parallel: below this many indices the CPU loop stays on the calling thread, where waking
// a thread team costs more than the work. cuda_block: threads per CUDA block (256; a cooperative
// kernel chooses its own, a multiple of 32 so that its groups are whole warps). cuda_shared:
// bytes of dynamic shared memory a block (extern __shared__; a kernel that asks past 48 KiB is
// let, once per device).
//
// With a DeviceId the launch runs on GPU device.index (made current around it); with a bare
// Device, on the calling thread's current GPU.
template <class Fn>
void parallel_for(DeviceId device, const char* name, int64_t n, Fn fn, void* stream = nullptr,
                  int64_t min_parallel = 1024, int cuda_block = 256, int cuda_shared = 0) {
  if (n <= 0) return;
  if (device.is_cpu()) return detail::cpu_for(n, fn, min_parallel);
#if defined(__CUDACC__)
  const CudaDeviceScope scope(device.index);
#endif
  detail::cuda_for(name, n, fn, stream, cuda_block, cuda_shared);
}

template <class Fn>
void parallel_for(Device device, const char* name, int64_t n, Fn fn, void* stream = nullptr,
                  int64_t min_parallel = 1024, int cuda_block = 256) {
  if (n <= 0) return;
  if (device == Device::kCpu) return detail::cpu_for(n, fn, min_parallel);
  detail::cuda_for(name, n, fn, stream, cuda_block, 0);
}

}  // namespace myriad
