// Myriad devices as LibTorch devices, and LibTorch's current CUDA stream for a launch. Declared
// here (not in device.h) so that myriad::core stays free of LibTorch; implemented in myriad::envs.
//
// A learner allocates its tensors on torch_device(config.env.device) and makes its env with
// envs::make(id, n, resolve_device_id(config.env.device), ...): both then live on the same GPU,
// and env->buffers().obs.device() == torch_device(env->device_id()).
#pragma once

#include <c10/core/Device.h>

#include <string>

#include "myriad/device.h"

namespace myriad {

// "cpu" -> at::Device(kCPU); "cuda", "cuda:K", "auto" -> at::Device(kCUDA, K) with the index
// resolved as resolve_device_id does (never an index-less CUDA device). Bad names throw
// std::invalid_argument listing the valid ones.
c10::Device torch_device(const std::string& name);
c10::Device torch_device(DeviceId device);

// The inverse; a CUDA device without an index means the current one.
DeviceId device_id(const c10::Device& device);

// LibTorch's current stream of GPU device.index as a cudaStream_t (void*), for CUDA launches
// (parallel_for) that must be ordered with the tensor work around them; nullptr on the CPU.
// It reads the stream through c10's device-generic interface, so this needs no CUDA headers
// and links against a CPU-only LibTorch too (where it is never asked for a GPU).
void* current_stream(DeviceId device);

}  // namespace myriad
