// Where a batch lives and runs: host cores (OpenMP) or a CUDA GPU.
#pragma once

#include <string>

namespace myriad {

enum class Device { kCpu, kCuda };

// True when this build has the CUDA backend and a GPU answers.
bool cuda_available();
// True when this build compiled the CUDA backend (nvcc was found at configure time).
bool cuda_compiled();

// Parses "cpu", "cuda" or "auto" (CUDA when available, else CPU). "cuda" without a GPU and an
// unknown name are errors (std::invalid_argument) that say why and list the valid names.
Device resolve_device(const std::string& name);
std::string device_name(Device d);

// OpenMP threads used by CPU batches; 0 keeps the OpenMP default.
void set_cpu_threads(int threads);
int cpu_threads();

}  // namespace myriad
