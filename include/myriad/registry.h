// The env registry: ids like "CartPole-v1" mapped to factories.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "myriad/batch_env.h"

namespace myriad::envs {

// Creates num_envs instances of env `id` on `device` (its buffers allocated on that GPU for
// CUDA; resolve_device_id turns a name like "cuda:1" into one), reset with `seed`. An unknown id
// throws std::invalid_argument listing the registered ids; bad options and sizes likewise.
std::unique_ptr<BatchEnv> make(const std::string& id, int64_t num_envs, DeviceId device,
                               uint64_t seed, const EnvOptions& options = {},
                               const EnvTextOptions& text_options = {});
// The same with a bare kind: Device::kCuda is the current CUDA device (cuda_current_device()).
std::unique_ptr<BatchEnv> make(const std::string& id, int64_t num_envs, Device device,
                               uint64_t seed, const EnvOptions& options = {},
                               const EnvTextOptions& text_options = {});

// Which copy of the CPU env kernels this process runs: "x86-64-v3" when the CPU has AVX2, FMA
// and the rest of that level, else "x86-64" (also on non-x86 machines; "native" in a
// MYRIAD_NATIVE=ON build). Every copy computes bitwise the same numbers.
// MYRIAD_CPU_LEVEL=x86-64 (or x86-64-v3) in the environment forces one; forcing a level the CPU
// lacks is an error when the first env is made.
std::string cpu_kernel_level();

// Registered ids, sorted, and their specs.
std::vector<std::string> registered_ids();
EnvSpec spec_of(const std::string& id);

// A shape as text for error messages, e.g. "[4, 3]".
std::string shape_string(at::IntArrayRef shape);

// Observations [B, obs] of spec's env as a contiguous float32 CPU tensor, for drawing; a wrong
// shape throws std::invalid_argument naming the expected and the given shape.
at::Tensor observations_for_drawing(const at::Tensor& obs, const EnvSpec& spec);

}  // namespace myriad::envs
