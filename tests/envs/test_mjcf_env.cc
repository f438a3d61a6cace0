// MJCF-v0: the same model, state and controls give the same rollout on Myriad's float64 engine
// and on libmujoco; spaces come from the model; bad options are clear errors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>

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

}  // namespace
}  // namespace myriad::envs
