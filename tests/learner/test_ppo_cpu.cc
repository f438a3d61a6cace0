// The hand-written CPU PPO loops (learner/mlp_cpu.h, learner/ppo_cpu.h) against LibTorch: the
// same loss gradient as autograd for every policy shape the learner builds, the same metrics,
// and the same update through ppo_update.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "learner/mlp_cpu.h"
#include "learner/optimizer.h"
#include "learner/policy.h"
#include "learner/ppo.h"
#include "learner/ppo_cpu.h"
#include "learner/rollout.h"
#include "learner/sample_cpu.h"
#include "myriad/device.h"

namespace myriad::learner {
namespace {

TEST(MlpCpu, TanhWithin2e7OfLibm) {
  std::vector<float> x;
  for (int i = -200000; i <= 200000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);
  for (float v : {-1e30f, -100.0f, -44.0f, 44.0f, 100.0f, 1e30f, 1e-30f, -1e-30f}) x.push_back(v);
  std::vector<float> y = x;
  tanh_inplace(y.data(), static_cast<int64_t>(y.size()));
  double worst = 0.0;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(y[i]) - std::tanh(double{x[i]})));
  EXPECT_LT(worst, 2e-7);
}

// The ELU's vectorized exp: within 2e-7 of libm's expm1 in absolute terms, and within 3 float
// ulps relative where |ELU| is small (near 0, where m = 0 and the series alone computes it).
TEST(MlpCpu, EluWithin2e7OfLibm) {
  std::vector<float> x;
  for (int i = -200000; i <= 20000; ++i) x.push_back(static_cast<float>(i) * 5e-4f);
  for (float v : {-1e30f, -100.0f, -88.0f, -87.5f, 1e30f, 1e-30f, -1e-30f, -1e-7f}) x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  std::vector<float> y = x;
  elu_inplace(y.data(), static_cast<int64_t>(y.size()));
  double worst = 0.0, worst_rel = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = x[i] > 0 ? double{x[i]} : std::expm1(double{x[i]});
    const double err = std::fabs(static_cast<double>(y[i]) - want);
    worst = std::max(worst, err);
    if (std::fabs(want) < 0.3 && want != 0) worst_rel = std::max(worst_rel, err / std::fabs(want));
  }
  EXPECT_LT(worst, 2e-7);
  EXPECT_LT(worst_rel, 3 * 1.2e-7);
  // A NaN stays a NaN (ELU and tanh).
  float nan[2] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::quiet_NaN()};
  elu_inplace(nan, 1);
  tanh_inplace(nan + 1, 1);
  EXPECT_TRUE(std::isnan(nan[0]));
  EXPECT_TRUE(std::isnan(nan[1]));
}

struct Case {
  std::string name;
  bool discrete = false;
  std::string activation = "tanh";
  int64_t actor_dim = -1;  // -1: the whole obs
  bool clip_vloss = true, norm_adv = true;
  double ent_coef = 0.0;
};

class PpoCpu : public ::testing::TestWithParam<Case> {};

constexpr int64_t kObs = 11, kActions = 3, kRows = 96;

ActorCritic make_policy(const Case& c) {
  const Space space = c.discrete ? Space::discrete(4)
                                 : Space::box(std::vector<float>(kActions, -1.0f),
                                              std::vector<float>(kActions, 1.0f));
  return ActorCritic(kObs, space, std::vector<int64_t>{64, 64}, c.activation, -0.3, c.actor_dim);
}

PpoConfig make_config(const Case& c) {
  PpoConfig p;
  p.clip_coef = 0.2;
  p.clip_vloss = c.clip_vloss;
  p.norm_adv = c.norm_adv;
  p.ent_coef = c.ent_coef;
  p.vf_coef = 0.5;
  return p;
}

struct Batch {
  torch::Tensor obs, actions, logp, adv, values, returns;
};

