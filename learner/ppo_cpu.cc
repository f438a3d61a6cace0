#include "learner/ppo_cpu.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace myriad::learner {
namespace {

constexpr float kHalfLog2Pi = 0.918938533f;  // 0.5 * log(2 pi)

DenseLayerRef layer_ref(const torch::nn::Linear& l) {
  DenseLayerRef r;
  r.weight = l->weight.data_ptr<float>();
  r.bias = l->bias.data_ptr<float>();
  r.grad_weight = l->weight.mutable_grad().data_ptr<float>();
  r.grad_bias = l->bias.mutable_grad().data_ptr<float>();
  r.out = l->weight.size(0);
  r.in = l->weight.size(1);
  return r;
}

MlpCpu mlp_ref(const std::vector<torch::nn::Linear>& layers, const std::string& activation) {
  std::vector<DenseLayerRef> refs;
  for (const auto& l : layers) refs.push_back(layer_ref(l));
  return MlpCpu(std::move(refs), activation_of(activation));
}

bool usable(const torch::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 &&
         t.is_contiguous();
}

// d max(a, b) / d a and / d b as LibTorch's maximum() backward gives them: all to the larger,
// half to each on a tie.
inline void max_grad(float a, float b, float* da, float* db) {
  *da = a > b ? 1.0f : (a < b ? 0.0f : 0.5f);
  *db = 1.0f - *da;
}

}  // namespace

std::string PpoMinibatchCpu::unsupported(const ActorCriticImpl& policy) {
  for (const auto* layers : {&policy.actor_layers(), &policy.critic_layers()})
    for (const auto& l : *layers)
      for (const torch::Tensor* p : {&l->weight, &l->bias}) {
        if (!p->defined() || !p->device().is_cpu()) return "the policy is not on the CPU";
        if (p->scalar_type() != torch::kFloat32) return "the policy is not float32";
        if (!usable(p->grad())) return "the policy's gradients are not bound (FlatAdam)";
      }
  if (!policy.discrete() && !usable(policy.log_std().grad()))
    return "the policy's gradients are not bound (FlatAdam)";
  return "";
}

PpoMinibatchCpu::PpoMinibatchCpu(ActorCriticImpl& policy, const PpoConfig& config)
    : c_(config),
      discrete_(policy.discrete()),
      obs_dim_(policy.critic_layers().front()->weight.size(1)),
      actor_(mlp_ref(policy.actor_layers(), policy.activation())),
      critic_(mlp_ref(policy.critic_layers(), policy.activation())) {
  if (!discrete_) {
    log_std_ = policy.log_std().data_ptr<float>();
    grad_log_std_ = policy.log_std().mutable_grad().data_ptr<float>();
  }
}

