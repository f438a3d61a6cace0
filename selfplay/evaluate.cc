#include "selfplay/evaluate.h"

#include <ATen/CPUGeneratorImpl.h>

#include "learner/collect.h"
#include "learner/teams.h"
#include "myriad/registry.h"
#include "selfplay/learner.h"

namespace myriad::selfplay {

MatchTally play_match(const learner::TrainConfig& config, const torch::Tensor& learner_params,
                      const torch::Tensor& opponent_params, int64_t episodes, uint64_t seed,
                      const std::function<bool()>& cancel) {
  MatchTally tally;
  if (episodes <= 0) return tally;
  torch::NoGradGuard no_grad;
  auto env = envs::make(config.env.id, episodes, DeviceId{}, seed, config.env.options,
                        learner::env_text_options(config.env));
  const EnvSpec& spec = env->spec();
  if (!spec.decides_winner) return tally;  // nothing to count
  const auto teams = learner::make_teams(spec, config.agents, torch::kCPU);
  learner::ActorCritic mine = make_team_policy(config, spec, teams[0]);
  learner::ActorCritic theirs = make_team_policy(config, spec, teams[0]);
  load_flat_parameters(mine, learner_params);
  load_flat_parameters(theirs, opponent_params);
  mine->eval(), theirs->eval();
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const learner::ActionAdapter to_env(spec.action_space, torch::kCPU);
  const auto& buf = env->buffers();
  torch::Tensor actions =
      spec.action_space.is_discrete()
          ? torch::zeros({episodes, spec.num_agents}, torch::kInt)
          : torch::zeros({episodes, spec.num_agents, spec.action_space.flat_size()});
  std::vector<bool> finished(episodes, false);
  int64_t remaining = episodes;
  for (int64_t t = 0; t < spec.max_episode_steps && remaining > 0; ++t) {
    if (cancel && cancel()) {
      tally.cancelled = true;
      break;
    }
    for (size_t k = 0; k < teams.size(); ++k) {
      learner::ActorCritic& p = k == 0 ? mine : theirs;
      const torch::Tensor a = p->sample(teams[k].input(buf.obs), &gen).action;
      teams[k].put_actions(to_env(a), actions);
    }
    env->step(actions);
    const torch::Tensor done = torch::logical_or(buf.terminated, buf.truncated).contiguous();
    const torch::Tensor winner = buf.winner.contiguous();
    for (int64_t i = 0; i < episodes; ++i) {
      if (finished[i] || !done.data_ptr<bool>()[i]) continue;
      finished[i] = true;
      --remaining;
      const int w = winner.data_ptr<int32_t>()[i];
      if (w == teams[0].id) {
        ++tally.wins;
      } else if (w < 0) {
        ++tally.draws;
      } else {
        ++tally.losses;
      }
    }
  }
  return tally;
}

}  // namespace myriad::selfplay
