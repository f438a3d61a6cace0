// The PPO update's parts on their own: losses, schedule, flat Adam, episode statistics,
// rollout storage.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <numeric>
#include <random>

#include "learner/episode_stats.h"
#include "learner/optimizer.h"
#include "learner/ppo.h"
#include "learner/rollout.h"
#include "learner/schedule.h"

namespace myriad::learner {
namespace {

TEST(PpoLosses, ClippedSurrogateTakesThePessimisticTerm) {
  const auto adv = torch::tensor({1.0f, 1.0f, -1.0f, -1.0f});
  const auto ratio = torch::tensor({1.5f, 0.5f, 1.5f, 0.5f});
  // A > 0: min(r, 1.2) A -> 1.2, 0.5; A < 0: max(r, 0.8) A -> -1.5, -0.8. Loss = -mean.
  EXPECT_NEAR(policy_loss(adv, ratio, 0.2).item<double>(), -(1.2 + 0.5 - 1.5 - 0.8) / 4, 1e-6);
}

TEST(PpoLosses, ValueLossClippedAndNot) {
  const auto v = torch::tensor({2.0f}), old = torch::tensor({1.0f}), ret = torch::tensor({3.0f});
  EXPECT_NEAR(value_loss(v, old, ret, 0.2, false).item<double>(), 0.5, 1e-6);
  // Clipped prediction 1.2: max((2-3)^2, (1.2-3)^2) = 3.24.
  EXPECT_NEAR(value_loss(v, old, ret, 0.2, true).item<double>(), 0.5 * 3.24, 1e-5);
}

TEST(PpoLosses, KlClipFractionAndAdvantageNormalization) {
  const auto ratio = torch::tensor({1.0f, 2.0f});
  const auto logratio = ratio.log();
  EXPECT_NEAR(approx_kl(logratio, ratio).item<double>(), (1.0 - std::log(2.0)) / 2, 1e-6);
  EXPECT_NEAR(clip_fraction(ratio, 0.2).item<double>(), 0.5, 1e-6);
  const auto a = normalize_advantages(torch::tensor({1.0f, 2.0f, 3.0f}));
  EXPECT_NEAR(a.mean().item<double>(), 0.0, 1e-6);
  EXPECT_NEAR(a.std().item<double>(), 1.0, 1e-4);
}

TEST(Schedule, LinearAnnealsToZeroAndKlAdaptiveMovesOnTheDevice) {
  EXPECT_DOUBLE_EQ(scheduled_lr(LrSchedule::kLinear, 1.0, 25, 100), 0.75);
  EXPECT_DOUBLE_EQ(scheduled_lr(LrSchedule::kLinear, 1.0, 200, 100), 0.0);
  EXPECT_DOUBLE_EQ(scheduled_lr(LrSchedule::kConstant, 1.0, 50, 100), 1.0);
  EXPECT_THROW(lr_schedule_from_name("cosine"), std::invalid_argument);
  torch::Tensor lr = torch::full({}, 3e-3);
  adapt_lr_to_kl(lr, torch::full({}, 0.05), 0.01);  // far too far: / 1.5
  EXPECT_NEAR(lr.item<double>(), 2e-3, 1e-9);
  adapt_lr_to_kl(lr, torch::full({}, 0.001), 0.01);  // too timid: * 1.5
  EXPECT_NEAR(lr.item<double>(), 3e-3, 1e-9);
  adapt_lr_to_kl(lr, torch::full({}, 0.01), 0.01);  // on target: unchanged
  EXPECT_NEAR(lr.item<double>(), 3e-3, 1e-9);
}

TEST(FlatAdam, MatchesTorchAdamWithGlobalNormClipping) {
  torch::manual_seed(3);
  torch::nn::Linear a(4, 3), b(4, 3);
  {
    torch::NoGradGuard g;
    for (size_t k = 0; k < a->parameters().size(); ++k)
      b->parameters()[k].copy_(a->parameters()[k]);
  }
  FlatAdam ours(a->parameters(), 1e-2);
  torch::optim::Adam ref(b->parameters(), torch::optim::AdamOptions(1e-2).eps(1e-5));
  for (int step = 0; step < 5; ++step) {
    const auto x = torch::randn({8, 4});
    ours.zero_grad();
    a->forward(x).pow(2).sum().backward();
    ours.clip_grad_norm(0.5);
    ours.step();
    ref.zero_grad();
    b->forward(x).pow(2).sum().backward();
    torch::nn::utils::clip_grad_norm_(b->parameters(), 0.5);
    ref.step();
  }
  for (size_t k = 0; k < a->parameters().size(); ++k)
    EXPECT_TRUE(torch::allclose(a->parameters()[k], b->parameters()[k], 1e-5, 1e-6)) << k;
  // The parameters are views of the flat buffer.
  EXPECT_EQ(a->parameters()[0].data_ptr<float>(), ours.flat_params().data_ptr<float>());
}

// The window over the last 100 episodes against a plain deque updated step by step.
TEST(EpisodeStats, MatchesAPerStepDequeAndFindsTheSolvedStep) {
  std::mt19937 rng(5);
  std::bernoulli_distribution ends(0.3);
  std::uniform_real_distribution<float> ret(0, 10);
  EpisodeStats stats(100, torch::kCPU);
  std::deque<double> window, lengths;
  const double threshold = 6.0;
  const int64_t T = 16, N = 9;
  bool solved = false;
  for (int update = 0; update < 12; ++update) {
    auto done = torch::zeros({T, N}, torch::kBool);
    auto returns = torch::zeros({T, N});
    auto lens = torch::zeros({T, N}, torch::kInt);
    int64_t expected_solved = T;
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t i = 0; i < N; ++i) {
        if (!ends(rng)) continue;
        // Later updates end better episodes, so the threshold is crossed mid-rollout.
        const float r = ret(rng) * (0.5f + update * 0.1f);
        done[t][i] = true;
        returns[t][i] = r;
        lens[t][i] = static_cast<int>(t + i);
        window.push_back(r);
        lengths.push_back(t + i);
        if (window.size() > 100) window.pop_front(), lengths.pop_front();
      }
      const double mean = std::accumulate(window.begin(), window.end(), 0.0) / window.size();
      if (!solved && expected_solved == T && window.size() >= 100 && mean >= threshold)
        expected_solved = t;
    }
    const auto got =
        stats.add(done, returns, lens, solved ? std::nullopt : std::optional<double>(threshold));
    EXPECT_EQ(got.item<int64_t>(), expected_solved) << "update " << update;
    solved = solved || expected_solved < T;
    const double mean = std::accumulate(window.begin(), window.end(), 0.0) / window.size();
    const double len = std::accumulate(lengths.begin(), lengths.end(), 0.0) / lengths.size();
    EXPECT_NEAR(stats.mean_return().item<double>(), mean, 1e-4) << "update " << update;
    EXPECT_NEAR(stats.mean_length().item<double>(), len, 1e-9);
    EXPECT_EQ(stats.count().item<int64_t>(), static_cast<int64_t>(window.size()));
  }
  EXPECT_TRUE(solved);
}

