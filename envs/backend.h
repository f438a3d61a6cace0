// The kernels of one env type on one device, as plain function pointers. The CPU table comes
// from envs/backend_cpu.cc; the CUDA table from envs/backend_cuda.cu (or, in a build without
// nvcc, from envs/backend_cuda_stub.cc, which says so).
#pragma once

#include "envs/batch_kernels.h"
#include "envs/multi_agent_kernels.h"

namespace myriad::envs {

// Each entry launches over the whole batch on `device` (for CUDA, GPU device.index, made current
// around the launch) and, on CUDA, on `stream` (a cudaStream_t as void*: LibTorch's current
// stream of that GPU, so the launch is ordered with the tensor work around it). None waits for
// the GPU.
// The view is BatchView<Env>, or MultiAgentView<Env> for a multi-agent env (ViewOfT).
template <class Env>
struct Backend {
  void (*reset)(const ViewOfT<Env>&, DeviceId device, void* stream);
  void (*step)(const ViewOfT<Env>&, DeviceId device, void* stream);
  void (*observe)(const ViewOfT<Env>&, DeviceId device, void* stream);
};

template <class Env>
Backend<Env> cpu_backend();
template <class Env>
Backend<Env> cuda_backend();

}  // namespace myriad::envs
