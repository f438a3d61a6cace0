// Host synchronisations per update, counted on the CPU: the ops that would make a CUDA host
// wait (item, nonzero, ...) are seen through ATen's RecordFunction hook whatever the device, so
// this test holds the CUDA path to one planned read per update and no stray sync.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "learner/host_sync.h"
#include "learner/policy.h"
#include "learner/trainer.h"

namespace myriad::learner {
namespace {

TEST(HostSyncCounter, SeesTheOpsThatWaitForTheDevice) {
  const auto x = torch::tensor({0.0f, 1.0f, 2.0f});
  HostSyncCounter count;
  (void)x.sum().item<float>();
  (void)x.nonzero();
  (void)x.index({x > 0});  // boolean indexing runs nonzero
  (void)(x * 2).sum();     // no sync
  EXPECT_EQ(count.stray(), 3) << "by op: " << count.by_op().size();
  EXPECT_EQ(count.by_op()["aten::nonzero"], 2);
  (void)read_to_host(x);
  EXPECT_EQ(count.planned(), 1);
}

TrainConfig config(const std::string& env, bool normalize_reward, const std::string& schedule) {
  return parse_config("env: {id: " + env + ", num_envs: 16, device: cpu}\n" +
                          "ppo: {num_steps: 32, num_minibatches: 4, update_epochs: 2," +
                          " normalize_reward: " + (normalize_reward ? "true" : "false") +
                          ", lr_schedule: " + schedule + "}\n" +
                          "run: {total_env_steps: 100000, eval_episodes: 0, seed: 3}\n",
                      {});
}

class SyncsPerUpdate : public ::testing::TestWithParam<std::tuple<std::string, bool, std::string>> {
};

TEST_P(SyncsPerUpdate, OnePlannedReadAndNoStraySync) {
  const auto& [env, scale, schedule] = GetParam();
  Trainer trainer(config(env, scale, schedule), "");
  HostSyncCounter count;  // from the first update on
  const int updates = 3;
  for (int k = 0; k < updates; ++k) trainer.update();
  std::string ops;
  for (const auto& [op, n] : count.by_op()) ops += op + " x" + std::to_string(n) + " ";
  EXPECT_EQ(count.stray(), 0) << ops;
  EXPECT_EQ(count.planned(), updates);
}

INSTANTIATE_TEST_SUITE_P(Configs, SyncsPerUpdate,
                         ::testing::Values(std::make_tuple("CartPole-v1", false, "linear"),
                                           std::make_tuple("Pendulum-v1", true, "kl_adaptive"),
                                           std::make_tuple("Acrobot-v1", false, "constant"),
                                           // Multi-agent PPO: teams, agent rows, win rates.
                                           std::make_tuple("Tag-v0", true, "kl_adaptive"),
                                           std::make_tuple("Sumo-v0", false, "linear")));

// Sampling draws only from the generator it is given: the same seed, the same actions (this is
// what lets the trainer keep its generator on the env's device and save it in checkpoints).
TEST(Policy, SamplesComeFromTheGivenGenerator) {
  for (const Space& space : {Space::box({-2, -2}, {2, 2}), Space::discrete(3)}) {
    ActorCritic policy(3, space, std::vector<int64_t>{8, 8}, std::string("tanh"), 0.0);
    const auto obs = torch::randn({64, 3});
    at::Generator a = at::make_generator<at::CPUGeneratorImpl>(11);
    at::Generator b = at::make_generator<at::CPUGeneratorImpl>(11);
    torch::manual_seed(1);
    const PolicyOutput x = policy->sample(obs, &a);
    torch::manual_seed(2);  // the global generator must not matter
    const PolicyOutput y = policy->sample(obs, &b);
    EXPECT_TRUE(torch::equal(x.action, y.action)) << space.describe();
    EXPECT_TRUE(torch::allclose(x.log_prob, y.log_prob));
    // The log-probability sample() reports is the one act() evaluates for that action.
    const PolicyOutput z = policy->act(obs, x.action);
    EXPECT_TRUE(torch::allclose(x.log_prob, z.log_prob, 1e-5, 1e-5)) << space.describe();
  }
}

// The exponential race draws from the policy's categorical distribution: with the actor's last
// bias set to (0, 1, 2) and zero inputs, the frequencies are softmax(0, 1, 2).
TEST(Policy, DiscreteSamplesFollowTheCategoricalDistribution) {
  ActorCritic policy(2, Space::discrete(3), std::vector<int64_t>{4}, std::string("tanh"), 0.0);
  {
    torch::NoGradGuard no_grad;
    policy->named_parameters()["actor.2.bias"].copy_(torch::tensor({0.0f, 1.0f, 2.0f}));
  }
  const auto obs = torch::zeros({200000, 2});
  at::Generator g = at::make_generator<at::CPUGeneratorImpl>(5);
  const PolicyOutput out = policy->sample(obs, &g);
  const auto expected = torch::softmax(torch::tensor({0.0, 1.0, 2.0}), 0);
  for (int k = 0; k < 3; ++k) {
    const double seen = (out.action == k).to(torch::kDouble).mean().item<double>();
    EXPECT_NEAR(seen, expected[k].item<double>(), 0.005) << "action " << k;
  }
}

}  // namespace
}  // namespace myriad::learner