TEST(EpisodeStats, MoreEpisodesInOneRolloutThanTheWindowHolds) {
  EpisodeStats stats(100, torch::kCPU);
  const auto done = torch::ones({2, 80}, torch::kBool);
  const auto returns = torch::arange(160, torch::kFloat).reshape({2, 80});
  const auto lens = torch::ones({2, 80}, torch::kInt);
  // After step 0: 80 episodes (not enough); after step 1: the last 100 are 60..159.
  EXPECT_EQ(stats.add(done, returns, lens, 100.0).item<int64_t>(), 1);
  EXPECT_NEAR(stats.mean_return().item<double>(), (60 + 159) / 2.0, 1e-9);
  EXPECT_TRUE(std::isnan(EpisodeStats(100, torch::kCPU).mean_return().item<double>()));
}

TEST(Rollout, StorageShapesAndPerStepViews) {
  Rollout r(4, 3, 5, Space::discrete(2), torch::kCPU);
  EXPECT_EQ(r.obs.sizes(), (std::vector<int64_t>{4, 3, 5}));
  EXPECT_EQ(r.actions.scalar_type(), torch::kLong);
  EXPECT_EQ(r.step_seconds.size(), 5u);
  r.step[2].rewards.fill_(7);  // a view: writes land in row 2
  EXPECT_EQ(r.rewards[2][1].item<float>(), 7);
  EXPECT_EQ(r.rewards.sum().item<float>(), 21);
  Rollout c(2, 3, 5, Space::box({-1, -1}, {1, 1}), torch::kCPU);
  EXPECT_EQ(c.actions.sizes(), (std::vector<int64_t>{2, 3, 2}));
}

}  // namespace
}  // namespace myriad::learner
