// Actor-critic MLPs: a categorical head for Discrete actions, a diagonal Gaussian with a
// state-independent log-std for Box actions; orthogonal init as in CleanRL's PPO. The critic
// reads the whole input row; the actor its first actor_dim columns (all by default), so a
// centralised critic can see more than the actor (learner/teams.h).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "myriad/spaces.h"

namespace myriad::learner {

struct PolicyOutput {
  torch::Tensor action;    // [B] int64 (Discrete) or [B, A] float (Box), before clipping
  torch::Tensor log_prob;  // [B]
  torch::Tensor entropy;   // [B]
  torch::Tensor value;     // [B]
};

class ActorCriticImpl : public torch::nn::Module {
 public:
  ActorCriticImpl(int64_t obs_dim, const Space& action_space, const std::vector<int64_t>& hidden,
                  const std::string& activation, double init_log_std, int64_t actor_dim = -1);

  torch::Tensor value(const torch::Tensor& obs);
  // Samples an action (or evaluates `action` when given) and returns its log-prob and entropy.
  // Random draws use `gen` (a generator of obs's device) or the device's default generator.
  PolicyOutput act(const torch::Tensor& obs, const torch::Tensor& action = {},
                   torch::Generator* gen = nullptr);
  // The rollout's act: samples an action with its log-prob and value (entropy left undefined).
  PolicyOutput sample(const torch::Tensor& obs, torch::Generator* gen);
  // Deterministic action: argmax for Discrete, the mean for Box.
  torch::Tensor deterministic_action(const torch::Tensor& obs);

  bool discrete() const { return discrete_; }
  // The pieces learner/ppo_cpu.h computes with: each MLP's Linear layers in order, the hidden
  // activation ("tanh", "relu" or "elu"), the actor's input width and the Gaussian's log-std ([1,
  // A]).
  const std::vector<torch::nn::Linear>& actor_layers() const { return actor_layers_; }
  const std::vector<torch::nn::Linear>& critic_layers() const { return critic_layers_; }
  const std::string& activation() const { return activation_; }
  int64_t actor_dim() const { return actor_dim_; }
  const torch::Tensor& log_std() const { return log_std_; }

 private:
  torch::Tensor actor_input(const torch::Tensor& obs) const;

  bool discrete_;
  int64_t actor_dim_;
  std::string activation_;
  torch::nn::Sequential actor_{nullptr}, critic_{nullptr};
  std::vector<torch::nn::Linear> actor_layers_, critic_layers_;
  torch::Tensor log_std_;
};
TORCH_MODULE(ActorCritic);

}  // namespace myriad::learner
