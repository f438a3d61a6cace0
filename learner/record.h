// Recording evaluation episodes into a replay (docs/replay-format.md): the deterministic policy
// drives M envs until each has finished K episodes; every frame keeps the body poses, the
// reward, the critic's value, the action and the episode boundaries.
#pragma once

#include <string>

#include "learner/trainer.h"
#include "myriad/replay.h"

namespace myriad::learner {

struct RecordOptions {
  int64_t envs = 4;      // M, recorded side by side
  int64_t episodes = 1;  // K per env
  uint64_t seed = 12345;
  std::string checkpoint;  // named in the header
};

struct Recording {
  replay::Replay replay;
  EvalResult eval;  // over the M * K recorded episodes
};

Recording record_episodes(LoadedPolicy& policy, const RecordOptions& options);

// Records and writes the file; returns the episodes' statistics.
EvalResult record_to_file(LoadedPolicy& policy, const RecordOptions& options,
                          const std::string& path);

}  // namespace myriad::learner
