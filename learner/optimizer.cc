#include "learner/optimizer.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace myriad::learner {

FlatAdam::FlatAdam(std::vector<torch::Tensor> params, double lr, double beta1, double beta2,
                   double eps)
    : beta1_(beta1), beta2_(beta2), eps_(eps) {
  if (params.empty()) throw std::invalid_argument("FlatAdam: no parameters");
  int64_t total = 0;
  for (const auto& p : params) total += p.numel();
  const auto options = params.front().options().requires_grad(false);
  param_ = torch::empty({total}, options);
  grad_ = torch::zeros({total}, options);
  exp_avg_ = torch::zeros({total}, options);
  exp_avg_sq_ = torch::zeros({total}, options);
  lr_ = torch::full({}, lr, options);
  rebind(std::move(params));
}

void FlatAdam::rebind(std::vector<torch::Tensor> params) {
  torch::NoGradGuard no_grad;
  params_ = std::move(params);
  int64_t offset = 0;
  for (auto& p : params_) {
    const int64_t n = p.numel();
    if (offset + n > param_.numel())
      throw std::invalid_argument("FlatAdam: parameters do not fit the flat buffer");
    torch::Tensor value = param_.narrow(0, offset, n).view(p.sizes());
    value.copy_(p);
    p.set_data(value);
    p.mutable_grad() = grad_.narrow(0, offset, n).view(p.sizes());
    offset += n;
  }
  if (offset != param_.numel())
    throw std::invalid_argument("FlatAdam: parameters do not fill the flat buffer");
}

torch::Tensor FlatAdam::clip_grad_norm(double max_norm) {
  torch::NoGradGuard no_grad;
  const torch::Tensor norm = grad_.norm();
  grad_.mul_((max_norm / (norm + 1e-6)).clamp_max_(1.0));
  return norm;
}

void FlatAdam::step() {
  torch::NoGradGuard no_grad;
  ++steps_;
  const double bias1 = 1.0 - std::pow(beta1_, static_cast<double>(steps_));
  const double bias2 = 1.0 - std::pow(beta2_, static_cast<double>(steps_));
  exp_avg_.lerp_(grad_, 1.0 - beta1_);
  exp_avg_sq_.mul_(beta2_).addcmul_(grad_, grad_, 1.0 - beta2_);
  // As torch.optim.Adam: p -= lr / bias1 * m / (sqrt(v) / sqrt(bias2) + eps).
  const torch::Tensor denom = exp_avg_sq_.sqrt().div_(std::sqrt(bias2)).add_(eps_);
  param_.addcdiv_(exp_avg_, denom.div_(lr_ * (-1.0 / bias1)));
}

std::vector<torch::Tensor> FlatAdam::state() const {
  return {exp_avg_, exp_avg_sq_, torch::tensor({steps_}), lr_};
}

void FlatAdam::load_state(const std::vector<torch::Tensor>& s) {
  if (s.size() != 4 || s[0].numel() != exp_avg_.numel() || s[1].numel() != exp_avg_sq_.numel())
    throw std::invalid_argument("optimizer state does not match the network's parameters");
  torch::NoGradGuard no_grad;
  exp_avg_.copy_(s[0]);
  exp_avg_sq_.copy_(s[1]);
  steps_ = s[2].item<int64_t>();
  lr_.copy_(s[3]);
}

}  // namespace myriad::learner
