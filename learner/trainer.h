// learner::Trainer: PPO over a BatchEnv, everything on the env's device. One update is a
// rollout of ppo.num_steps batched steps followed by ppo.update_epochs epochs of minibatch SGD.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "learner/collect.h"
#include "learner/config.h"
#include "learner/distributed.h"
#include "learner/episode_stats.h"
#include "learner/evaluation.h"
#include "learner/loaded_policy.h"
#include "learner/normalizer.h"
#include "learner/optimizer.h"
#include "learner/policy.h"
#include "learner/rollout.h"
#include "learner/run_logger.h"
#include "learner/schedule.h"
#include "learner/teams.h"
#include "myriad/batch_env.h"

namespace myriad::learner {

// Training statistics and solved detection use the last 100 finished episodes (Gymnasium's
// convention for reward_threshold); evaluation envs are seeded apart from the training envs.
constexpr int64_t kEpisodeWindow = 100;
constexpr uint64_t kEvalSeedOffset = 1000003;

// A PPO update's mean losses (learner/ppo.h), NaN for a team that does not learn.
struct PpoLosses {
  double pg_loss = NAN, v_loss = NAN, entropy = NAN, approx_kl = NAN, clipfrac = NAN;
};

// One team's figures of an update (multi-agent envs).
struct TeamStats : PpoLosses {
  std::string name;
  bool learns = true;
  double episode_return = NAN;  // per agent, over the last 100 agent-episodes
  double win_rate = NAN;        // over the last 100 episodes (envs that decide winners)
};

// One update's figures, read from the device once at its end.
// The losses are the env's (multi-agent: the first learning team's).
struct UpdateStats : PpoLosses {
  double lr = 0;
  double episode_return = NAN, episode_length = NAN;  // means over the last 100 episodes
  std::vector<TeamStats> teams;                       // multi-agent envs only
  double draw_rate = NAN;                             // envs that decide winners
  // The env's reward_* and error_* info keys, each's mean per env step over the update's rollout
  // (learner/collect.h: a task's reward terms, its tracking errors).
  std::map<std::string, double> env_info;
  // Host wall seconds of the parts (on CUDA: time to launch, until the read at the end waits).
  double collect_seconds = 0, advantages_seconds = 0, ppo_seconds = 0, read_seconds = 0;
  // Data-parallel jobs: this update's collectives (learner/distributed.h): calls, payload
  // bytes, host wall seconds waiting for them (-1 in a 1-process run).
  double comm_calls = -1, comm_bytes = -1, comm_seconds = -1;
};

// A training update whose losses or parameters became NaN or infinite; names the update.
class NonFiniteTraining : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TrainSummary {
  int64_t env_steps = 0, updates = 0, diverged = 0;  // env_steps: every rank's
  int world_size = 1;                                // ranks of a data-parallel job
  std::string ppo_math;  // how the PPO update computed: "fused" or "libtorch" (run.learner_math)
  std::string params_crc32c;  // of the trained parameters, checked equal on every rank
  double wall_seconds = 0;
  std::optional<double> solved_seconds;
  EvalResult eval;
  std::string run_dir, checkpoint;
  std::string replay;  // eval.replay when eval.record
};

// The spec of the env a config describes (MJCF-v0's spaces come from its model file).
EnvSpec configured_spec(const TrainConfig& config);

// Throws std::invalid_argument when the config cannot train its env (e.g. agents.random_teams
// names a team the env lacks). Checked before a run dir is claimed.
void check_trainable(const TrainConfig& config);

// The scalars an update logs to metrics.csv and TensorBoard: the plain CleanRL keys for one team
// (every single-agent env), "charts/<team>/episode_return", "losses/<team>/..." and, where the
// env decides winners, "charts/<team>/win_rate" and "charts/draw_rate" for several.
std::map<std::string, double> update_scalars(const UpdateStats& s, double steps_per_second,
                                             double wall_seconds);

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

  // Writes the checkpoint (rank 0). `other_ranks` holds ranks 1.. state from
  // gather_rank_states(), so that every rank of a data-parallel job resumes where it was.
  void save_checkpoint(const std::string& path,
                       const std::map<std::string, torch::Tensor>& other_ranks = {}) const;
  void load_checkpoint(const std::string& path);
  LoadedPolicy snapshot() const;  // the current policy as load_policy would return it

  // The network being trained (multi-agent: the first learning team's). Its parameters are views
  // into the optimizer's flat buffer: do not move (->to) or load (->load) it from outside, or
  // Adam would update a buffer nobody reads; resume through load_checkpoint, copy weights out
  // through snapshot().
  ActorCritic& policy() { return first_learner().policy; }
  int64_t env_steps() const { return env_steps_; }  // every rank's
  const RankInfo& rank() const { return rank_; }
  // CRC32C of every learning team's parameters, as 8 hex digits; in a data-parallel job it also
  // checks that every rank holds the same bits (throws std::runtime_error if not).
  std::string params_crc32c();
  int64_t updates() const { return updates_; }

 private:
  // One team's learner: a single-agent env has one, a multi-agent env one per team.
  struct TeamLearner {
    Team team;
    ActorCritic policy{nullptr};  // undefined when the team acts at random
    FlatAdam optimizer;
    bool cpu_kernels = false;  // PPO by learner/ppo_cpu.h (run.learner_math)
    RunningMeanStd obs_rms, ret_rms;
    torch::Tensor discounted_return;  // [N * a] for reward scaling
    ActionAdapter to_env;
    Rollout rollout;
    EpisodeStats episodes, wins;  // wins: envs that decide winners
  };
  TeamLearner& first_learner();
  const TeamLearner& first_learner() const;

  double seconds() const;  // wall seconds of the run, earlier sessions included
  // What differs between the ranks of a data-parallel job: the envs' rollout state, the sampling
  // generator, each team's discounted return and episode windows (keys as in the checkpoint).
  std::map<std::string, torch::Tensor> rank_state() const;
  void load_rank_state(const std::map<std::string, torch::Tensor>& state);
  // A collective (every rank, at the same update): rank 0 gets every other rank's rank_state()
  // as "rank<r>.<key>"; the others get nothing.
  std::map<std::string, torch::Tensor> gather_rank_states() const;
  // Every rank: gathers, then rank 0 writes the checkpoint.
  void checkpoint_job(const std::string& path) const;
  // Throws NonFiniteTraining when the update's losses or (params_finite false) parameters are
  // NaN or infinite.
  void check_finite(const UpdateStats& s, bool params_finite) const;

  TrainConfig cfg_;
  std::string run_dir_;
  RankInfo rank_;
  int64_t num_envs_ = 0;        // this rank's envs: env.num_envs / world size (rank_num_envs)
  std::unique_ptr<Comm> comm_;  // data-parallel jobs only
  bool checkpoints_ = false;    // rank 0 writes checkpoints (known to every rank)
  std::unique_ptr<BatchEnv> env_;
  torch::Device device_{torch::kCPU};
  std::vector<TeamLearner> teams_;
  LrSchedule schedule_ = LrSchedule::kLinear;
  at::Generator gen_;   // action sampling and minibatch shuffling, on the env's device
  EpisodeStats draws_;  // envs that decide winners: draws among the last 100 episodes
  int64_t env_steps_ = 0, updates_ = 0;
  double elapsed_before_ = 0;  // wall seconds of earlier sessions (resume)
  std::optional<double> solved_seconds_;
  UpdateStats last_;
  std::chrono::steady_clock::time_point start_;
  std::unique_ptr<RunLogger> logs_;
};

}  // namespace myriad::learner
