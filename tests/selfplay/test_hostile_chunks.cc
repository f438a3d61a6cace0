// `myriad serve` in-process against actors that hold the secret but send wrong chunks (a bug, a
// wrong build, another env config): every case goes through a real authenticated client over
// loopback, is refused by name, and the server stays alive, trains on good chunks and counts
// what it refused per actor. Every wait is on a condition with a deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "learner/config.h"
#include "selfplay/chunk_check.h"
#include "selfplay/learner.h"
#include "selfplay/serve.h"
#include "selfplay/wire.h"
#include "server/client.h"
#include "tests/temp_dir.h"

using namespace myriad;
using namespace myriad::selfplay;
using namespace std::chrono_literals;

namespace {

const char* kSecretEnv = "MYRIAD_HOSTILE_TEST_SECRET";
const char* kSecret = "hostile-test-secret-0123456789abcdef";

std::string source_dir() {
  const char* s = std::getenv("MYRIAD_SOURCE_DIR");
  return s ? s : ".";
}

const std::vector<std::string> kTiny = {"env.num_envs=4",
                                        "ppo.num_steps=8",
                                        "ppo.num_minibatches=2",
                                        "ppo.update_epochs=1",
                                        "ppo.hidden_sizes=[8,8]",
                                        "serve.chunks_per_update=2",
                                        "serve.snapshot_every=2",
                                        "run.checkpoint_every=0",
                                        "run.eval_episodes=0",
                                        "run.log_every_seconds=1",
                                        "run.total_env_steps=1000000000"};

learner::TrainConfig tiny_config() {
  std::vector<std::string> o = kTiny;
  return learner::load_config(source_dir() + "/configs/sumo_selfplay.yaml", o);
}

// A chunk as an honest actor of B rows would send it under `spec`.
ChunkMsg good_chunk(const ChunkSpec& spec, int64_t B, int64_t version) {
  const int64_t T = spec.steps, D = spec.obs_width;
  ChunkMsg c;
  c.version = version;
  c.obs = torch::randn({T, B, D});
  c.actions = torch::randint(spec.action_space.n, {T, B}, torch::kLong);
  c.logprobs = torch::full({T, B}, std::log(1.0f / spec.action_space.n));
  c.rewards = torch::randint(-1, 2, {T, B}).to(torch::kFloat);
  c.terminated = (torch::rand({T, B}) < 0.1).to(torch::kByte);
  c.truncated = torch::zeros({T, B}, torch::kByte);
  c.final_obs = torch::randn({T, B, D});
  c.next_obs = torch::randn({B, D});
  return c;
}

// A chunk with T and B of its own (every field consistent with them).
ChunkMsg sized_chunk(const ChunkSpec& spec, int64_t T, int64_t B, int64_t D) {
  ChunkSpec s = spec;
  s.steps = T, s.obs_width = D;
  if (T == 0 || B == 0) {
    ChunkMsg c = good_chunk(spec, 1, 0);
    c.obs = torch::zeros({T, B, D}), c.final_obs = torch::zeros({T, B, D});
    c.next_obs = torch::zeros({B, D});
    c.actions = torch::zeros({T, B}, torch::kLong);
    c.logprobs = torch::zeros({T, B}), c.rewards = torch::zeros({T, B});
    c.terminated = torch::zeros({T, B}, torch::kByte), c.truncated = c.terminated.clone();
    return c;
  }
  return good_chunk(s, B, 0);
}

// One hostile case: a name and the payload its actor sends.
struct Case {
  std::string name;
  std::function<std::string(const ChunkSpec&)> payload;
  std::string field;  // what the refusal must name
};

std::string mutate(const ChunkSpec& spec, const std::function<void(ChunkMsg&)>& f) {
  ChunkMsg c = good_chunk(spec, 4, 0);
  f(c);
  return encode(c);
}

std::vector<Case> hostile_cases() {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<Case> cases = {
      {"int64 action 2^40",
       [](const ChunkSpec& s) {
         return mutate(s, [](ChunkMsg& c) { c.actions[3][1] = int64_t{1} << 40; });
       },
       "actions"},
      {"T=1 B=1", [](const ChunkSpec& s) { return encode(sized_chunk(s, 1, 1, s.obs_width)); },
       "obs"},
      {"NaN reward",
       [=](const ChunkSpec& s) { return mutate(s, [=](ChunkMsg& c) { c.rewards[2][0] = nan; }); },
       "rewards"},
      {"inf reward",
       [=](const ChunkSpec& s) { return mutate(s, [=](ChunkMsg& c) { c.rewards[0][3] = inf; }); },
       "rewards"},
      {"3e38 reward",
       [](const ChunkSpec& s) { return mutate(s, [](ChunkMsg& c) { c.rewards[1][1] = 3e38f; }); },
       "rewards"},
      {"NaN observation",
       [=](const ChunkSpec& s) { return mutate(s, [=](ChunkMsg& c) { c.obs[4][2][0] = nan; }); },
       "obs"},
      {"NaN next observation",
       [=](const ChunkSpec& s) { return mutate(s, [=](ChunkMsg& c) { c.next_obs[1][1] = nan; }); },
       "next_obs"},
      {"NaN log-probability",
       [=](const ChunkSpec& s) { return mutate(s, [=](ChunkMsg& c) { c.logprobs[5][0] = nan; }); },
       "logprobs"},
      {"action 99",
       [](const ChunkSpec& s) { return mutate(s, [](ChunkMsg& c) { c.actions[0][0] = 99; }); },
       "actions"},
      {"action -7",
       [](const ChunkSpec& s) { return mutate(s, [](ChunkMsg& c) { c.actions[7][3] = -7; }); },
       "actions"},
      {"int64 log-probabilities",
       [](const ChunkSpec& s) {
         return mutate(s, [](ChunkMsg& c) { c.logprobs = c.logprobs.to(torch::kLong); });
       },
       "logprobs"},
      {"log-probability +50",
       [](const ChunkSpec& s) { return mutate(s, [](ChunkMsg& c) { c.logprobs[2][2] = 50.0f; }); },
       "logprobs"},
      {"observation width +1",
       [](const ChunkSpec& s) { return encode(sized_chunk(s, s.steps, 4, s.obs_width + 1)); },
       "obs"},
      {"observation width 1",
       [](const ChunkSpec& s) { return encode(sized_chunk(s, s.steps, 4, 1)); }, "obs"},
      {"float actions",
       [](const ChunkSpec& s) {
         return mutate(s, [](ChunkMsg& c) { c.actions = c.actions.to(torch::kFloat); });
       },
       "actions"},
      {"3-D actions",
       [](const ChunkSpec& s) {
         return mutate(s, [](ChunkMsg& c) {
           c.actions = c.actions.unsqueeze(2).repeat({1, 1, 2});
         });
       },
       "actions"},
      {"a shorter chunk",
       [](const ChunkSpec& s) { return encode(sized_chunk(s, s.steps - 1, 4, s.obs_width)); },
       "obs"},
      {"a longer chunk",
       [](const ChunkSpec& s) { return encode(sized_chunk(s, 2 * s.steps, 4, s.obs_width)); },
       "obs"},
      {"T=0", [](const ChunkSpec& s) { return encode(sized_chunk(s, 0, 4, s.obs_width)); }, "obs"},
      {"B=0", [](const ChunkSpec& s) { return encode(sized_chunk(s, s.steps, 0, s.obs_width)); },
       "obs"},
      {"sizes whose product overflows",
       [](const ChunkSpec&) {
         // Tag, version, opponent, then obs's header: float32, rank 3, 2^40 x 2^40 x 2^40.
         std::string p;
         const auto put = [&p](const auto v) {
           p.append(reinterpret_cast<const char*>(&v), sizeof v);
         };
         put(kChunkTag), put(int64_t{0}), put(int64_t{0}), put(uint8_t{0}), put(uint8_t{3});
         for (int k = 0; k < 3; ++k) put(int64_t{1} << 40);
         p += std::string(64, '\0');
         return p;
       },
       "obs"},
      {"version -2^63",
       [](const ChunkSpec& s) {
         return mutate(s, [](ChunkMsg& c) { c.version = std::numeric_limits<int64_t>::min(); });
       },
       "version"},
      {"a flag of 7",
       [](const ChunkSpec& s) { return mutate(s, [](ChunkMsg& c) { c.terminated[0][0] = 7; }); },
       "terminated"},
  };
  return cases;
}

// The learner end, run_serve on its own thread, stopped by a flag.
class ServeHarness {
 public:
  explicit ServeHarness(const std::string& out, const std::vector<std::string>& extra = {}) {
    ::setenv(kSecretEnv, kSecret, 1);
    o_.config = source_dir() + "/configs/sumo_selfplay.yaml";
    o_.overrides = kTiny;
    o_.overrides.insert(o_.overrides.end(), extra.begin(), extra.end());
    o_.overrides.push_back("serve.port=0");
    o_.out = out;
    o_.secret_env = kSecretEnv;
    o_.listening_port = &port_;
    o_.stop = &stop_;
    thread_ = std::thread([this] {
      try {
        rc_ = run_serve(o_);
      } catch (const std::exception& e) {
        error_ = e.what();
        rc_ = 1;
      }
      done_ = true;
    });
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (port_.load() == 0 && !done_ && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
  }
  ~ServeHarness() { finish(); }
  uint16_t port() const { return static_cast<uint16_t>(port_.load()); }
  bool alive() const { return !done_; }
  int finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return rc_;
  }
  const std::string& error() const { return error_; }

