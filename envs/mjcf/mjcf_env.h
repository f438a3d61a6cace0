// MJCF-v0: any MJCF model the engine supports, as a batched env. Actions are the actuator
// controls (Box from ctrlrange; unbounded where ctrllimited is false), observations are
// [qpos, qvel] (float32), reward 0, no termination; the episode is truncated at
// max_episode_steps. Episodes start from qpos0 (zero qvel) plus uniform noise of
// +-reset_noise_scale on both, drawn from the env's Philox stream.
//
// Text options: xml (path, required), physics ("myriad" or "mujoco"). Number options:
// frame_skip (default 1), max_episode_steps (1000), reset_noise_scale (0), precision (32 or 64,
// myriad physics only). CPU only for now.
#pragma once

#include <cstdint>
#include <memory>

#include "myriad/batch_env.h"

namespace myriad::envs {

std::unique_ptr<BatchEnv> make_mjcf_env(int64_t num_envs, DeviceId device, uint64_t seed,
                                        const EnvOptions& options,
                                        const EnvTextOptions& text_options);
EnvSpec mjcf_spec_template();

}  // namespace myriad::envs
