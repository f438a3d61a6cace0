// Rollout storage: one update's transitions as [T, N, ...] tensors on the env's device,
// allocated once and overwritten every update (CleanRL's `obs, actions, logprobs, rewards,
// dones, values`, plus what bootstrapping and episode statistics need).
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "myriad/spaces.h"

namespace myriad::learner {

struct Rollout {
  Rollout() = default;
  Rollout(int64_t num_steps, int64_t num_envs, int64_t obs_dim, const Space& action_space,
          torch::Device device, bool winners = false);

  int64_t T = 0, N = 0;
  // Filled by collect_rollout, step by step:
  torch::Tensor obs;              // [T, N, D] float32  the policy's input (normalized obs)
  torch::Tensor raw_obs;          // [T, N, D] float32  the env's obs (normalizer statistics)
  torch::Tensor actions;          // [T, N] int64 or [T, N, A] float32 (sampled, before clipping)
  torch::Tensor logprobs;         // [T, N] float32     behaviour log-probabilities
  torch::Tensor values;           // [T, N] float32     V(obs)
  torch::Tensor rewards;          // [T, N] float32     env rewards (scaled by compute_returns)
  torch::Tensor terminated;       // [T, N] bool
  torch::Tensor truncated;        // [T, N] bool
  torch::Tensor final_obs;        // [T, N, D] float32  last obs of an episode, where it ended
  torch::Tensor episode_returns;  // [T, N] float32     finished episode's return, where it ended
  torch::Tensor episode_lengths;  // [T, N] int32
  torch::Tensor next_obs;         // [N, D] float32     the policy's input after step T-1
  torch::Tensor winner;           // [T, N] int32       winning team where an episode ended, -1 a
                                  //                    draw (only for envs that decide winners)
  // Filled by compute_returns:
  torch::Tensor dones;       // [T, N] float32  1 where the episode ended at step t
  torch::Tensor advantages;  // [T, N] float32  GAE
  torch::Tensor returns;     // [T, N] float32  advantages + values (the critic's target)
  // [T + 1] wall-clock seconds of the run when step t was issued (t = T: collection done); on
  // CUDA the launch time, which leads the device by at most one update.
  std::vector<double> step_seconds;

  // Row t of a [T, ...] buffer, as views made once (one dispatch per copy in the hot loop).
  struct Step {
    torch::Tensor obs, raw_obs, actions, logprobs, values, rewards, terminated, truncated,
        final_obs, episode_returns, episode_lengths, winner;
  };
  std::vector<Step> step;
};

}  // namespace myriad::learner
