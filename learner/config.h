// Training configuration: typed, defaulted, grouped (env, ppo, run) and validated when built.
// Every field is declared once, in config.cc's field table, which
// drives YAML parsing, key=value overrides, validation messages and the resolved-config dump.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace myriad::learner {

struct EnvConfig {
  std::string id = "CartPole-v1";
  int64_t num_envs = 64;
  std::string device = "auto";            // cpu, cuda or auto
  std::map<std::string, double> options;  // env options, e.g. max_episode_steps
  // env options given as text: [low, high] ranges (as "low,high") and strings, e.g. the
  // locomotion envs' healthy_z_range; env.options in YAML holds both kinds.
  std::map<std::string, std::string> text_options;
  std::string xml;                 // MJCF-v0: the model file
  std::string physics = "myriad";  // MJCF-v0 and the physics envs: myriad or mujoco
  // per-env model parameters drawn per seed: term name -> {field, names, axes, range,
  // distribution, operation, shared} (docs/own-env.md); kept as JSON text, "" for none
  std::string randomize;
};

struct PpoConfig {
  int64_t num_steps = 128;  // rollout length T per update
  double learning_rate = 3e-4;
  std::string lr_schedule = "linear";  // constant, linear (to 0) or kl_adaptive
  double target_kl = 0.01;             // kl_adaptive: keeps the epoch's KL near this
  double gamma = 0.99;
  double gae_lambda = 0.95;
  int64_t num_minibatches = 4;
  int64_t update_epochs = 4;
  double clip_coef = 0.2;
  bool clip_vloss = true;
  double ent_coef = 0.0;
  double vf_coef = 0.5;
  double max_grad_norm = 0.5;
  bool norm_adv = true;
  bool normalize_obs = true;
  bool normalize_reward = false;
  double obs_clip = 10.0;
  double reward_clip = 10.0;  // normalize_reward: scaled rewards clipped to +-reward_clip
  std::vector<int64_t> hidden_sizes = {64, 64};
  std::string activation = "tanh";  // tanh, relu or elu
  double init_log_std = 0.0;        // continuous actions: initial log standard deviation
};

struct RunConfig {
  int64_t total_env_steps = 500000;
  double max_minutes = 0;              // wall-clock budget, resumes included (0: none)
  bool random_episode_starts = false;  // first episodes start at a random step (rsl_rl's)
  uint64_t seed = 1;
  int threads = 0;          // OpenMP threads stepping CPU envs (0: all cores)
  int learner_threads = 1;  // LibTorch intra-op threads (0: LibTorch's default)
  // How the PPO update computes: fused (Myriad's own CPU loops, learner/ppo_cpu.h), libtorch
  // (LibTorch ops and autograd), auto (fused for a CPU float32 policy on one learner thread).
  std::string learner_math = "auto";
  int64_t eval_episodes = 100;
  int64_t checkpoint_every = 10;  // updates between checkpoints (0: only at the end)
  double log_every_seconds = 1.0;
  bool stop_when_solved = false;  // stop once the last 100 episodes reach the threshold
  std::string resume;             // checkpoint to continue from ("" : fresh run)
};

// Replays of evaluation episodes written at the end of training (docs/replay-format.md).
struct EvalConfig {
  bool record = false;          // write <run dir>/eval.replay
  int64_t record_envs = 4;      // envs recorded side by side
  int64_t record_episodes = 1;  // episodes per env
};

// Multi-agent envs (learner/teams.h): one policy per team, its parameters shared by the team's
// agents. Ignored by single-agent envs (a random_teams entry there is an error).
struct AgentsConfig {
  bool agent_id = true;                   // one-hot agent index (within its team) in the input
  bool central_value = false;             // the critic also sees every agent's observation
  std::vector<std::string> random_teams;  // teams that act uniformly at random, not trained
};

// Data-parallel training (learner/distributed.h): ranks come from torchrun's or SLURM's
// variables. A recipe means the same at every world size: env.num_envs is the job's env count,
// split evenly over the ranks; ppo.num_minibatches is the minibatches per epoch of the job's
// batch (each rank takes its share of every minibatch); run.total_env_steps is the job's total.
struct DistributedConfig {
  double timeout_seconds = 60;  // a collective waiting longer fails the job (a rank died)
};

// The self-play server (`myriad serve`, selfplay/): the learner trains the env's first team on
// chunks streamed by actors, against opponents drawn from a pool of its frozen snapshots.
struct ServeConfig {
  std::string host = "127.0.0.1";       // where `myriad serve` listens (0.0.0.0: every interface)
  int64_t port = 7777;                  // 0: an ephemeral port (printed at start)
  int64_t num_envs = 0;                 // envs per actor (0: env.num_envs)
  int64_t chunks_per_update = 2;        // chunks of ppo.num_steps x envs per PPO update
  int64_t max_lag = 2;                  // chunks older than this many policy versions are dropped
  int64_t snapshot_every = 5;           // updates between snapshots into the opponent pool
  int64_t max_snapshots = 0;            // pool cap: past it the oldest but the first goes (0: none)
  std::string opponents = "pfsp";       // latest, uniform (over the pool) or pfsp
  std::string pfsp_weighting = "hard";  // hard: (1 - x)^p; variance: x (1 - x); x: win rate
  double pfsp_p = 2.0;                  // the exponent of the hard weighting
  double elo_k = 32.0;                  // Elo K-factor, per match (the games one chunk finished)
  double elo_initial = 1000.0;          // rating of the first policy
};

struct TrainConfig {
  EnvConfig env;
  PpoConfig ppo;
  AgentsConfig agents;
  DistributedConfig distributed;
  RunConfig run;
  EvalConfig eval;
  ServeConfig serve;
};

// Builds a config from YAML text plus "key.path=value" overrides. Unknown keys, wrong types and
// invalid values throw std::invalid_argument naming the key path (e.g. "ppo.learning_rate").
TrainConfig parse_config(const std::string& yaml_text, const std::vector<std::string>& overrides);
TrainConfig load_config(const std::string& path, const std::vector<std::string>& overrides);

// The env's text options from the config: xml and physics for MJCF-v0, physics for the physics
// envs (envs/locomotion/), none otherwise.
std::map<std::string, std::string> env_text_options(const EnvConfig& env);

// The resolved config as YAML (every key, defaults included).
std::string to_yaml(const TrainConfig& config);

// The resolved config as (key path, value) pairs, one per field in the field table's order
// (deterministic), each value written as one line of flow YAML ("[64, 64]", "0.002", "{}").
std::vector<std::pair<std::string, std::string>> settings(const TrainConfig& config);

}  // namespace myriad::learner