// Behaviour log-probs and old values spread around the current ones, so that some ratios and
// some value updates fall outside the clip range and both branches of each max() are taken.
Batch make_batch(ActorCritic& policy, bool discrete) {
  Batch b;
  b.obs = torch::randn({kRows, kObs});
  {
    torch::NoGradGuard g;
    const PolicyOutput s = policy->act(b.obs);
    b.actions = s.action;
    b.logp = s.log_prob + 0.3 * torch::randn({kRows});
    b.values = s.value + 0.3 * torch::randn({kRows});
  }
  b.adv = torch::randn({kRows}) * 2.0 + 0.5;
  b.returns = b.values + torch::randn({kRows});
  if (discrete) b.actions = b.actions.contiguous();
  return b;
}

// LibTorch's loss, as ppo_update builds it.
torch::Tensor torch_loss(ActorCritic& policy, const PpoConfig& c, const Batch& b) {
  const PolicyOutput out = policy->act(b.obs, b.actions);
  const torch::Tensor logratio = out.log_prob - b.logp, ratio = logratio.exp();
  const torch::Tensor adv = c.norm_adv ? normalize_advantages(b.adv) : b.adv;
  const torch::Tensor pg = policy_loss(adv, ratio, c.clip_coef);
  const torch::Tensor v = value_loss(out.value, b.values, b.returns, c.clip_coef, c.clip_vloss);
  return pg - c.ent_coef * out.entropy.mean() + c.vf_coef * v;
}

TEST_P(PpoCpu, GradientMatchesAutograd) {
  const Case& tc = GetParam();
  torch::manual_seed(7);
  ActorCritic policy = make_policy(tc);
  FlatAdam opt(policy->parameters(), 1e-3);
  ASSERT_EQ(PpoMinibatchCpu::unsupported(*policy), "");
  const PpoConfig c = make_config(tc);
  const Batch b = make_batch(policy, tc.discrete);

  opt.zero_grad();
  torch_loss(policy, c, b).backward();
  const torch::Tensor expected = opt.flat_grad().clone();

  opt.zero_grad();
  PpoMinibatchCpu cpu(*policy, c);
  PpoSums sums{};
  cpu.accumulate(b.obs.data_ptr<float>(), b.actions.data_ptr(), b.logp.data_ptr<float>(),
                 b.adv.data_ptr<float>(), b.values.data_ptr<float>(), b.returns.data_ptr<float>(),
                 kRows, &sums);
  const torch::Tensor got = opt.flat_grad();
  const double scale = expected.abs().max().item<double>();
  ASSERT_GT(scale, 1e-3);
  const double err = (got - expected).abs().max().item<double>() / scale;
  EXPECT_LT(err, 5e-6) << "largest gradient " << scale;
  // Every parameter's gradient (not only the large ones) agrees.
  EXPECT_TRUE(torch::allclose(got, expected, 1e-3, 1e-6 * scale));
}

