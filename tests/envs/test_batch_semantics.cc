// BatchEnv semantics shared by every env: determinism, same-step auto-reset, time limits, errors,
// divergence handling and rollout save/load.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "myriad/device.h"
#include "myriad/parallel_for.h"
#include "myriad/registry.h"
#include "tests/envs/gymnasium_reference.h"

namespace myriad {
namespace {

// Random valid actions for env (integers for Discrete, [N, A] floats in the Box), from gen.
at::Tensor random_actions(const BatchEnv& env, std::mt19937& gen) {
  const Space& a = env.spec().action_space;
  const int64_t n = env.num_envs();
  if (a.is_discrete()) {
    at::Tensor t = at::empty({n}, at::kLong);
    for (int64_t i = 0; i < n; ++i) t.data_ptr<int64_t>()[i] = gen() % a.n;
    return t;
  }
  const int64_t dim = a.flat_size();
  at::Tensor t = at::empty({n, dim}, at::kFloat);
  float* p = t.data_ptr<float>();
  // An unbounded dimension (a task's joint targets) draws from [-1, 1].
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < dim; ++k)
      p[i * dim + k] =
          std::uniform_real_distribution<float>(std::isfinite(a.low[k]) ? a.low[k] : -1.0f,
                                                std::isfinite(a.high[k]) ? a.high[k] : 1.0f)(gen);
  return t;
}

// Every buffer of every step, concatenated.
struct Trace {
  std::vector<at::Tensor> steps;
  void record(const BatchEnv& env) {
    const StepBuffers& b = env.buffers();
    const at::Tensor done = at::logical_or(b.terminated, b.truncated);
    steps.push_back(b.obs.clone());
    steps.push_back(b.reward.clone());
    steps.push_back(b.terminated.clone());
    steps.push_back(b.truncated.clone());
    steps.push_back(at::where(done.unsqueeze(1), b.final_obs, 0.0f));
    steps.push_back(at::where(done, b.episode_return, 0.0f));
    steps.push_back(at::where(done, b.episode_length, 0));
  }
};

const char* const kBufferNames[] = {"obs",       "reward",         "terminated",    "truncated",
                                    "final_obs", "episode_return", "episode_length"};

// Where two traces first differ bitwise ("" when they are identical).
std::string first_difference(const Trace& a, const Trace& b) {
  if (a.steps.size() != b.steps.size()) return "lengths differ";
  for (size_t k = 0; k < a.steps.size(); ++k) {
    const at::Tensor x = a.steps[k].contiguous(), y = b.steps[k].contiguous();
    const std::string where =
        std::string(kBufferNames[k % 7]) + " of record " + std::to_string(k / 7);
    if (!x.sizes().equals(y.sizes()) || x.scalar_type() != y.scalar_type())
      return where + ": shape or dtype";
    if (std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) != 0) {
      const at::Tensor rows = at::ne(x, y).reshape({x.size(0), -1}).any(1).nonzero();
      const int64_t i = rows[0][0].item<int64_t>();
      std::ostringstream out;
      out << where << ", env " << i << ": " << x[i] << " vs " << y[i];
      return out.str();
    }
  }
  return "";
}

bool bitwise_equal(const Trace& a, const Trace& b) { return first_difference(a, b).empty(); }

// Steps with random actions from action_seed, recording every step (and, with initial, the
// buffers before the first step).
Trace rollout(BatchEnv& env, int steps, uint32_t action_seed, bool initial = true) {
  std::mt19937 gen(action_seed);
  Trace trace;
  if (initial) trace.record(env);
  for (int t = 0; t < steps; ++t) {
    env.step(random_actions(env, gen));
    trace.record(env);
  }
  return trace;
}

// Every registered single-agent env but MJCF-v0 (which needs a model file; tests/envs/
// test_mjcf_env.cc) and the multi-agent ones (tests/envs/test_multi_agent_envs.cc): the classic
// envs and the physics envs alike.
std::vector<std::string> single_agent_ids() {
  std::vector<std::string> ids;
  for (const std::string& id : envs::registered_ids())
    if (id != "MJCF-v0" && envs::spec_of(id).num_agents == 1) ids.push_back(id);
  return ids;
}

