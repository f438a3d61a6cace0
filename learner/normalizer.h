// Running mean and variance over batches (Chan et al.'s parallel update), as Gymnasium's
// NormalizeObservation and NormalizeReward keep them.
#pragma once

#include <torch/torch.h>

namespace myriad::learner {

class Comm;

class RunningMeanStd {
 public:
  RunningMeanStd() = default;
  // Statistics of shape `shape`, allocated on `device` (where the data will be).
  explicit RunningMeanStd(at::IntArrayRef shape, double epsilon = 1e-4,
                          torch::Device device = torch::kCPU);

  // batch: [B, shape...]. With a Comm, every rank's batch (all of B rows) counts: the statistics
  // stay identical on every rank.
  void update(const torch::Tensor& batch, Comm* comm = nullptr);

  torch::Tensor mean, var, count;  // float64, on the device of the data
};

// A RunningMeanStd frozen for one rollout, in the data's dtype: normalizing is then three ops,
// written into a buffer the caller owns. Disabled (the default) copies the input unchanged.
struct Standardizer {
  Standardizer() = default;
  Standardizer(const RunningMeanStd& rms, double clip, torch::ScalarType dtype);
  // out = clamp((x - mean) / std, -clip, clip), or out = x when disabled. out: shaped like x.
  void apply(const torch::Tensor& x, torch::Tensor& out) const;
  torch::Tensor operator()(const torch::Tensor& x) const;

  bool enabled = false;
  torch::Tensor mean, std;
  double clip = 0;
};

}  // namespace myriad::learner
