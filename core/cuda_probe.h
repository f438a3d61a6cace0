// Asks the CUDA runtime how many GPUs answer and which one is current (core/cuda_probe.cu), or
// says there is no CUDA (core/cuda_probe_stub.cc) in a build without nvcc.
#pragma once

namespace myriad {
bool cuda_probe_compiled();
int cuda_probe_device_count();
int cuda_probe_current_device();  // 0 when the runtime cannot say
}  // namespace myriad
