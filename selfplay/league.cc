#include "selfplay/league.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace myriad::selfplay {

double elo_expected(double a, double b) { return 1.0 / (1.0 + std::pow(10.0, (b - a) / 400.0)); }

Sampler sampler_from_name(const std::string& name) {
  if (name == "latest") return Sampler::kLatest;
  if (name == "uniform") return Sampler::kUniform;
  if (name == "pfsp") return Sampler::kPfsp;
  throw std::invalid_argument("unknown opponent sampler '" + name +
                              "' (valid: latest, uniform, pfsp)");
}

PfspWeighting pfsp_weighting_from_name(const std::string& name) {
  if (name == "hard") return PfspWeighting::kHard;
  if (name == "variance") return PfspWeighting::kVariance;
  throw std::invalid_argument("unknown PFSP weighting '" + name + "' (valid: hard, variance)");
}

League::League(LeagueOptions options) : options_(options), learner_rating_(options.elo_initial) {}

int64_t League::add_snapshot(int64_t version) {
  Snapshot s;
  s.id = next_id_++;
  s.version = version;
  s.rating = learner_rating_;
  pool_.push_back(s);
  return s.id;
}

bool League::remove(int64_t id) {
  auto it = std::find_if(pool_.begin(), pool_.end(), [&](const Snapshot& s) { return s.id == id; });
  if (it == pool_.end()) return false;
  pool_.erase(it);
  return true;
}

const Snapshot* League::find(int64_t id) const {
  for (const Snapshot& s : pool_)
    if (s.id == id) return &s;
  return nullptr;
}

bool League::record(int64_t opponent, int64_t wins, int64_t draws, int64_t losses) {
  auto it =
      std::find_if(pool_.begin(), pool_.end(), [&](const Snapshot& s) { return s.id == opponent; });
  const int64_t games = wins + draws + losses;
  if (it == pool_.end() || games <= 0 || wins < 0 || draws < 0 || losses < 0) return false;
  const double score =
      (static_cast<double>(wins) + 0.5 * static_cast<double>(draws)) / static_cast<double>(games);
  const double delta = options_.elo_k * (score - elo_expected(learner_rating_, it->rating));
  learner_rating_ += delta;
  it->rating -= delta;
  it->games += games;
  it->learner_score += score * static_cast<double>(games);
  return true;
}

std::vector<double> League::pfsp_weights() const {
  std::vector<double> w;
  for (const Snapshot& s : pool_) {
    const double x = s.learner_win_rate();
    w.push_back(options_.weighting == PfspWeighting::kHard ? std::pow(1.0 - x, options_.pfsp_p)
                                                           : x * (1.0 - x));
  }
  return w;
}

int64_t League::sample(std::mt19937_64& rng) const {
  if (pool_.empty()) return -1;
  if (options_.sampler == Sampler::kLatest) return pool_.back().id;
  if (options_.sampler == Sampler::kPfsp) {
    const std::vector<double> w = pfsp_weights();
    double total = 0;
    for (double x : w) total += x;
    if (total > 0) {
      std::discrete_distribution<size_t> pick(w.begin(), w.end());
      return pool_[pick(rng)].id;
    }
  }
  std::uniform_int_distribution<size_t> pick(0, pool_.size() - 1);
  return pool_[pick(rng)].id;
}

std::vector<double> League::state() const {
  std::vector<double> out{learner_rating_, static_cast<double>(next_id_),
                          static_cast<double>(pool_.size())};
  for (const Snapshot& s : pool_)
    out.insert(out.end(), {static_cast<double>(s.id), static_cast<double>(s.version), s.rating,
                           static_cast<double>(s.games), s.learner_score});
  return out;
}

void League::load_state(const std::vector<double>& st) {
  if (st.size() < 3 || st.size() != 3 + 5 * static_cast<size_t>(st[2]))
    throw std::invalid_argument("league state: malformed (" + std::to_string(st.size()) +
                                " numbers)");
  learner_rating_ = st[0];
  next_id_ = static_cast<int64_t>(st[1]);
  pool_.clear();
  for (size_t k = 3; k < st.size(); k += 5) {
    Snapshot s;
    s.id = static_cast<int64_t>(st[k]);
    s.version = static_cast<int64_t>(st[k + 1]);
    s.rating = st[k + 2];
    s.games = static_cast<int64_t>(st[k + 3]);
    s.learner_score = st[k + 4];
    pool_.push_back(s);
  }
}

}  // namespace myriad::selfplay