 private:
  ServeOptions o_;
  std::atomic<int> port_{0};
  std::atomic<bool> stop_{false}, done_{false};
  std::thread thread_;
  int rc_ = -1;
  std::string error_;
};

// An authenticated actor that sends what it is told and counts the Weights (grants) it gets.
class TestActor {
 public:
  TestActor(uint16_t port, const std::string& id) {
    server::ClientOptions co;
    co.port = port;
    co.self = {server::Role::Actor, id};
    co.reconnect = false;
    server::ClientCallbacks cb;
    cb.on_frame = [this](server::Frame&& f) {
      if (f.type != server::FrameType::Weights) return;
      const WeightsMsg w = decode_weights(f.payload);
      std::lock_guard<std::mutex> lock(mu_);
      ++weights_;
      grants_ += w.grant;
      version_ = w.version;
      finite_ = finite_ && w.learner.isfinite().all().item<bool>() &&
                w.opponent.isfinite().all().item<bool>();
      cv_.notify_all();
    };
    cb.on_disconnected = [this](const std::string&) {
      std::lock_guard<std::mutex> lock(mu_);
      disconnected_ = true;
      cv_.notify_all();
    };
    client_ = std::make_unique<server::Client>(kSecret, co, cb);
    client_->start();
  }
  bool connected(std::chrono::milliseconds t = 10s) { return client_->wait_connected(t); }
  // Waits until `n` Weights in all have come (each a grant or new weights).
  bool wait_weights(int64_t n, std::chrono::milliseconds t = 20s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, t, [&] { return weights_ >= n; });
  }
  bool wait_disconnected(std::chrono::milliseconds t = 10s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, t, [&] { return disconnected_; });
  }
  int64_t weights() {
    std::lock_guard<std::mutex> lock(mu_);
    return weights_;
  }
  int64_t version() {
    std::lock_guard<std::mutex> lock(mu_);
    return version_;
  }
  bool all_finite() {
    std::lock_guard<std::mutex> lock(mu_);
    return finite_;
  }
  bool send(const std::string& payload) { return client_->send(server::FrameType::Chunk, payload); }
  void stop() { client_->stop(); }

 private:
  std::unique_ptr<server::Client> client_;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t weights_ = 0, grants_ = 0, version_ = 0;
  bool finite_ = true, disconnected_ = false;
};

