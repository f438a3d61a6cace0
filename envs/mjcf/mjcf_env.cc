#include "envs/mjcf/mjcf_env.h"

#include "envs/mjcf/mjcf_task.h"
#include "envs/physics_batch_env.h"

namespace myriad::envs {

EnvSpec mjcf_spec_template() {
  EnvSpec s;
  s.id = MjcfTask::kId;
  s.observation_space = Space::box({}, {});
  s.action_space = Space::box({}, {});
  s.max_episode_steps = MjcfTask::kMaxEpisodeSteps;
  s.state_float64 = true;
  s.physics_env = true;
  s.option_names = PhysicsBatchEnv<MjcfTask>::all_option_names();
  return s;
}

std::unique_ptr<BatchEnv> make_mjcf_env(int64_t n, DeviceId device, uint64_t seed,
                                        const EnvOptions& options, const EnvTextOptions& text) {
  return std::make_unique<PhysicsBatchEnv<MjcfTask>>(n, device, seed, options, text);
}

}  // namespace myriad::envs