bool is_physics(const std::string& id) { return envs::spec_of(id).physics_env; }

// A batch that shows every case in a test's time: physics envs cost ~1000x a classic env's step.
int64_t batch_size(const std::string& id) { return is_physics(id) ? 12 : 1000; }
int rollout_steps(const std::string& id) { return is_physics(id) ? 120 : 300; }

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char c : info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

Trace fresh_rollout(const std::string& id, uint64_t seed, int steps) {
  auto env = envs::make(id, batch_size(id), Device::kCpu, seed);
  return rollout(*env, steps, 12345);
}

// Tests run on one OpenMP thread unless they are about threads: on a shared machine each
// parallel region can wait a scheduler quantum for its second thread. Running one thread loses
// nothing, since the determinism test shows two threads give the very same bits.
class OneThreadEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { set_cpu_threads(1); }
};
::testing::Environment* const kOneThread =
    ::testing::AddGlobalTestEnvironment(new OneThreadEnvironment);

// Restores the OpenMP thread count on scope exit.
struct ThreadsGuard {
  int saved = cpu_threads();
  ~ThreadsGuard() { set_cpu_threads(saved); }
};

// Gymnasium CartPole-v1 step (cartpole.py, euler) in float64, for terminal observations.
std::vector<double> row_of(const at::Tensor& t, int64_t i) {
  const at::Tensor r = t[i].to(at::kDouble).contiguous();
  return std::vector<double>(r.data_ptr<double>(), r.data_ptr<double>() + r.numel());
}

// Expects fn to throw std::invalid_argument whose message contains every one of parts.
template <class Fn>
void expect_invalid_argument(Fn fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no exception thrown";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const std::string& part : parts)
      EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' not in: " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected std::invalid_argument, got: " << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// (1) Determinism.

class DeterminismTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DeterminismTest, SameSeedIsBitwiseReproducible) {
  const std::string id = GetParam();
  const int kSteps = rollout_steps(id);
  ThreadsGuard guard;
  set_cpu_threads(1);
  const Trace one_thread = fresh_rollout(id, 2024, kSteps);
  set_cpu_threads(2);
  EXPECT_EQ(cpu_threads(), 2);
  const Trace two_threads = fresh_rollout(id, 2024, kSteps);
  set_cpu_threads(1);  // the rest needs no second thread (the machine may be shared)
  const Trace again = fresh_rollout(id, 2024, kSteps);
  EXPECT_EQ(first_difference(one_thread, two_threads), "") << "1 vs 2 OpenMP threads";
  EXPECT_EQ(first_difference(two_threads, again), "") << "two env instances";

  // Reseeding an env that has already run restarts the same rollout.
  auto env = envs::make(id, batch_size(id), Device::kCpu, 7);
  rollout(*env, 17, 99);
  env->reset(2024);
  EXPECT_EQ(first_difference(rollout(*env, kSteps, 12345), one_thread), "") << "reset(seed)";

  const Trace other_seed = fresh_rollout(id, 2025, kSteps);
  EXPECT_FALSE(at::equal(other_seed.steps[0], one_thread.steps[0])) << "initial obs";
  EXPECT_FALSE(bitwise_equal(other_seed, one_thread));
}

INSTANTIATE_TEST_SUITE_P(Envs, DeterminismTest, ::testing::ValuesIn(single_agent_ids()), test_name);

