// MJCF-v0: the same model, state and controls give the same rollout on Myriad's float64 engine
// and on libmujoco; spaces come from the model; bad options are clear errors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "myriad/registry.h"

namespace myriad::envs {
namespace {

std::string model(const std::string& name) {
  const char* src = std::getenv("MYRIAD_SOURCE_DIR");
  return std::string(src ? src : ".") + "/physics/models/" + name + ".xml";
}

std::unique_ptr<BatchEnv> mjcf(const std::string& name, const std::string& physics, int64_t n,
                               EnvOptions options = {}) {
  return make("MJCF-v0", n, Device::kCpu, 7, options, {{"xml", model(name)}, {"physics", physics}});
}

TEST(MjcfEnv, SpacesComeFromTheModel) {
  auto env = mjcf("quadruped", "myriad", 4);
  EXPECT_EQ(env->spec().observation_space.flat_size(), 27 + 22);
  EXPECT_EQ(env->spec().action_space.flat_size(), 4);
  EXPECT_EQ(env->buffers().obs.sizes(), (std::vector<int64_t>{4, 49}));
  EXPECT_EQ(env->get_state().size(1), 1 + 27 + 22);
}

class BackendAgreement : public ::testing::TestWithParam<std::string> {};

TEST_P(BackendAgreement, Float64EngineMatchesLibmujocoThroughTheEnv) {
  const EnvOptions opts = {{"precision", 64}, {"frame_skip", 2}, {"reset_noise_scale", 0.1}};
  auto ours = mjcf(GetParam(), "myriad", 8, opts);
  auto ref = mjcf(GetParam(), "mujoco", 8, opts);
  // The same seed gives the same initial noise on both backends.
  EXPECT_TRUE(at::allclose(ours->get_state(), ref->get_state(), 0, 1e-12));
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  const int64_t nu = ours->spec().action_space.flat_size();
  for (int t = 0; t < 50; ++t) {
    const at::Tensor a = at::rand({8, nu}, gen) * 2 - 1;
    ours->step(a);
    ref->step(a);
  }
  const double err = (ours->get_state() - ref->get_state()).abs().max().item<double>();
  EXPECT_LT(err, 1e-9) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Models, BackendAgreement,
                         ::testing::Values("pendulum", "cartpole", "hopper_chain", "quadruped"));

// include_sensordata_in_observation: the model's sensordata after qpos and qvel, as libmujoco
// computes it (physics=mujoco) through the same env, resets included: physics/models/sensors.xml
// ends with four rangefinders and two touch sensors, which see the scene and the floor.
TEST(MjcfEnv, SensordataObservedLikeLibmujoco) {
  const EnvOptions opts = {{"precision", 64},
                           {"include_sensordata_in_observation", 1},
                           {"reset_noise_scale", 0.05},
                           {"max_episode_steps", 60}};
  auto ours = mjcf("sensors", "myriad", 4, opts);
  auto ref = mjcf("sensors", "mujoco", 4, opts);
  auto plain = mjcf("sensors", "myriad", 4, {{"precision", 64}});
  const int64_t dim = ours->spec().observation_space.flat_size();
  EXPECT_GT(dim, plain->spec().observation_space.flat_size());
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const int64_t nu = ours->spec().action_space.flat_size();
  bool touched = false, ranged = false;
  for (int t = 0; t < 150; ++t) {
    const at::Tensor a = at::rand({4, nu}, gen) * 2 - 1;
    ours->step(a);
    ref->step(a);
    const at::Tensor mine = ours->buffers().obs, theirs = ref->buffers().obs;
    ASSERT_TRUE(at::allclose(mine, theirs, 1e-5, 1e-5))
        << "step " << t << ": " << (mine - theirs).abs().max().item<double>();
    touched = touched || (theirs.slice(1, dim - 2) > 1).any().item<bool>();
    ranged = ranged || (theirs.slice(1, dim - 6, dim - 2) > 0).any().item<bool>();
  }
  EXPECT_TRUE(touched);
  EXPECT_TRUE(ranged);
}

TEST(MjcfEnv, TruncatesAtTheLimitAndResets) {
  auto env = mjcf("pendulum", "myriad", 3, {{"max_episode_steps", 4}});
  const at::Tensor a = at::zeros({3, 1});
  for (int t = 1; t <= 4; ++t) {
    env->step(a);
    EXPECT_EQ(env->buffers().truncated.all().item<bool>(), t == 4);
  }
  EXPECT_EQ(env->buffers().episode_length[0].item<int>(), 4);
  EXPECT_EQ(env->get_state()[0][0].item<double>(), 0.0);  // time restarts
}

TEST(MjcfEnv, SetStateThenStepContinuesFromIt) {
  auto a = mjcf("double_pendulum", "myriad", 2, {{"precision", 64}});
  auto b = mjcf("double_pendulum", "mujoco", 2);
  const at::Tensor s =
      at::tensor({0.0, 0.3, -0.2, 1.0, -0.5, 0.0, 0.1, 0.2, 0.0, 0.0}).reshape({2, 5});
  a->set_state(s);
  b->set_state(s);
  const at::Tensor act = at::full({2, 1}, 0.5);
  a->step(act);
  b->step(act);
  EXPECT_TRUE(at::allclose(a->get_state(), b->get_state(), 0, 1e-12));
}

TEST(MjcfEnv, ClearErrors) {
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message([] { make("MJCF-v0", 2, Device::kCpu, 0); }).find("xml"), std::string::npos);
  EXPECT_NE(message([] { mjcf("pendulum", "bullet", 2); }).find("myriad, mujoco"),
            std::string::npos);
  EXPECT_NE(message([] {
              make("MJCF-v0", 2, Device::kCpu, 0, {}, {{"xml", "/no/such/model.xml"}});
            }).find("/no/such/model.xml"),
            std::string::npos);
  EXPECT_NE(message([] {
              mjcf("pendulum", "myriad", 2, {{"frame_skpi", 2}});
            }).find("frame_skpi"),
            std::string::npos);
  auto env = mjcf("cartpole", "myriad", 2);
  EXPECT_NE(message([&] { env->step(at::zeros({2, 3})); }).find("[2, 1]"), std::string::npos);
}

TEST(MjcfEnv, DivergenceIsCutAndCounted) {
  auto env = mjcf("pendulum", "myriad", 2);
  env->set_state(at::tensor({0.0, 0.0, 1e12, 0.0, 0.0, 0.0}).reshape({2, 3}));
  env->step(at::zeros({2, 1}));
  EXPECT_TRUE(env->buffers().truncated[0].item<bool>());
  EXPECT_FALSE(env->buffers().truncated[1].item<bool>());
  EXPECT_EQ(env->diverged_count(), 1);
  EXPECT_TRUE(at::isfinite(env->buffers().obs).all().item<bool>());
}

// The reward terms a config chooses (envs/mjcf/mjcf_task.h), on Gymnasium's Ant model with
// contacts: each term as defined, their sum is the reward, both sims agree in float64.
TEST(MjcfEnv, RewardTermsAsChosen) {
  const std::string xml = model("ant_contacts");
  const EnvOptions opts = {{"precision", 64},
                           {"frame_skip", 5},
                           {"reset_noise_scale", 0.1},
                           {"forward_reward_weight", 1.0},
                           {"ctrl_cost_weight", 0.5},
                           {"healthy_reward", 1.0},
                           {"contact_cost_weight", 5e-4},
                           {"terminate_when_unhealthy", 1}};
  const EnvTextOptions text = {
      {"xml", xml}, {"forward_body", "torso"}, {"healthy_z_range", "0.2,1.0"}};
  auto with = [&](const std::string& physics) {
    EnvTextOptions t = text;
    t["physics"] = physics;
    return make("MJCF-v0", 8, Device::kCpu, 3, opts, t);
  };
  auto ours = with("myriad"), ref = with("mujoco");
  ASSERT_TRUE(ours->spec().dt.has_value());
  const double dt = *ours->spec().dt;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const int64_t nu = ours->spec().action_space.flat_size();
  at::Tensor x_before = ours->buffers().info.at("x_position").clone();
  at::Tensor done_before = at::ones({8}, at::kBool);  // no x before the first step
  bool contact_seen = false;
  for (int t = 0; t < 40; ++t) {
    const at::Tensor a = at::rand({8, nu}, gen) * 2 - 1;
    ours->step(a);
    ref->step(a);
    const auto& b = ours->buffers();
    const auto& info = b.info;
    const at::Tensor sum = info.at("reward_forward") + info.at("reward_survive") +
                           info.at("reward_ctrl") + info.at("reward_contact");
    EXPECT_TRUE(at::allclose(b.reward, sum, 1e-5, 1e-5)) << "step " << t;
    EXPECT_TRUE(at::allclose(info.at("reward_ctrl"), -0.5 * (a * a).sum(1), 1e-5, 1e-6));
    EXPECT_TRUE(at::allclose(info.at("reward_forward"), info.at("x_velocity"), 1e-6, 1e-6));
    const at::Tensor done = b.terminated | b.truncated;
    const at::Tensor live = ~(done | done_before);  // x_before is of this episode
    const at::Tensor v = (info.at("x_position") - x_before) / dt;
    EXPECT_TRUE(
        at::allclose(v.masked_select(live), info.at("x_velocity").masked_select(live), 1e-3, 1e-3))
        << "step " << t;
    // Terminated exactly when unhealthy, and then no healthy reward.
    EXPECT_TRUE(at::equal(b.terminated, info.at("reward_survive") == 0));
    contact_seen = contact_seen || (info.at("reward_contact") < 0).any().item<bool>();
    EXPECT_TRUE(at::allclose(b.reward, ref->buffers().reward, 1e-5, 1e-5)) << "step " << t;
    x_before = info.at("x_position").clone();
    done_before = done.clone();
  }
  EXPECT_TRUE(contact_seen);
  EXPECT_THROW(
      make("MJCF-v0", 2, Device::kCpu, 0, {}, {{"xml", xml}, {"forward_body", "no_such_body"}}),
      std::invalid_argument);
}

// A model file written into the test's temp folder.
std::string temp_model(const std::string& name, const std::string& xml) {
  const std::string path = ::testing::TempDir() + "/" + name + ".xml";
  std::ofstream(path) << xml;
  return path;
}

const char* kBall = R"(<mujoco model="ball">
  <option timestep="0.01"/>
  <worldbody>
    <body name="ball" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom name="bob" type="sphere" pos="0.3 0 0" size="0.1" mass="1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>
)";