TEST_P(PpoCpu, UpdateMatchesTheLibTorchUpdate) {
  const Case& tc = GetParam();
  torch::manual_seed(11);
  ActorCritic a = make_policy(tc), b = make_policy(tc);
  {
    torch::NoGradGuard g;
    for (size_t k = 0; k < a->parameters().size(); ++k)
      b->parameters()[k].copy_(a->parameters()[k]);
  }
  FlatAdam opt_a(a->parameters(), 3e-4), opt_b(b->parameters(), 3e-4);
  PpoConfig c = make_config(tc);
  c.num_minibatches = 4;
  c.update_epochs = 2;
  const Space space = tc.discrete ? Space::discrete(4)
                                  : Space::box(std::vector<float>(kActions, -1.0f),
                                               std::vector<float>(kActions, 1.0f));
  Rollout r(8, kRows / 8, kObs, space, torch::kCPU);
  const Batch batch = make_batch(a, tc.discrete);
  r.obs.copy_(batch.obs.view_as(r.obs));
  r.actions.copy_(batch.actions.view_as(r.actions));
  r.logprobs.copy_(batch.logp.view_as(r.logprobs));
  r.values.copy_(batch.values.view_as(r.values));
  r.advantages = batch.adv.view({8, kRows / 8}).clone();
  r.returns = batch.returns.view({8, kRows / 8}).clone();

  torch::Generator gen_a = at::make_generator<at::CPUGeneratorImpl>(5);
  torch::Generator gen_b = at::make_generator<at::CPUGeneratorImpl>(5);
  const torch::Tensor m_torch =
      ppo_update({a, &opt_a, &c, LrSchedule::kLinear, &gen_a, nullptr, false}, r);
  const torch::Tensor m_cpu =
      ppo_update({b, &opt_b, &c, LrSchedule::kLinear, &gen_b, nullptr, true}, r);
  // 8 Adam steps of 3e-4 each: the parameters agree to float rounding (seen: 3e-8 to 9e-8).
  const double moved = (opt_a.flat_params() - opt_b.flat_params()).abs().max().item<double>();
  EXPECT_LT(moved, 1e-6);
  EXPECT_TRUE(torch::allclose(m_torch, m_cpu, 1e-4, 1e-6)) << m_torch << m_cpu;
}