// The time limit and same-step auto-reset, in every env: a twin with the same seed and actions
// but no early limit shows what the limited env's final step would have observed.
class TimeLimitTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TimeLimitTest, TruncatesAtTheLimitWithFinalObsAndASameStepReset) {
  const std::string id = GetParam();
  const int64_t n = batch_size(id);
  constexpr int kLimit = 6;
  auto limited = envs::make(id, n, Device::kCpu, 5, {{"max_episode_steps", kLimit}});
  auto twin = envs::make(id, n, Device::kCpu, 5, {{"max_episode_steps", 10 * kLimit}});
  ASSERT_TRUE(at::equal(limited->buffers().obs, twin->buffers().obs));
  const at::Tensor first_obs = limited->buffers().obs.clone();
  const StepBuffers& b = limited->buffers();
  const StepBuffers& w = twin->buffers();
  std::mt19937 gen(8);
  std::vector<bool> ended(n, false);  // ended before the limit (terminated): not compared after
  at::Tensor sum = at::zeros({n}, at::kFloat);
  int compared = 0;
  for (int t = 1; t <= kLimit; ++t) {
    const at::Tensor actions = random_actions(*limited, gen);
    limited->step(actions);
    twin->step(actions);
    for (int64_t i = 0; i < n; ++i) {
      if (ended[i]) continue;
      SCOPED_TRACE("step " + std::to_string(t) + ", env " + std::to_string(i));
      EXPECT_EQ(b.reward[i].item<float>(), w.reward[i].item<float>()) << "the step's reward";
      EXPECT_EQ(b.terminated[i].item<bool>(), w.terminated[i].item<bool>());
      sum[i] += w.reward[i];
      if (w.terminated[i].item<bool>()) {
        ended[i] = true;
        EXPECT_TRUE(at::equal(b.final_obs[i], w.final_obs[i]));
        continue;
      }
      const bool at_limit = t == kLimit;
      EXPECT_EQ(b.truncated[i].item<bool>(), at_limit);
      EXPECT_FALSE(w.truncated[i].item<bool>());
      if (!at_limit) {
        EXPECT_TRUE(at::equal(b.obs[i], w.obs[i]));
        continue;
      }
      ++compared;
      EXPECT_TRUE(at::equal(b.final_obs[i], w.obs[i])) << "final_obs is the last step's";
      EXPECT_EQ(b.episode_length[i].item<int>(), kLimit);
      EXPECT_NEAR(b.episode_return[i].item<float>(), sum[i].item<float>(),
                  1e-5 * (1 + std::abs(sum[i].item<float>())));
      EXPECT_FALSE(at::equal(b.obs[i], w.obs[i])) << "obs starts a new episode";
      EXPECT_FALSE(at::equal(b.obs[i], first_obs[i])) << "a new start, not the first again";
    }
  }
  EXPECT_GT(compared, 0) << "no env reached the limit";
}

INSTANTIATE_TEST_SUITE_P(Envs, TimeLimitTest, ::testing::ValuesIn(single_agent_ids()), test_name);

// ---------------------------------------------------------------------------------------------
// (2) Same-step auto-reset.

TEST(AutoReset, CartPoleEpisodeEndsAndRestartsInOneStep) {
  constexpr int64_t n = 64;
  auto env = envs::make("CartPole-v1", n, Device::kCpu, 11, {{"max_episode_steps", 100000}});
  const StepBuffers& b = env->buffers();
  std::mt19937 gen(3);
  std::vector<int> length(n, 0);
  int episodes = 0;
  for (int t = 0; t < 300; ++t) {
    const at::Tensor before = env->get_state();
    const at::Tensor actions = random_actions(*env, gen);
    env->step(actions);
    const at::Tensor after = env->get_state();
    for (int64_t i = 0; i < n; ++i) {
      ++length[i];
      const bool terminated = b.terminated[i].item<bool>();
      EXPECT_FALSE(b.truncated[i].item<bool>());
      EXPECT_EQ(b.reward[i].item<float>(), 1.0f) << "reward of the step, terminal or not";
      // obs is always the observation of the current state.
      EXPECT_TRUE(at::equal(b.obs[i], after[i]));
      if (!terminated) continue;
      ++episodes;
      SCOPED_TRACE("step " + std::to_string(t) + ", env " + std::to_string(i));
      const auto want = gym_ref::cartpole_step(row_of(before, i), actions[i].item<int>()).obs;
      const auto final_obs = row_of(b.final_obs, i);
      for (int k = 0; k < 4; ++k)
        EXPECT_NEAR(final_obs[k], want[k], 1e-5 + 1e-5 * std::abs(want[k])) << "final_obs " << k;
      EXPECT_TRUE(std::abs(final_obs[0]) > 2.4 ||
                  std::abs(final_obs[2]) > 12 * 2 * gym_ref::kPi / 360)
          << "final_obs is not terminal";
      for (double v : row_of(b.obs, i)) {
        EXPECT_GE(v, -0.05);
        EXPECT_LE(v, 0.05);
      }
      EXPECT_EQ(b.episode_length[i].item<int>(), length[i]);
      EXPECT_EQ(b.episode_return[i].item<float>(), static_cast<float>(length[i]))
          << "CartPole's return is its length";
      length[i] = 0;
    }
  }
  EXPECT_GT(episodes, n);
}

