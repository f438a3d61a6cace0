// Learning-rate schedules: constant, linear (annealed to 0 over the run, as CleanRL's ppo.py),
// and KL-adaptive (rl_games: divide by 1.5 when an epoch's KL exceeds twice the target, multiply
// by 1.5 below half of it, within [1e-6, 1e-2]). The adaptive rule runs on the device.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace myriad::learner {

enum class LrSchedule { kConstant, kLinear, kKlAdaptive };
// "constant", "linear" or "kl_adaptive" (the config validates the name).
LrSchedule lr_schedule_from_name(const std::string& name);

// The learning rate for the update that starts after env_steps of total (linear) or `base`.
double scheduled_lr(LrSchedule s, double base, int64_t env_steps, int64_t total_env_steps);

// In place on the device: lr [] from an epoch's mean approximate KL [].
void adapt_lr_to_kl(torch::Tensor& lr, const torch::Tensor& kl, double target_kl);

}  // namespace myriad::learner
