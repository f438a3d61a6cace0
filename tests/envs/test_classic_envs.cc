// The classic-control envs against independent float64 references transcribed from Gymnasium
// (gymnasium/envs/classic_control/*.py), their reset distributions and their specs.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "myriad/registry.h"
#include "tests/envs/gymnasium_reference.h"

namespace myriad {
namespace {

using namespace gym_ref;  // NOLINT: the references are this file's vocabulary

// ---------------------------------------------------------------------------------------------
// The comparison harness.

struct Range {
  double lo, hi;
};

struct EnvCase {
  std::string id;
  std::vector<Range> state_ranges;  // where random test states are drawn
  std::vector<Range> reset_ranges;  // Gymnasium's initial-state distribution (lo == hi: exact)
  bool discrete;
  int n_actions;  // Discrete
  Range actions;  // Box: where random actions are drawn (wider than the space: tests clipping)
  std::vector<bool> angular;  // state components compared modulo 2 pi (wrapped angles)
  std::function<Transition(const Vec&, double)> step;
  std::function<Vec(const Vec&)> observe;
  double rtol, atol;
  bool can_terminate;
};

std::vector<EnvCase> env_cases() {
  const double th = 12 * 2 * kPi / 360;
  std::vector<EnvCase> cases;
  cases.push_back({"CartPole-v1",
                   {{-2.4, 2.4}, {-3, 3}, {-th, th}, {-3, 3}},
                   {{-0.05, 0.05}, {-0.05, 0.05}, {-0.05, 0.05}, {-0.05, 0.05}},
                   true,
                   2,
                   {0, 0},
                   {false, false, false, false},
                   cartpole_step,
                   cartpole_observe,
                   1e-5,
                   1e-5,
                   true});
  cases.push_back({"Pendulum-v1",
                   {{-3 * kPi, 3 * kPi}, {-8, 8}},
                   {{-kPi, kPi}, {-1, 1}},
                   false,
                   0,
                   {-3, 3},
                   {false, false},
                   pendulum_step,
                   pendulum_observe,
                   1e-5,
                   1e-5,
                   false});
  cases.push_back({"Acrobot-v1",
                   {{-kPi, kPi}, {-kPi, kPi}, {-4 * kPi, 4 * kPi}, {-9 * kPi, 9 * kPi}},
                   {{-0.1, 0.1}, {-0.1, 0.1}, {-0.1, 0.1}, {-0.1, 0.1}},
                   true,
                   3,
                   {0, 0},
                   {true, true, false, false},
                   acrobot_step,
                   acrobot_observe,
                   1e-5,
                   1e-5,
                   true});
  cases.push_back({"MountainCar-v0",
                   {{-1.2, 0.6}, {-0.07, 0.07}},
                   {{-0.6, -0.4}, {0, 0}},
                   true,
                   3,
                   {0, 0},
                   {false, false},
                   mountain_car_step,
                   mountain_car_observe,
                   1e-5,
                   1e-6,
                   true});
  cases.push_back({"MountainCarContinuous-v0",
                   {{-1.2, 0.6}, {-0.07, 0.07}},
                   {{-0.6, -0.4}, {0, 0}},
                   false,
                   0,
                   {-1.5, 1.5},
                   {false, false},
                   mountain_car_continuous_step,
                   mountain_car_observe,
                   1e-5,
                   1e-6,
                   true});
  return cases;
}

bool close(double got, double want, double rtol, double atol, double slack = 0,
           bool angular = false) {
  double diff = got - want;
  if (angular) diff = std::remainder(diff, 2 * kPi);
  return std::abs(diff) <= atol + rtol * std::abs(want) + slack;
}

// How far float32 may legitimately stray from the float64 reference beyond rounding: the state
// is given in float32, so each input is uncertain by an ulp, and where the dynamics amplify
// that (Acrobot at high speed) float32 arithmetic is off by as much. Per output, the sum over
// inputs of the reference's change when that input moves by one float32 ulp, times a margin.
struct Slack {
  Vec state, obs;
  double reward = 0;
  bool branch = false;  // an ulp flips the termination test: float32 may take either side
};

Slack sensitivity(const EnvCase& c, const Vec& s, double action, const Transition& base) {
  constexpr double kMargin = 4;
  Slack out{Vec(base.state.size(), 0.0), Vec(base.obs.size(), 0.0)};
  for (size_t j = 0; j < s.size(); ++j) {
    for (float dir : {-INFINITY, INFINITY}) {
      Vec p = s;
      p[j] = std::nextafter(static_cast<float>(s[j]), dir);
      const Transition t = c.step(p, action);
      out.branch = out.branch || t.terminated != base.terminated;
      for (size_t k = 0; k < out.state.size(); ++k) {
        double d = t.state[k] - base.state[k];
        if (c.angular[k]) d = std::remainder(d, 2 * kPi);
        out.state[k] += kMargin * std::abs(d) / 2;
      }
      for (size_t k = 0; k < out.obs.size(); ++k)
        out.obs[k] += kMargin * std::abs(t.obs[k] - base.obs[k]) / 2;
      out.reward += kMargin * std::abs(t.reward - base.reward) / 2;
    }
  }
  return out;
}

// Collects mismatches, reporting the first few in full and the total at the end.
class Mismatches {
 public:
  explicit Mismatches(std::string id) : id_(std::move(id)) {}
  ~Mismatches() { EXPECT_EQ(count_, 0) << id_ << ": " << count_ << " mismatches in all"; }
  void add(const std::string& what) {
    if (count_++ < 8) ADD_FAILURE() << id_ << ": " << what;
  }

