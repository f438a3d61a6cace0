#include "learner/episode_stats.h"

#include <cstdint>
#include <stdexcept>

namespace myriad::learner {

EpisodeStats::EpisodeStats(int64_t window, torch::Device device) : window_(window) {
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device);
  values_ = torch::zeros({2, window_}, f64);
  count_ = torch::zeros({}, f64.dtype(torch::kLong));
}

// Episodes are numbered 1, 2, ... in step-then-env order over the rollout's M = T * N slots.
// C[k] counts those ended at or before slot k, so episode j sits at slot searchsorted(C, j), and
// prefix sums over slots give any run of consecutive episodes' totals without compacting.
torch::Tensor EpisodeStats::add(const torch::Tensor& done, const torch::Tensor& returns,
                                const torch::Tensor& lengths, std::optional<double> threshold) {
  torch::NoGradGuard no_grad;
  const int64_t T = done.size(0), N = done.size(1), M = T * N, W = window_;
  const auto i64 = count_.options();
  const torch::Tensor d = done.reshape({M}).to(torch::kBool);
  const torch::Tensor ended = d.to(torch::kLong).cumsum(0);  // C [M]
  const torch::Tensor zero = torch::zeros({}, values_.options());
  // [2, M]: each slot's return and length where an episode ended there, 0 elsewhere.
  const torch::Tensor slot_values =
      torch::where(d,
                   torch::stack({returns.reshape({M}).to(torch::kFloat64),
                                 lengths.reshape({M}).to(torch::kFloat64)}),
                   zero);
  const torch::Tensor new_before = torch::cat(  // [M + 1]: sum of returns of slots < k
      {torch::zeros({1}, values_.options()), slot_values[0].cumsum(0)});

  // First slot of episode j (j >= 1), clamped into range for j beyond the rollout's count.
  auto slot_of = [&](const torch::Tensor& j) {
    return torch::searchsorted(ended, j).clamp_max_(M - 1);
  };
  const torch::Tensor total = ended[M - 1];

  torch::Tensor first_solved = torch::full({}, T, i64);
  if (threshold) {
    // After step t: c = episodes ended in this rollout so far, n = episodes in the window.
    const torch::Tensor c = ended.reshape({T, N}).select(1, N - 1);  // [T]
    const torch::Tensor n = (count_ + c).clamp_max_(W);              // [T]
    // Sum of the new episodes up to step t: prefix over slots through the step's last slot.
    const torch::Tensor steps_end = torch::arange(1, T + 1, i64) * N;  // [T]
    const torch::Tensor upto = new_before.index_select(0, steps_end);  // [T]
    // Minus the new episodes that fell out of the window (the first c - W of them).
    const torch::Tensor dropped_j = (c - W).clamp_min_(0);
    const torch::Tensor dropped =
        torch::where(dropped_j > 0, new_before.index_select(0, slot_of(dropped_j) + 1), zero);
    // Plus the newest W - c of the window's older episodes (right-aligned, oldest first).
    const torch::Tensor old_before =
        torch::cat({torch::zeros({1}, values_.options()), values_[0].cumsum(0)});  // [W + 1]
    const torch::Tensor kept_old = old_before[W] - old_before.index_select(0, c.clamp_max(W));
    const torch::Tensor mean = (upto - dropped + kept_old) / n.clamp_min(1).to(torch::kFloat64);
    const torch::Tensor solved = (n >= W).logical_and_(mean >= *threshold);
    first_solved = torch::where(solved, torch::arange(T, i64), torch::full({}, T, i64)).min();
  }

  // The new window: episode k = total - W + 1 + s for slot s (oldest first); k >= 1 comes from
  // this rollout, k <= 0 from the old window at W - 1 + k (invalid when below 0).
  const torch::Tensor k = total - W + 1 + torch::arange(W, i64);  // [W]
  const torch::Tensor from_new = slot_values.index_select(1, slot_of(k.clamp_min(1)));
  const torch::Tensor old_idx = (k + (W - 1)).clamp_(0, W - 1);
  const torch::Tensor from_old = values_.index_select(1, old_idx);
  values_ = torch::where(k >= 1, from_new, torch::where(k + (W - 1) >= 0, from_old, zero));
  count_ = (count_ + total).clamp_max_(W);
  return first_solved;
}

torch::Tensor EpisodeStats::mean_return() const {
  const torch::Tensor n = count_.to(torch::kFloat64);
  return values_[0].sum() / n;  // 0 / 0 = NaN before the first episode
}

torch::Tensor EpisodeStats::mean_length() const {
  return values_[1].sum() / count_.to(torch::kFloat64);
}

void EpisodeStats::load(const torch::Tensor& values, const torch::Tensor& count) {
  if (values.dim() != 2 || values.size(0) != 2)
    throw std::invalid_argument("episode statistics: expected values of shape [2, W]");
  window_ = values.size(1);
  values_ = values.to(values_.defined() ? values_.device() : values.device(), torch::kFloat64);
  count_ = count.to(values_.device(), torch::kLong).reshape({});
}

}  // namespace myriad::learner
