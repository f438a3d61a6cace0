// MJCF-v0: the user's own MJCF model as a batched env of the physics-env framework
// (PhysicsBatchEnv<MjcfTask>; the env and its reward terms are envs/mjcf/mjcf_task.h). Runs on
// physics=myriad (CPU in float32 or float64, CUDA in float32) and physics=mujoco (CPU).
//
// Text options: xml (path, required), physics ("myriad" or "mujoco"), keyframe (a key name: the
// episodes start there), forward_body (a body
// name), and the ranges healthy_z_range and contact_force_range ("low,high"). Number options:
// frame_skip (default 1), max_episode_steps (1000), reset_noise_scale (0), precision (32 or 64),
// and the reward weights of mjcf_task.h (all 0 by default: reward 0).
#pragma once

#include <cstdint>
#include <memory>

#include "myriad/batch_env.h"

namespace myriad::envs {

std::unique_ptr<BatchEnv> make_mjcf_env(int64_t num_envs, DeviceId device, uint64_t seed,
                                        const EnvOptions& options,
                                        const EnvTextOptions& text_options);
// MJCF-v0's spec before a model is chosen (its spaces come from the model).
EnvSpec mjcf_spec_template();

}  // namespace myriad::envs
