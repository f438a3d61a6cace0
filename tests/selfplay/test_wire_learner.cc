#include <gtest/gtest.h>

#include <filesystem>

#include "learner/config.h"
#include "selfplay/learner.h"
#include "selfplay/wire.h"
#include "tests/temp_dir.h"

using namespace myriad;
using namespace myriad::selfplay;

namespace {

learner::TrainConfig tiny_config() {
  return learner::parse_config(
      "env: {id: Sumo-v0, num_envs: 8, device: cpu}\n"
      "ppo: {num_steps: 16, num_minibatches: 2, update_epochs: 2, normalize_obs: false,"
      " hidden_sizes: [16, 16]}\n"
      "serve: {snapshot_every: 2, chunks_per_update: 2}\n",
      {});
}

// A chunk of random transitions shaped as an actor of B envs would send it.
ChunkMsg random_chunk(int64_t T, int64_t B, int64_t D, int64_t version) {
  ChunkMsg c;
  c.version = version;
  c.opponent_id = 0;
  c.obs = torch::randn({T, B, D});
  c.actions = torch::randint(5, {T, B}, torch::kLong);
  c.logprobs = torch::full({T, B}, std::log(0.2f));
  c.rewards = torch::randint(-1, 2, {T, B}).to(torch::kFloat);
  c.terminated = (torch::rand({T, B}) < 0.05).to(torch::kByte);
  c.truncated = torch::zeros({T, B}, torch::kByte);
  c.final_obs = torch::randn({T, B, D});
  c.next_obs = torch::randn({B, D});
  return c;
}

}  // namespace

TEST(Wire, MessagesRoundTrip) {
  const ChunkMsg c = random_chunk(4, 3, 8, 7);
  const ChunkMsg d = decode_chunk(encode(c));
  EXPECT_EQ(d.version, 7);
  EXPECT_TRUE(torch::equal(d.obs, c.obs));
  EXPECT_TRUE(torch::equal(d.actions, c.actions));
  EXPECT_TRUE(torch::equal(d.terminated, c.terminated));
  EXPECT_TRUE(torch::equal(d.next_obs, c.next_obs));
  MatchResultMsg m{3, 1, 10, 2, 5};
  const MatchResultMsg n = decode_result(encode(m));
  EXPECT_EQ(n.wins, 10);
  EXPECT_EQ(n.losses, 2);
  EXPECT_EQ(n.draws, 5);
  WeightsMsg w{4, 2, 3, "env: {}\n", torch::randn({10}), torch::randn({10})};
  const WeightsMsg x = decode_weights(encode(w));
  EXPECT_EQ(x.config_yaml, w.config_yaml);
  EXPECT_EQ(x.grant, 3);
  EXPECT_TRUE(torch::equal(x.opponent, w.opponent));
}

TEST(Wire, MalformedMessagesAreRefused) {
  std::string bytes = encode(random_chunk(4, 3, 8, 0));
  EXPECT_THROW(decode_chunk(bytes.substr(0, bytes.size() - 1)), std::invalid_argument);
  EXPECT_THROW(decode_chunk(bytes + "x"), std::invalid_argument);
  EXPECT_THROW(decode_result(bytes), std::invalid_argument);  // another message's tag
  ChunkMsg bad = random_chunk(4, 3, 8, 0);
  bad.next_obs = torch::randn({2, 8});
  EXPECT_THROW(decode_chunk(encode(bad)), std::invalid_argument);
}

TEST(SelfPlayLearner, UpdatesSnapshotsAndResumes) {
  torch::manual_seed(0);
  SelfPlayLearner l(tiny_config());
  EXPECT_EQ(l.league().snapshots().size(), 1u);
  std::mt19937_64 rng(1);
  const WeightsMsg w0 = l.weights(rng);
  EXPECT_EQ(w0.version, 0);
  EXPECT_TRUE(torch::equal(w0.learner, w0.opponent));  // the pool holds the initial policy
  for (int k = 0; k < 4; ++k) {
    const UpdateFigures f =
        l.update({random_chunk(16, 8, 8, l.version()), random_chunk(16, 8, 8, l.version())});
    EXPECT_EQ(f.env_steps, 16 * 16);
    EXPECT_TRUE(std::isfinite(f.pg_loss) && std::isfinite(f.v_loss));
  }
  EXPECT_EQ(l.version(), 4);
  EXPECT_EQ(l.league().snapshots().size(), 3u);  // versions 0, 2, 4
  EXPECT_FALSE(torch::equal(l.weights(rng).learner, w0.learner));
  l.league().record(0, 1, 0, 0);

  testing_util::TempDir dir("selfplay");
  const std::string path = dir.path() + "/server.pt";
  l.save(path);
  SelfPlayLearner r(tiny_config());
  r.load(path);
  EXPECT_EQ(r.version(), 4);
  EXPECT_EQ(r.env_steps(), l.env_steps());
  EXPECT_EQ(r.league().state(), l.league().state());
  EXPECT_TRUE(torch::equal(r.weights(rng).learner, l.weights(rng).learner));
  EXPECT_TRUE(torch::equal(r.snapshot_parameters(1), l.snapshot_parameters(1)));
  // The next update continues from the same state in both.
  torch::manual_seed(5);
  const auto a = l.update({random_chunk(16, 8, 8, 4), random_chunk(16, 8, 8, 4)});
  torch::manual_seed(5);
  const auto b = r.update({random_chunk(16, 8, 8, 4), random_chunk(16, 8, 8, 4)});
  EXPECT_DOUBLE_EQ(a.pg_loss, b.pg_loss);
}

TEST(SelfPlayLearner, ThePoolIsCappedKeepingTheFirstSnapshot) {
  auto cfg = tiny_config();
  cfg.serve.max_snapshots = 3;
  SelfPlayLearner l(cfg);
  for (int k = 0; k < 8; ++k)
    l.update({random_chunk(16, 8, 8, l.version()), random_chunk(16, 8, 8, l.version())});
  // Snapshots at versions 0, 2, 4, 6, 8; capped at 3: the first and the two newest.
  std::vector<int64_t> versions;
  for (const Snapshot& s : l.league().snapshots()) versions.push_back(s.version);
  EXPECT_EQ(versions, (std::vector<int64_t>{0, 6, 8}));
  EXPECT_THROW(l.snapshot_parameters(1), std::out_of_range);
  EXPECT_NO_THROW(l.snapshot_parameters(0));
  EXPECT_FALSE(l.league().record(1, 1, 0, 0));  // a match against an evicted snapshot: ignored
}

TEST(SelfPlayLearner, RefusesConfigsItCannotRun) {
  auto cfg = tiny_config();
  cfg.ppo.normalize_obs = true;
  EXPECT_THROW(check_selfplay(cfg), std::invalid_argument);
  cfg = tiny_config();
  cfg.env.id = "CartPole-v1";
  EXPECT_THROW(check_selfplay(cfg), std::invalid_argument);
  cfg = tiny_config();
  cfg.env.id = "Tag-v0";  // predators and prey are not alike
  EXPECT_THROW(check_selfplay(cfg), std::invalid_argument);
}
