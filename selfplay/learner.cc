#include "selfplay/learner.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <stdexcept>

#include "learner/advantages.h"
#include "learner/checkpoint.h"
#include "learner/ppo.h"
#include "learner/rollout.h"
#include "learner/schedule.h"
#include "learner/trainer.h"

namespace myriad::selfplay {

using learner::ActorCritic;
using learner::TrainConfig;

ActorCritic make_team_policy(const TrainConfig& c, const EnvSpec& spec, const learner::Team& team) {
  return ActorCritic(team.input_dim(), spec.action_space, c.ppo.hidden_sizes, c.ppo.activation,
                     c.ppo.init_log_std, team.actor_dim());
}

torch::Tensor flat_parameters(ActorCritic& policy) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (const torch::Tensor& p : policy->parameters()) parts.push_back(p.reshape({-1}));
  return torch::cat(parts).to(torch::kCPU, torch::kFloat).contiguous();
}

void load_flat_parameters(ActorCritic& policy, const torch::Tensor& flat) {
  torch::NoGradGuard no_grad;
  int64_t at = 0;
  auto params = policy->parameters();
  int64_t total = 0;
  for (const torch::Tensor& p : params) total += p.numel();
  if (flat.dim() != 1 || flat.numel() != total)
    throw std::invalid_argument("weights of " + std::to_string(flat.numel()) +
                                " parameters for a network of " + std::to_string(total));
  for (torch::Tensor& p : params) {
    p.copy_(flat.narrow(0, at, p.numel()).view(p.sizes()));
    at += p.numel();
  }
}

void check_selfplay(const TrainConfig& c) {
  const EnvSpec spec = learner::configured_spec(c);
  if (!spec.multi_agent() || spec.team_names.size() < 2)
    throw std::invalid_argument(
        "config key 'env.id': self-play needs an env of two or more teams; " + spec.id + " has " +
        std::to_string(spec.team_names.size()));
  if (!c.agents.random_teams.empty())
    throw std::invalid_argument(
        "config key 'agents.random_teams': self-play draws every opponent from the pool; leave "
        "it empty");
  const auto teams = learner::make_teams(spec, c.agents, torch::kCPU);
  for (const auto& t : teams)
    if (t.input_dim() != teams[0].input_dim() || t.size() != teams[0].size())
      throw std::invalid_argument("config key 'env.id': self-play plays snapshots of team '" +
                                  teams[0].name + "' on every side, so the teams must be alike; " +
                                  spec.id + "'s team '" + t.name + "' is not");
  if (c.ppo.normalize_obs)
    throw std::invalid_argument(
        "config key 'ppo.normalize_obs': not supported by myriad serve yet (actors would need "
        "the statistics); set it false");
  if (c.ppo.normalize_reward)
    throw std::invalid_argument(
        "config key 'ppo.normalize_reward': not supported by myriad serve yet; set it false");
}

SelfPlayLearner::SelfPlayLearner(TrainConfig config)
    : cfg_(std::move(config)),
      config_yaml_(learner::to_yaml(cfg_)),
      spec_(learner::configured_spec(cfg_)),
      gen_(at::make_generator<at::CPUGeneratorImpl>(cfg_.run.seed)),
      league_({sampler_from_name(cfg_.serve.opponents),
               pfsp_weighting_from_name(cfg_.serve.pfsp_weighting), cfg_.serve.pfsp_p,
               cfg_.serve.elo_k, cfg_.serve.elo_initial}) {
  check_selfplay(cfg_);
  torch::manual_seed(cfg_.run.seed);
  team_ = learner::make_teams(spec_, cfg_.agents, torch::kCPU).front();
  policy_ = make_team_policy(cfg_, spec_, team_);
  optimizer_ = learner::FlatAdam(policy_->parameters(), cfg_.ppo.learning_rate);
  cpu_kernels_ =
      learner::use_cpu_kernels(cfg_.run.learner_math, *policy_, cfg_.run.learner_threads);
  snapshots_[league_.add_snapshot(0)] = flat_parameters(policy_);
}

