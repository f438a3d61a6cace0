// A head-to-head check of the Elo table: the learner's policy against one snapshot, played
// outside training (one episode per env, sampled actions as in training, the learner on the env's
// first team).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>

#include "learner/config.h"

namespace myriad::selfplay {

struct MatchTally {
  int64_t wins = 0, draws = 0, losses = 0;  // the learner's
  bool cancelled = false;  // `cancel` said stop before every episode ended (the counts are partial)
  double score() const {
    const int64_t n = wins + draws + losses;
    return n ? (static_cast<double>(wins) + 0.5 * static_cast<double>(draws)) / n : NAN;
  }
};

// `episodes` episodes (one per env, on the CPU) of `learner` [P] against `opponent` [P] (flat
// parameters of config's network) seeded by `seed`. `cancel`, when given, is asked before every
// step; true ends the match there.
MatchTally play_match(const learner::TrainConfig& config, const torch::Tensor& learner,
                      const torch::Tensor& opponent, int64_t episodes, uint64_t seed,
                      const std::function<bool()>& cancel = {});

}  // namespace myriad::selfplay
