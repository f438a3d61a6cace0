// Recording evaluation episodes into a replay (docs/replay-format.md): the deterministic policy
// drives M envs until each has finished K episodes; every frame keeps the body poses, the
// reward, the critic's value, the action, the episode boundaries and the env's plotted series.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "learner/trainer.h"
#include "myriad/replay.h"

namespace myriad::learner {

struct RecordOptions {
  int64_t envs = 4;      // M, recorded side by side (the policy version makes its own env)
  int64_t episodes = 1;  // K per env
  uint64_t seed = 12345;
  std::string checkpoint;      // named in the header
  nlohmann::json env_options;  // named in the header
  std::vector<bool> learns;    // multi-agent: which teams learned (empty: not a trained policy)
};

// What drives a recording: actions for observations [M, obs...] (on the env's device, as
// BatchEnv::step takes them) and, optionally, value estimates [M] (NaN in the file without).
struct Driver {
  std::function<torch::Tensor(const torch::Tensor&)> act;
  std::function<torch::Tensor(const torch::Tensor&)> value;
};

struct Recording {
  replay::Replay replay;
  // Over the M * K recorded episodes, as evaluate() gives them (multi-agent envs: per team).
  EvalResult eval;
};

// Resets env with options.seed and records K episodes in each of its num_envs envs.
Recording record_episodes(BatchEnv& env, const Driver& driver, const RecordOptions& options);

// A trained policy on options.envs fresh envs of its config (deterministic actions).
Recording record_episodes(LoadedPolicy& policy, const RecordOptions& options);

// Records and writes the file; returns the episodes' statistics.
EvalResult record_to_file(LoadedPolicy& policy, const RecordOptions& options,
                          const std::string& path);

}  // namespace myriad::learner
