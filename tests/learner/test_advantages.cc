// Advantages and returns: GAE against a hand-computed recursion, truncation bootstrapping,
// the discounted return that reward scaling tracks.
#include <gtest/gtest.h>

#include "learner/advantages.h"

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

}  // namespace
}  // namespace myriad::learner
