// myriad ppo-bench: times the PPO update of a config's policy (its env's shapes, hidden sizes,
// batch, minibatches and epochs) on a rollout of random data, by LibTorch ops and autograd and
// by hand (learner/ppo_cpu.h), in one process on the CPU; prints seconds per update of each.
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "learner/config.h"
#include "learner/optimizer.h"
#include "learner/policy.h"
#include "learner/ppo.h"
#include "learner/rollout.h"
#include "myriad/registry.h"
#include "myriad/torch_device.h"
#include "tools/commands.h"

namespace myriad::tools {
namespace {

struct PpoBenchOptions {
  std::string config;
  std::vector<std::string> overrides;
  int updates = 5;
  bool json = false;
};

// Seconds per ppo_update of `math` ("fused" or "libtorch"), over `updates` timed updates after
// one untimed, from the same initial policy and rollout.
double time_updates(const learner::TrainConfig& c, const EnvSpec& spec, bool fused, int updates) {
  torch::manual_seed(c.run.seed);
  const int64_t obs_dim = spec.observation_space.flat_size();
  learner::ActorCritic policy(obs_dim, spec.action_space, c.ppo.hidden_sizes, c.ppo.activation,
                              c.ppo.init_log_std);
  learner::FlatAdam optimizer(policy->parameters(), c.ppo.learning_rate);
  learner::Rollout r(c.ppo.num_steps, c.env.num_envs, obs_dim, spec.action_space, torch::kCPU);
  const int64_t B = r.T * r.N;
  {
    torch::NoGradGuard no_grad;
    r.obs.normal_();
    const learner::PolicyOutput s = policy->act(r.obs.reshape({B, obs_dim}));
    r.actions.copy_(s.action.view_as(r.actions));
    r.logprobs.copy_(s.log_prob.view_as(r.logprobs));
    r.values.copy_(s.value.view_as(r.values));
    r.advantages = torch::randn({r.T, r.N});
    r.returns = r.values + torch::randn({r.T, r.N});
  }
  torch::Generator gen = at::make_generator<at::CPUGeneratorImpl>(c.run.seed);
  const learner::LrSchedule schedule = learner::lr_schedule_from_name(c.ppo.lr_schedule);
  const learner::PpoInputs in{policy, &optimizer, &c.ppo, schedule, &gen, nullptr, fused};
  learner::ppo_update(in, r);  // warm-up: allocator, dispatch tables
  const auto start = std::chrono::steady_clock::now();
  for (int u = 0; u < updates; ++u) learner::ppo_update(in, r);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / updates;
}

void run_ppo_bench(const PpoBenchOptions& o) {
  if (o.updates < 1) throw std::invalid_argument("--updates must be at least 1");
  const learner::TrainConfig c = learner::load_config(o.config, o.overrides);
  if (c.run.learner_threads > 0) torch::set_num_threads(c.run.learner_threads);
  const auto env = envs::make(c.env.id, 1, resolve_device_id("cpu"), c.run.seed, c.env.options,
                              learner::env_text_options(c.env));
  const EnvSpec& spec = env->spec();
  if (spec.multi_agent())
    throw std::invalid_argument("ppo-bench: '" + c.env.id +
                                "' is a multi-agent env; give a single-agent config");
  const int64_t B = c.ppo.num_steps * c.env.num_envs;  // load_config checked the minibatches
  const double torch_s = time_updates(c, spec, false, o.updates);
  const double fused_s = time_updates(c, spec, true, o.updates);
  const int64_t minibatches = c.ppo.update_epochs * c.ppo.num_minibatches;
  nlohmann::json out = {{"env", c.env.id},
                        {"batch", B},
                        {"minibatch", B / c.ppo.num_minibatches},
                        {"minibatches_per_update", minibatches},
                        {"hidden_sizes", c.ppo.hidden_sizes},
                        {"learner_threads", torch::get_num_threads()},
                        {"updates", o.updates},
                        {"libtorch_seconds_per_update", torch_s},
                        {"fused_seconds_per_update", fused_s},
                        {"speedup", torch_s / fused_s}};
  if (o.json) {
    std::cout << out.dump() << std::endl;
    return;
  }
  std::cout << c.env.id << ": PPO update of " << B << " transitions (" << minibatches
            << " minibatches of " << B / c.ppo.num_minibatches << "): libtorch " << torch_s
            << " s, fused " << fused_s << " s (" << torch_s / fused_s << "x)\n";
}

}  // namespace

void add_ppo_bench_command(CLI::App& app) {
  auto opts = std::make_shared<PpoBenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "ppo-bench", "Time one PPO update of a config's policy: LibTorch ops against fused loops");
  cmd->add_option("config", opts->config, "YAML config (its env, ppo and run sections)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("overrides", opts->overrides, "key=value overrides, as for train");
  cmd->add_option("--updates", opts->updates, "Timed updates of each kind")->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print one JSON line");
  cmd->callback([opts] { run_ppo_bench(*opts); });
}

}  // namespace myriad::tools
