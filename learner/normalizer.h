// Running mean and variance over batches (Chan et al.'s parallel update), as Gymnasium's
// NormalizeObservation and NormalizeReward keep them.
#pragma once

#include <torch/torch.h>

namespace myriad::learner {

class RunningMeanStd {
 public:
  RunningMeanStd() = default;
  explicit RunningMeanStd(at::IntArrayRef shape, double epsilon = 1e-4);

  // batch: [B, shape...]
  void update(const torch::Tensor& batch);
  // (x - mean) / sqrt(var + eps), clipped to [-clip, clip].
  torch::Tensor normalize(const torch::Tensor& x, double clip) const;

  torch::Tensor mean, var, count;  // float64, on the device of the data
};

}  // namespace myriad::learner