UpdateFigures SelfPlayLearner::update(const std::vector<ChunkMsg>& chunks) {
  if (chunks.empty()) throw std::invalid_argument("update: no chunks");
  const learner::PpoConfig& c = cfg_.ppo;
  // The chunks' envs side by side: [T, sum B, ...].
  std::vector<torch::Tensor> obs, act, logp, rew, term, trunc, fin, next;
  for (const ChunkMsg& m : chunks) {
    if (m.obs.size(0) != chunks[0].obs.size(0))
      throw std::invalid_argument("update: chunks of different lengths");
    obs.push_back(m.obs), act.push_back(m.actions), logp.push_back(m.logprobs);
    rew.push_back(m.rewards), term.push_back(m.terminated), trunc.push_back(m.truncated);
    fin.push_back(m.final_obs), next.push_back(m.next_obs);
  }
  learner::Rollout r;
  r.obs = torch::cat(obs, 1);
  r.T = r.obs.size(0), r.N = r.obs.size(1);
  r.actions = torch::cat(act, 1);
  r.logprobs = torch::cat(logp, 1);
  r.rewards = torch::cat(rew, 1);
  r.terminated = torch::cat(term, 1).to(torch::kBool);
  r.truncated = torch::cat(trunc, 1).to(torch::kBool);
  r.final_obs = torch::cat(fin, 1);
  r.next_obs = torch::cat(next, 0);
  {
    // Values by the current critic (the behaviour policy's may be versions old).
    torch::NoGradGuard no_grad;
    policy_->eval();
    r.values = policy_->value(r.obs.reshape({r.T * r.N, -1})).reshape({r.T, r.N});
  }
  r.dones = torch::zeros({r.T, r.N});
  r.advantages = torch::zeros({r.T, r.N});
  r.returns = torch::zeros({r.T, r.N});
  learner::compute_returns({policy_, learner::Standardizer(), nullptr, nullptr, c.reward_clip,
                            c.gamma, c.gae_lambda, nullptr},
                           r);
  // PPO cuts T x N rows into ppo.num_minibatches slices of at least 2 (advantages are
  // normalized by their std); fewer rows would make empty slices, which never end (learner/ppo.h).
  if (r.T * r.N < 2 * c.num_minibatches)
    throw std::invalid_argument("update: " + std::to_string(r.T * r.N) +
                                " transitions, fewer than 2 per minibatch (ppo.num_minibatches = " +
                                std::to_string(c.num_minibatches) + ")");
  // What the update changes, kept to put back if it goes non-finite.
  const torch::Tensor params_before = optimizer_.flat_params().clone();
  std::vector<torch::Tensor> adam_before;
  for (const torch::Tensor& t : optimizer_.state()) adam_before.push_back(t.clone());
  const torch::Tensor gen_before = gen_.get_state();
  const learner::LrSchedule schedule = learner::lr_schedule_from_name(c.lr_schedule);
  if (schedule != learner::LrSchedule::kKlAdaptive)
    optimizer_.set_lr(
        learner::scheduled_lr(schedule, c.learning_rate, env_steps_, cfg_.run.total_env_steps));
  const torch::Tensor m =
      learner::ppo_update({policy_, &optimizer_, &c, schedule, &gen_, nullptr, cpu_kernels_}, r);
  {
    // As `myriad train` does (learner/trainer.h): non-finite losses or parameters refuse the
    // update. Here the policy, optimizer and generator go back to before it, so nothing
    // non-finite is ever broadcast or saved and the server goes on.
    const double* h = m.data_ptr<double>();
    std::string bad;
    const std::pair<const char*, double> losses[] = {{"policy_loss", h[learner::kPolicyLoss]},
                                                     {"value_loss", h[learner::kValueLoss]},
                                                     {"entropy", h[learner::kEntropy]},
                                                     {"approx_kl", h[learner::kApproxKl]}};
    for (const auto& [name, value] : losses)
      if (!std::isfinite(value))
        bad += (bad.empty() ? "" : ", ") + std::string(name) + " = " + std::to_string(value);
    if (!optimizer_.flat_params().isfinite().all().item<bool>())
      bad += (bad.empty() ? "" : ", ") + std::string("a network parameter");
    if (!bad.empty()) {
      torch::NoGradGuard no_grad;
      optimizer_.flat_params().copy_(params_before);
      optimizer_.load_state(adam_before);
      gen_.set_state(gen_before);
      throw NonFiniteUpdate("update to version " + std::to_string(version_ + 1) +
                            " went non-finite (" + bad + "); refused, the policy is unchanged");
    }
  }
  ++version_;
  env_steps_ += r.T * r.N;
  if (version_ % cfg_.serve.snapshot_every == 0) {
    snapshots_[league_.add_snapshot(version_)] = flat_parameters(policy_);
    // Over the cap: the oldest goes, except the first (the Elo table's reference point).
    const auto& pool = league_.snapshots();
    if (cfg_.serve.max_snapshots > 0 &&
        static_cast<int64_t>(pool.size()) > cfg_.serve.max_snapshots) {
      const int64_t oldest = pool[1].id;
      league_.remove(oldest);
      snapshots_.erase(oldest);
    }
  }
  UpdateFigures f;
  f.chunks = static_cast<int64_t>(chunks.size());
  f.env_steps = r.T * r.N;
  const double* h = m.data_ptr<double>();
  f.pg_loss = h[learner::kPolicyLoss], f.v_loss = h[learner::kValueLoss];
  f.entropy = h[learner::kEntropy], f.approx_kl = h[learner::kApproxKl];
  f.clipfrac = h[learner::kClipFrac];
  f.lr = optimizer_.lr().item<double>();
  return f;
}

