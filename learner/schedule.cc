#include "learner/schedule.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace myriad::learner {

LrSchedule lr_schedule_from_name(const std::string& name) {
  if (name == "constant") return LrSchedule::kConstant;
  if (name == "linear") return LrSchedule::kLinear;
  if (name == "kl_adaptive") return LrSchedule::kKlAdaptive;
  throw std::invalid_argument("unknown lr_schedule '" + name +
                              "' (valid: constant, linear, kl_adaptive)");
}

double scheduled_lr(LrSchedule s, double base, int64_t env_steps, int64_t total_env_steps) {
  if (s != LrSchedule::kLinear) return base;
  const double frac = 1.0 - static_cast<double>(env_steps) / static_cast<double>(total_env_steps);
  return base * std::max(frac, 0.0);
}

void adapt_lr_to_kl(torch::Tensor& lr, const torch::Tensor& kl, double target_kl) {
  torch::NoGradGuard no_grad;
  const torch::Tensor k = kl.to(lr.dtype());
  const torch::Tensor down = (lr / 1.5).clamp_min_(1e-6), up = (lr * 1.5).clamp_max_(1e-2);
  lr.copy_(torch::where(k > 2.0 * target_kl, down, torch::where(k < 0.5 * target_kl, up, lr)));
}

}  // namespace myriad::learner