nlohmann::json read_summary(const std::string& dir) {
  std::ifstream in(dir + "/summary.json");
  return nlohmann::json::parse(in);
}

}  // namespace

TEST(ChunkCheck, AGoodChunkPassesAndEachHostileCaseNamesItsField) {
  const ChunkSpec spec = chunk_spec(tiny_config());
  ASSERT_TRUE(spec.action_space.is_discrete());
  EXPECT_EQ(check_chunk(good_chunk(spec, 4, 0), spec), "");
  for (const Case& c : hostile_cases()) {
    std::string why;
    try {
      why = check_chunk(decode_chunk(c.payload(spec)), spec);
    } catch (const std::invalid_argument& e) {
      why = e.what();
    }
    EXPECT_NE(why.find(c.field), std::string::npos) << c.name << ": " << why;
  }
}

TEST(SelfPlayLearnerHostile, TooFewTransitionsAreRefusedNotSpun) {
  SelfPlayLearner l(tiny_config());
  const ChunkSpec spec = chunk_spec(l.config());
  ChunkSpec one = spec;
  one.steps = 1;
  // T=1, B=1 against 2 minibatches: before, an endless loop of empty minibatches.
  EXPECT_THROW(l.update({good_chunk(one, 1, 0)}), std::invalid_argument);
  EXPECT_EQ(l.version(), 0);
}

