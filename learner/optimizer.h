// Adam over one flat buffer. The network's parameters become views into a single contiguous
// tensor, and their gradients views into another, so clipping the global gradient norm, the
// Adam step and (for data-parallel training) an all-reduce are each a handful of ops on one
// tensor instead of a loop over every parameter. Nothing here reads the device: the learning
// rate is a device scalar, so a KL-adaptive schedule never waits for the host.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace myriad::learner {

class FlatAdam {
 public:
  FlatAdam() = default;
  // Re-points `params` at one flat buffer (values kept) and their grads at another.
  FlatAdam(std::vector<torch::Tensor> params, double lr, double beta1 = 0.9, double beta2 = 0.999,
           double eps = 1e-5);

  void zero_grad() { grad_.zero_(); }
  // Scales the gradient so its global L2 norm is at most max_norm (as clip_grad_norm_ does, with
  // its 1e-6), without reading the norm on the host. Returns the norm before clipping ([]).
  torch::Tensor clip_grad_norm(double max_norm);
  void step();

  void set_lr(double lr) { lr_.fill_(lr); }
  torch::Tensor& lr() { return lr_; }  // [] float32 on the parameters' device

  torch::Tensor& flat_params() { return param_; }  // [P]
  torch::Tensor& flat_grad() { return grad_; }     // [P]
  // Re-points the parameters at the flat buffer after something replaced their storage
  // (Module::load does), copying their current values in.
  void rebind(std::vector<torch::Tensor> params);

  // Moments and step count, for checkpoints.
  std::vector<torch::Tensor> state() const;
  void load_state(const std::vector<torch::Tensor>& saved);

 private:
  std::vector<torch::Tensor> params_;
  torch::Tensor param_, grad_, exp_avg_, exp_avg_sq_, lr_;
  int64_t steps_ = 0;
  double beta1_ = 0.9, beta2_ = 0.999, eps_ = 1e-5;
};

}  // namespace myriad::learner