TEST(AutoReset, PendulumFinalObsMatchesTheUnlimitedRollout) {
  // Two envs with the same seed and actions; the limited one's final_obs at its limit is the
  // unlimited one's obs on that step, and its return is the sum of the rewards.
  constexpr int64_t n = 32;
  auto limited = envs::make("Pendulum-v1", n, Device::kCpu, 5, {{"max_episode_steps", 5}});
  auto unlimited = envs::make("Pendulum-v1", n, Device::kCpu, 5, {{"max_episode_steps", 1000}});
  EXPECT_TRUE(at::equal(limited->buffers().obs, unlimited->buffers().obs));
  const at::Tensor first_obs = limited->buffers().obs.clone();
  std::mt19937 gen(8);
  at::Tensor sum = at::zeros({n}, at::kFloat);
  for (int t = 1; t <= 5; ++t) {
    const at::Tensor actions = random_actions(*limited, gen);
    limited->step(actions);
    unlimited->step(actions);
    sum += unlimited->buffers().reward;
  }
  const StepBuffers& b = limited->buffers();
  EXPECT_TRUE(at::equal(b.final_obs, unlimited->buffers().obs));
  EXPECT_TRUE(at::equal(b.reward, unlimited->buffers().reward)) << "reward is the step's";
  EXPECT_TRUE(at::allclose(b.episode_return, sum, 1e-6, 1e-5));
  EXPECT_TRUE(b.episode_length.eq(5).all().item<bool>());
  // A fresh episode: a new start (not the first one again), theta_dot in U(-1, 1).
  EXPECT_FALSE(at::equal(b.obs, first_obs));
  EXPECT_FALSE(at::equal(b.obs, unlimited->buffers().obs));
  EXPECT_TRUE(b.obs.select(1, 2).abs().le(1.0f).all().item<bool>());
  const at::Tensor theta = limited->get_state().select(1, 0);
  EXPECT_TRUE(theta.abs().le(static_cast<float>(gym_ref::kPi)).all().item<bool>());
}

// ---------------------------------------------------------------------------------------------
// (3) Truncation.

TEST(Truncation, PendulumTruncatesExactlyAtTheLimit) {
  constexpr int64_t n = 16;
  auto env = envs::make("Pendulum-v1", n, Device::kCpu, 1, {{"max_episode_steps", 5}});
  EXPECT_EQ(env->spec().max_episode_steps, 5);
  const StepBuffers& b = env->buffers();
  std::mt19937 gen(2);
  for (int t = 1; t <= 12; ++t) {
    env->step(random_actions(*env, gen));
    const bool at_limit = t % 5 == 0;
    EXPECT_FALSE(b.terminated.any().item<bool>()) << "step " << t;
    EXPECT_EQ(b.truncated.all().item<bool>(), at_limit) << "step " << t;
    EXPECT_EQ(b.truncated.any().item<bool>(), at_limit) << "step " << t;
    if (at_limit) EXPECT_TRUE(b.episode_length.eq(5).all().item<bool>()) << "step " << t;
  }
}