TEST(SelfPlayLearnerHostile, ANonFiniteUpdateIsUndone) {
  // Log-probabilities that are finite and <= 0 but absurd make the PPO ratio overflow.
  learner::TrainConfig config = tiny_config();
  config.ppo.max_grad_norm = 1e30;
  config.ppo.learning_rate = 1e30;
  SelfPlayLearner l(config);
  const ChunkSpec spec = chunk_spec(config);
  std::mt19937_64 rng(1);
  const torch::Tensor before = l.weights(rng).learner.clone();
  bool refused = false;
  for (int k = 0; k < 5 && !refused; ++k) {
    ChunkMsg a = good_chunk(spec, 4, l.version()), b = good_chunk(spec, 4, l.version());
    a.logprobs.fill_(-3e38f), b.rewards.mul_(1e9f);
    try {
      l.update({a, b});
    } catch (const NonFiniteUpdate&) {
      refused = true;
    }
  }
  ASSERT_TRUE(refused) << "no update went non-finite; the test needs a harsher chunk";
  EXPECT_TRUE(l.weights(rng).learner.isfinite().all().item<bool>());
  const testing_util::TempDir dir("nonfinite");
  EXPECT_NO_THROW(l.save(dir.file("server.pt")));
  (void)before;
}

TEST(ServeHostile, EveryBadChunkIsRefusedByNameAndTheServerTrainsOn) {
  const testing_util::TempDir dir("serve_hostile");
  const std::string out = dir.file("run");
  ServeHarness serve(out);
  ASSERT_NE(serve.port(), 0) << serve.error();
  const ChunkSpec spec = chunk_spec(tiny_config());
  const std::vector<Case> cases = hostile_cases();
  // One actor per case (each refused once: no disconnect), waiting for the server's next grant,
  // which comes only after it has dropped the chunk: the server read it and is still serving.
  for (size_t k = 0; k < cases.size(); ++k) {
    TestActor a(serve.port(), "bad" + std::to_string(k));
    ASSERT_TRUE(a.connected()) << cases[k].name;
    ASSERT_TRUE(a.wait_weights(1)) << cases[k].name;
    ASSERT_TRUE(a.send(cases[k].payload(spec))) << cases[k].name;
    ASSERT_TRUE(a.wait_weights(2)) << cases[k].name << ": no grant after the chunk";
    ASSERT_TRUE(serve.alive()) << cases[k].name;
    a.stop();
  }
  // An honest actor still trains it: 2 chunks a version.
  {
    TestActor good(serve.port(), "good");
    ASSERT_TRUE(good.connected());
    ASSERT_TRUE(good.wait_weights(1));
    // Two chunks a version: the update's new weights come to it after each pair.
    for (int64_t v = 0; v < 3; ++v) {
      const int64_t seen = good.weights();
      ASSERT_TRUE(good.send(encode(good_chunk(spec, 4, good.version()))));
      ASSERT_TRUE(good.send(encode(good_chunk(spec, 4, good.version()))));
      ASSERT_TRUE(good.wait_weights(seen + 1));
      const auto deadline = std::chrono::steady_clock::now() + 20s;
      while (good.version() < v + 1 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(5ms);
    }
    EXPECT_GE(good.version(), 2);
    EXPECT_TRUE(good.all_finite());
    good.stop();
  }
  // One that keeps sending bad chunks is disconnected after 3 in a row.
  {
    TestActor bad(serve.port(), "repeat");
    ASSERT_TRUE(bad.connected());
    ASSERT_TRUE(bad.wait_weights(1));
    const std::string payload = cases[2].payload(spec);
    for (int k = 0; k < 3; ++k) bad.send(payload);
    EXPECT_TRUE(bad.wait_disconnected());
  }
  EXPECT_TRUE(serve.alive());
  ASSERT_EQ(serve.finish(), 0) << serve.error();
  const nlohmann::json s = read_summary(out);
  EXPECT_EQ(s["chunks_refused"].get<int64_t>(), static_cast<int64_t>(cases.size()) + 3);
  EXPECT_GE(s["version"].get<int64_t>(), 2);
  for (size_t k = 0; k < cases.size(); ++k)
    EXPECT_EQ(s["refused_by_actor"]["bad" + std::to_string(k)]["chunks"].get<int64_t>(), 1);
  EXPECT_EQ(s["refused_by_actor"]["repeat"]["chunks"].get<int64_t>(), 3);
  EXPECT_EQ(s["refused_by_actor"]["repeat"]["disconnects"].get<int64_t>(), 1);
  EXPECT_FALSE(s["refused_by_actor"].contains("good"));
  // serve.csv carries the counts per actor.
  std::ifstream csv(out + "/serve.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_NE(header.find("chunks_refused"), std::string::npos);
  EXPECT_NE(header.find("refused_by_actor"), std::string::npos);
}

TEST(ChunkCheck, ContinuousActionsMustBeFiniteAndTheirLogDensityMayBePositive) {
  ChunkSpec spec;
  spec.steps = 4, spec.obs_width = 3;
  spec.action_space = Space::box({-1, -1}, {1, 1});
  ChunkMsg c;
  c.obs = torch::randn({4, 2, 3}), c.final_obs = torch::randn({4, 2, 3});
  c.next_obs = torch::randn({2, 3});
  c.actions = torch::randn({4, 2, 2}) * 3;  // outside [-1, 1] is fine: the env clips
  c.logprobs = torch::full({4, 2}, 2.5f);   // a narrow Gaussian's log-density
  c.rewards = torch::zeros({4, 2});
  c.terminated = torch::zeros({4, 2}, torch::kByte), c.truncated = c.terminated.clone();
  EXPECT_EQ(check_chunk(c, spec), "");
  ChunkMsg bad = c;
  bad.actions = c.actions.clone();
  bad.actions[1][1][0] = std::numeric_limits<float>::infinity();
  EXPECT_NE(check_chunk(bad, spec).find("actions: non-finite"), std::string::npos);
  bad.actions = c.actions.to(torch::kLong);
  EXPECT_NE(check_chunk(bad, spec).find("actions: dtype int64"), std::string::npos);
  bad.actions = c.actions.narrow(2, 0, 1);
  EXPECT_NE(check_chunk(bad, spec).find("actions: shape"), std::string::npos);
}

TEST(ChunkCheck, ImpossibleMatchResultsAreRefused) {
  EXPECT_EQ(check_result({0, 0, 3, 1, 2}, 100), "");
  EXPECT_NE(check_result({0, 0, -1, 0, 0}, 100), "");
  EXPECT_NE(check_result({0, 0, 60, 60, 0}, 100), "");
  EXPECT_NE(check_result({0, 0, INT64_MAX, INT64_MAX, INT64_MAX}, 100), "");
}

// T=1, B=1 chunks are fine when ppo.num_steps is 1: the server then waits for as many chunks as
// the minibatches need (granting more) instead of cutting empty minibatches forever.
TEST(ServeHostile, OneStepOneEnvChunksWaitForEnoughTransitions) {
  const testing_util::TempDir dir("serve_one_step");
  const std::vector<std::string> extra = {"ppo.num_steps=1", "ppo.num_minibatches=2"};
  ServeHarness serve(dir.file("run"), extra);
  ASSERT_NE(serve.port(), 0) << serve.error();
  std::vector<std::string> o = kTiny;
  o.insert(o.end(), extra.begin(), extra.end());
  const ChunkSpec spec =
      chunk_spec(learner::load_config(source_dir() + "/configs/sumo_selfplay.yaml", o));
  ASSERT_EQ(spec.steps, 1);
  TestActor a(serve.port(), "tiny");
  ASSERT_TRUE(a.connected());
  ASSERT_TRUE(a.wait_weights(1));
  for (int k = 0; k < 4; ++k) ASSERT_TRUE(a.send(encode(good_chunk(spec, 1, 0))));
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (a.version() < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(a.version(), 1);
  a.stop();
  ASSERT_EQ(serve.finish(), 0) << serve.error();
  EXPECT_EQ(read_summary(dir.file("run"))["chunks_refused"].get<int64_t>(), 0);
}
