// The multi-agent batch envs (envs/multi_agent_batch_env.h over envs/mpe/): the agent axis in
// the spec and the buffers, and the batch semantics every env satisfies (tests/envs/
// test_batch_semantics.cc) with per-agent rewards, returns and final observations: determinism
// across thread counts, same-step auto-reset, state access, rollout resume, divergence, action
// checks. A batch step equals the scenario's own step driven directly.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "envs/cpu_tables.h"
#include "envs/mpe/registered.h"
#include "myriad/device.h"
#include "myriad/registry.h"

namespace myriad {
namespace {

const char* const kIds[] = {"Spread-v0", "Tag-v0", "Sumo-v0"};

class OneThreadEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { set_cpu_threads(1); }
};
::testing::Environment* const kOneThread =
    ::testing::AddGlobalTestEnvironment(new OneThreadEnvironment);

struct ThreadsGuard {
  int saved = cpu_threads();
  ~ThreadsGuard() { set_cpu_threads(saved); }
};

// Random valid actions: [N, A] integers (Discrete) or [N, A, K] floats in the Box.
at::Tensor random_actions(const BatchEnv& env, std::mt19937& gen) {
  const Space& a = env.spec().action_space;
  const int64_t n = env.num_envs(), agents = env.spec().num_agents;
  if (a.is_discrete()) {
    at::Tensor t = at::empty({n, agents}, at::kLong);
    for (int64_t i = 0; i < t.numel(); ++i) t.data_ptr<int64_t>()[i] = gen() % a.n;
    return t;
  }
  const int64_t k = a.flat_size();
  at::Tensor t = at::empty({n, agents, k}, at::kFloat);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data_ptr<float>()[i] = std::uniform_real_distribution<float>(0.0f, 1.0f)(gen);
  return t;
}

// Every buffer of every step (final_obs and statistics masked where no episode ended).
std::vector<at::Tensor> trace(BatchEnv& env, int steps, uint32_t action_seed) {
  std::mt19937 gen(action_seed);
  std::vector<at::Tensor> out = {env.buffers().obs.clone()};
  for (int t = 0; t < steps; ++t) {
    env.step(random_actions(env, gen));
    const StepBuffers& b = env.buffers();
    const at::Tensor done = at::logical_or(b.terminated, b.truncated);
    out.push_back(b.obs.clone());
    out.push_back(b.reward.clone());
    out.push_back(b.terminated.clone());
    out.push_back(b.truncated.clone());
    out.push_back(at::where(done.view({-1, 1, 1}), b.final_obs, 0.0f));
    out.push_back(at::where(done.view({-1, 1}), b.episode_return, 0.0f));
    out.push_back(at::where(done, b.episode_length, 0));
  }
  return out;
}

bool bitwise_equal(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    const at::Tensor x = a[k].contiguous(), y = b[k].contiguous();
    if (!x.sizes().equals(y.sizes()) || x.scalar_type() != y.scalar_type() ||
        std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) != 0)
      return false;
  }
  return true;
}

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
// The spec and the buffers.