 private:
  std::string id_;
  int count_ = 0;
};

std::string describe(const Vec& v) {
  std::ostringstream out;
  out.precision(9);
  out << "(";
  for (size_t k = 0; k < v.size(); ++k) out << (k ? ", " : "") << v[k];
  return out.str() + ")";
}

Vec row_of(const at::Tensor& t, int64_t i) {
  const at::Tensor r = t[i].to(at::kDouble).contiguous();
  return Vec(r.data_ptr<double>(), r.data_ptr<double>() + r.numel());
}

// Compares got[k] to want[k] for each k; appends a message and returns false on mismatch.
bool compare_rows(const Vec& got, const Vec& want, double rtol, double atol,
                  const std::vector<bool>& angular, std::string* msg, const Vec& slack = {}) {
  if (got.size() != want.size()) {
    *msg = "size " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
    return false;
  }
  for (size_t k = 0; k < got.size(); ++k)
    if (!close(got[k], want[k], rtol, atol, slack.empty() ? 0.0 : slack[k],
               !angular.empty() && angular[k])) {
      *msg = "got " + describe(got) + ", want " + describe(want) + " (component " +
             std::to_string(k) + ")";
      return false;
    }
  return true;
}

EnvOptions no_time_limit() { return {{"max_episode_steps", 100000}}; }

// set_state to random states, step random actions, compare everything with the reference.
void check_transitions(const EnvCase& c, uint64_t seed, int rounds) {
  constexpr int64_t n = 256;
  SCOPED_TRACE(c.id);
  auto env = envs::make(c.id, n, Device::kCpu, seed, no_time_limit());
  const int64_t S = static_cast<int64_t>(c.state_ranges.size());
  ASSERT_EQ(env->get_state().size(1), S);
  std::mt19937_64 gen(seed);
  auto uniform = [&](Range r) { return std::uniform_real_distribution<double>(r.lo, r.hi)(gen); };

  Mismatches bad(c.id);
  int compared = 0, terminations = 0, ambiguous = 0, clipped_actions = 0;
  const std::vector<bool> none;
  for (int round = 0; round < rounds; ++round) {
    at::Tensor state = at::empty({n, S}, at::kFloat);
    auto sa = state.accessor<float, 2>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < S; ++k) sa[i][k] = static_cast<float>(uniform(c.state_ranges[k]));
    env->set_state(state);

    // set_state recomputes the observation of every row.
    const StepBuffers& b = env->buffers();
    for (int64_t i = 0; i < n; ++i) {
      std::string msg;
      if (!compare_rows(row_of(b.obs, i), c.observe(row_of(state, i)), c.rtol, c.atol, none, &msg))
        bad.add("obs after set_state, env " + std::to_string(i) + ": " + msg);
    }

    at::Tensor actions = c.discrete ? at::empty({n}, at::kLong) : at::empty({n, 1}, at::kFloat);
    std::vector<double> a(n);
    for (int64_t i = 0; i < n; ++i) {
      if (c.discrete) {
        a[i] = static_cast<double>(gen() % c.n_actions);
        actions.data_ptr<int64_t>()[i] = static_cast<int64_t>(a[i]);
      } else {
        const float v = static_cast<float>(uniform(c.actions));
        actions.data_ptr<float>()[i] = v;
        a[i] = v;
        clipped_actions += std::abs(v) > env->spec().action_space.high[0];
      }
    }
    env->step(actions);

    const at::Tensor next = env->get_state();
    for (int64_t i = 0; i < n; ++i) {
      const Vec s = row_of(state, i);
      const Transition ref = c.step(s, a[i]);
      const std::string where = "round " + std::to_string(round) + ", env " + std::to_string(i) +
                                ", state " + describe(s) + ", action " + std::to_string(a[i]) +
                                ": ";
      const bool terminated = b.terminated[i].item<bool>();
      const bool truncated = b.truncated[i].item<bool>();
      if (truncated) bad.add(where + "truncated without a time limit");
      const Slack slack = sensitivity(c, s, a[i], ref);
      if (ref.ambiguous || slack.branch) {
        ++ambiguous;
        continue;
      }
      ++compared;
      if (terminated != ref.terminated) {
        bad.add(where + "terminated " + std::to_string(terminated) + ", want " +
                std::to_string(ref.terminated) + " (next state " + describe(ref.state) + ")");
        continue;
      }
      const double reward = b.reward[i].item<double>();
      if (!close(reward, ref.reward, c.rtol, c.atol, slack.reward))
        bad.add(where + "reward " + std::to_string(reward) + ", want " +
                std::to_string(ref.reward));
      std::string msg;
      if (terminated) {
        ++terminations;
        // Auto-reset: final_obs is the terminal observation; state and obs start a new episode.
        if (!compare_rows(row_of(b.final_obs, i), ref.obs, c.rtol, c.atol, none, &msg, slack.obs))
          bad.add(where + "final_obs: " + msg);
        const Vec fresh = row_of(next, i);
        for (int64_t k = 0; k < S; ++k)
          if (fresh[k] < static_cast<float>(c.reset_ranges[k].lo) ||
              fresh[k] > static_cast<float>(c.reset_ranges[k].hi))
            bad.add(where + "state after auto-reset " + describe(fresh) +
                    " outside the initial distribution");
        if (!compare_rows(row_of(b.obs, i), c.observe(fresh), c.rtol, c.atol, none, &msg))
          bad.add(where + "obs after auto-reset: " + msg);
      } else {
        if (!compare_rows(row_of(next, i), ref.state, c.rtol, c.atol, c.angular, &msg, slack.state))
          bad.add(where + "next state: " + msg);
        if (!compare_rows(row_of(b.obs, i), ref.obs, c.rtol, c.atol, none, &msg, slack.obs))
          bad.add(where + "obs: " + msg);
      }
    }
  }
  EXPECT_GT(compared, rounds * n * 9 / 10) << "too many rows skipped as ambiguous: " << ambiguous;
  if (c.can_terminate) EXPECT_GT(terminations, 10) << "the terminal branch was barely exercised";
  if (!c.discrete) EXPECT_GT(clipped_actions, 10) << "action clipping was barely exercised";
}

class ClassicEnvTest : public ::testing::TestWithParam<int> {};

TEST_P(ClassicEnvTest, StepMatchesGymnasiumReference) {
  const EnvCase c = env_cases()[GetParam()];
  check_transitions(c, 1000 + GetParam(), 12);
}

TEST_P(ClassicEnvTest, ResetDistributionMatchesGymnasium) {
  const EnvCase c = env_cases()[GetParam()];
  SCOPED_TRACE(c.id);
  constexpr int64_t n = 4096;
  auto env = envs::make(c.id, n, Device::kCpu, 77);
  auto check = [&](const at::Tensor& state) {
    const int64_t S = static_cast<int64_t>(c.reset_ranges.size());
    ASSERT_EQ(state.size(0), n);
    ASSERT_EQ(state.size(1), S);
    const at::Tensor s = state.to(at::kDouble);
    for (int64_t k = 0; k < S; ++k) {
      const Range r = c.reset_ranges[k];
      const at::Tensor col = s.select(1, k);
      const double lo = col.min().item<double>(), hi = col.max().item<double>();
      const double mean = col.mean().item<double>();
      // Compared in float32, where the bounds themselves live.
      EXPECT_GE(lo, static_cast<double>(static_cast<float>(r.lo))) << "component " << k;
      EXPECT_LE(hi, static_cast<double>(static_cast<float>(r.hi))) << "component " << k;
      if (r.lo == r.hi) continue;
      const double w = r.hi - r.lo;
      // 4096 uniform draws: the extremes lie within 1% of the bounds, the mean within 3%.
      EXPECT_LT(lo, r.lo + 0.01 * w) << "component " << k << " does not span its range";
      EXPECT_GT(hi, r.hi - 0.01 * w) << "component " << k << " does not span its range";
      EXPECT_NEAR(mean, 0.5 * (r.lo + r.hi), 0.03 * w) << "component " << k;
    }
    // Distinct draws per env.
    EXPECT_GT(std::get<0>(at::_unique(s.select(1, 0))).numel(), n * 9 / 10);
  };
  const at::Tensor first = env->get_state();
  check(first);
  std::string msg;
  for (int64_t i = 0; i < n; i += 97)
    EXPECT_TRUE(compare_rows(row_of(env->buffers().obs, i), c.observe(row_of(first, i)), 1e-6, 1e-6,
                             {}, &msg))
        << msg;

  // Reseeding repeats the draws; a reset without seed moves to new episodes.
  env->reset(77);
  EXPECT_TRUE(at::equal(env->get_state(), first));
  env->reset();
  const at::Tensor next = env->get_state();
  check(next);
  EXPECT_FALSE(at::equal(next, first));
  auto other = envs::make(c.id, n, Device::kCpu, 78);
  check(other->get_state());
  EXPECT_FALSE(at::equal(other->get_state(), first));
}

INSTANTIATE_TEST_SUITE_P(Envs, ClassicEnvTest, ::testing::Range(0, 5),
                         [](const ::testing::TestParamInfo<int>& info) {
                           std::string id = env_cases()[info.param].id;
                           std::string name;
                           for (char ch : id)
                             if (std::isalnum(static_cast<unsigned char>(ch))) name += ch;
                           return name;
                         });

TEST(ClassicEnvs, PendulumGravityOption) {
  constexpr int64_t n = 64;
  const double g = 9.81;
  auto env = envs::make("Pendulum-v1", n, Device::kCpu, 3, {{"g", g}, {"max_episode_steps", 1000}});
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> th(-kPi, kPi), thdot(-8, 8), u(-2, 2);
  at::Tensor state = at::empty({n, 2}, at::kFloat), actions = at::empty({n, 1}, at::kFloat);
  for (int64_t i = 0; i < n; ++i) {
    state[i][0] = th(gen);
    state[i][1] = thdot(gen);
    actions[i][0] = u(gen);
  }
  env->set_state(state);
  env->step(actions);
  const at::Tensor next = env->get_state();
  for (int64_t i = 0; i < n; ++i) {
    const Transition ref = pendulum_step_g(row_of(state, i), actions[i][0].item<double>(), g);
    std::string msg;
    EXPECT_TRUE(compare_rows(row_of(next, i), ref.state, 1e-5, 1e-5, {}, &msg)) << msg;
    EXPECT_NEAR(env->buffers().reward[i].item<double>(), ref.reward,
                1e-5 * (1 + std::abs(ref.reward)));
  }
}

// Gymnasium's registrations (gymnasium/envs/__init__.py) and the spaces of each env class.
TEST(ClassicEnvs, SpecsMatchGymnasium) {
  // Every classic env is registered, beside MJCF-v0 (tests/envs/test_mjcf_env.cc), the
  // multi-agent envs (tests/envs/test_multi_agent_envs.cc) and the locomotion suite
  // (tests/envs/test_locomotion_envs.cc) and the task envs (tests/envs/test_velocity_task.cc),
  // and nothing else is.
  const std::vector<std::string> ids = {"Acrobot-v1",
                                        "Ant-v5",
                                        "CartPole-v1",
                                        "G1-Velocity-Flat-v0",
                                        "G1-Velocity-Rough-v0",
                                        "Go1-Velocity-Flat-v0",
                                        "Go1-Velocity-Rough-v0",
                                        "HalfCheetah-v5",
                                        "Hopper-v5",
                                        "Humanoid-v5",
                                        "InvertedDoublePendulum-v5",
                                        "InvertedPendulum-v5",
                                        "MJCF-v0",
                                        "MountainCar-v0",
                                        "MountainCarContinuous-v0",
                                        "Pendulum-v1",
                                        "Reacher-v5",
                                        "Spread-v0",
                                        "Sumo-v0",
                                        "Tag-v0",
                                        "Walker2d-v5"};
  EXPECT_EQ(envs::registered_ids(), ids);

  const float inf = std::numeric_limits<float>::infinity();
  const float th2 = static_cast<float>(12 * 2 * kPi / 360 * 2);
  struct Expected {
    std::string id;
    int max_episode_steps;
    std::optional<double> reward_threshold;
    Space action_space;
    std::vector<float> obs_low, obs_high;
    std::vector<std::string> state_names;
  };
  const std::vector<Expected> expected = {
      {"CartPole-v1",
       500,
       475.0,
       Space::discrete(2),
       {-4.8f, -inf, -th2, -inf},
       {4.8f, inf, th2, inf},
       {"x", "x_dot", "theta", "theta_dot"}},
      {"Pendulum-v1",
       200,
       std::nullopt,
       Space::box({-2.0f}, {2.0f}),
       {-1, -1, -8},
       {1, 1, 8},
       {"theta", "theta_dot"}},
      {"Acrobot-v1",
       500,
       -100.0,
       Space::discrete(3),
       {-1, -1, -1, -1, static_cast<float>(-4 * kPi), static_cast<float>(-9 * kPi)},
       {1, 1, 1, 1, static_cast<float>(4 * kPi), static_cast<float>(9 * kPi)},
       {"theta1", "theta2", "dtheta1", "dtheta2"}},
      {"MountainCar-v0",
       200,
       -110.0,
       Space::discrete(3),
       {-1.2f, -0.07f},
       {0.6f, 0.07f},
       {"position", "velocity"}},
      {"MountainCarContinuous-v0",
       999,
       90.0,
       Space::box({-1.0f}, {1.0f}),
       {-1.2f, -0.07f},
       {0.6f, 0.07f},
       {"position", "velocity"}},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.id);
    for (const EnvSpec& spec :
         {envs::spec_of(e.id), envs::make(e.id, 2, Device::kCpu, 0)->spec()}) {
      EXPECT_EQ(spec.id, e.id);
      EXPECT_EQ(spec.max_episode_steps, e.max_episode_steps);
      EXPECT_EQ(spec.reward_threshold, e.reward_threshold);
      EXPECT_EQ(spec.state_names, e.state_names);

      const Space& a = spec.action_space;
      EXPECT_EQ(a.kind, e.action_space.kind);
      EXPECT_EQ(a.describe(), e.action_space.describe());
      if (a.is_discrete()) {
        EXPECT_EQ(a.n, e.action_space.n);
        EXPECT_EQ(a.dtype, DType::kInt32);
        EXPECT_TRUE(a.shape.empty());
      } else {
        EXPECT_EQ(a.shape, std::vector<int64_t>{1});
        EXPECT_EQ(a.low, e.action_space.low);
        EXPECT_EQ(a.high, e.action_space.high);
        EXPECT_EQ(a.dtype, DType::kFloat32);
      }

      const Space& o = spec.observation_space;
      EXPECT_EQ(o.kind, Space::Kind::kBox);
      EXPECT_EQ(o.dtype, DType::kFloat32);
      EXPECT_EQ(o.shape, std::vector<int64_t>{static_cast<int64_t>(e.obs_low.size())});
      ASSERT_EQ(o.low.size(), e.obs_low.size());
      ASSERT_EQ(o.high.size(), e.obs_high.size());
      for (size_t k = 0; k < e.obs_low.size(); ++k) {
        EXPECT_FLOAT_EQ(o.low[k], e.obs_low[k]) << "low " << k;
        EXPECT_FLOAT_EQ(o.high[k], e.obs_high[k]) << "high " << k;
      }
    }
    // The time limit option overrides the spec of that instance only.
    auto env = envs::make(e.id, 2, Device::kCpu, 0, {{"max_episode_steps", 7}});
    EXPECT_EQ(env->spec().max_episode_steps, 7);
    EXPECT_EQ(envs::spec_of(e.id).max_episode_steps, e.max_episode_steps);

    // Buffers: shapes and dtypes of the documented contract.
    const int64_t n = env->num_envs();
    const int64_t O = static_cast<int64_t>(e.obs_low.size());
    const StepBuffers& b = env->buffers();
    EXPECT_EQ(b.obs.sizes(), (std::vector<int64_t>{n, O}));
    EXPECT_EQ(b.final_obs.sizes(), (std::vector<int64_t>{n, O}));
    EXPECT_EQ(b.obs.scalar_type(), at::kFloat);
    EXPECT_EQ(b.reward.sizes(), (std::vector<int64_t>{n}));
    EXPECT_EQ(b.reward.scalar_type(), at::kFloat);
    EXPECT_EQ(b.terminated.scalar_type(), at::kBool);
    EXPECT_EQ(b.truncated.scalar_type(), at::kBool);
    EXPECT_EQ(b.episode_return.scalar_type(), at::kFloat);
    EXPECT_EQ(b.episode_length.scalar_type(), at::kInt);
    EXPECT_EQ(env->get_state().sizes(),
              (std::vector<int64_t>{n, static_cast<int64_t>(e.state_names.size())}));
    EXPECT_EQ(env->device(), Device::kCpu);
  }
}

}  // namespace
}  // namespace myriad
