// The locomotion suite (envs/locomotion/) inside the env framework: specs as Gymnasium's v5
// envs declare them, every env on every sim (the engine in float32 and float64, libmujoco), the
// engine against libmujoco step for step under the same env code, options by Gymnasium's names,
// and divergence. Parity with Gymnasium's own envs is tests/python/test_locomotion_parity.py;
// the batch semantics (determinism, time limit, resume) are tests/envs/test_batch_semantics.cc.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "myriad/device.h"
#include "myriad/registry.h"

namespace myriad {
namespace {

// One OpenMP thread: on a shared machine each parallel region can wait a scheduler quantum for
// its second thread (the staged step has dozens per env step). Thread counts are
// tests/envs/test_batch_semantics.cc's subject, over every env.
class OneThreadEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { set_cpu_threads(1); }
};
::testing::Environment* const kOneThread =
    ::testing::AddGlobalTestEnvironment(new OneThreadEnvironment);

struct SuiteEntry {
  std::string id;
  int64_t obs_dim;
  int64_t action_dim;
  float action_high;  // every actuator's ctrlrange is symmetric in the suite
  int max_episode_steps;
  std::vector<std::string> info;  // Gymnasium's info keys of step()
};

// Gymnasium 1.4's v5 envs (their spaces, TimeLimit and step() info).
const std::vector<SuiteEntry>& suite() {
  static const std::vector<SuiteEntry> s = {
      {"Hopper-v5",
       11,
       3,
       1.0f,
       1000,
       {"x_position", "z_distance_from_origin", "x_velocity", "reward_forward", "reward_ctrl",
        "reward_survive"}},
      {"HalfCheetah-v5",
       17,
       6,
       1.0f,
       1000,
       {"x_position", "x_velocity", "reward_forward", "reward_ctrl"}},
      {"Walker2d-v5",
       17,
       6,
       1.0f,
       1000,
       {"x_position", "z_distance_from_origin", "x_velocity", "reward_forward", "reward_ctrl",
        "reward_survive"}},
      {"Ant-v5",
       105,
       8,
       1.0f,
       1000,
       {"x_position", "y_position", "distance_from_origin", "x_velocity", "y_velocity",
        "reward_forward", "reward_ctrl", "reward_contact", "reward_survive"}},
      {"Humanoid-v5",
       348,
       17,
       0.4f,
       1000,
       {"x_position", "y_position", "tendon_length", "tendon_velocity", "distance_from_origin",
        "x_velocity", "y_velocity", "reward_survive", "reward_forward", "reward_ctrl",
        "reward_contact"}},
      {"InvertedPendulum-v5", 4, 1, 3.0f, 1000, {"reward_survive"}},
      {"InvertedDoublePendulum-v5",
       9,
       1,
       1.0f,
       1000,
       {"reward_survive", "distance_penalty", "velocity_penalty"}},
      {"Reacher-v5", 10, 2, 1.0f, 50, {"reward_dist", "reward_ctrl"}},
  };
  return s;
}

std::vector<std::string> suite_ids() {
  std::vector<std::string> ids;
  for (const auto& e : suite()) ids.push_back(e.id);
  return ids;
}

const SuiteEntry& entry(const std::string& id) {
  for (const auto& e : suite())
    if (e.id == id) return e;
  throw std::logic_error("not in the suite: " + id);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char c : info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// The three sims: options that choose each.
struct Sim {
  const char* name;
  EnvOptions numbers;
  EnvTextOptions text;
};
const Sim kSims[] = {{"myriad float32", {}, {{"physics", "myriad"}}},
                     {"myriad float64", {{"precision", 64}}, {{"physics", "myriad"}}},
                     {"mujoco", {}, {{"physics", "mujoco"}}}};

at::Tensor random_actions(const BatchEnv& env, std::mt19937& gen) {
  const Space& a = env.spec().action_space;
  const int64_t n = env.num_envs(), k = a.flat_size();
  at::Tensor t = at::empty({n, k}, at::kFloat);
  for (int64_t i = 0; i < n * k; ++i)
    t.data_ptr<float>()[i] =
        std::uniform_real_distribution<float>(a.low[i % k], a.high[i % k])(gen);
  return t;
}

class SuiteTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SuiteTest, SpecIsGymnasiums) {
  const SuiteEntry& e = entry(GetParam());
  const EnvSpec spec = envs::spec_of(e.id);
  EXPECT_EQ(spec.observation_space.flat_size(), e.obs_dim);
  EXPECT_EQ(spec.action_space.flat_size(), e.action_dim);
  for (int64_t k = 0; k < e.action_dim; ++k) {
    EXPECT_FLOAT_EQ(spec.action_space.low[k], -e.action_high);
    EXPECT_FLOAT_EQ(spec.action_space.high[k], e.action_high);
  }
  EXPECT_EQ(spec.max_episode_steps, e.max_episode_steps);
  EXPECT_TRUE(spec.state_float64);
  EXPECT_TRUE(spec.physics_env);
  for (const char* sim_option : {"physics", "precision", "frame_skip", "launch"})
    EXPECT_NE(std::find(spec.option_names.begin(), spec.option_names.end(), sim_option),
              spec.option_names.end())
        << sim_option;
  EXPECT_EQ(spec.state_names.front(), "time");
}

// Every sim runs the env: finite observations, Gymnasium's info keys with one row per env, and
// episodes that end (by termination or the limit) restart.
TEST_P(SuiteTest, RunsOnEverySim) {
  const SuiteEntry& e = entry(GetParam());
  for (const Sim& sim : kSims) {
    SCOPED_TRACE(sim.name);
    EnvOptions numbers = sim.numbers;
    numbers["max_episode_steps"] = 40;
    auto env = envs::make(e.id, 6, Device::kCpu, 3, numbers, sim.text);
    const StepBuffers& b = env->buffers();
    std::set<std::string> keys;
    for (const auto& [key, value] : b.info) {
      keys.insert(key);
      EXPECT_EQ(value.size(0), 6) << key;
    }
    EXPECT_EQ(keys, std::set<std::string>(e.info.begin(), e.info.end()));
    std::mt19937 gen(1);
    int ended = 0;
    for (int t = 0; t < 90; ++t) {
      env->step(random_actions(*env, gen));
      ASSERT_TRUE(at::isfinite(b.obs).all().item<bool>()) << "step " << t;
      ASSERT_TRUE(at::isfinite(b.reward).all().item<bool>()) << "step " << t;
      for (const auto& [key, value] : b.info)
        ASSERT_TRUE(at::isfinite(value).all().item<bool>()) << key << ", step " << t;
      ended += at::logical_or(b.terminated, b.truncated).sum().item<int>();
    }
    EXPECT_GE(ended, 6) << "every env reaches the limit of 40 at least once in 90 steps";
    EXPECT_EQ(env->diverged_count(), 0);
  }
}

// The engine (float64) and libmujoco under the same env code: the same reset (the env's own
// Philox stream), and the same steps while no contact makes the two solvers' tiny differences
// grow; Humanoid's model asks for PGS, which libmujoco runs and the engine replaces by Newton.
TEST_P(SuiteTest, EngineAgreesWithLibmujoco) {
  const SuiteEntry& e = entry(GetParam());
  const bool pgs = e.id == "Humanoid-v5";
  auto ours = envs::make(e.id, 8, Device::kCpu, 11, {{"precision", 64}}, {{"physics", "myriad"}});
  auto ref = envs::make(e.id, 8, Device::kCpu, 11, {}, {{"physics", "mujoco"}});
  EXPECT_TRUE(at::allclose(ours->get_state(), ref->get_state(), 0, 0)) << "the same reset draws";
  EXPECT_TRUE(at::allclose(ours->buffers().obs, ref->buffers().obs, 1e-6, 1e-6)) << "reset obs";
  std::mt19937 gen(5);
  const int steps = pgs ? 3 : 10;
  for (int t = 1; t <= steps; ++t) {
    const at::Tensor a = random_actions(*ref, gen);
    ours->step(a);
    ref->step(a);
    const StepBuffers &x = ours->buffers(), &y = ref->buffers();
    // Relative to each quantity's largest entry: contact forces in Ant's and Humanoid's
    // observations run to thousands while their smallest entries are rounding noise.
    const double tol = pgs ? 1e-3 : 1e-6;
    const double obs_scale = y.obs.abs().max().item<double>() + 1;
    EXPECT_LE((x.obs - y.obs).abs().max().item<double>(), tol * obs_scale) << "obs, step " << t;
    const double reward_scale = y.reward.abs().max().item<double>() + 1;
    EXPECT_LE((x.reward - y.reward).abs().max().item<double>(), tol * reward_scale)
        << "reward, step " << t;
    EXPECT_TRUE(at::equal(x.terminated, y.terminated)) << "step " << t;
  }
}

// The staged env step (a pre-step launch, one launch per physics stage over the batch, a
// post-step launch), the same on a batch in CUDA's blocked layout (blocked: CUDA's shape and
// layout) and the tiled one (the physics in tiles of 8 envs, the smooth stages in SIMD lanes; the
// CPU's default) give the fused step's bits on the engine, through episode ends and auto-resets,
// and the same state, in both precisions (5 envs: one partial tile, one partial block).
TEST_P(SuiteTest, StagedAndTiledStepsGiveTheFusedBits) {
  const SuiteEntry& e = entry(GetParam());
  for (const int precision : {32, 64})
    for (const std::string launch : {"staged", "tiled", "blocked"}) {
      SCOPED_TRACE(std::to_string(precision) + " " + launch);
      const EnvOptions numbers{{"precision", precision}, {"max_episode_steps", 25}};
      auto fused = envs::make(e.id, 5, Device::kCpu, 7, numbers, {{"launch", "fused"}});
      auto staged = envs::make(e.id, 5, Device::kCpu, 7, numbers, {{"launch", launch}});
      std::mt19937 gen(3);
      for (int t = 1; t <= 60; ++t) {
        const at::Tensor a = random_actions(*fused, gen);
        fused->step(a);
        staged->step(a);
        const StepBuffers &x = fused->buffers(), &y = staged->buffers();
        ASSERT_TRUE(at::equal(x.obs, y.obs)) << "obs, step " << t;
        ASSERT_TRUE(at::equal(x.final_obs, y.final_obs)) << "final_obs, step " << t;
        ASSERT_TRUE(at::equal(x.reward, y.reward)) << "reward, step " << t;
        ASSERT_TRUE(at::equal(x.terminated, y.terminated)) << "step " << t;
        ASSERT_TRUE(at::equal(x.truncated, y.truncated)) << "step " << t;
        for (const auto& [key, value] : x.info)
          ASSERT_TRUE(at::equal(value, y.info.at(key))) << key << ", step " << t;
      }
      EXPECT_TRUE(at::equal(fused->get_state(), staged->get_state()));
    }
}

INSTANTIATE_TEST_SUITE_P(Locomotion, SuiteTest, ::testing::ValuesIn(suite_ids()), test_name);

// ---------------------------------------------------------------------------------------------
// Options, by Gymnasium's keyword names.

TEST(LocomotionOptions, ObservationExclusionsAndRanges) {
  auto hopper = envs::make("Hopper-v5", 2, Device::kCpu, 0,
                           {{"exclude_current_positions_from_observation", 0}});
  EXPECT_EQ(hopper->spec().observation_space.flat_size(), 12);
  auto ant = envs::make("Ant-v5", 2, Device::kCpu, 0, {{"include_cfrc_ext_in_observation", 0}});
  EXPECT_EQ(ant->spec().observation_space.flat_size(), 27);
  auto humanoid = envs::make("Humanoid-v5", 2, Device::kCpu, 0,
                             {{"include_cinert_in_observation", 0},
                              {"include_cvel_in_observation", 0},
                              {"include_qfrc_actuator_in_observation", 0},
                              {"include_cfrc_ext_in_observation", 0}});
  EXPECT_EQ(humanoid->spec().observation_space.flat_size(), 45);
  // A healthy range nobody meets ends every episode on its first step.
  auto strict = envs::make("Hopper-v5", 4, Device::kCpu, 0, {}, {{"healthy_z_range", "5,inf"}});
  strict->step(at::zeros({4, 3}));
  EXPECT_TRUE(strict->buffers().terminated.all().item<bool>());
  EXPECT_EQ(strict->buffers().episode_length.eq(1).sum().item<int>(), 4);
  // ... unless termination is off.
  auto lenient = envs::make("Hopper-v5", 4, Device::kCpu, 0, {{"terminate_when_unhealthy", 0}},
                            {{"healthy_z_range", "(5, inf)"}});
  lenient->step(at::zeros({4, 3}));
  EXPECT_FALSE(lenient->buffers().terminated.any().item<bool>());
  EXPECT_TRUE(lenient->buffers().info.at("reward_survive").eq(0).all().item<bool>());
  // frame_skip sets dt: HalfCheetah's x velocity is the displacement over timestep * frame_skip.
  auto cheetah = envs::make("HalfCheetah-v5", 1, Device::kCpu, 0, {{"frame_skip", 1}});
  const double x0 = cheetah->get_state()[0][1].item<double>();
  cheetah->step(at::zeros({1, 6}));
  const double x1 = cheetah->get_state()[0][1].item<double>();
  EXPECT_NEAR(cheetah->buffers().info.at("x_velocity").item<double>(), (x1 - x0) / 0.01, 1e-3);
}

TEST(LocomotionOptions, BadOptionsAreNamed) {
  auto expect_message = [](auto fn, const std::vector<std::string>& parts) {
    try {
      fn();
      ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
      for (const auto& part : parts)
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_message(
      [] {
        envs::make("Ant-v5", 1, Device::kCpu, 0, {{"ctrl_cost", 1}});
      },
      {"Ant-v5", "ctrl_cost", "ctrl_cost_weight", "contact_force_range"});
  expect_message(
      [] {
        envs::make("Ant-v5", 1, Device::kCpu, 0, {}, {{"physics", "bullet"}});
      },
      {"physics", "myriad", "mujoco", "bullet"});
  expect_message(
      [] {
        envs::make("Ant-v5", 1, Device::kCpu, 0, {}, {{"healthy_z_range", "1.0"}});
      },
      {"healthy_z_range", "low,high"});
  expect_message(
      [] {
        envs::make("Ant-v5", 1, Device::kCpu, 0, {}, {{"healthy_z_range", "1,0.2"}});
      },
      {"healthy_z_range", "low <= high"});
  expect_message(
      [] {
        envs::make("Hopper-v5", 1, Device::kCpu, 0, {{"terminate_when_unhealthy", 2}});
      },
      {"terminate_when_unhealthy", "0 or 1"});
  expect_message(
      [] {
        envs::make("Hopper-v5", 1, Device::kCpu, 0, {{"frame_skip", 0}});
      },
      {"frame_skip"});
  expect_message(
      [] {
        envs::make("Hopper-v5", 1, Device::kCpu, 0, {{"precision", 16}});
      },
      {"precision", "32 or 64"});
  expect_message(
      [] {
        envs::make("Hopper-v5", 1, Device::kCpu, 0, {}, {{"launch", "split"}});
      },
      {"launch", "fused", "staged", "tiled", "split"});
  expect_message(
      [] {
        envs::make("Hopper-v5", 1, Device::kCpu, 0, {},
                   {{"physics", "mujoco"}, {"launch", "staged"}});
      },
      {"launch=staged", "physics=myriad", "mujoco"});
  auto env = envs::make("Hopper-v5", 2, Device::kCpu, 0);
  expect_message([&] { env->step(at::zeros({2, 4})); }, {"[2, 3]", "[2, 4]"});
  at::Tensor nan = at::zeros({2, 3});
  nan[1][2] = NAN;
  expect_message([&] { env->step(nan); }, {"env 1", "not finite"});
  expect_message([&] { env->set_state(at::zeros({2, 5}, at::kDouble)); }, {"[2, 13]"});
  expect_message(
      [&] {
        env->set_state(at::zeros({2, 13}, at::kDouble), at::tensor({1, 1}));
      },
      {"twice"});
}

// A state beyond MuJoCo's bound on a sane value is cut, counted and never returned, on both
// sims (libmujoco resets such data itself; its warning is what the env counts).
TEST(LocomotionDivergence, HugeVelocityIsCutAndCounted) {
  for (const char* physics : {"myriad", "mujoco"}) {
    SCOPED_TRACE(physics);
    auto env = envs::make("HalfCheetah-v5", 3, Device::kCpu, 0, {}, {{"physics", physics}});
    at::Tensor state = env->get_state();
    state[1][1 + 9 + 3] = 1e11;  // env 1's first hinge velocity
    env->set_state(state);
    const at::Tensor obs_before = env->buffers().obs.clone();
    env->step(at::zeros({3, 6}));
    const StepBuffers& b = env->buffers();
    EXPECT_EQ(env->diverged_count(), 1);
    EXPECT_TRUE(b.truncated[1].item<bool>());
    EXPECT_FALSE(b.terminated[1].item<bool>());
    EXPECT_EQ(b.reward[1].item<float>(), 0.0f);
    EXPECT_TRUE(at::equal(b.final_obs[1], obs_before[1])) << "the last observation before";
    EXPECT_TRUE(at::isfinite(b.obs).all().item<bool>());
    EXPECT_LT(b.obs[1].abs().max().item<float>(), 10.0f) << "env 1 restarted";
    EXPECT_FALSE(b.truncated[0].item<bool>());
  }
}

}  // namespace
}  // namespace myriad