TEST(Truncation, CartPoleTerminatedAndTruncatedTogetherAtTheLimit) {
  constexpr int64_t n = 8;
  auto env = envs::make("CartPole-v1", n, Device::kCpu, 4, {{"max_episode_steps", 3}});
  const StepBuffers& b = env->buffers();
  // Two steps from the initial U(-0.05, 0.05) states cannot end an episode.
  for (int t = 0; t < 2; ++t) {
    env->step(at::zeros({n}, at::kLong));
    EXPECT_FALSE(b.terminated.any().item<bool>());
    EXPECT_FALSE(b.truncated.any().item<bool>());
  }
  // Even rows cross x = 2.4 on the third step (the limit); odd rows stay upright.
  at::Tensor state = at::zeros({n, 4}, at::kFloat);
  for (int64_t i = 0; i < n; i += 2) {
    state[i][0] = 2.39f;
    state[i][1] = 1.0f;
  }
  env->set_state(state);
  env->step(at::ones({n}, at::kLong));
  for (int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE("env " + std::to_string(i));
    const bool crossing = i % 2 == 0;
    EXPECT_EQ(b.terminated[i].item<bool>(), crossing);
    EXPECT_TRUE(b.truncated[i].item<bool>());
    EXPECT_EQ(b.reward[i].item<float>(), 1.0f);
    EXPECT_EQ(b.episode_length[i].item<int>(), 3);
    EXPECT_EQ(b.episode_return[i].item<float>(), 3.0f);
    EXPECT_NEAR(b.final_obs[i][0].item<double>(), crossing ? 2.41 : 0.0, 1e-6);
    EXPECT_TRUE(b.obs[i].abs().le(0.05f).all().item<bool>()) << "obs starts a new episode";
  }
  // The counters restarted: the next limit is three steps away.
  for (int t = 1; t <= 3; ++t) {
    env->step(at::zeros({n}, at::kLong));
    EXPECT_EQ(b.truncated.all().item<bool>(), t == 3) << "step " << t;
  }
}

// ---------------------------------------------------------------------------------------------
// (4) Errors.

TEST(Errors, UnknownIdListsRegisteredIds) {
  expect_invalid_argument([] { envs::make("CartPole-v9", 4, Device::kCpu, 0); },
                          {"CartPole-v9", "CartPole-v1", "Pendulum-v1", "Acrobot-v1",
                           "MountainCar-v0", "MountainCarContinuous-v0"});
  expect_invalid_argument([] { envs::spec_of("Nope"); }, {"Nope", "CartPole-v1"});
}

TEST(Errors, UnknownOptionIsNamed) {
  expect_invalid_argument(
      [] {
        envs::make("CartPole-v1", 4, Device::kCpu, 0, {{"gravity", 9.8}});
      },
      {"gravity", "max_episode_steps"});
  expect_invalid_argument(
      [] {
        envs::make("Pendulum-v1", 4, Device::kCpu, 0, {{"G", 9.8}});
      },
      {"'G'", "g"});
  EXPECT_NO_THROW(envs::make("Pendulum-v1", 4, Device::kCpu, 0, {{"g", 9.8}}));
  expect_invalid_argument(
      [] {
        envs::make("CartPole-v1", 4, Device::kCpu, 0, {{"max_episode_steps", 0}});
      },
      {"max_episode_steps"});
  expect_invalid_argument(
      [] {
        envs::make("CartPole-v1", 4, Device::kCpu, 0, {{"max_episode_steps", 2.5}});
      },
      {"max_episode_steps"});
}

TEST(Errors, NumEnvsMustBePositive) {
  expect_invalid_argument([] { envs::make("CartPole-v1", 0, Device::kCpu, 0); }, {"num_envs"});
  expect_invalid_argument([] { envs::make("Pendulum-v1", -3, Device::kCpu, 0); }, {"num_envs"});
}

TEST(Errors, WrongActionShapeNamesBothShapes) {
  auto cartpole = envs::make("CartPole-v1", 8, Device::kCpu, 0);
  expect_invalid_argument([&] { cartpole->step(at::zeros({7}, at::kLong)); }, {"[8]", "[7]"});
  expect_invalid_argument([&] { cartpole->step(at::zeros({8, 2}, at::kLong)); }, {"[8]", "[8, 2]"});
  auto pendulum = envs::make("Pendulum-v1", 8, Device::kCpu, 0);
  expect_invalid_argument([&] { pendulum->step(at::zeros({8, 2})); }, {"[8, 1]", "[8, 2]"});
  expect_invalid_argument([&] { pendulum->step(at::zeros({4, 1})); }, {"[8, 1]", "[4, 1]"});
  // [N] is accepted for a one-dimensional Box, and integer dtypes are converted for Discrete.
  EXPECT_NO_THROW(pendulum->step(at::zeros({8})));
  EXPECT_NO_THROW(pendulum->step(at::zeros({8, 1}, at::kDouble)));
  EXPECT_NO_THROW(cartpole->step(at::ones({8}, at::kInt)));
  EXPECT_NO_THROW(cartpole->step(at::ones({8}, at::kByte)));
}

