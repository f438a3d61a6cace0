// The opponent pool of self-play: frozen snapshots of the learning policy, Elo ratings updated
// from match results, and opponent sampling (latest, uniform, prioritized fictitious self-play).
// Plain C++ (no tensors): the learner keeps each snapshot's parameters next to it by id.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace myriad::selfplay {

// The expected score of a player rated `a` against one rated `b`: 1 / (1 + 10^((b - a) / 400)).
double elo_expected(double a, double b);

struct Snapshot {
  int64_t id = 0;       // 0, 1, 2, ... in the order taken
  int64_t version = 0;  // the learner's policy version when it was taken
  double rating = 0;    // Elo
  // Games the learner played against it, and the learner's score (win 1, draw 1/2) in them.
  int64_t games = 0;
  double learner_score = 0;
  // The learner's win rate against it for PFSP: (score + 1/2) / (games + 1), 1/2 when unplayed.
  double learner_win_rate() const { return (learner_score + 0.5) / (games + 1.0); }
};

enum class Sampler { kLatest, kUniform, kPfsp };
enum class PfspWeighting { kHard, kVariance };  // (1 - x)^p, x (1 - x)
Sampler sampler_from_name(const std::string& name);
PfspWeighting pfsp_weighting_from_name(const std::string& name);

struct LeagueOptions {
  Sampler sampler = Sampler::kPfsp;
  PfspWeighting weighting = PfspWeighting::kHard;
  double pfsp_p = 2.0;
  double elo_k = 16.0;
  double elo_initial = 1000.0;
};

class League {
 public:
  explicit League(LeagueOptions options = {});

  // A snapshot of the learner at `version`, rated as the learner is now. Returns its id.
  int64_t add_snapshot(int64_t version);
  // Removes snapshot `id` (its games stay counted in nobody's table). False if unknown.
  bool remove(int64_t id);
  // A match of the learner against snapshot `opponent`: the games one chunk finished. Its score
  // is the learner's mean (win 1, draw 1/2, loss 0); both ratings move by K (score - expected),
  // zero-sum. A match without games, or an unknown id, changes nothing (false).
  bool record(int64_t opponent, int64_t wins, int64_t draws, int64_t losses);

  // An opponent id by the sampler: the newest snapshot (latest), uniform over the pool, or PFSP:
  // weights f(x) of the learner's win rate x against each (hard: (1 - x)^p; variance: x (1 - x)),
  // uniform when every weight is 0. -1 when the pool is empty.
  int64_t sample(std::mt19937_64& rng) const;
  // The weights PFSP would draw with, per snapshot (for tests and logs).
  std::vector<double> pfsp_weights() const;

  const std::vector<Snapshot>& snapshots() const { return pool_; }
  const Snapshot* find(int64_t id) const;
  double learner_rating() const { return learner_rating_; }
  const LeagueOptions& options() const { return options_; }

  // For checkpoints: the whole state as numbers, and back.
  std::vector<double> state() const;
  void load_state(const std::vector<double>& state);

 private:
  LeagueOptions options_;
  std::vector<Snapshot> pool_;
  double learner_rating_;
  int64_t next_id_ = 0;
};

}  // namespace myriad::selfplay