WeightsMsg SelfPlayLearner::weights(std::mt19937_64& rng) const {
  WeightsMsg w;
  w.version = version_;
  w.opponent_id = league_.sample(rng);
  w.config_yaml = config_yaml_;
  w.learner = flat_parameters(const_cast<ActorCritic&>(policy_));
  w.opponent = snapshot_parameters(w.opponent_id);
  return w;
}

const torch::Tensor& SelfPlayLearner::snapshot_parameters(int64_t id) const {
  auto it = snapshots_.find(id);
  if (it == snapshots_.end()) throw std::out_of_range("no snapshot " + std::to_string(id));
  return it->second;
}

namespace {
constexpr int64_t kServeCheckpointFormat = 1;
}

void SelfPlayLearner::save(const std::string& path) const {
  using learner::write_tensor;
  if (!const_cast<learner::FlatAdam&>(optimizer_).flat_params().isfinite().all().item<bool>())
    throw NonFiniteUpdate("refusing to save non-finite parameters to " + path);
  torch::serialize::OutputArchive a;
  // "version": the checkpoint file format load_archive checks; "serve_format": what is in it.
  write_tensor(a, "version", torch::tensor({learner::kCheckpointVersion}));
  write_tensor(a, "serve_format", torch::tensor({kServeCheckpointFormat}));
  learner::write_string(a, "config", config_yaml_);
  write_tensor(a, "params", flat_parameters(const_cast<ActorCritic&>(policy_)));
  const std::vector<torch::Tensor> adam = optimizer_.state();
  for (size_t k = 0; k < adam.size(); ++k) write_tensor(a, "adam." + std::to_string(k), adam[k]);
  write_tensor(a, "counters", torch::tensor({version_, env_steps_}));
  write_tensor(a, "generator", gen_.get_state());
  write_tensor(a, "league", torch::tensor(league_.state(), torch::kFloat64));
  for (const auto& [id, p] : snapshots_) write_tensor(a, "snapshot." + std::to_string(id), p);
  learner::save_archive_atomically(a, path);
}

void SelfPlayLearner::load(const std::string& path) {
  using learner::read_tensor;
  torch::serialize::InputArchive a;
  learner::load_archive(a, path);
  torch::Tensor format;
  if (!a.try_read("serve_format", format) || format.item<int64_t>() != kServeCheckpointFormat)
    throw std::invalid_argument(path + ": not a myriad serve checkpoint of a known format");
  const TrainConfig saved = learner::parse_config(learner::read_string(a, "config"), {});
  if (saved.env.id != cfg_.env.id || saved.ppo.hidden_sizes != cfg_.ppo.hidden_sizes ||
      saved.ppo.activation != cfg_.ppo.activation)
    throw std::invalid_argument(path + ": a checkpoint of another env or network (" + saved.env.id +
                                ")");
  load_flat_parameters(policy_, read_tensor(a, "params"));
  std::vector<torch::Tensor> adam;
  for (size_t k = 0; k < optimizer_.state().size(); ++k)
    adam.push_back(read_tensor(a, "adam." + std::to_string(k)));
  optimizer_.load_state(adam);
  const torch::Tensor counters = read_tensor(a, "counters");
  version_ = counters[0].item<int64_t>();
  env_steps_ = counters[1].item<int64_t>();
  gen_.set_state(read_tensor(a, "generator"));
  const torch::Tensor l = read_tensor(a, "league").contiguous();
  league_.load_state(std::vector<double>(l.data_ptr<double>(), l.data_ptr<double>() + l.numel()));
  snapshots_.clear();
  for (const Snapshot& s : league_.snapshots())
    snapshots_[s.id] = read_tensor(a, "snapshot." + std::to_string(s.id));
}

}  // namespace myriad::selfplay
