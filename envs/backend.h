// The kernels of one env type on one device, as plain function pointers. The CPU table comes
// from envs/backend_cpu.cc; the CUDA table from envs/backend_cuda.cu (or, in a build without
// nvcc, from envs/backend_cuda_stub.cc, which says so).
#pragma once

#include "envs/batch_kernels.h"

namespace myriad::envs {

template <class Env>
struct Backend {
  void (*reset)(const BatchView<Env>&, void* stream);
  void (*step)(const BatchView<Env>&, void* stream);
  void (*observe)(const BatchView<Env>&, void* stream);
};

template <class Env>
Backend<Env> cpu_backend();
template <class Env>
Backend<Env> cuda_backend();

}  // namespace myriad::envs