TEST(Errors, ActionTypeAndRange) {
  auto cartpole = envs::make("CartPole-v1", 8, Device::kCpu, 0);
  expect_invalid_argument([&] { cartpole->step(at::zeros({8}, at::kFloat)); },
                          {"CartPole-v1", "integer"});
  at::Tensor bad = at::zeros({8}, at::kLong);
  bad[5] = 2;
  expect_invalid_argument([&] { cartpole->step(bad); }, {"2", "[0, 2)"});
  bad[5] = -1;
  expect_invalid_argument([&] { cartpole->step(bad); }, {"-1"});
  auto acrobot = envs::make("Acrobot-v1", 4, Device::kCpu, 0);
  expect_invalid_argument([&] { acrobot->step(at::full({4}, 3, at::kLong)); }, {"3", "[0, 3)"});
  EXPECT_NO_THROW(acrobot->step(at::full({4}, 2, at::kLong)));
  auto mcc = envs::make("MountainCarContinuous-v0", 4, Device::kCpu, 0);
  expect_invalid_argument([&] { mcc->step(at::zeros({4, 1}, at::kLong)); }, {"float"});
}

TEST(Errors, SetStateValidatesShapeIdsAndValues) {
  auto env = envs::make("CartPole-v1", 8, Device::kCpu, 0);
  const at::Tensor before = env->get_state();
  expect_invalid_argument([&] { env->set_state(at::zeros({8, 3})); }, {"[8, 4]", "[8, 3]"});
  expect_invalid_argument([&] { env->set_state(at::zeros({7, 4})); }, {"[8, 4]", "[7, 4]"});
  expect_invalid_argument([&] { env->set_state(at::zeros({32})); }, {"[8, 4]", "[32]"});
  expect_invalid_argument(
      [&] {
        env->set_state(at::zeros({2, 4}), at::tensor({1, 2, 3}, at::kLong));
      },
      {"[3, 4]", "[2, 4]"});
  expect_invalid_argument(
      [&] {
        env->set_state(at::zeros({1, 4}), at::tensor({8}, at::kLong));
      },
      {"env_ids"});
  at::Tensor nan_state = at::zeros({8, 4});
  nan_state[3][1] = NAN;
  expect_invalid_argument([&] { env->set_state(nan_state); }, {"NaN"});
  EXPECT_TRUE(at::equal(env->get_state(), before)) << "a rejected set_state changes nothing";

  // Partial writes touch only the given rows and refresh their observations.
  const at::Tensor rows = at::full({2, 4}, 0.01f);
  env->set_state(rows, at::tensor({1, 6}, at::kLong));
  const at::Tensor after = env->get_state();
  for (int64_t i = 0; i < 8; ++i) {
    const bool written = i == 1 || i == 6;
    EXPECT_TRUE(at::equal(after[i], written ? rows[0] : before[i])) << "row " << i;
  }
  EXPECT_TRUE(at::equal(env->buffers().obs, after));
}

// ---------------------------------------------------------------------------------------------
// (5) Divergence.

// Checks that exactly the rows in diverged were cut on the last step, as a divergence should be.
void expect_diverged(const BatchEnv& env, const std::vector<int64_t>& diverged) {
  const StepBuffers& b = env.buffers();
  for (int64_t i = 0; i < env.num_envs(); ++i) {
    SCOPED_TRACE("env " + std::to_string(i));
    const bool cut = std::find(diverged.begin(), diverged.end(), i) != diverged.end();
    EXPECT_TRUE(at::isfinite(b.obs[i]).all().item<bool>());
    EXPECT_TRUE(std::isfinite(b.reward[i].item<float>()));
    EXPECT_TRUE(at::isfinite(env.get_state()[i]).all().item<bool>());
    if (cut) {
      EXPECT_TRUE(b.truncated[i].item<bool>());
      EXPECT_FALSE(b.terminated[i].item<bool>());
      EXPECT_EQ(b.reward[i].item<float>(), 0.0f);
      EXPECT_TRUE(at::isfinite(b.final_obs[i]).all().item<bool>());
      EXPECT_TRUE(std::isfinite(b.episode_return[i].item<float>()));
    } else {
      EXPECT_FALSE(b.truncated[i].item<bool>());
    }
  }
}

