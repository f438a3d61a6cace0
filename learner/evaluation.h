// Evaluation: deterministic episodes of a loaded policy, and the figures they give (returns,
// lengths; per team and win rates for multi-agent envs).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "learner/config.h"
#include "learner/loaded_policy.h"
#include "myriad/env_spec.h"

namespace myriad::learner {

// A team's evaluation in a multi-agent env: the mean over its agents of their episode returns.
struct TeamEval {
  std::string name;
  bool learns = true;
  double return_mean = 0, return_std = 0;
  double win_rate = NAN;  // envs that decide winners: the fraction of episodes it won
};

struct EvalResult {
  // The env's return (multi-agent: the first learning team's, per agent).
  double return_mean = 0, return_std = 0, length_mean = 0;
  int64_t episodes = 0;
  std::vector<TeamEval> teams;  // multi-agent envs only, in team order
  double draw_rate = NAN;       // envs that decide winners
  // The env's error_* info keys (a task's command-tracking errors), each's mean per step over
  // the evaluated episodes.
  std::map<std::string, double> errors;
  // The env's reward_* info keys (its reward terms), each's sum over an episode, the mean over
  // the evaluated episodes (the legged tasks' terms add up to return_mean). A step cut as
  // diverged adds to neither these nor the errors.
  std::map<std::string, double> reward_terms;
  // Envs with error_* or reward_* keys: the evaluated episodes that a diverged step ended.
  int64_t diverged = 0;
};

// Mean and (population) standard deviation; (0, 0) for none.
std::pair<double, double> mean_and_std(const std::vector<double>& xs);

// An evaluation's returns from its E episodes' per-agent returns (returns[e * A + k]): the env's
// return; for multi-agent envs every team's (the mean over its agents), its win rate from
// winners [E] (envs that decide winners; -1 a draw) and the draw rate, with return_mean and
// return_std those of the first team that learns (learns [teams]; empty: every team).
void set_returns(EvalResult& r, const EnvSpec& spec, const std::vector<double>& returns,
                 const std::vector<int>& winners, const std::vector<bool>& learns);

// While alive, LibTorch runs on the config's run.learner_threads (its OpenMP pool would
// otherwise spin against the env's on the same cores); the previous count comes back after.
class LearnerThreads {
 public:
  explicit LearnerThreads(const TrainConfig& config);
  ~LearnerThreads();

 private:
  int previous_;
};

// The env as evaluation and replays run it: an env with a play mode (the legged tasks' option
// play: mjlab's play_env_cfg, no actor noise and no push) in that mode, unless the config sets
// play itself (myriad eval --train-conditions sets it to 0).
EnvConfig eval_env_config(const EnvConfig& env);

// Whether the env has a play mode (the option play).
bool has_play_mode(const std::string& env_id);

// Runs K episodes (one per env, K envs in parallel) with deterministic actions (a team that acts
// at random, at random); multi-agent envs report every team's return and win rate.
EvalResult evaluate(LoadedPolicy& policy, int64_t episodes, uint64_t seed);

}  // namespace myriad::learner
