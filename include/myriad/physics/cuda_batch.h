// The engine on a CUDA GPU: the same per-env stages (physics/pipeline.h), one thread per env,
// model and data in device memory. Host code needs no CUDA headers. In a build without nvcc
// every method throws.
#pragma once

#include <cstdint>
#include <memory>

#include "myriad/physics/data.h"
#include "myriad/physics/model.h"

namespace myriad::physics {

template <class T>
struct ModelView;  // physics/model_view.h
template <class T, int Block>
struct BatchView;  // physics/batch_view.h

// A CUDA batch's block in the blocked layout (physics/batch_layout.h): a warp's 32 threads, one
// env each, load element k of their envs as 128 contiguous bytes.
constexpr int kCudaBlock = 32;
template <class T>
struct EnvParams;  // physics/env_params.h
template <class T>
struct EnvParamsView;

template <class T>
class CudaBatch {
 public:
  // device: the GPU ordinal to allocate and run on (-1: the current device). Every method
  // makes it current while it works and restores the caller's device after.
  // stream: the cudaStream_t (as void*; nullptr: the legacy default stream) that every copy,
  // memset and synchronous launch of this batch uses. The constructor waits for it, so the
  // zeroed data and the model are ready for launches on any stream after it returns.
  // block: the data's layout (physics/batch_layout.h): 1, env-major (as the host's Data<T>), or
  // kCudaBlock, blocks of a warp's envs (coalesced loads). upload and download convert.
  CudaBatch(const Model<T>& m, int64_t num_envs, int device = -1, void* stream = nullptr,
            int block = 1);
  ~CudaBatch();
  CudaBatch(const CudaBatch&) = delete;
  CudaBatch& operator=(const CudaBatch&) = delete;

  void upload(Data<T>& host);    // host batch -> device (every field)
  void download(Data<T>& host);  // device -> host batch (every field)
  // Both launch on the batch's stream and wait for it before returning.
  // staged: one kernel per named stage (physics/launch.h; the default); false: one fused kernel
  // per step, for comparison (physics-bench --launch fused; env-major batches only).
  void forward(bool staged = true);
  void step(int substeps = 1, bool staged = true);
  // The same step launched on `stream` (a cudaStream_t; nullptr: the legacy default stream)
  // without waiting: for a step between other launches on that stream (the physics envs).
  void step_async(int substeps, bool staged, void* stream);
  // forward(staged=true) on `stream` without waiting, over the envs where only_a[i] or only_b[i]
  // (device pointers) is set, or every env when only_a is null: the auto-reset's forward pass.
  void forward_async(void* stream, const uint8_t* only_a = nullptr,
                     const uint8_t* only_b = nullptr);

  // Per-env model parameters (physics/env_params.h; empty: every env reads the model), copied
  // to the device for every later staged launch; the previous ones are freed after the device
  // finishes what it runs. The fused launch (staged false) refuses them.
  void set_params(const EnvParams<T>& p);

  // The device copies, for launches that run the engine inside other per-env work (the physics
  // envs, envs/physics_kernels.h): pointers into this GPU's memory, valid while this lives.
  const ModelView<T>& device_model() const;
  const BatchView<T, 1>& device_data() const;  // an env-major batch's (throws for a blocked one)
  const BatchView<T, kCudaBlock>& device_blocked_data() const;  // a blocked batch's (or throws)
  const EnvParamsView<T>& device_params() const;  // all null without per-env parameters

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The shared memory a block of the CUDA constraint solve takes on GPU `device` for a batch laid
// out in blocks of `block` envs (1 or kCudaBlock), in bytes: the device's default (what the
// solve's registers leave a block) or MYRIAD_SOLVE_STORAGE_KIB's (physics/launch.h's
// solve_storage_bytes). What the batches of this process on that GPU use; `myriad bench --json`
// reports it.
template <class T>
int cuda_solve_storage_bytes(int device, int block);

}  // namespace myriad::physics
