// Config parsing: defaults, overrides, and errors that name the key path.
#include <gtest/gtest.h>

#include <cstdint>

#include "learner/config.h"

namespace myriad::learner {
namespace {

std::string error_of(const std::string& yaml, std::vector<std::string> overrides = {}) {
  try {
    parse_config(yaml, overrides);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Config, DefaultsAndOverrides) {
  const TrainConfig c = parse_config("env: {id: Pendulum-v1}\nppo: {gamma: 0.9}\n",
                                     {"ppo.learning_rate=1e-3", "env.options.g=9.81",
                                      "ppo.hidden_sizes=[32, 16]", "run.stop_when_solved=true"});
  EXPECT_EQ(c.env.id, "Pendulum-v1");
  EXPECT_DOUBLE_EQ(c.ppo.gamma, 0.9);
  EXPECT_DOUBLE_EQ(c.ppo.learning_rate, 1e-3);
  EXPECT_DOUBLE_EQ(c.env.options.at("g"), 9.81);
  EXPECT_EQ(c.ppo.hidden_sizes, (std::vector<int64_t>{32, 16}));
  EXPECT_TRUE(c.run.stop_when_solved);
  EXPECT_EQ(c.ppo.num_steps, 128);  // default kept
}

TEST(Config, RoundTripsThroughYaml) {
  const TrainConfig c = parse_config("", {"ppo.clip_coef=0.3", "env.options.max_episode_steps=50"});
  const TrainConfig d = parse_config(to_yaml(c), {});
  EXPECT_EQ(to_yaml(c), to_yaml(d));
  EXPECT_DOUBLE_EQ(d.ppo.clip_coef, 0.3);
}

TEST(Config, UnknownKeyNamesPathAndValidKeys) {
  const std::string e = error_of("ppo:\n  learning_rat: 0.1\n");
  EXPECT_NE(e.find("ppo.learning_rat"), std::string::npos) << e;
  EXPECT_NE(e.find("ppo.learning_rate"), std::string::npos) << e;
  EXPECT_NE(error_of("", {"runn.seed=3"}).find("runn"), std::string::npos);
}

TEST(Config, WrongTypesAndValuesNameTheKey) {
  EXPECT_NE(error_of("ppo: {learning_rate: fast}").find("ppo.learning_rate"), std::string::npos);
  EXPECT_NE(error_of("env: {num_envs: 2.5}").find("env.num_envs"), std::string::npos);
  EXPECT_NE(error_of("env: {num_envs: -4}").find("must be > 0"), std::string::npos);
  EXPECT_NE(error_of("ppo: {gamma: 1.5}").find("ppo.gamma"), std::string::npos);
  EXPECT_NE(error_of("env: {device: tpu}").find("cpu, cuda, auto"), std::string::npos);
  EXPECT_NE(error_of("ppo: {hidden_sizes: 64}").find("ppo.hidden_sizes"), std::string::npos);
  EXPECT_NE(error_of("ppo: {clip_vloss: maybe}").find("ppo.clip_vloss"), std::string::npos);
  EXPECT_NE(error_of("ppo: 3").find("ppo"), std::string::npos);
  EXPECT_NE(error_of("env: {num_envs: 10}\nppo: {num_steps: 3, num_minibatches: 4}")
                .find("ppo.num_minibatches"),
            std::string::npos);
  EXPECT_NE(error_of("", {"no_equals_sign"}).find("key.path=value"), std::string::npos);
  EXPECT_NE(error_of("a: [").find("YAML"), std::string::npos);
}

}  // namespace
}  // namespace myriad::learner
