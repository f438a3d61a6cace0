// GAE against a hand-computed recursion, including a done that cuts the bootstrap.
#include <gtest/gtest.h>

#include "learner/gae.h"

namespace myriad::learner {
namespace {

TEST(Gae, MatchesHandComputedRecursion) {
  const double g = 0.9, l = 0.8;
  // T = 3, N = 1: r = (1, 2, 3), v = (0.5, 0.25, 0.125), done at t = 1, next value 4.
  const auto r = torch::tensor({1.0f, 2.0f, 3.0f}).reshape({3, 1});
  const auto v = torch::tensor({0.5f, 0.25f, 0.125f}).reshape({3, 1});
  const auto d = torch::tensor({0.0f, 1.0f, 0.0f}).reshape({3, 1});
  const auto next = torch::tensor({4.0f});
  const auto adv = compute_gae(r, v, d, next, g, l);
  const double d2 = 3 + g * 4 - 0.125;
  const double a2 = d2;
  const double d1 = 2 - 0.25;  // done: no bootstrap from t = 2
  const double a1 = d1;
  const double d0 = 1 + g * 0.25 - 0.5;
  const double a0 = d0 + g * l * a1;
  EXPECT_NEAR(adv[2][0].item<double>(), a2, 1e-5);
  EXPECT_NEAR(adv[1][0].item<double>(), a1, 1e-5);
  EXPECT_NEAR(adv[0][0].item<double>(), a0, 1e-5);
}

TEST(Gae, LambdaOneIsDiscountedReturnMinusValue) {
  const auto r = torch::ones({4, 2});
  const auto v = torch::zeros({4, 2});
  const auto d = torch::zeros({4, 2});
  const auto adv = compute_gae(r, v, d, torch::zeros({2}), 0.5, 1.0);
  EXPECT_NEAR(adv[0][1].item<double>(), 1 + 0.5 + 0.25 + 0.125, 1e-6);
}

TEST(TruncationBootstrap, OnlyTruncatedAndNotTerminatedEnvsGetTheFinalValue) {
  torch::Tensor reward = torch::tensor({1.0f, 1.0f, 1.0f, 1.0f});
  const auto terminated = torch::tensor({true, false, false, true});
  const auto truncated = torch::tensor({true, true, false, false});
  torch::Tensor asked;
  add_truncation_bootstrap(
      reward, terminated, truncated,
      [&](const torch::Tensor& idx) {
        asked = idx;
        return torch::full({idx.size(0)}, 10.0f);
      },
      0.5);
  ASSERT_EQ(asked.numel(), 1);
  EXPECT_EQ(asked[0].item<int64_t>(), 1);
  EXPECT_TRUE(torch::equal(reward, torch::tensor({1.0f, 6.0f, 1.0f, 1.0f})));
  // No truncation: the value function is not called at all.
  bool called = false;
  add_truncation_bootstrap(
      reward, terminated, torch::zeros({4}, torch::kBool),
      [&](const torch::Tensor& idx) {
        called = true;
        return idx;
      },
      0.5);
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace myriad::learner
