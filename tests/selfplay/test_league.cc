#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "selfplay/league.h"

using namespace myriad::selfplay;

TEST(Elo, ExpectedScoreIsSymmetricAnd400PointsIsTenToOne) {
  EXPECT_DOUBLE_EQ(elo_expected(1000, 1000), 0.5);
  EXPECT_NEAR(elo_expected(1400, 1000), 10.0 / 11.0, 1e-12);
  EXPECT_NEAR(elo_expected(1000, 1400) + elo_expected(1400, 1000), 1.0, 1e-12);
}

TEST(League, RecordMovesBothRatingsZeroSum) {
  League l({Sampler::kUniform, PfspWeighting::kHard, 2.0, 32.0, 1000.0});
  const int64_t first = l.add_snapshot(0);
  // A match of 4 games, score (3 + 1/2) / 4 = 0.875 between equals: +K 0.375 = +12 / -12.
  EXPECT_TRUE(l.record(first, 3, 1, 0));
  EXPECT_DOUBLE_EQ(l.learner_rating(), 1012.0);
  EXPECT_DOUBLE_EQ(l.find(first)->rating, 988.0);
  EXPECT_EQ(l.find(first)->games, 4);
  EXPECT_DOUBLE_EQ(l.find(first)->learner_score, 3.5);
  EXPECT_FALSE(l.record(99, 1, 0, 0));     // unknown opponent: ignored
  EXPECT_FALSE(l.record(first, 0, 0, 0));  // no games: nothing
  EXPECT_DOUBLE_EQ(l.learner_rating(), 1012.0);
  // A snapshot inherits the learner's rating; a draw between equals moves nothing.
  const int64_t second = l.add_snapshot(5);
  EXPECT_DOUBLE_EQ(l.find(second)->rating, 1012.0);
  l.record(second, 1, 0, 1);
  EXPECT_DOUBLE_EQ(l.learner_rating(), 1012.0);
  EXPECT_EQ(l.find(second)->games, 2);
}

TEST(League, WinningEveryGameRaisesTheGapPast200) {
  League l({Sampler::kUniform, PfspWeighting::kHard, 2.0, 16.0, 1000.0});
  const int64_t first = l.add_snapshot(0);
  for (int k = 0; k < 200; ++k) l.record(first, 9, 1, 0);
  EXPECT_GT(l.learner_rating() - l.find(first)->rating, 200.0);
}

TEST(League, SamplersLatestUniformPfsp) {
  std::mt19937_64 rng(7);
  League empty;
  EXPECT_EQ(empty.sample(rng), -1);
  for (Sampler s : {Sampler::kLatest, Sampler::kUniform, Sampler::kPfsp}) {
    League l({s, PfspWeighting::kHard, 2.0, 16.0, 1000.0});
    for (int v = 0; v < 3; ++v) l.add_snapshot(v * 5);
    // The learner always beats snapshot 0, never snapshot 1; snapshot 2 is unplayed.
    l.record(0, 50, 0, 0), l.record(1, 0, 0, 50);
    std::vector<int> counts(3, 0);
    for (int k = 0; k < 3000; ++k) ++counts[l.sample(rng)];
    if (s == Sampler::kLatest) {
      EXPECT_EQ(counts[2], 3000);
    } else if (s == Sampler::kUniform) {
      for (int c : counts) EXPECT_NEAR(c, 1000, 120);
    } else {
      // (1 - x)^2 with x = 50.5/51, 0.5/51, 0.5: weights ~0.0001, 0.98, 0.25.
      EXPECT_LT(counts[0], 20);
      EXPECT_GT(counts[1], 3 * counts[2]);
      EXPECT_GT(counts[2], 300);
    }
  }
}

TEST(League, VarianceWeightingPrefersEvenOpponents) {
  League l({Sampler::kPfsp, PfspWeighting::kVariance, 2.0, 16.0, 1000.0});
  for (int v = 0; v < 3; ++v) l.add_snapshot(v);
  l.record(0, 50, 0, 0), l.record(1, 0, 0, 50), l.record(2, 25, 0, 25);
  const auto w = l.pfsp_weights();
  EXPECT_GT(w[2], 10 * w[0]);
  EXPECT_GT(w[2], 10 * w[1]);
  EXPECT_NEAR(w[2], 0.25, 1e-3);
}

TEST(League, StateRoundTrips) {
  League a({Sampler::kPfsp, PfspWeighting::kHard, 2.0, 16.0, 1000.0});
  a.add_snapshot(0);
  a.add_snapshot(5);
  a.record(0, 1, 0, 0);
  a.record(1, 0, 1, 0);
  League b;
  b.load_state(a.state());
  EXPECT_EQ(b.state(), a.state());
  EXPECT_EQ(b.add_snapshot(10), 2);  // ids continue
  EXPECT_THROW(b.load_state({1.0, 2.0}), std::invalid_argument);
}