TEST(Divergence, PendulumHugeStateIsCutAndCounted) {
  constexpr int64_t n = 8;
  auto env = envs::make("Pendulum-v1", n, Device::kCpu, 0);
  EXPECT_EQ(env->diverged_count(), 0);
  at::Tensor state = env->get_state();
  state[0][1] = 1e30f;  // thdot^2 overflows: the cost is infinite
  state[3][1] = -3e38f;
  env->set_state(state);
  env->step(at::zeros({n, 1}));
  expect_diverged(*env, {0, 3});
  EXPECT_EQ(env->diverged_count(), 2);
  // The cut rows restart from Gymnasium's initial distribution.
  const at::Tensor s = env->get_state();
  for (int64_t i : {0, 3}) {
    EXPECT_LE(std::abs(s[i][0].item<float>()), static_cast<float>(gym_ref::kPi));
    EXPECT_LE(std::abs(s[i][1].item<float>()), 1.0f);
  }
  // They keep running normally.
  env->step(at::zeros({n, 1}));
  EXPECT_FALSE(env->buffers().truncated.any().item<bool>());
  EXPECT_EQ(env->diverged_count(), 2);
}

TEST(Divergence, CartPoleOverflowingStateIsCutAndCounted) {
  constexpr int64_t n = 4;
  auto env = envs::make("CartPole-v1", n, Device::kCpu, 0);
  at::Tensor state = env->get_state();
  state[2][3] = 1e30f;  // theta_dot^2 overflows: the accelerations are inf - inf
  env->set_state(state);
  env->step(at::ones({n}, at::kLong));
  expect_diverged(*env, {2});
  EXPECT_EQ(env->diverged_count(), 1);
  EXPECT_TRUE(env->get_state()[2].abs().le(0.05f).all().item<bool>());
}

// A NaN or infinite action (a diverged policy) is refused on the CPU, naming the env, and the
// batch is left as it was; on CUDA (unchecked there) the state it produces is cut as divergence.
TEST(Actions, NonFiniteContinuousActionsAreRefusedOnTheCpu) {
  constexpr int64_t n = 4;
  for (const char* id : {"Pendulum-v1", "MountainCarContinuous-v0"}) {
    for (const float bad : {NAN, INFINITY, -INFINITY}) {
      auto env = envs::make(id, n, Device::kCpu, 0);
      const at::Tensor before = env->get_state().clone();
      at::Tensor actions = at::zeros({n, 1});
      actions[2][0] = bad;
      try {
        env->step(actions);
        ADD_FAILURE() << id << ": a non-finite action was accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("of env 2 is not finite"), std::string::npos)
            << e.what();
      }
      EXPECT_TRUE(at::equal(before, env->get_state())) << id;
      EXPECT_EQ(env->diverged_count(), 0) << id;
    }
  }
}

// Out-of-range discrete actions are refused in every integer width, before the narrowing to
// int32 that would turn 2**32 into a valid 0.
TEST(Actions, OutOfRangeDiscreteActionsAreRefusedInEveryIntegerWidth) {
  constexpr int64_t n = 3;
  auto env = envs::make("CartPole-v1", n, Device::kCpu, 0);
  const std::vector<std::pair<at::ScalarType, int64_t>> cases = {
      {at::kLong, int64_t{1} << 32},
      {at::kLong, -1},
      {at::kLong, (int64_t{1} << 32) + 1},
      {at::kInt, 2},
      {at::kShort, -1},
      {at::kByte, 255},
      {at::kChar, -128}};
  for (const auto& [dtype, value] : cases) {
    at::Tensor actions = at::zeros({n}, at::TensorOptions().dtype(dtype));
    actions[1] = value;
    try {
      env->step(actions);
      ADD_FAILURE() << "action " << value << " of " << c10::toString(dtype) << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("action " + std::to_string(value) + " of env 1"),
                std::string::npos)
          << e.what();
    }
  }
  const uint64_t huge = ~uint64_t{0};
  at::Tensor wide = at::zeros({n}, at::TensorOptions().dtype(at::kUInt64));
  wide[0] = c10::Scalar(huge);
  EXPECT_THROW(env->step(wide), std::invalid_argument);
  EXPECT_NO_THROW(env->step(at::ones({n}, at::TensorOptions().dtype(at::kByte))));
  EXPECT_NO_THROW(env->step(at::ones({n}, at::TensorOptions().dtype(at::kBool))));
}

