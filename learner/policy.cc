#include "learner/policy.h"

#include <cmath>
#include <cstdint>

#include "learner/activations.h"

namespace myriad::learner {
namespace {

torch::nn::Linear layer(int64_t in, int64_t out, double gain) {
  torch::nn::Linear l(in, out);
  torch::NoGradGuard no_grad;
  torch::nn::init::orthogonal_(l->weight, gain);
  torch::nn::init::zeros_(l->bias);
  return l;
}

torch::nn::Sequential mlp(int64_t in, const std::vector<int64_t>& hidden, int64_t out,
                          const std::string& activation, double out_gain,
                          std::vector<torch::nn::Linear>* layers) {
  torch::nn::Sequential net;
  for (int64_t h : hidden) {
    layers->push_back(layer(in, h, std::sqrt(2.0)));
    net->push_back(layers->back());
    if (activation == "relu") {
      net->push_back(torch::nn::ReLU());
    } else if (activation == "elu") {
      net->push_back(torch::nn::ELU());
    } else {
      net->push_back(FastTanh());
    }
    in = h;
  }
  layers->push_back(layer(in, out, out_gain));
  net->push_back(layers->back());
  return net;
}

// Standard normal noise shaped like `like`, drawn on its device (a CUDA mean gets CUDA noise).
torch::Tensor gaussian_noise(const torch::Tensor& like, torch::Generator* gen) {
  return at::normal(0.0, 1.0, like.sizes(), gen ? std::optional<at::Generator>(*gen) : std::nullopt,
                    like.options());
}

constexpr double kHalfLog2Pi = 0.9189385332046727;  // 0.5 * log(2 pi)

}  // namespace

ActorCriticImpl::ActorCriticImpl(int64_t obs_dim, const Space& action_space,
                                 const std::vector<int64_t>& hidden, const std::string& activation,
                                 double init_log_std, int64_t actor_dim)
    : discrete_(action_space.is_discrete()),
      actor_dim_(actor_dim < 0 ? obs_dim : actor_dim),
      activation_(activation) {
  const int64_t out = discrete_ ? action_space.n : action_space.flat_size();
  // An empty head would divide by its zero rows in the orthogonal init (SIGFPE); configs are
  // refused earlier (check_trainable), this guards any other caller.
  if (out < 1)
    throw std::invalid_argument("policy: the action space " + action_space.describe() +
                                " is empty: there is nothing to control");
  actor_ = register_module("actor", mlp(actor_dim_, hidden, out, activation, 0.01, &actor_layers_));
  critic_ = register_module("critic", mlp(obs_dim, hidden, 1, activation, 1.0, &critic_layers_));
  if (!discrete_) log_std_ = register_parameter("log_std", torch::full({1, out}, init_log_std));
}

torch::Tensor ActorCriticImpl::actor_input(const torch::Tensor& obs) const {
  return actor_dim_ == obs.size(-1) ? obs : obs.narrow(-1, 0, actor_dim_);
}

torch::Tensor ActorCriticImpl::value(const torch::Tensor& obs) {
  return critic_->forward(obs).squeeze(-1);
}

PolicyOutput ActorCriticImpl::act(const torch::Tensor& obs, const torch::Tensor& action,
                                  torch::Generator* gen) {
  PolicyOutput out;
  out.value = value(obs);
  const torch::Tensor head = actor_->forward(actor_input(obs));
  if (discrete_) {
    const torch::Tensor log_p = torch::log_softmax(head, -1);
    out.action = action.defined()
                     ? action
                     : torch::multinomial(log_p.exp(), 1, true,
                                          gen ? std::optional<at::Generator>(*gen) : std::nullopt)
                           .squeeze(-1);
    out.log_prob = log_p.gather(-1, out.action.unsqueeze(-1)).squeeze(-1);
    out.entropy = -(log_p.exp() * log_p).sum(-1);
  } else {
    const torch::Tensor log_std = log_std_.expand_as(head);
    const torch::Tensor std = log_std.exp();
    if (action.defined()) {
      out.action = action;
    } else {
      torch::NoGradGuard no_grad;
      out.action = head + std * gaussian_noise(head, gen);
    }
    const torch::Tensor z = (out.action - head) / std;
    out.log_prob = (-0.5 * z * z - log_std - kHalfLog2Pi).sum(-1);
    out.entropy = (0.5 + kHalfLog2Pi + log_std).sum(-1);
  }
  return out;
}

PolicyOutput ActorCriticImpl::sample(const torch::Tensor& obs, torch::Generator* gen) {
  PolicyOutput out;
  out.value = value(obs);
  const torch::Tensor head = actor_->forward(actor_input(obs));
  const auto g = gen ? std::optional<at::Generator>(*gen) : std::nullopt;
  if (discrete_) {
    // Exponential race (the algorithm of torch.multinomial's one-sample path): argmax(p / E)
    // with E ~ Exp(1) draws from p. Written out because multinomial checks its input with a
    // host read (.item()), a device sync per env step on CUDA.
    const torch::Tensor log_p = torch::log_softmax(head, -1);
    torch::Tensor race = torch::empty_like(log_p).exponential_(1.0, g);
    out.action = log_p.exp().div_(race).argmax(-1, /*keepdim=*/true);
    out.log_prob = log_p.gather(-1, out.action).squeeze(-1);
    out.action = out.action.squeeze(-1);
  } else {
    // action = mean + std * z with z ~ N(0, 1), so the log-density needs z alone.
    const torch::Tensor z = gaussian_noise(head, gen);
    out.action = torch::addcmul(head, log_std_.exp(), z);
    const double width = static_cast<double>(head.size(-1));
    out.log_prob = (z * z).sum(-1).mul_(-0.5).sub_(log_std_.sum() + width * kHalfLog2Pi);
  }
  return out;
}

torch::Tensor ActorCriticImpl::deterministic_action(const torch::Tensor& obs) {
  const torch::Tensor head = actor_->forward(actor_input(obs));
  return discrete_ ? head.argmax(-1) : head;
}

}  // namespace myriad::learner
