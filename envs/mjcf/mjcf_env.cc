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
  s.option_names = locomotion::option_names(MjcfTask::options());
  for (const auto& name : MjcfTask::name_option_names()) s.option_names.push_back(name);
  for (const char* common : {"frame_skip", "precision", "physics"})
    s.option_names.push_back(common);
  return s;
}

std::unique_ptr<BatchEnv> make_mjcf_env(int64_t n, DeviceId device, uint64_t seed,
                                        const EnvOptions& options, const EnvTextOptions& text) {
  return std::make_unique<PhysicsBatchEnv<MjcfTask>>(n, device, seed, options, text);
}

}  // namespace myriad::envs
