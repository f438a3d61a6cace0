// Launches the per-env kernels of envs/batch_kernels.h over a whole batch on device D (for CUDA,
// GPU device.index, on `stream`; see envs/backend.h).
// Included by one CPU translation unit and one CUDA translation unit, which each instantiate
// it for their device, so the two backends share every line of env logic.
#pragma once

#include "envs/batch_kernels.h"
#include "envs/multi_agent_kernels.h"
#include "myriad/parallel_for.h"

namespace myriad::envs {

template <Device D, class Env>
void launch_reset(const ViewOfT<Env>& b, DeviceId device, void* stream) {
  parallel_for(
      DeviceId{D, device.index}, "env.reset", b.n,
      [b] MYRIAD_HD_LAMBDA(int64_t i) { reset_one(b, i); }, stream);
}

template <Device D, class Env>
void launch_step(const ViewOfT<Env>& b, DeviceId device, void* stream) {
  (void)device, (void)stream;  // the CPU path needs neither
  if constexpr (D == Device::kCpu) {
    // CPU: chunks of envs; phase 1 in SIMD lanes, phase 2 for the envs that finished.
    constexpr int64_t kChunk = 512;
    const int64_t chunks = (b.n + kChunk - 1) / kChunk;
    parallel_for(
        Device::kCpu, "env.step", chunks,
        [b](int64_t c) {
          const int64_t begin = c * kChunk, end = begin + kChunk < b.n ? begin + kChunk : b.n;
          // A local copy: stores through the buffers cannot alias it, so its pointers stay in
          // registers and the loop vectorizes.
          const ViewOfT<Env> v = b;
          uint8_t done[kChunk];
#pragma omp simd
          for (int64_t i = begin; i < end; ++i) done[i - begin] = advance_one(v, i);
          for (int64_t i = begin; i < end; ++i)
            if (done[i - begin]) finish_one(v, i);
        },
        stream, /*min_parallel=*/2);
  } else {
    parallel_for(
        DeviceId{D, device.index}, "env.step", b.n,
        [b] MYRIAD_HD_LAMBDA(int64_t i) { step_one(b, i); }, stream);
  }
}

template <Device D, class Env>
void launch_observe(const ViewOfT<Env>& b, DeviceId device, void* stream) {
  parallel_for(
      DeviceId{D, device.index}, "env.observe", b.n,
      [b] MYRIAD_HD_LAMBDA(int64_t i) { observe_one(b, i); }, stream);
}

}  // namespace myriad::envs
