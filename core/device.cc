#include "myriad/device.h"

#include <omp.h>

#include <stdexcept>

#include "core/cuda_probe.h"

namespace myriad {

bool cuda_compiled() { return cuda_probe_compiled(); }

bool cuda_available() { return cuda_probe_device_count() > 0; }

Device resolve_device(const std::string& name) {
  if (name == "cpu") return Device::kCpu;
  if (name == "auto") return cuda_available() ? Device::kCuda : Device::kCpu;
  if (name == "cuda") {
    if (!cuda_compiled())
      throw std::invalid_argument(
          "device 'cuda' requested, but this build has no CUDA backend (nvcc was not found "
          "when it was configured); use device=cpu or device=auto");
    if (!cuda_available())
      throw std::invalid_argument(
          "device 'cuda' requested, but no CUDA GPU answers on this machine; use device=cpu "
          "or device=auto");
    return Device::kCuda;
  }
  throw std::invalid_argument("unknown device '" + name + "' (valid: cpu, cuda, auto)");
}

std::string device_name(Device d) { return d == Device::kCpu ? "cpu" : "cuda"; }

void set_cpu_threads(int threads) {
  if (threads < 0) throw std::invalid_argument("threads must be >= 0");
  if (threads > 0) omp_set_num_threads(threads);
}

int cpu_threads() { return omp_get_max_threads(); }

}  // namespace myriad
