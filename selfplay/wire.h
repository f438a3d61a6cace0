// The self-play messages carried in the transport's data frames (server/frame.h): Weights
// (learner -> actor), Chunk and MatchResult (actor -> learner). A payload is a sequence of
// little-endian fields: u32 format tag, then the message's fields; a tensor is its dtype
// (u8: 0 float32, 1 int64, 2 uint8), its rank (u8), its sizes (i64 each) and its raw bytes.
// Decoding checks every length against the payload and throws std::invalid_argument on a
// malformed message (the connection sent garbage: the caller drops it).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace myriad::selfplay {

inline constexpr uint32_t kWeightsTag = 0x57594d31;  // "1MYW"
inline constexpr uint32_t kChunkTag = 0x43594d31;    // "1MYC"
inline constexpr uint32_t kResultTag = 0x52594d31;   // "1MYR"

// The learner's policy and the opponent an actor plays next, with the config they run under.
struct WeightsMsg {
  int64_t version = 0;      // the learner's policy version (PPO updates so far)
  int64_t opponent_id = 0;  // the pool snapshot the opponent is
  int64_t grant = 0;        // chunks more the actor may send (flow control)
  std::string config_yaml;  // the server's resolved config (the actor builds env and nets from it)
  torch::Tensor learner;    // [P] float32, flat parameters in ActorCritic::parameters() order
  torch::Tensor opponent;   // [P] float32
};

// T steps of B envs of the learning side, collected with policy `version` against `opponent_id`.
struct ChunkMsg {
  int64_t version = 0, opponent_id = 0;
  torch::Tensor obs;         // [T, B, D] float32  the policy's input
  torch::Tensor actions;     // [T, B] int64 or [T, B, K] float32
  torch::Tensor logprobs;    // [T, B] float32  behaviour log-probabilities
  torch::Tensor rewards;     // [T, B] float32
  torch::Tensor terminated;  // [T, B] uint8
  torch::Tensor truncated;   // [T, B] uint8
  torch::Tensor final_obs;   // [T, B, D] float32  an episode's last obs where it ended
  torch::Tensor next_obs;    // [B, D] float32     the input after step T-1
  int64_t steps() const { return obs.size(0) * obs.size(1); }
};

// Episodes finished in one chunk, from the learning side's point of view.
struct MatchResultMsg {
  int64_t version = 0, opponent_id = 0;
  int64_t wins = 0, losses = 0, draws = 0;
};

std::string encode(const WeightsMsg& m);
std::string encode(const ChunkMsg& m);
std::string encode(const MatchResultMsg& m);
WeightsMsg decode_weights(const std::string& payload);
ChunkMsg decode_chunk(const std::string& payload);
MatchResultMsg decode_result(const std::string& payload);

}  // namespace myriad::selfplay
