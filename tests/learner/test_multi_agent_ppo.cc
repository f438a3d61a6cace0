// Multi-agent PPO: teams (parameter sharing, agent ids, centralised critic input, random teams),
// per-team statistics and win rates, checkpoints and determinism over the MPE envs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "learner/checkpoint.h"
#include "learner/teams.h"
#include "learner/trainer.h"
#include "myriad/registry.h"
#include "tests/temp_dir.h"

namespace myriad::learner {
namespace {

TrainConfig small_config(const std::string& env, const std::string& agents = "{}") {
  return parse_config("env: {id: " + env +
                          ", num_envs: 8, device: cpu}\n"
                          "ppo: {num_steps: 16, num_minibatches: 2, update_epochs: 2,"
                          "      normalize_reward: true}\n"
                          "agents: " +
                          agents +
                          "\n"
                          "run: {total_env_steps: 4096, eval_episodes: 0, seed: 7}\n",
                      {});
}

// Every learning team's parameters, in team order.
std::vector<torch::Tensor> all_params(const Trainer& t) {
  std::vector<torch::Tensor> out;
  for (const TeamPolicy& team : t.snapshot().teams)
    if (team.policy)
      for (const auto& p : team.policy->parameters()) out.push_back(p.detach().clone());
  return out;
}

void expect_same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(torch::equal(a[k], b[k])) << "param " << k;
}

void expect_invalid(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(Teams, TagHasAdversariesAndGoodWithTheirOwnWidths) {
  const EnvSpec spec = envs::spec_of("Tag-v0");
  AgentsConfig c;
  const auto teams = make_teams(spec, c, torch::kCPU);
  ASSERT_EQ(teams.size(), 2u);
  EXPECT_EQ(teams[0].name, "adversaries");
  EXPECT_EQ(teams[0].agents, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(teams[0].obs_width, 16);
  EXPECT_EQ(teams[0].actor_dim(), 16 + 3) << "one-hot agent id of 3";
  EXPECT_EQ(teams[1].name, "good");
  EXPECT_EQ(teams[1].agents, (std::vector<int64_t>{3}));
  EXPECT_EQ(teams[1].obs_width, 14);
  EXPECT_EQ(teams[1].actor_dim(), 14) << "no id for a team of one";
  c.central_value = true;
  const auto central = make_teams(spec, c, torch::kCPU);
  EXPECT_EQ(central[0].input_dim(), 19 + 4 * 16);
  EXPECT_EQ(central[0].actor_dim(), 19);
}

TEST(Teams, RowsInputsAndActionsMapTheAgentAxis) {
  const EnvSpec spec = envs::spec_of("Tag-v0");
  AgentsConfig c;
  c.central_value = true;
  const auto teams = make_teams(spec, c, torch::kCPU);
  const int64_t n = 2, A = 4, D = 16;
  const torch::Tensor obs = torch::arange(n * A * D, torch::kFloat).reshape({n, A, D});
  const Team& adv = teams[0];
  const torch::Tensor x = adv.input(obs);
  ASSERT_EQ(x.sizes(), (std::vector<int64_t>{n * 3, 19 + A * D}));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < 3; ++k) {
      const torch::Tensor row = x[i * 3 + k];
      EXPECT_TRUE(torch::equal(row.narrow(0, 0, 16), obs[i][k])) << "env-major rows";
      EXPECT_TRUE(torch::equal(row.narrow(0, 16, 3), torch::eye(3)[k]));
      EXPECT_TRUE(torch::equal(row.narrow(0, 19, A * D), obs[i].reshape({-1})));
    }
  const Team& good = teams[1];
  EXPECT_TRUE(torch::equal(good.input(obs).narrow(1, 0, 14), obs.select(1, 3).narrow(1, 0, 14)));
  const torch::Tensor reward = torch::arange(n * A, torch::kFloat).reshape({n, A});
  EXPECT_TRUE(torch::equal(adv.rows(reward), torch::tensor({0.f, 1.f, 2.f, 4.f, 5.f, 6.f})));
  EXPECT_TRUE(torch::equal(adv.per_env(torch::tensor({true, false})),
                           torch::tensor({true, true, true, false, false, false})));
  torch::Tensor actions = torch::full({n, A}, -1, torch::kInt);
  adv.put_actions(torch::tensor({1, 2, 3, 4, 0, 1}), actions);
  good.put_actions(torch::tensor({4, 2}), actions);
  EXPECT_TRUE(torch::equal(actions, torch::tensor({{1, 2, 3, 4}, {4, 0, 1, 2}}, torch::kInt)));
}

TEST(Teams, RandomTeamsAreCheckedByName) {
  expect_invalid([] { check_trainable(small_config("Tag-v0", "{random_teams: [prey]}")); },
                 {"agents.random_teams", "Tag-v0 has no team 'prey'", "adversaries, good"});
  expect_invalid(
      [] {
        check_trainable(small_config("Sumo-v0",
                                     "{random_teams: [wrestler_0, "
                                     "wrestler_1]}"));
      },
      {"agents.random_teams", "leave at least one to learn"});
  expect_invalid([] { check_trainable(small_config("CartPole-v1", "{random_teams: [good]}")); },
                 {"agents.random_teams", "single-agent env"});
  expect_invalid([] { parse_config("agents: {random_teams: [good, good]}", {}); },
                 {"agents.random_teams[1]", "appears twice"});
  expect_invalid([] { parse_config("agents: {random_teams: good}", {}); },
                 {"agents.random_teams", "expected a list"});
  const TrainConfig c = parse_config(to_yaml(small_config("Tag-v0", "{random_teams: [good]}")), {});
  EXPECT_EQ(c.agents.random_teams, (std::vector<std::string>{"good"})) << "round trip";
}

TEST(MultiAgentPpo, TagTrainsTheAdversariesAgainstARandomPrey) {
  Trainer t(small_config("Tag-v0", "{random_teams: [good]}"), "");
  UpdateStats s;
  for (int k = 0; k < 3; ++k) s = t.update();
  ASSERT_EQ(s.teams.size(), 2u);
  EXPECT_TRUE(s.teams[0].learns);
  EXPECT_FALSE(s.teams[1].learns);
  EXPECT_TRUE(std::isfinite(s.teams[0].pg_loss));
  EXPECT_TRUE(std::isnan(s.teams[1].pg_loss)) << "a random team has no losses";
  EXPECT_TRUE(std::isfinite(s.teams[0].episode_return)) << "25-step episodes ended";
  EXPECT_TRUE(std::isfinite(s.teams[1].episode_return));
  EXPECT_EQ(s.pg_loss, s.teams[0].pg_loss);
  const LoadedPolicy p = t.snapshot();
  ASSERT_EQ(p.teams.size(), 2u);
  EXPECT_TRUE(p.teams[0].policy);
  EXPECT_FALSE(p.teams[1].policy);
  const auto scalars = update_scalars(s, 1.0, 1.0);
  for (const char* key : {"charts/adversaries/episode_return", "charts/good/episode_return",
                          "losses/adversaries/policy_loss"})
    EXPECT_EQ(scalars.count(key), 1u) << key;
  EXPECT_EQ(scalars.count("losses/good/policy_loss"), 0u);
  EXPECT_EQ(scalars.count("charts/episode_return"), 0u) << "ambiguous with two teams";
}

TEST(MultiAgentPpo, SumoReportsWinAndDrawRatesThatSumToOne) {
  Trainer t(small_config("Sumo-v0"), "");
  UpdateStats s;
  for (int k = 0; k < 12; ++k) s = t.update();  // 1536 steps of 8 envs: more than 100 episodes
  ASSERT_EQ(s.teams.size(), 2u);
  const double total = s.teams[0].win_rate + s.teams[1].win_rate + s.draw_rate;
  EXPECT_NEAR(total, 1.0, 1e-9) << s.teams[0].win_rate << " " << s.teams[1].win_rate << " "
                                << s.draw_rate;
  const auto scalars = update_scalars(s, 1.0, 1.0);
  for (const char* key : {"charts/wrestler_0/win_rate", "charts/wrestler_1/win_rate",
                          "charts/draw_rate", "losses/wrestler_1/policy_loss"})
    EXPECT_EQ(scalars.count(key), 1u) << key;
  LoadedPolicy p = t.snapshot();
  const EvalResult e = evaluate(p, 64, 3);
  ASSERT_EQ(e.teams.size(), 2u);
  EXPECT_NEAR(e.teams[0].win_rate + e.teams[1].win_rate + e.draw_rate, 1.0, 1e-12);
  EXPECT_NEAR(e.teams[0].return_mean, -e.teams[1].return_mean, 1e-6) << "zero-sum";
  EXPECT_NEAR(e.teams[0].return_mean, e.teams[0].win_rate - e.teams[1].win_rate, 1e-6)
      << "the return is the outcome";
}

class MultiAgentResume : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(MultiAgentResume, GivesTheSameNextUpdatesAsAnUninterruptedRun) {
  const auto& [env, agents] = GetParam();
  const testing_util::TempDir dir("ma_resume");
  const std::string ckpt = dir.file("ckpt.pt");
  Trainer straight(small_config(env, agents), "");
  for (int k = 0; k < 2; ++k) straight.update();
  straight.save_checkpoint(ckpt);
  straight.update();
  const UpdateStats expected_stats = straight.update();
  const auto expected = all_params(straight);

  TrainConfig cfg = small_config(env, agents);
  cfg.run.resume = ckpt;
  Trainer resumed(cfg, "");
  EXPECT_EQ(resumed.updates(), 2);
  resumed.update();
  const UpdateStats s = resumed.update();
  expect_same(all_params(resumed), expected);
  ASSERT_EQ(s.teams.size(), expected_stats.teams.size());
  for (size_t k = 0; k < s.teams.size(); ++k) {
    EXPECT_EQ(std::isnan(s.teams[k].episode_return),
              std::isnan(expected_stats.teams[k].episode_return));
    if (!std::isnan(s.teams[k].episode_return))
      EXPECT_EQ(s.teams[k].episode_return, expected_stats.teams[k].episode_return);
  }
  // The policy loads from the checkpoint and acts for every team.
  LoadedPolicy p = load_policy(ckpt);
  EXPECT_EQ(p.teams.size(), resumed.snapshot().teams.size());
  const EvalResult e = evaluate(p, 8, 1);
  EXPECT_EQ(e.teams.size(), p.teams.size());
}

INSTANTIATE_TEST_SUITE_P(Envs, MultiAgentResume,
                         ::testing::Values(std::make_pair("Spread-v0", "{}"),
                                           std::make_pair("Tag-v0", "{central_value: true}"),
                                           std::make_pair("Tag-v0",
                                                          "{random_teams: [adversaries]}"),
                                           std::make_pair("Sumo-v0", "{}")));

TEST(MultiAgentPpo, MismatchedAgentsSettingsRefuseToResume) {
  const testing_util::TempDir dir("ma_mismatch");
  const std::string ckpt = dir.file("ckpt.pt");
  Trainer(small_config("Tag-v0"), "").save_checkpoint(ckpt);
  TrainConfig cfg = small_config("Tag-v0", "{central_value: true}");
  cfg.run.resume = ckpt;
  expect_invalid([&] { Trainer t(cfg, ""); }, {"agents.central_value is false in the checkpoint"});
}

TEST(MultiAgentPpo, SameSeedSameRunWhateverTheEnvThreads) {
  TrainConfig one = small_config("Tag-v0");
  one.run.threads = 1;
  TrainConfig two = one;
  two.run.threads = 2;
  Trainer a(one, ""), b(two, "");
  for (int k = 0; k < 2; ++k) a.update(), b.update();
  expect_same(all_params(a), all_params(b));
}

TEST(MultiAgentPpo, ActChecksTheAgentAxis) {
  Trainer t(small_config("Spread-v0"), "");
  LoadedPolicy p = t.snapshot();
  expect_invalid([&] { p.act(torch::zeros({4, 18})); }, {"[B, 3, 18]", "[4, 18]"});
  const torch::Tensor a = p.act(torch::zeros({4, 3, 18}));
  EXPECT_EQ(a.sizes(), (std::vector<int64_t>{4, 3}));
  expect_invalid([&] { p.value(torch::zeros({4, 3, 18})); }, {"single-agent"});
}

}  // namespace
}  // namespace myriad::learner
