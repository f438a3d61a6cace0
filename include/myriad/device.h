// Where a batch lives and runs: host cores (OpenMP) or one CUDA GPU of the machine.
#pragma once

#include <string>

namespace myriad {

enum class Device { kCpu, kCuda };

// A device and, for CUDA, which GPU: the ordinal K of "cuda:K" among the GPUs this process
// sees (CUDA_VISIBLE_DEVICES applies). index is 0 on the CPU.
struct DeviceId {
  Device kind = Device::kCpu;
  int index = 0;

  bool is_cpu() const { return kind == Device::kCpu; }
  bool is_cuda() const { return kind == Device::kCuda; }
  friend bool operator==(const DeviceId& a, const DeviceId& b) {
    return a.kind == b.kind && a.index == b.index;
  }
  friend bool operator!=(const DeviceId& a, const DeviceId& b) { return !(a == b); }
};

// True when this build has the CUDA backend and a GPU answers.
bool cuda_available();
// True when this build compiled the CUDA backend (nvcc was found at configure time).
bool cuda_compiled();
// GPUs this process sees (0 without CUDA or without a GPU).
int cuda_device_count();
// The calling thread's current CUDA device (cudaGetDevice; LibTorch's c10::cuda::set_device
// and torch.cuda.set_device change it): 0 unless the program chose another, and 0 without CUDA.
int cuda_current_device();

// Parses a device name:
//   "cpu"
//   "cuda"    the current CUDA device (cuda_current_device(), so GPU 0 unless the program chose
//             another; Myriad reads no LOCAL_RANK: a distributed launcher passes "cuda:K")
//   "cuda:K"  GPU K, 0 <= K < cuda_device_count()
//   "auto"    "cuda" when a GPU answers, else "cpu"
// CUDA without a CUDA build or without a GPU, an index out of range and an unknown name are
// errors (std::invalid_argument) that say why and list the valid names on this machine.
DeviceId resolve_device_id(const std::string& name);

// The same rule with the machine's answers given (no CUDA call), for tests: cuda_built as
// cuda_compiled(), gpus as cuda_device_count(), current as cuda_current_device().
DeviceId parse_device(const std::string& name, bool cuda_built, int gpus, int current);

// The kind of resolve_device_id(name), for callers that keep no index. Such a caller runs on
// the current CUDA device, so a name that selects another GPU ("cuda:K", K not current) is an
// error that says to use resolve_device_id.
Device resolve_device(const std::string& name);

// "cpu" or "cuda" (the kind); "cpu" or "cuda:K" (with the index).
std::string device_name(Device d);
std::string device_name(DeviceId d);

// OpenMP threads used by CPU batches, the calling thread's setting; 0 goes back to the default
// (OMP_NUM_THREADS's first entry, else the cores this process may use).
void set_cpu_threads(int threads);
int cpu_threads();

}  // namespace myriad