// ---------------------------------------------------------------------------------------------
// (6) Rollout save/load.

class RolloutStateTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RolloutStateTest, SaveLoadContinuesIdentically) {
  const std::string id = GetParam();
  const int64_t n = is_physics(id) ? 12 : 100;
  const EnvOptions limit = {{"max_episode_steps", 40}};  // truncations happen in the window
  auto env = envs::make(id, n, Device::kCpu, 21, limit);
  rollout(*env, 37, 1);
  // Deep copies, so this test checks loading whether or not saving copies (SavedStateIsASnapshot
  // checks that).
  std::map<std::string, at::Tensor> saved;
  for (const auto& [key, value] : env->save_rollout_state()) saved[key] = value.clone();
  for (const char* key : {"state", "elapsed", "episode", "running_return", "obs", "seed"})
    EXPECT_TRUE(saved.count(key)) << key;
  const Trace original = rollout(*env, 80, 2, false);

  // Into a different instance with another seed.
  auto other = envs::make(id, n, Device::kCpu, 999, limit);
  other->load_rollout_state(saved);
  EXPECT_TRUE(at::equal(other->buffers().obs, saved.at("obs")));
  EXPECT_TRUE(at::equal(other->get_state(), saved.at("state")));
  EXPECT_EQ(first_difference(rollout(*other, 80, 2, false), original), "")
      << "into another instance";

  // Back into the same instance, after it has moved on.
  env->load_rollout_state(saved);
  EXPECT_EQ(first_difference(rollout(*env, 80, 2, false), original), "")
      << "into the same instance";

  // A state of another batch size is refused.
  auto small = envs::make(id, n / 2, Device::kCpu, 0, limit);
  expect_invalid_argument([&] { small->load_rollout_state(saved); }, {"state"});
}

// The saved tensors must not alias the env's live buffers: stepping on after saving may not
// change what was saved (on the CPU, Tensor::cpu() returns the tensor itself, not a copy).
TEST_P(RolloutStateTest, SavedStateIsASnapshot) {
  auto env = envs::make(GetParam(), 12, Device::kCpu, 3);
  const auto saved = env->save_rollout_state();
  std::map<std::string, at::Tensor> copy;
  for (const auto& [key, value] : saved) copy[key] = value.clone();
  rollout(*env, 5, 4);
  for (const auto& [key, value] : copy)
    EXPECT_TRUE(at::equal(saved.at(key), value)) << "'" << key << "' changed after saving";
}

INSTANTIATE_TEST_SUITE_P(Envs, RolloutStateTest, ::testing::ValuesIn(single_agent_ids()),
                         test_name);

// LibTorch shares the OpenMP runtime, and the learner sets its own thread count to 1: the envs
// must still step on the threads asked of myriad (they stepped on one core before).
TEST(CpuThreads, LibTorchsThreadCountLeavesTheEnvThreadsAlone) {
  ThreadsGuard guard;
  const int torch_threads = at::get_num_threads();
  set_cpu_threads(2);
  at::set_num_threads(1);
  EXPECT_EQ(cpu_threads(), 2);
  std::atomic<int> team{0};
  auto widest = [&team](int64_t) {
    const int n = omp_get_num_threads();
    int seen = team.load();
    while (n > seen && !team.compare_exchange_weak(seen, n)) {
    }
  };
  detail::cpu_for(64, widest, 1);
  EXPECT_EQ(team.load(), 2) << "threads in the env's parallel loop";
  at::set_num_threads(torch_threads);
}

}  // namespace
}  // namespace myriad
