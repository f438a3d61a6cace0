#include "learner/normalizer.h"

#include "learner/distributed.h"

namespace myriad::learner {

RunningMeanStd::RunningMeanStd(at::IntArrayRef shape, double epsilon, torch::Device device)
    : mean(torch::zeros(shape, torch::TensorOptions(torch::kFloat64).device(device))),
      var(torch::ones(shape, torch::TensorOptions(torch::kFloat64).device(device))),
      count(torch::full({}, epsilon, torch::TensorOptions(torch::kFloat64).device(device))) {}

void RunningMeanStd::update(const torch::Tensor& batch, Comm* comm) {
  const torch::Tensor x = batch.to(torch::kFloat64);
  torch::Tensor batch_mean = x.mean(0);
  double n = static_cast<double>(x.size(0));
  if (comm && comm->world_size() > 1) {
    // Every rank's batch has B rows: the job's mean is the mean of the ranks' means, and its
    // variance the mean over ranks of their squared deviations from it.
    comm->all_reduce_mean_(batch_mean);
    n *= comm->world_size();
  }
  // Written out: LibTorch's CPU var() reads a single-output result on the host (.item()).
  torch::Tensor batch_var = (x - batch_mean).square_().mean(0);
  if (comm) comm->all_reduce_mean_(batch_var);
  const torch::Tensor delta = batch_mean - mean;
  const torch::Tensor total = count + n;
  const torch::Tensor m2 = var * count + batch_var * n + delta * delta * count * n / total;
  mean = mean + delta * n / total;
  var = m2 / total;
  count = total;
}

Standardizer::Standardizer(const RunningMeanStd& rms, double clip_, torch::ScalarType dtype)
    : enabled(true),
      mean(rms.mean.to(dtype)),
      std((rms.var + 1e-8).sqrt().to(dtype)),
      clip(clip_) {}

void Standardizer::apply(const torch::Tensor& x, torch::Tensor& out) const {
  if (!enabled) {
    out.copy_(x);
    return;
  }
  at::sub_out(out, x, mean);
  out.div_(std).clamp_(-clip, clip);
}

torch::Tensor Standardizer::operator()(const torch::Tensor& x) const {
  if (!enabled) return x;
  return ((x - mean) / std).clamp_(-clip, clip);
}

}  // namespace myriad::learner
