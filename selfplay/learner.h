// The self-play learner: the learning side's policy (the env's first team), its optimizer, the
// opponent pool with Elo (league.h), and PPO over chunks that actors collected. The PPO math is
// learner/ppo.h's and learner/advantages.h's, unchanged: values are recomputed by the current
// critic, the ratio is taken against the chunk's behaviour log-probabilities.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "learner/config.h"
#include "learner/optimizer.h"
#include "learner/policy.h"
#include "learner/teams.h"
#include "myriad/env_spec.h"
#include "selfplay/league.h"
#include "selfplay/wire.h"

namespace myriad::selfplay {

// The policy network of a team under `config` (the same as `myriad train` builds).
learner::ActorCritic make_team_policy(const learner::TrainConfig& config, const EnvSpec& spec,
                                      const learner::Team& team);
// Parameters as one flat float32 [P] tensor on the host, in parameters() order, and back.
torch::Tensor flat_parameters(learner::ActorCritic& policy);
void load_flat_parameters(learner::ActorCritic& policy, const torch::Tensor& flat);

// Throws std::invalid_argument naming the key when `config` cannot run self-play: the env needs
// two or more teams whose policies take the same input (a symmetric game such as Sumo-v0), no
// random teams, and no observation/reward normalization (not carried to actors yet).
void check_selfplay(const learner::TrainConfig& config);

// An update whose losses or parameters went non-finite; the learner is as before it.
class NonFiniteUpdate : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The figures of one update.
struct UpdateFigures {
  int64_t chunks = 0, env_steps = 0;
  double pg_loss = 0, v_loss = 0, entropy = 0, approx_kl = 0, clipfrac = 0, lr = 0;
};

class SelfPlayLearner {
 public:
  // A fresh learner (version 0, pool holding snapshot 0 of the initial policy); CPU only.
  explicit SelfPlayLearner(learner::TrainConfig config);

  const learner::TrainConfig& config() const { return cfg_; }
  const std::string& config_yaml() const { return config_yaml_; }
  int64_t version() const { return version_; }
  int64_t env_steps() const { return env_steps_; }

  // One PPO update over `chunks` (the same T; their envs side by side). Version + 1, then a
  // snapshot into the pool every serve.snapshot_every versions. Throws std::invalid_argument
  // (chunks of different lengths, fewer transitions than ppo.num_minibatches) before changing
  // anything, and NonFiniteUpdate after putting policy, optimizer and generator back.
  UpdateFigures update(const std::vector<ChunkMsg>& chunks);

  // The Weights an actor gets: the current policy and a sampled opponent.
  WeightsMsg weights(std::mt19937_64& rng) const;
  const torch::Tensor& snapshot_parameters(int64_t id) const;

  League& league() { return league_; }
  const League& league() const { return league_; }

  // Policy, optimizer, version, env steps, shuffling generator, pool (parameters and Elo), so
  // the next update after load() is the one save() would have seen: save_archive_atomically.
  void save(const std::string& path) const;
  // Loads a file save() wrote; its config replaces ours (overrides of serve.* kept).
  void load(const std::string& path);

 private:
  learner::TrainConfig cfg_;
  std::string config_yaml_;
  EnvSpec spec_;
  learner::Team team_;
  learner::ActorCritic policy_{nullptr};
  learner::FlatAdam optimizer_;
  bool cpu_kernels_ = false;  // PPO by learner/ppo_cpu.h (run.learner_math)
  at::Generator gen_;
  League league_;
  std::map<int64_t, torch::Tensor> snapshots_;  // id -> flat parameters
  int64_t version_ = 0, env_steps_ = 0;
};

}  // namespace myriad::selfplay
