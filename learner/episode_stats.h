// Episode statistics on the device: the returns and lengths of the last `window` finished
// training episodes, and solved detection (the first step at which their mean return reaches
// the env's threshold). Updated once per rollout from its [T, N] flags, in step order, so the
// answer is exactly what a per-step deque would give, without a host read per step.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>

namespace myriad::learner {

class EpisodeStats {
 public:
  EpisodeStats() = default;
  EpisodeStats(int64_t window, torch::Device device);

  // done [T, N] bool/float; returns [T, N] float; lengths [T, N] int (valid where done).
  // Adds the episodes that ended, ordered by step then env. Returns [] int64: the first step t
  // after which `window` episodes had finished and the mean return of the last `window` reached
  // threshold, or T when none did (or no threshold).
  torch::Tensor add(const torch::Tensor& done, const torch::Tensor& returns,
                    const torch::Tensor& lengths, std::optional<double> threshold);

  // [] float64 means over the window's episodes (NaN when none finished yet).
  torch::Tensor mean_return() const;
  torch::Tensor mean_length() const;
  torch::Tensor count() const { return count_; }  // [] int64, at most window
  int64_t window() const { return window_; }

  // The window's returns and lengths [2, W] (oldest first; the newest count() are valid), and
  // the count, for checkpoints.
  torch::Tensor values() const { return values_; }
  void load(const torch::Tensor& values, const torch::Tensor& count);

 private:
  int64_t window_ = 100;
  torch::Tensor values_;  // [2, W] float64: returns, lengths; right-aligned, oldest first
  torch::Tensor count_;   // [] int64
};

}  // namespace myriad::learner
