// learner::Trainer: PPO over a BatchEnv, everything on the env's device. One update is a
// rollout of ppo.num_steps batched steps followed by ppo.update_epochs epochs of minibatch SGD.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "learner/collect.h"
#include "learner/config.h"
#include "learner/episode_stats.h"
#include "learner/normalizer.h"
#include "learner/optimizer.h"
#include "learner/policy.h"
#include "learner/rollout.h"
#include "learner/run_logger.h"
#include "learner/schedule.h"
#include "myriad/batch_env.h"

namespace myriad::learner {

// Training statistics and solved detection use the last 100 finished episodes (Gymnasium's
// convention for reward_threshold); evaluation envs are seeded apart from the training envs.
constexpr int64_t kEpisodeWindow = 100;
constexpr uint64_t kEvalSeedOffset = 1000003;

struct EvalResult {
  double return_mean = 0, return_std = 0, length_mean = 0;
  int64_t episodes = 0;
};

// One update's figures, read from the device once at its end.
struct UpdateStats {
  double pg_loss = 0, v_loss = 0, entropy = 0, approx_kl = 0, clipfrac = 0, lr = 0;
  double episode_return = NAN, episode_length = NAN;  // means over the last 100 episodes
  // Host wall seconds of the parts (on CUDA: time to launch, until the read at the end waits).
  double collect_seconds = 0, advantages_seconds = 0, ppo_seconds = 0, read_seconds = 0;
};

// A training update whose losses or parameters became NaN or infinite; names the update.
class NonFiniteTraining : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TrainSummary {
  int64_t env_steps = 0, updates = 0, diverged = 0;
  double wall_seconds = 0;
  std::optional<double> solved_seconds;
  EvalResult eval;
  std::string run_dir, checkpoint;
  std::string replay;  // eval.replay when eval.record
};

// A trained policy with what it needs to act: its config, network and observation statistics.
struct LoadedPolicy {
  TrainConfig config;
  EnvSpec spec;  // of the configured env (for MJCF-v0, of its model)
  ActorCritic policy{nullptr};
  RunningMeanStd obs_rms;
  RunningMeanStd ret_rms;  // the reward scale (used when config.ppo.normalize_reward)
  torch::Tensor act(const torch::Tensor& obs);  // deterministic, clipped to the action space
  // The critic's estimate V(obs) [B], in the env's reward units (undoing reward scaling).
  torch::Tensor value(const torch::Tensor& obs);

 private:
  torch::Tensor network_input(const torch::Tensor& obs) const;
};
LoadedPolicy load_policy(const std::string& checkpoint, const std::string& device = "");

// The spec of the env a config describes (MJCF-v0's spaces come from its model file).
EnvSpec configured_spec(const TrainConfig& config);

// Throws std::invalid_argument when env.id names an env this learner cannot train: a
// multi-agent env (multi-agent PPO is not implemented yet). Checked before a run dir is claimed.
void check_trainable(const TrainConfig& config);

// While alive, LibTorch runs on the config's run.learner_threads (its OpenMP pool would
// otherwise spin against the env's on the same cores); the previous count comes back after.
class LearnerThreads {
 public:
  explicit LearnerThreads(const TrainConfig& config);
  ~LearnerThreads();

 private:
  int previous_;
};

// Runs K episodes (one per env, K envs in parallel) with deterministic actions.
EvalResult evaluate(LoadedPolicy& policy, int64_t episodes, uint64_t seed);

// PPO in named parts, one update at a time (CleanRL's ppo.py, in files):
//   schedule   (env steps)                 => learning rate         learner/schedule.h
//   collect    (policy, env)               => rollout [T, N]        learner/collect.h
//   advantages (rollout, critic)           => advantages, returns   learner/advantages.h
//   statistics (rollout)                   => obs/return normalizers, episode window, solved
//   ppo        (rollout)                   => policy, optimizer     learner/ppo.h
//   read       (device metrics)            => UpdateStats           one host read per update
class Trainer {
 public:
  // run_dir: where config.yaml, metrics.csv, events, checkpoints/ and summary.json go
  // ("" writes nothing, for tests). Resumes from config.run.resume when set.
  Trainer(TrainConfig config, std::string run_dir);
  ~Trainer();

  TrainSummary train();  // to run.total_env_steps (or until solved, when asked)
  UpdateStats update();  // one rollout and PPO update
  bool finished() const;

  void save_checkpoint(const std::string& path) const;
  void load_checkpoint(const std::string& path);
  LoadedPolicy snapshot() const;  // the current policy as load_policy would return it

  // The network being trained. Its parameters are views into the optimizer's flat buffer: do not
  // move (->to) or load (->load) it from outside, or Adam would update a buffer nobody reads;
  // resume through load_checkpoint, copy weights out through snapshot().
  ActorCritic& policy() { return policy_; }
  int64_t env_steps() const { return env_steps_; }
  int64_t updates() const { return updates_; }

 private:
  double seconds() const;  // wall seconds of the run, earlier sessions included
  // Throws NonFiniteTraining when the update's losses or (params_finite false) parameters are
  // NaN or infinite.
  void check_finite(const UpdateStats& s, bool params_finite) const;

  TrainConfig cfg_;
  std::string run_dir_;
  std::unique_ptr<BatchEnv> env_;
  torch::Device device_{torch::kCPU};
  ActorCritic policy_{nullptr};
  FlatAdam optimizer_;
  LrSchedule schedule_ = LrSchedule::kLinear;
  RunningMeanStd obs_rms_, ret_rms_;
  torch::Tensor discounted_return_;  // [N] for reward scaling
  ActionAdapter to_env_;
  at::Generator gen_;  // action sampling and minibatch shuffling, on the env's device
  Rollout rollout_;
  EpisodeStats episodes_;
  int64_t env_steps_ = 0, updates_ = 0;
  double elapsed_before_ = 0;  // wall seconds of earlier sessions (resume)
  std::optional<double> solved_seconds_;
  UpdateStats last_;
  std::chrono::steady_clock::time_point start_;
  std::unique_ptr<RunLogger> logs_;
};

}  // namespace myriad::learner
