#include "learner/sample_cpu.h"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

namespace myriad::learner {
namespace {

constexpr float kHalfLog2Pi = 0.918938533f;  // 0.5 * log(2 pi)

// A layer for the forward pass only (no gradient storage).
MlpCpu forward_only(const std::vector<torch::nn::Linear>& layers, const std::string& activation) {
  std::vector<DenseLayerRef> refs;
  for (const auto& l : layers) {
    DenseLayerRef r;
    r.weight = l->weight.data_ptr<float>();
    r.bias = l->bias.data_ptr<float>();
    r.out = l->weight.size(0);
    r.in = l->weight.size(1);
    refs.push_back(r);
  }
  return MlpCpu(std::move(refs), activation_of(activation));
}

bool cpu_float(const torch::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 &&
         t.is_contiguous();
}

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("PolicySamplerCpu::sample: ") + what);
}

}  // namespace

std::string PolicySamplerCpu::unsupported(const ActorCriticImpl& policy) {
  for (const auto* layers : {&policy.actor_layers(), &policy.critic_layers()})
    for (const auto& l : *layers)
      for (const torch::Tensor* p : {&l->weight, &l->bias}) {
        if (!p->defined() || !p->device().is_cpu()) return "the policy is not on the CPU";
        if (!cpu_float(*p)) return "the policy is not float32";
      }
  if (!policy.discrete() && !cpu_float(policy.log_std())) return "the policy is not float32";
  return "";
}

PolicySamplerCpu::PolicySamplerCpu(const ActorCriticImpl& policy)
    : discrete_(policy.discrete()),
      obs_dim_(policy.critic_layers().front()->weight.size(1)),
      actor_(forward_only(policy.actor_layers(), policy.activation())),
      critic_(forward_only(policy.critic_layers(), policy.activation())) {
  const std::string why = unsupported(policy);
  if (!why.empty()) throw std::invalid_argument("PolicySamplerCpu: " + why);
  if (!discrete_) log_std_ = policy.log_std().data_ptr<float>();
}

void PolicySamplerCpu::sample(const torch::Tensor& obs, torch::Generator* gen,
                              torch::Tensor& action, torch::Tensor& log_prob,
                              torch::Tensor& value) {
  const int64_t B = obs.size(0), A = actor_.out();
  require(cpu_float(obs) && obs.dim() == 2 && obs.size(1) == obs_dim_,
          "obs must be [B, D] float32");
  require(cpu_float(log_prob) && log_prob.numel() == B, "log_prob must be [B] float32");
  require(cpu_float(value) && value.numel() == B, "value must be [B] float32");
  require(action.is_contiguous() && action.device().is_cpu() &&
              action.scalar_type() == (discrete_ ? torch::kInt64 : torch::kFloat32) &&
              action.numel() == (discrete_ ? B : B * A),
          "action must be [B] int64 or [B, A] float32");

  // (obs) => value [B], head [B, A] (the actor reads the first actor_dim columns).
  const float* v = critic_.forward(obs.data_ptr<float>(), obs_dim_, B);
  std::copy(v, v + B, value.data_ptr<float>());
  const float* head = actor_.forward(obs.data_ptr<float>(), obs_dim_, B);

  // The draw, from the generator as ActorCriticImpl::sample takes it.
  if (!noise_.defined() || noise_.size(0) != B) noise_ = torch::empty({B, A}, torch::kFloat32);
  const auto g = gen ? std::optional<at::Generator>(*gen) : std::nullopt;
  float* lp = log_prob.data_ptr<float>();
  if (discrete_) {
    // Exponential race: argmax_k p_k / E_k draws from p; log p by a max-shifted log-sum-exp.
    noise_.exponential_(1.0, g);
    const float* e = noise_.data_ptr<float>();
    int64_t* a = action.data_ptr<int64_t>();
    for (int64_t i = 0; i < B; ++i) {
      const float* h = head + i * A;
      float m = h[0];
      for (int64_t k = 1; k < A; ++k) m = std::max(m, h[k]);
      float sum = 0.0f;
      for (int64_t k = 0; k < A; ++k) sum += std::exp(h[k] - m);
      const float log_sum = std::log(sum);
      int64_t best = 0;
      float best_key = -1.0f;
      for (int64_t k = 0; k < A; ++k) {
        const float key = std::exp((h[k] - m) - log_sum) / e[i * A + k];
        if (key > best_key) best_key = key, best = k;  // first maximum, as argmax
      }
      a[i] = best;
      lp[i] = (h[best] - m) - log_sum;
    }
  } else {
    // action = mean + std * z; log N(action; mean, std) = -z^2 / 2 - log std - log sqrt(2 pi).
    noise_.normal_(0.0, 1.0, g);
    const float* z = noise_.data_ptr<float>();
    float* a = action.data_ptr<float>();
    std::vector<float>& std_dev = std_dev_;
    std_dev.resize(static_cast<size_t>(A));
    float log_norm = 0.0f;
    for (int64_t k = 0; k < A; ++k) {
      std_dev[k] = std::exp(log_std_[k]);
      log_norm += log_std_[k];
    }
    log_norm += static_cast<float>(A) * kHalfLog2Pi;
    for (int64_t i = 0; i < B; ++i) {
      float zz = 0.0f;
      for (int64_t k = 0; k < A; ++k) {
        const float zk = z[i * A + k];
        a[i * A + k] = head[i * A + k] + std_dev[k] * zk;
        zz += zk * zk;
      }
      lp[i] = -0.5f * zz - log_norm;
    }
  }
}

}  // namespace myriad::learner
