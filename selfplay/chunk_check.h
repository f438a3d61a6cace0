// What the server accepts from an actor: every Chunk is checked against the league's spec before
// the learner sees it. An authenticated actor is trusted to be who it says, not to be right (a
// bug, a wrong build or another env config is the usual failure), so a chunk is judged on its own.
#pragma once

#include <cstdint>
#include <string>

#include "learner/config.h"
#include "myriad/spaces.h"
#include "selfplay/wire.h"

namespace myriad::selfplay {

// The shape and ranges a chunk must have, from the server's config.
struct ChunkSpec {
  int64_t steps = 0;         // T: ppo.num_steps, the server's chunk length
  int64_t obs_width = 0;     // D: the learning team's policy input width
  int64_t rows_per_env = 1;  // the team's agents: B is a multiple of it
  Space action_space;        // Discrete(n): int64 [T, B] in 0..n-1; Box: float32 [T, B, K]
};
ChunkSpec chunk_spec(const learner::TrainConfig& config);

// A discrete action's log-probability is log p <= 0; rounding in log_softmax stays far below
// this tolerance. A continuous action's log-density may be positive (a narrow Gaussian), so it
// is only required finite.
inline constexpr double kLogProbTolerance = 1e-4;
// |reward| past this is refused: its square (the value loss) and its sum over a chunk must stay
// inside float32 (3.4e38), and no env of this project comes near it.
inline constexpr double kMaxAbsReward = 1e9;

// "" when `chunk` may be trained on; otherwise the first field that is wrong and why, e.g.
// "actions: 99 outside Discrete(5)". Shapes are checked before values, and values only on
// tensors of the right shape and dtype, so this never throws on any decoded chunk.
std::string check_chunk(const ChunkMsg& chunk, const ChunkSpec& spec);

// "" when a MatchResult's counts are possible (each >= 0, their sum at most `max_games`).
std::string check_result(const MatchResultMsg& result, int64_t max_games);

}  // namespace myriad::selfplay
