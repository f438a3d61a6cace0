// A training update that goes NaN or infinite stops the run with an error naming the update;
// nothing of it is logged, checkpointed or evaluated.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "learner/trainer.h"

namespace myriad::learner {
namespace {

TrainConfig small_config(const std::string& env) {
  return parse_config("env: {id: " + env +
                          ", num_envs: 8, device: cpu}\n"
                          "ppo: {num_steps: 16, num_minibatches: 2, update_epochs: 1}\n"
                          "run: {total_env_steps: 4096, eval_episodes: 0, seed: 3}\n",
                      {});
}

std::string error_of_update(Trainer& t) {
  try {
    t.update();
  } catch (const NonFiniteTraining& e) {
    return e.what();
  }
  return "";
}

TEST(NonFiniteTraining, NanParametersStopTheRunNamingTheUpdate) {
  for (const char* env : {"CartPole-v1", "Pendulum-v1"}) {
    Trainer t(small_config(env), "");
    EXPECT_EQ(error_of_update(t), "") << env;  // a healthy first update
    {
      torch::NoGradGuard no_grad;
      // The critic's last bias (a view into the optimizer's flat buffer): the actions stay
      // finite, so it is the learner, not the env, that must notice.
      t.policy()->parameters().back().fill_(NAN);
    }
    const std::string e = error_of_update(t);
    EXPECT_NE(e.find("update 2 "), std::string::npos) << env << ": " << e;
    EXPECT_NE(e.find("non-finite"), std::string::npos) << env << ": " << e;
  }
}

TEST(NonFiniteTraining, InfiniteParametersAreCaughtToo) {
  Trainer t(small_config("CartPole-v1"), "");
  {
    torch::NoGradGuard no_grad;
    t.policy()->parameters()[0].fill_(INFINITY);  // the actor's first weights
  }
  EXPECT_NE(error_of_update(t).find("update 1 "), std::string::npos);
}

}  // namespace
}  // namespace myriad::learner