TEST(MultiAgentSpec, AgentsTeamsAndObservationSizes) {
  const EnvSpec tag = envs::spec_of("Tag-v0");
  EXPECT_EQ(tag.num_agents, 4);
  EXPECT_EQ(tag.agent_names,
            (std::vector<std::string>{"adversary_0", "adversary_1", "adversary_2", "agent_0"}));
  EXPECT_EQ(tag.team_ids, (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(tag.agent_obs_sizes, (std::vector<int64_t>{16, 16, 16, 14}));
  EXPECT_EQ(tag.observation_space.shape, (std::vector<int64_t>{16}));
  EXPECT_EQ(tag.action_space.describe(), "Discrete(5)");
  EXPECT_EQ(tag.max_episode_steps, 25);
  EXPECT_EQ(tag.state_names.size(), 4u * 6u);
  EXPECT_EQ(tag.state_names.front(), "adversary_0_x");
  EXPECT_EQ(tag.state_names.back(), "obstacle_1_vy");

  const EnvSpec spread = envs::spec_of("Spread-v0");
  EXPECT_EQ(spread.num_agents, 3);
  EXPECT_EQ(spread.team_ids, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(spread.agent_obs_sizes, (std::vector<int64_t>{18, 18, 18}));
  EXPECT_EQ(spread.option_names, (std::vector<std::string>{"continuous", "local_ratio"}));

  const EnvSpec sumo = envs::spec_of("Sumo-v0");
  EXPECT_EQ(sumo.num_agents, 2);
  EXPECT_EQ(sumo.team_ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(sumo.max_episode_steps, 100);

  // Single-agent envs: one agent, no agent lists.
  for (const char* id : {"CartPole-v1", "Pendulum-v1", "Acrobot-v1"}) {
    const EnvSpec s = envs::spec_of(id);
    EXPECT_EQ(s.num_agents, 1) << id;
    EXPECT_FALSE(s.multi_agent()) << id;
    EXPECT_TRUE(s.agent_names.empty() && s.team_ids.empty() && s.agent_obs_sizes.empty()) << id;
  }
}

TEST(MultiAgentSpec, BuffersCarryTheAgentAxis) {
  constexpr int64_t n = 5;
  auto env = envs::make("Tag-v0", n, Device::kCpu, 0);
  const StepBuffers& b = env->buffers();
  EXPECT_EQ(b.obs.sizes(), (std::vector<int64_t>{n, 4, 16}));
  EXPECT_EQ(b.final_obs.sizes(), (std::vector<int64_t>{n, 4, 16}));
  EXPECT_EQ(b.reward.sizes(), (std::vector<int64_t>{n, 4}));
  EXPECT_EQ(b.episode_return.sizes(), (std::vector<int64_t>{n, 4}));
  EXPECT_EQ(b.terminated.sizes(), (std::vector<int64_t>{n}));
  EXPECT_EQ(b.truncated.sizes(), (std::vector<int64_t>{n}));
  EXPECT_EQ(b.episode_length.sizes(), (std::vector<int64_t>{n}));
  // The good agent's padding is 0.
  EXPECT_TRUE(b.obs.select(1, 3).slice(1, 14).eq(0).all().item<bool>());
  auto cont = envs::make("Tag-v0", n, Device::kCpu, 0, {{"continuous", 1}});
  const Space& box = cont->spec().action_space;
  EXPECT_FALSE(box.is_discrete());
  EXPECT_EQ(box.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(box.low, std::vector<float>(5, 0.0f));
  EXPECT_EQ(box.high, std::vector<float>(5, 1.0f));
  std::mt19937 gen(1);
  EXPECT_NO_THROW(cont->step(random_actions(*cont, gen)));
}

// ---------------------------------------------------------------------------------------------
// A batch step is the scenario's step.

template <class S>
void expect_equal_to_the_scenario(const std::string& id, const EnvOptions& options,
                                  const typename S::Params& params) {
  constexpr int64_t n = 64;
  constexpr int A = S::kAgents, D = S::kObsDim, K = S::kActionDim;
  EnvOptions o = options;
  o["max_episode_steps"] = 1000;
  auto env = envs::make(id, n, Device::kCpu, 3, o);
  std::mt19937 gen(5);
  for (int t = 0; t < 30; ++t) {
    const at::Tensor before = env->get_state();
    const at::Tensor actions = random_actions(*env, gen);
    env->step(actions);
    const at::Tensor after = env->get_state();
    const at::Tensor act =
        actions.to(std::is_integral_v<typename S::Action> ? at::kInt : at::kFloat).contiguous();
    for (int64_t i = 0; i < n; ++i) {
      float s[S::kStateDim], reward[A], obs[A * D];
      std::memcpy(s, before[i].contiguous().data_ptr<float>(), sizeof s);
      bool terminated = false;
      S::step(params, s, act.data_ptr<typename S::Action>() + i * A * K, reward, terminated);
      S::observe(params, s, obs);
      SCOPED_TRACE(id + " step " + std::to_string(t) + ", env " + std::to_string(i));
      EXPECT_EQ(std::memcmp(s, after[i].contiguous().data_ptr<float>(), sizeof s), 0);
      EXPECT_EQ(std::memcmp(reward, env->buffers().reward[i].contiguous().data_ptr<float>(),
                            sizeof reward),
                0);
      EXPECT_EQ(std::memcmp(obs, env->buffers().obs[i].contiguous().data_ptr<float>(), sizeof obs),
                0);
      EXPECT_EQ(env->buffers().terminated[i].item<bool>(), terminated);
    }
  }
}

TEST(MultiAgentKernels, SpreadAndTagStepsEqualTheScenarios) {
  envs::SpreadDiscrete::Params spread;
  spread.local_ratio = 0.25f;
  expect_equal_to_the_scenario<envs::SpreadDiscrete>("Spread-v0", {{"local_ratio", 0.25}}, spread);
  expect_equal_to_the_scenario<envs::SpreadContinuous>("Spread-v0", {{"continuous", 1}}, {});
  expect_equal_to_the_scenario<envs::TagDiscrete>("Tag-v0", {}, {});
  expect_equal_to_the_scenario<envs::TagContinuous>("Tag-v0", {{"continuous", 1}}, {});
}

// ---------------------------------------------------------------------------------------------
// Determinism, auto-reset, state, resume, divergence.

TEST(MultiAgentSemantics, SameSeedIsBitwiseReproducibleAcrossThreadCounts) {
  ThreadsGuard guard;
  for (const char* id : kIds) {
    for (double continuous : {0.0, 1.0}) {
      SCOPED_TRACE(std::string(id) + (continuous ? " continuous" : " discrete"));
      const EnvOptions o = {{"continuous", continuous}, {"max_episode_steps", 10}};
      set_cpu_threads(1);
      auto one = envs::make(id, 1000, Device::kCpu, 2024, o);
      const auto a = trace(*one, 40, 7);
      set_cpu_threads(2);
      EXPECT_EQ(cpu_threads(), 2);
      auto two = envs::make(id, 1000, Device::kCpu, 2024, o);
      const auto b = trace(*two, 40, 7);
      set_cpu_threads(1);
      EXPECT_TRUE(bitwise_equal(a, b)) << "1 vs 2 OpenMP threads";
      // Reseeding restarts the same rollout; another seed gives another.
      two->reset(2024);
      EXPECT_TRUE(bitwise_equal(trace(*two, 40, 7), a)) << "reset(seed)";
      auto other = envs::make(id, 1000, Device::kCpu, 2025, o);
      EXPECT_FALSE(at::equal(other->buffers().obs, one->buffers().obs));
    }
  }
}

TEST(MultiAgentSemantics, FinalObsPerAgentMatchesTheUnlimitedRollout) {
  constexpr int64_t n = 32;
  for (const char* id : {"Spread-v0", "Tag-v0"}) {
    SCOPED_TRACE(id);
    auto limited = envs::make(id, n, Device::kCpu, 5, {{"max_episode_steps", 5}});
    auto unlimited = envs::make(id, n, Device::kCpu, 5, {{"max_episode_steps", 1000}});
    const at::Tensor first_obs = limited->buffers().obs.clone();
    std::mt19937 gen(8);
    at::Tensor sum = at::zeros({n, limited->spec().num_agents}, at::kFloat);
    for (int t = 1; t <= 5; ++t) {
      const at::Tensor actions = random_actions(*limited, gen);
      limited->step(actions);
      unlimited->step(actions);
      sum += unlimited->buffers().reward;
      EXPECT_EQ(limited->buffers().truncated.all().item<bool>(), t == 5);
      EXPECT_FALSE(limited->buffers().terminated.any().item<bool>());
    }
    const StepBuffers& b = limited->buffers();
    EXPECT_TRUE(at::equal(b.final_obs, unlimited->buffers().obs));
    EXPECT_TRUE(at::equal(b.reward, unlimited->buffers().reward)) << "reward is the step's";
    EXPECT_TRUE(at::allclose(b.episode_return, sum, 1e-6, 1e-5));
    EXPECT_TRUE(b.episode_length.eq(5).all().item<bool>());
    // A fresh episode (not the first one again), its positions in PettingZoo's reset ranges.
    EXPECT_FALSE(at::equal(b.obs, first_obs));
    EXPECT_FALSE(at::equal(b.obs, unlimited->buffers().obs));
    const int64_t entities = limited->spec().state_names.size() / 4;
    const at::Tensor s = limited->get_state();
    EXPECT_TRUE(s.slice(1, 0, 2 * entities).abs().le(1.0f).all().item<bool>());
    EXPECT_TRUE(s.slice(1, 2 * entities).eq(0).all().item<bool>()) << "at rest";
  }
}

TEST(MultiAgentSemantics, SumoTerminatesWithAWinAndRestartsInTheSameStep) {
  constexpr int64_t n = 4;
  auto env = envs::make("Sumo-v0", n, Device::kCpu, 1);
  // Env 1: wrestler 1 at the edge moving out (it leaves: wrestler 0 wins); the others centred.
  at::Tensor state = env->get_state();
  state[1] = at::tensor({-0.5f, 0.0f, 0.99f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f});
  env->set_state(state);
  env->step(at::zeros({n, 2}, at::kLong));
  const StepBuffers& b = env->buffers();
  for (int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE("env " + std::to_string(i));
    EXPECT_EQ(b.terminated[i].item<bool>(), i == 1);
    EXPECT_FALSE(b.truncated[i].item<bool>());
  }
  EXPECT_EQ(b.reward[1][0].item<float>(), 1.0f);
  EXPECT_EQ(b.reward[1][1].item<float>(), -1.0f);
  EXPECT_EQ(b.episode_return[1][0].item<float>(), 1.0f);
  EXPECT_EQ(b.episode_return[1][1].item<float>(), -1.0f);
  EXPECT_EQ(b.episode_length[1].item<int>(), 1);
  // final_obs: wrestler 1 out of the ring (pos_1 = obs[1][2:4]); obs: a new start at radius 0.5.
  const float x = b.final_obs[1][1][2].item<float>(), y = b.final_obs[1][1][3].item<float>();
  EXPECT_GT(x * x + y * y, 1.0f);
  const float nx = b.obs[1][0][2].item<float>(), ny = b.obs[1][0][3].item<float>();
  EXPECT_NEAR(nx * nx + ny * ny, 0.25f, 1e-5f);
  ASSERT_TRUE(env->spec().decides_winner);
  EXPECT_EQ(b.winner[1].item<int>(), 0) << "wrestler 0 won";
  // Env 2: both wrestlers at the edge moving out together: a draw.
  state = env->get_state();
  state[2] = at::tensor({-0.99f, 0.0f, 0.99f, 0.0f, -1.0f, 0.0f, 1.0f, 0.0f});
  env->set_state(state);
  env->step(at::zeros({n, 2}, at::kLong));
  EXPECT_TRUE(b.terminated[2].item<bool>());
  EXPECT_EQ(b.winner[2].item<int>(), -1) << "both out: a draw";
  EXPECT_EQ(b.reward[2][0].item<float>(), 0.0f);
  // Time-limit truncation ends undecided: a draw.
  auto short_env = envs::make("Sumo-v0", 1, Device::kCpu, 1, {{"max_episode_steps", 1}});
  short_env->step(at::zeros({1, 2}, at::kLong));
  EXPECT_TRUE(short_env->buffers().truncated[0].item<bool>());
  EXPECT_EQ(short_env->buffers().winner[0].item<int>(), -1);
  EXPECT_FALSE(envs::spec_of("Tag-v0").decides_winner);
  EXPECT_FALSE(envs::make("Tag-v0", 1, Device::kCpu, 0)->buffers().winner.defined());
}

TEST(MultiAgentSemantics, SetStateWritesRowsAndRecomputesObservations) {
  auto env = envs::make("Tag-v0", 8, Device::kCpu, 0);
  const at::Tensor before = env->get_state();
  expect_invalid_argument([&] { env->set_state(at::zeros({8, 23})); }, {"[8, 24]", "[8, 23]"});
  at::Tensor nan_state = before.clone();
  nan_state[2][0] = NAN;
  expect_invalid_argument([&] { env->set_state(nan_state); }, {"NaN"});
  EXPECT_TRUE(at::equal(env->get_state(), before));

  const at::Tensor rows = at::rand({2, 24}) - 0.5f;
  env->set_state(rows, at::tensor({1, 6}, at::kLong));
  const at::Tensor after = env->get_state();
  for (int64_t i = 0; i < 8; ++i) {
    const bool written = i == 1 || i == 6;
    EXPECT_TRUE(at::equal(after[i], written ? rows[i == 1 ? 0 : 1] : before[i])) << "row " << i;
    float obs[4 * 16];
    envs::TagDiscrete::observe({}, after[i].contiguous().data_ptr<float>(), obs);
    EXPECT_EQ(std::memcmp(obs, env->buffers().obs[i].contiguous().data_ptr<float>(), sizeof obs), 0)
        << "row " << i;
  }
}

TEST(MultiAgentSemantics, SaveLoadContinuesIdentically) {
  for (const char* id : kIds) {
    SCOPED_TRACE(id);
    const EnvOptions o = {{"max_episode_steps", 20}};
    auto env = envs::make(id, 100, Device::kCpu, 21, o);
    trace(*env, 17, 1);
    std::map<std::string, at::Tensor> saved;
    for (const auto& [key, value] : env->save_rollout_state()) saved[key] = value.clone();
    const auto original = trace(*env, 40, 2);
    auto other = envs::make(id, 100, Device::kCpu, 999, o);
    other->load_rollout_state(saved);
    EXPECT_TRUE(bitwise_equal(trace(*other, 40, 2), original)) << "into another instance";
    env->load_rollout_state(saved);
    EXPECT_TRUE(bitwise_equal(trace(*env, 40, 2), original)) << "into the same instance";
    auto small = envs::make(id, 50, Device::kCpu, 0, o);
    expect_invalid_argument([&] { small->load_rollout_state(saved); }, {"state"});
  }
}

TEST(MultiAgentSemantics, OverflowingStateIsCutAndCounted) {
  constexpr int64_t n = 4;
  auto env = envs::make("Spread-v0", n, Device::kCpu, 0);
  at::Tensor state = env->get_state();
  // Agent 0 of env 2 far out and fast: its next position overflows to infinity.
  state[2][0] = 3.3e38f;
  state[2][12] = 3.3e38f;
  env->set_state(state);
  env->step(at::zeros({n, 3}, at::kLong));
  const StepBuffers& b = env->buffers();
  EXPECT_EQ(env->diverged_count(), 1);
  for (int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE("env " + std::to_string(i));
    EXPECT_EQ(b.truncated[i].item<bool>(), i == 2);
    EXPECT_FALSE(b.terminated[i].item<bool>());
    EXPECT_TRUE(at::isfinite(b.obs[i]).all().item<bool>());
    EXPECT_TRUE(at::isfinite(b.reward[i]).all().item<bool>());
  }
  EXPECT_TRUE(b.reward[2].eq(0).all().item<bool>());
  EXPECT_TRUE(at::isfinite(b.episode_return[2]).all().item<bool>());
  EXPECT_TRUE(env->get_state()[2].abs().le(1.0f).all().item<bool>()) << "restarted";
  env->step(at::zeros({n, 3}, at::kLong));
  EXPECT_FALSE(b.truncated.any().item<bool>());
  EXPECT_EQ(env->diverged_count(), 1);
}

// The x86-64 and x86-64-v3 copies of the CPU kernels (envs/backend_cpu.cc) give bitwise the
// same multi-agent rollouts too.
TEST(MultiAgentSemantics, CpuKernelCopiesAgreeBitwise) {
  if (envs::cpu_kernel_level() == "native") GTEST_SKIP() << "MYRIAD_NATIVE build: one copy";
  try {
    envs::select_cpu_kernels("x86-64-v3");
  } catch (const std::invalid_argument& e) {
    envs::select_cpu_kernels("");
    GTEST_SKIP() << e.what();
  }
  for (const char* id : kIds) {
    for (double continuous : {0.0, 1.0}) {
      SCOPED_TRACE(std::string(id) + (continuous ? " continuous" : " discrete"));
      const EnvOptions o = {{"continuous", continuous}, {"max_episode_steps", 10}};
      envs::select_cpu_kernels("x86-64-v3");
      auto v3 = envs::make(id, 1031, Device::kCpu, 17, o);
      envs::select_cpu_kernels("x86-64");
      auto base = envs::make(id, 1031, Device::kCpu, 17, o);
      EXPECT_TRUE(bitwise_equal(trace(*v3, 60, 3), trace(*base, 60, 3)));
    }
  }
  envs::select_cpu_kernels("");
}

// ---------------------------------------------------------------------------------------------
// Errors.

TEST(MultiAgentErrors, ActionShapesTypesAndRanges) {
  auto tag = envs::make("Tag-v0", 8, Device::kCpu, 0);
  expect_invalid_argument([&] { tag->step(at::zeros({8}, at::kLong)); }, {"[8, 4]", "[8]"});
  expect_invalid_argument([&] { tag->step(at::zeros({8, 3}, at::kLong)); }, {"[8, 4]", "[8, 3]"});
  expect_invalid_argument([&] { tag->step(at::zeros({8, 4}, at::kFloat)); }, {"integer"});
  const std::vector<std::pair<at::ScalarType, int64_t>> cases = {{at::kLong, int64_t{1} << 32},
                                                                 {at::kLong, -1},
                                                                 {at::kInt, 5},
                                                                 {at::kShort, -1},
                                                                 {at::kByte, 255},
                                                                 {at::kChar, -128}};
  const at::Tensor before = tag->get_state();
  for (const auto& [dtype, value] : cases) {
    at::Tensor actions = at::zeros({8, 4}, at::TensorOptions().dtype(dtype));
    actions[6][3] = value;
    expect_invalid_argument(
        [&] { tag->step(actions); },
        {"action " + std::to_string(value) + " of env 6 (agent agent_0)", "[0, 5)"});
  }
  at::Tensor wide = at::zeros({8, 4}, at::TensorOptions().dtype(at::kUInt64));
  wide[0][0] = c10::Scalar(~uint64_t{0});
  EXPECT_THROW(tag->step(wide), std::invalid_argument);
  EXPECT_TRUE(at::equal(before, tag->get_state())) << "refused actions change nothing";
  EXPECT_NO_THROW(tag->step(at::full({8, 4}, 4, at::kByte)));

  auto cont = envs::make("Spread-v0", 4, Device::kCpu, 0, {{"continuous", 1}});
  expect_invalid_argument([&] { cont->step(at::zeros({4, 3})); }, {"[4, 3, 5]", "[4, 3]"});
  expect_invalid_argument([&] { cont->step(at::zeros({4, 3, 5}, at::kLong)); }, {"float"});
  for (const float bad : {NAN, INFINITY, -INFINITY}) {
    at::Tensor actions = at::zeros({4, 3, 5});
    actions[2][1][4] = bad;
    expect_invalid_argument([&] { cont->step(actions); },
                            {"of env 2 (agent agent_1) is not finite"});
  }
  EXPECT_EQ(cont->diverged_count(), 0);
  EXPECT_NO_THROW(cont->step(at::zeros({4, 3, 5}, at::kDouble)));
}

TEST(MultiAgentErrors, OptionsAreCheckedByName) {
  expect_invalid_argument(
      [] {
        envs::make("Tag-v0", 4, Device::kCpu, 0, {{"local_ratio", 0.5}});
      },
      {"'local_ratio'", "max_episode_steps, continuous"});
  expect_invalid_argument(
      [] {
        envs::make("Spread-v0", 4, Device::kCpu, 0, {{"ratio", 0.5}});
      },
      {"'ratio'", "continuous, local_ratio"});
  expect_invalid_argument(
      [] {
        envs::make("Spread-v0", 4, Device::kCpu, 0, {{"local_ratio", 1.5}});
      },
      {"local_ratio", "[0, 1]"});
  expect_invalid_argument(
      [] {
        envs::make("Sumo-v0", 4, Device::kCpu, 0, {{"continuous", 2}});
      },
      {"continuous", "0", "1"});
  expect_invalid_argument(
      [] {
        envs::make("Sumo-v0", 4, Device::kCpu, 0, {{"max_episode_steps", 0}});
      },
      {"max_episode_steps"});
  auto env = envs::make("Sumo-v0", 4, Device::kCpu, 0, {{"max_episode_steps", 7}});
  EXPECT_EQ(env->spec().max_episode_steps, 7);
  expect_invalid_argument(
      [&] {
        env->body_poses(at::zeros({4, 16}));
      },
      {"Sumo-v0", "body_poses", "[B, 2, 8]"});
}

// Spread's local_ratio mixes the shared coverage term with each agent's collisions.
TEST(MultiAgentErrors, LocalRatioChangesTheRewards) {
  auto a = envs::make("Spread-v0", 16, Device::kCpu, 4, {{"local_ratio", 0.0}});
  auto b = envs::make("Spread-v0", 16, Device::kCpu, 4, {{"local_ratio", 1.0}});
  const at::Tensor actions = at::zeros({16, 3}, at::kLong);
  a->step(actions);
  b->step(actions);
  // local_ratio 0: every agent gets the (negative) coverage term; 1: only collisions (<= 0).
  EXPECT_TRUE(a->buffers().reward.lt(0).all().item<bool>());
  EXPECT_TRUE(at::equal(a->buffers().reward.select(1, 0), a->buffers().reward.select(1, 2)));
  EXPECT_TRUE(b->buffers().reward.le(0).all().item<bool>());
  EXPECT_FALSE(at::equal(a->buffers().reward, b->buffers().reward));
}

}  // namespace
}  // namespace myriad
