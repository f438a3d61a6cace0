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

TEST(Config, RandomizationTermsAreCheckedNamingTheirKey) {
  const TrainConfig c = parse_config(
      "env:\n  randomize:\n    foot:\n      field: geom_friction\n      names: [.*foot]\n"
      "      axes: [0]\n      range: [0.3, 1.5]\n      shared: true\n",
      {});
  EXPECT_NE(c.env.randomize.find("\"geom_friction\""), std::string::npos) << c.env.randomize;
  EXPECT_EQ(env_text_options(c.env).at("randomize"), c.env.randomize);
  EXPECT_EQ(to_yaml(parse_config(to_yaml(c), {})), to_yaml(c));
  // No terms: nothing reaches the env (a config written back says randomize: {}).
  const TrainConfig none = parse_config(to_yaml(parse_config("", {})), {});
  EXPECT_EQ(none.env.randomize, "");
  EXPECT_EQ(env_text_options(none.env).count("randomize"), 0u);
  EXPECT_NE(error_of("env: {randomize: {f: {field: geom_friction, range: [2, 1]}}}")
                .find("config key 'env.randomize.f.range': the range is inverted"),
            std::string::npos);
  EXPECT_NE(error_of("env: {randomize: {f: {field: geom_friction, range: [0, .inf]}}}")
                .find("config key 'env.randomize.f.range[1]': must be finite"),
            std::string::npos);
  EXPECT_NE(error_of("env: {randomize: {f: {field: mass, range: [0, 1]}}}")
                .find("config key 'env.randomize.f.field': unknown field 'mass' (valid: "),
            std::string::npos);
  EXPECT_NE(error_of("env: {randomize: {f: {field: geom_friction, range: [0, 1], how: x}}}")
                .find("config key 'env.randomize.f.how': unknown key"),
            std::string::npos);
  EXPECT_NE(error_of("env: {randomize: [1, 2]}").find("config key 'env.randomize'"),
            std::string::npos);
}

TEST(Config, SeedsOutsideTheCheckpointRangeAreRefusedNotWrapped) {
  EXPECT_EQ(parse_config("", {"run.seed=9223372036854775807"}).run.seed, 9223372036854775807ULL);
  for (const char* bad : {"-1", "9223372036854775808", "18446744073709551616", "1e19"}) {
    const std::string e = error_of("", {std::string("run.seed=") + bad});
    EXPECT_NE(e.find("run.seed"), std::string::npos) << bad << ": " << e;
  }
  EXPECT_NE(error_of("", {"run.seed=-1"}).find("[0, 9223372036854775807]"), std::string::npos);
}

TEST(Config, IntegersAreExactNotRoundedThroughADouble) {
  EXPECT_EQ(parse_config("", {"run.total_env_steps=1e6"}).run.total_env_steps, 1000000);
  EXPECT_EQ(parse_config("", {"run.total_env_steps=9007199254740993"}).run.total_env_steps,
            9007199254740993LL);  // 2**53 + 1: a double would round it
  EXPECT_NE(error_of("", {"run.total_env_steps=1e30"}).find("run.total_env_steps"),
            std::string::npos);
  EXPECT_NE(error_of("", {"run.threads=4294967296"}).find("run.threads"), std::string::npos);
}

TEST(Config, DuplicateKeysAreAnError) {
  EXPECT_NE(error_of("ppo: {gamma: 0.9, gamma: 0.5}").find("ppo.gamma"), std::string::npos);
  EXPECT_NE(error_of("ppo: {gamma: 0.9}\nppo: {gamma: 0.5}\n").find("appears twice"),
            std::string::npos);
  EXPECT_NE(error_of("env: {options: {g: 9.8, g: 10}}").find("env.options.g"), std::string::npos);
}

TEST(Config, MinibatchesOfOneSampleAreRefused) {
  const std::string e = error_of("env: {num_envs: 4}\nppo: {num_steps: 1, num_minibatches: 4}\n");
  EXPECT_NE(e.find("ppo.num_minibatches"), std::string::npos) << e;
  EXPECT_NO_THROW(
      parse_config("env: {num_envs: 4}\nppo: {num_steps: 1, num_minibatches: 2}\n", {}));
}

TEST(Config, NonFiniteEnvOptionsAndOverflowingCountsAreRefused) {
  EXPECT_NE(error_of("env: {options: {reset_noise_scale: .inf}}").find("must be finite"),
            std::string::npos);
  EXPECT_NE(error_of("", {"env.num_envs=4611686018427387904"}).find("overflows"),
            std::string::npos);
}

}  // namespace
}  // namespace myriad::learner