// The rollout's sampler (learner/sample_cpu.h) against ActorCriticImpl::sample from the same
// generator state: the same draws, so the same actions up to the layers' rounding.
TEST_P(PpoCpu, SamplerMatchesActorCriticSample) {
  const Case& c = GetParam();
  torch::manual_seed(11);
  ActorCritic policy = make_policy(c);
  const torch::Tensor obs = torch::randn({kRows, kObs}) * 2.0;
  torch::Generator g1 = at::make_generator<at::CPUGeneratorImpl>(5);
  torch::Generator g2 = at::make_generator<at::CPUGeneratorImpl>(5);
  PolicyOutput want;
  {
    torch::NoGradGuard no_grad;
    want = policy->sample(obs, &g1);
  }
  torch::Tensor action = torch::empty_like(want.action), log_prob = torch::empty({kRows}),
                value = torch::empty({kRows});
  PolicySamplerCpu sampler(*policy);
  for (int round = 0; round < 2; ++round) {  // the second call reuses the sampler's scratch
    if (round == 1) {
      torch::NoGradGuard no_grad;
      want = policy->sample(obs, &g1);
    }
    sampler.sample(obs, &g2, action, log_prob, value);
    if (c.discrete) {
      EXPECT_TRUE(torch::equal(action, want.action)) << c.name;
    } else {
      EXPECT_LT((action - want.action).abs().max().item<double>(), 1e-5) << c.name;
    }
    EXPECT_LT((log_prob - want.log_prob).abs().max().item<double>(), 1e-5) << c.name;
    EXPECT_LT((value - want.value).abs().max().item<double>(),
              1e-5 * std::max(1.0, want.value.abs().max().item<double>()))
        << c.name;
  }
  // Shapes that do not fit are refused, naming the argument.
  torch::Tensor short_value = torch::empty({kRows - 1});
  EXPECT_THROW(sampler.sample(obs, &g2, action, log_prob, short_value), std::invalid_argument);
  EXPECT_THROW(sampler.sample(obs.to(torch::kDouble), &g2, action, log_prob, value),
               std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(
    Policies, PpoCpu,
    ::testing::Values(Case{"GaussianTanh"}, Case{"GaussianRelu", false, "relu"},
                      Case{"GaussianElu", false, "elu"}, Case{"Categorical", true},
                      Case{"CategoricalEntropy", true, "tanh", -1, true, true, 0.01},
                      Case{"GaussianEntropyNarrowActor", false, "tanh", 7, true, true, 0.01},
                      Case{"PlainValueLossRawAdvantages", false, "tanh", -1, false, false, 0.0}),
    [](const auto& info) { return info.param.name; });

// The fused update splits its matrix products among the run's CPU threads (cpu_threads) by rows
// of the result: the parameters after an update are the same bits on one thread and on two.
TEST(PpoCpuThreads, FusedUpdateIsTheSameBitsOnOneAndTwoThreads) {
  const int saved = cpu_threads();
  const Space space =
      Space::box(std::vector<float>(kActions, -1.0f), std::vector<float>(kActions, 1.0f));
  constexpr int64_t kT = 8, kN = 128;  // minibatches of 256 rows through 256-wide layers
  torch::manual_seed(13);
  ActorCritic first(kObs, space, std::vector<int64_t>{256, 256}, "elu", -0.3, -1);
  Rollout r(kT, kN, kObs, space, torch::kCPU);
  {
    torch::NoGradGuard g;
    r.obs.copy_(torch::randn_like(r.obs));
    const PolicyOutput s = first->act(r.obs.view({kT * kN, kObs}));
    r.actions.copy_(s.action.view_as(r.actions));
    r.logprobs.copy_((s.log_prob + 0.3 * torch::randn({kT * kN})).view_as(r.logprobs));
    r.values.copy_((s.value + 0.3 * torch::randn({kT * kN})).view_as(r.values));
  }
  r.advantages = torch::randn({kT, kN}) * 2.0 + 0.5;
  r.returns = r.values + torch::randn({kT, kN});
  PpoConfig c = make_config(Case{});
  c.num_minibatches = 4;
  c.update_epochs = 2;
  std::vector<torch::Tensor> params;
  for (int threads : {1, 2}) {
    set_cpu_threads(threads);
    ActorCritic policy(kObs, space, std::vector<int64_t>{256, 256}, "elu", -0.3, -1);
    {
      torch::NoGradGuard g;
      for (size_t k = 0; k < policy->parameters().size(); ++k)
        policy->parameters()[k].copy_(first->parameters()[k]);
    }
    FlatAdam opt(policy->parameters(), 3e-4);
    torch::Generator gen = at::make_generator<at::CPUGeneratorImpl>(5);
    ppo_update({policy, &opt, &c, LrSchedule::kLinear, &gen, nullptr, true}, r);
    params.push_back(opt.flat_params().clone());
  }
  set_cpu_threads(saved);
  EXPECT_TRUE(torch::equal(params[0], params[1]))
      << "largest difference " << (params[0] - params[1]).abs().max().item<double>();
  std::vector<torch::Tensor> start;
  for (const torch::Tensor& p : first->parameters()) start.push_back(p.detach().flatten());
  EXPECT_GT((params[0] - torch::cat(start)).abs().max().item<double>(), 0.0)
      << "the update moved nothing";
}

TEST(PpoCpuChoice, AutoFusedAndLibTorch) {
  ActorCritic p = make_policy(Case{});
  // Gradients not yet bound to a flat buffer: auto stays on LibTorch, fused says why.
  EXPECT_FALSE(use_cpu_kernels("auto", *p, 1));
  try {
    use_cpu_kernels("fused", *p, 1);
    FAIL() << "fused accepted an unbound policy";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("run.learner_math"), std::string::npos) << e.what();
  }
  FlatAdam opt(p->parameters(), 1e-3);
  EXPECT_TRUE(use_cpu_kernels("auto", *p, 1));
  EXPECT_FALSE(use_cpu_kernels("auto", *p, 2));  // LibTorch's threads asked for
  EXPECT_TRUE(use_cpu_kernels("fused", *p, 2));
  EXPECT_FALSE(use_cpu_kernels("libtorch", *p, 1));
  EXPECT_THROW(use_cpu_kernels("fast", *p, 1), std::invalid_argument);

  ActorCritic d = make_policy(Case{});
  d->to(torch::kFloat64);
  FlatAdam opt_d(d->parameters(), 1e-3);
  EXPECT_FALSE(use_cpu_kernels("auto", *d, 1));
  EXPECT_THROW(use_cpu_kernels("fused", *d, 1), std::invalid_argument);
}

}  // namespace
}  // namespace myriad::learner