void PpoMinibatchCpu::accumulate(const float* obs, const void* actions, const float* old_logp,
                                 const float* adv_in, const float* old_value, const float* returns,
                                 int64_t rows, PpoSums* sums) {
  const int64_t M = rows, A = actor_.out();
  const float inv_m = 1.0f / static_cast<float>(M);
  const float lo = static_cast<float>(1.0 - c_.clip_coef),
              hi = static_cast<float>(1.0 + c_.clip_coef);
  const float clip = static_cast<float>(c_.clip_coef);
  const float ent_coef = static_cast<float>(c_.ent_coef), vf_coef = static_cast<float>(c_.vf_coef);

  // Forward: (obs) => value [M], head [M, A] (the actor reads the first actor_dim columns).
  const float* value = critic_.forward(obs, obs_dim_, M);
  const float* head = actor_.forward(obs, obs_dim_, M);

  // Advantages, normalized per minibatch: (A - mean) / (unbiased std + 1e-8).
  adv_.assign(adv_in, adv_in + M);
  if (c_.norm_adv) {
    double mean = 0.0;
    for (int64_t m = 0; m < M; ++m) mean += adv_[m];
    mean /= static_cast<double>(M);
    double ss = 0.0;
    for (int64_t m = 0; m < M; ++m) ss += (adv_[m] - mean) * (adv_[m] - mean);
    const double scale =
        1.0 / (std::sqrt(ss / static_cast<double>(std::max<int64_t>(M - 1, 1))) + 1e-8);
    for (int64_t m = 0; m < M; ++m) adv_[m] = static_cast<float>((adv_[m] - mean) * scale);
  }

  d_head_.assign(static_cast<size_t>(M * A), 0.0f);
  d_value_.resize(static_cast<size_t>(M));
  double pg_sum = 0.0, v_sum = 0.0, ent_sum = 0.0, kl_sum = 0.0, clipped = 0.0;
  if (!discrete_) {
    std_.resize(static_cast<size_t>(A));
    for (int64_t a = 0; a < A; ++a) std_[a] = std::exp(log_std_[a]);
  }
  g_log_std_.assign(static_cast<size_t>(discrete_ ? 0 : A), 0.0f);

  for (int64_t m = 0; m < M; ++m) {
    const float* h = head + m * A;
    float* dh = d_head_.data() + m * A;
    // Policy: (head, action) => log-prob, entropy.
    float logp = 0.0f, entropy = 0.0f;
    int64_t taken = 0;
    float lse = 0.0f;
    if (discrete_) {
      taken = static_cast<const int64_t*>(actions)[m];
      float mx = h[0];
      for (int64_t a = 1; a < A; ++a) mx = std::max(mx, h[a]);
      float se = 0.0f;
      for (int64_t a = 0; a < A; ++a) se += std::exp(h[a] - mx);
      lse = mx + std::log(se);
      logp = h[taken] - lse;
      for (int64_t a = 0; a < A; ++a) {
        const float lp = h[a] - lse;
        entropy -= std::exp(lp) * lp;
      }
    } else {
      const float* act = static_cast<const float*>(actions) + m * A;
      for (int64_t a = 0; a < A; ++a) {
        const float z = (act[a] - h[a]) / std_[a];
        logp += -0.5f * z * z - log_std_[a] - kHalfLog2Pi;
        entropy += 0.5f + kHalfLog2Pi + log_std_[a];
      }
    }
    // Clipped surrogate: (log-prob, behaviour log-prob, advantage) => loss, d loss / d log-prob.
    const float logratio = logp - old_logp[m];
    const float ratio = std::exp(logratio);
    const float adv = adv_[m];
    const float clamped = std::min(std::max(ratio, lo), hi);
    const float pg_a = -adv * ratio, pg_b = -adv * clamped;
    float w_a, w_b;
    max_grad(pg_a, pg_b, &w_a, &w_b);
    const float inside = (ratio >= lo && ratio <= hi) ? 1.0f : 0.0f;
    const float g_ratio = (w_a * -adv + w_b * -adv * inside) * inv_m;
    const float g_logp = g_ratio * ratio;
    pg_sum += std::max(pg_a, pg_b);
    kl_sum += (ratio - 1.0f) - logratio;
    clipped += std::fabs(ratio - 1.0f) > clip ? 1.0 : 0.0;
    ent_sum += entropy;

    // (d loss / d log-prob, d loss / d entropy) => d loss / d head (and log-std).
    if (discrete_) {
      // d log p_taken / d h_j = [j = taken] - p_j; d H / d h_j = -p_j (log p_j + H).
      for (int64_t a = 0; a < A; ++a) {
        const float lp = h[a] - lse, p = std::exp(lp);
        const float d_logp = (a == taken ? 1.0f : 0.0f) - p;
        const float d_ent = -p * (lp + entropy);
        dh[a] = g_logp * d_logp - ent_coef * inv_m * d_ent;
      }
    } else {
      // d log p / d h_a = z_a / std_a; d log p / d log std_a = z_a^2 - 1; d H / d log std_a = 1.
      const float* act = static_cast<const float*>(actions) + m * A;
      for (int64_t a = 0; a < A; ++a) {
        const float z = (act[a] - h[a]) / std_[a];
        dh[a] = g_logp * z / std_[a];
        g_log_std_[a] += g_logp * (z * z - 1.0f);
      }
    }

    // Value loss: 0.5 max((V - R)^2, (V_old + clip(V - V_old, -c, c) - R)^2) => d / d V.
    const float v = value[m], diff = v - returns[m];
    const float unclipped = diff * diff;
    float g_v;
    if (c_.clip_vloss) {
      const float dv = v - old_value[m];
      const float dc = old_value[m] + std::min(std::max(dv, -clip), clip) - returns[m];
      const float clipped_sq = dc * dc;
      max_grad(unclipped, clipped_sq, &w_a, &w_b);
      const float dv_inside = (dv >= -clip && dv <= clip) ? 1.0f : 0.0f;
      g_v = w_a * 2.0f * diff + w_b * 2.0f * dc * dv_inside;
      v_sum += 0.5 * std::max(unclipped, clipped_sq);
    } else {
      g_v = 2.0f * diff;
      v_sum += 0.5 * unclipped;
    }
    d_value_[m] = g_v * 0.5f * inv_m * vf_coef;
  }
  if (!discrete_)
    for (int64_t a = 0; a < A; ++a) grad_log_std_[a] += g_log_std_[a] - ent_coef;

  // Backward: (d loss / d head, d loss / d value) => parameter gradients.
  actor_.backward(d_head_.data());
  critic_.backward(d_value_.data());

  const double n = static_cast<double>(M);
  (*sums)[kPolicyLoss] += pg_sum / n;
  (*sums)[kValueLoss] += v_sum / n;
  (*sums)[kEntropy] += ent_sum / n;
  (*sums)[kApproxKl] += kl_sum / n;
  (*sums)[kClipFrac] += clipped / n;
}

}  // namespace myriad::learner
