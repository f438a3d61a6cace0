// Advantages and returns: GAE against a hand-computed recursion, truncation bootstrapping,
// the discounted return that reward scaling tracks.
#include <gtest/gtest.h>

#include <cstdint>

#include "learner/advantages.h"
#include "learner/rollout.h"

namespace myriad::learner {
namespace {

TEST(Gae, MatchesHandComputedRecursion) {
  const double g = 0.9, l = 0.8;
  // T = 3, N = 1: r = (1, 2, 3), v = (0.5, 0.25, 0.125), done at t = 1, next value 4.
  const auto r = torch::tensor({1.0f, 2.0f, 3.0f}).reshape({3, 1});
  const auto v = torch::tensor({0.5f, 0.25f, 0.125f}).reshape({3, 1});
  const auto d = torch::tensor({0.0f, 1.0f, 0.0f}).reshape({3, 1});
  const auto adv = gae(r, v, d, torch::tensor({4.0f}), g, l);
  const double a2 = 3 + g * 4 - 0.125;
  const double a1 = 2 - 0.25;  // done: no bootstrap from t = 2
  const double a0 = (1 + g * 0.25 - 0.5) + g * l * a1;
  EXPECT_NEAR(adv[2][0].item<double>(), a2, 1e-5);
  EXPECT_NEAR(adv[1][0].item<double>(), a1, 1e-5);
  EXPECT_NEAR(adv[0][0].item<double>(), a0, 1e-5);
}

TEST(Gae, TwoEnvsAreIndependentAndLambdaOneIsTheDiscountedReturn) {
  // Env 0: no dones; env 1: done at t = 1. gamma 0.5, lambda 1, values 0.
  const auto r = torch::ones({4, 2});
  const auto v = torch::zeros({4, 2});
  auto d = torch::zeros({4, 2});
  d[1][1] = 1.0f;
  const auto adv = gae(r, v, d, torch::tensor({8.0f, 8.0f}), 0.5, 1.0);
  EXPECT_NEAR(adv[0][0].item<double>(), 1 + 0.5 + 0.25 + 0.125 + 0.0625 * 8, 1e-6);
  EXPECT_NEAR(adv[0][1].item<double>(), 1 + 0.5, 1e-6);
  EXPECT_NEAR(adv[2][1].item<double>(), 1 + 0.5 * (1 + 0.5 * 8), 1e-6);
}

TEST(TruncationBootstrap, OnlyTruncatedAndNotTerminatedStepsGetTheFinalValue) {
  const auto terminated = torch::tensor({true, false, false, true, false}).reshape({1, 5});
  const auto truncated = torch::tensor({true, true, false, false, true}).reshape({1, 5});
  // The last one is truncated but its stale final value is NaN (never fed to the learner).
  const auto values = torch::tensor({10.0f, 10.0f, 10.0f, 10.0f, NAN}).reshape({1, 5});
  const auto b = truncation_bootstrap(terminated, truncated, values, 0.5);
  EXPECT_TRUE(torch::equal(b, torch::tensor({0.0f, 5.0f, 0.0f, 0.0f, 0.0f}).reshape({1, 5})));
}

TEST(DiscountedReturns, RunAcrossStepsAndRestartAfterADone) {
  const auto r = torch::tensor({1.0f, 2.0f, 3.0f}).reshape({3, 1});
  const auto d = torch::tensor({0.0f, 1.0f, 0.0f}).reshape({3, 1});
  torch::Tensor running = torch::tensor({4.0f});
  const auto out = discounted_returns(r, d, running, 0.5);
  EXPECT_NEAR(out[0][0].item<double>(), 4 * 0.5 + 1, 1e-6);
  EXPECT_NEAR(out[1][0].item<double>(), 3 * 0.5 + 2, 1e-6);
  EXPECT_NEAR(out[2][0].item<double>(), 3, 1e-6);  // restarted after the done at t = 1
  EXPECT_NEAR(running[0].item<double>(), 3, 1e-6);
}

// The whole post-processing on a 2-step, 2-env rollout: rewards scaled by the return statistics
// (then clipped), gamma * V(final_obs) added where env 1 is truncated at t = 0, values of
// final_obs taken under the rollout's frozen observation statistics, then GAE.
TEST(ComputeReturns, ScalesThenBootstrapsTruncationThenRunsGae) {
  torch::manual_seed(0);
  ActorCritic policy(1, Space::discrete(2), std::vector<int64_t>{4}, std::string("tanh"), 0.0);
  Rollout r(2, 2, 1, Space::discrete(2), torch::kCPU);
  r.rewards.copy_(torch::tensor({{1.0f, 2.0f}, {3.0f, 4.0f}}));
  r.truncated[0][1] = true;
  r.final_obs[0][1][0] = 5.0f;
  r.values.copy_(torch::tensor({{0.5f, 0.25f}, {0.125f, 1.0f}}));
  r.next_obs.fill_(0.5f);
  RunningMeanStd obs_rms(std::vector<int64_t>{1});
  obs_rms.mean.fill_(1.0);
  obs_rms.var.fill_(4.0);
  const Standardizer norm(obs_rms, 10.0, torch::kFloat);
  RunningMeanStd ret_rms(std::vector<int64_t>{});
  torch::Tensor running = torch::zeros({2});
  const double g = 0.9, lambda = 0.8;
  compute_returns({policy, norm, &ret_rms, &running, 10.0, g, lambda}, r);

  // Expected, step by step. Discounted returns: env 0: 1, 1*g+3; env 1: 2 (then cut), 4.
  const auto disc = torch::tensor({1.0, 2.0, 1.0 * g + 3.0, 4.0});
  // RunningMeanStd's merge of the batch into its prior (mean 0, var 1, count 1e-4).
  const double n = 4, c0 = 1e-4, m = disc.mean().item<double>();
  const double batch_var = (disc - m).square().mean().item<double>();
  const double var = (1.0 * c0 + batch_var * n + m * m * c0 * n / (c0 + n)) / (c0 + n);
  const double scale = 1.0 / std::sqrt(var + 1e-8);
  torch::NoGradGuard no_grad;
  const double v_final = policy->value(torch::tensor({{(5.0f - 1.0f) / 2.0f}})).item<double>();
  // next_obs is stored as the policy's input (collect normalized it already).
  const double v_next = policy->value(torch::tensor({{0.5f}})).item<double>();
  const double r01 = 2 * scale + g * v_final;  // truncated: bootstrapped after scaling
  EXPECT_NEAR(r.rewards[0][1].item<double>(), r01, 1e-4);
  EXPECT_NEAR(r.rewards[1][0].item<double>(), 3 * scale, 1e-4);
  EXPECT_EQ(r.dones[0][1].item<float>(), 1.0f);
  // Env 1: the done at t = 0 cuts the recursion; t = 1 bootstraps from next_obs.
  const double a11 = 4 * scale + g * v_next - 1.0;
  EXPECT_NEAR(r.advantages[1][1].item<double>(), a11, 1e-4);
  EXPECT_NEAR(r.advantages[0][1].item<double>(), r01 - 0.25, 1e-4);
  // Env 0: no done; a00 = d0 + g * lambda * a10.
  const double a10 = 3 * scale + g * v_next - 0.125;
  const double a00 = (1 * scale + g * 0.125 - 0.5) + g * lambda * a10;
  EXPECT_NEAR(r.advantages[0][0].item<double>(), a00, 1e-4);
  EXPECT_TRUE(torch::allclose(r.returns, r.advantages + r.values));
}

}  // namespace
}  // namespace myriad::learner