// Issue 34: a model's numbers are checked at import on both sims, naming element and attribute.
TEST(MjcfEnv, BadModelNumbersAreRefusedOnBothSims) {
  std::string xml = kBall;
  xml.replace(xml.find("pos=\"0 0 1\""), 11, "pos=\"nan 0 1\"");
  const std::string path = temp_model("ball_nan", xml);
  for (const char* physics : {"myriad", "mujoco"}) {
    try {
      make("MJCF-v0", 2, Device::kCpu, 0, {}, {{"xml", path}, {"physics", physics}});
      ADD_FAILURE() << physics << ": accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("body 'ball' (line 4): pos = \"nan 0 1\" is not finite"),
                std::string::npos)
          << e.what();
    }
  }
}

// A model without actuators simulates (actions [N, 0]) on both sims; train refuses it
// (learner::check_trainable, tests/python/hostile_cases.py).
TEST(MjcfEnv, AModelWithoutActuatorsSimulates) {
  const std::string path = temp_model("ball", kBall);
  for (const char* physics : {"myriad", "mujoco"}) {
    auto env = make("MJCF-v0", 3, Device::kCpu, 0, {}, {{"xml", path}, {"physics", physics}});
    EXPECT_EQ(env->spec().action_space.flat_size(), 0);
    env->set_state(at::tensor({0.0, 0.5, 0.0}).repeat({3, 1}));
    for (int t = 0; t < 10; ++t) env->step(at::zeros({3, 0}));
    EXPECT_TRUE(at::isfinite(env->buffers().obs).all().item<bool>()) << physics;
    EXPECT_NE(env->get_state()[0][1].item<double>(), 0.5) << physics;  // it fell
  }
}

}  // namespace
}  // namespace myriad::envs
