#include "learner/trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>

#include "learner/checkpoint.h"
#include "learner/gae.h"
#include "learner/record.h"
#include "myriad/registry.h"

namespace myriad::learner {
namespace {

torch::Device torch_device(Device d) {
  return d == Device::kCpu ? torch::Device(torch::kCPU) : torch::Device(torch::kCUDA, 0);
}

double mean_of(const std::deque<float>& v) {
  if (v.empty()) return NAN;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

ActorCritic make_policy(const TrainConfig& c, const EnvSpec& spec) {
  return ActorCritic(spec.observation_space.flat_size(), spec.action_space, c.ppo.hidden_sizes,
                     c.ppo.activation, c.ppo.init_log_std);
}

}  // namespace

Trainer::Trainer(TrainConfig config, std::string run_dir)
    : cfg_(std::move(config)), run_dir_(std::move(run_dir)) {
  set_cpu_threads(cfg_.run.threads);
  // Small MLPs run fastest on one LibTorch thread; more would contend with the env threads.
  if (cfg_.run.learner_threads > 0) torch::set_num_threads(cfg_.run.learner_threads);
  const Device device = resolve_device(cfg_.env.device);
  device_ = torch_device(device);
  env_ = envs::make(cfg_.env.id, cfg_.env.num_envs, device, cfg_.run.seed, cfg_.env.options,
                    env_text_options(cfg_.env));
  const EnvSpec& spec = env_->spec();
  torch::manual_seed(cfg_.run.seed);
  policy_ = make_policy(cfg_, spec);
  policy_->to(device_);
  optimizer_ = std::make_unique<torch::optim::Adam>(
      policy_->parameters(), torch::optim::AdamOptions(cfg_.ppo.learning_rate).eps(1e-5));
  lr_ = cfg_.ppo.learning_rate;
  obs_rms_ = RunningMeanStd(std::vector<int64_t>{spec.observation_space.flat_size()});
  ret_rms_ = RunningMeanStd(std::vector<int64_t>{});
  discounted_return_ = torch::zeros({cfg_.env.num_envs}, torch::TensorOptions(device_));
  if (!spec.action_space.is_discrete()) {
    action_low_ = torch::tensor(spec.action_space.low).to(device_);
    action_high_ = torch::tensor(spec.action_space.high).to(device_);
  }
  // CPU: a generator of the trainer's own, saved in checkpoints. CUDA: the default CUDA
  // generator (seeded by manual_seed above).
  if (device == Device::kCpu) gen_ = at::make_generator<at::CPUGeneratorImpl>(cfg_.run.seed);
  const bool resumed = !cfg_.run.resume.empty();
  if (resumed) load_checkpoint(cfg_.run.resume);
  if (!run_dir_.empty()) {
    std::filesystem::create_directories(std::filesystem::path(run_dir_) / "checkpoints");
    std::ofstream(std::filesystem::path(run_dir_) / "config.yaml") << to_yaml(cfg_);
  }
  logs_ = std::make_unique<RunLogger>(run_dir_, cfg_.run.total_env_steps, resumed);
  start_ = std::chrono::steady_clock::now();
}

Trainer::~Trainer() = default;

bool Trainer::finished() const {
  if (env_steps_ >= cfg_.run.total_env_steps) return true;
  return cfg_.run.stop_when_solved && solved_seconds_.has_value();
}

torch::Tensor Trainer::observe(const torch::Tensor& raw, bool update_stats) {
  if (!cfg_.ppo.normalize_obs) return raw.clone();
  if (update_stats) obs_rms_.update(raw);
  return obs_rms_.normalize(raw, cfg_.ppo.obs_clip);
}

torch::Tensor Trainer::to_env_action(const torch::Tensor& action) const {
  if (policy_->discrete()) return action.to(torch::kInt);
  return torch::max(torch::min(action, action_high_), action_low_);
}

double Trainer::current_lr() const {
  if (cfg_.ppo.lr_schedule != "linear") return lr_;
  const double frac = 1.0 - static_cast<double>(env_steps_) / cfg_.run.total_env_steps;
  return cfg_.ppo.learning_rate * std::max(frac, 0.0);
}

UpdateStats Trainer::update() {
  const int64_t T = cfg_.ppo.num_steps, N = cfg_.env.num_envs;
  const auto& spec = env_->spec();
  const auto& buf = env_->buffers();
  const auto fopt = torch::TensorOptions().device(device_);
  const int64_t obs_dim = spec.observation_space.flat_size();
  torch::Tensor obs_t = torch::empty({T, N, obs_dim}, fopt);
  torch::Tensor act_t = policy_->discrete()
                            ? torch::empty({T, N}, fopt.dtype(torch::kLong))
                            : torch::empty({T, N, spec.action_space.flat_size()}, fopt);
  torch::Tensor logp_t = torch::empty({T, N}, fopt), val_t = torch::empty({T, N}, fopt);
  torch::Tensor rew_t = torch::empty({T, N}, fopt), done_t = torch::empty({T, N}, fopt);
  const double gamma = cfg_.ppo.gamma;

  // Rollout: actions come from the current policy, without gradients.
  {
    torch::NoGradGuard no_grad;
    policy_->eval();
    torch::Tensor obs = observe(buf.obs, true);
    for (int64_t t = 0; t < T; ++t) {
      const PolicyOutput out = policy_->act(obs, {}, &gen_);
      obs_t[t] = obs;
      act_t[t] = out.action;
      logp_t[t] = out.log_prob;
      val_t[t] = out.value;
      env_->step(to_env_action(out.action));
      torch::Tensor reward = buf.reward.clone();
      const torch::Tensor done = torch::logical_or(buf.terminated, buf.truncated);
      if (cfg_.ppo.normalize_reward) {
        discounted_return_ = discounted_return_ * gamma + reward;
        ret_rms_.update(discounted_return_);
        reward = reward / (ret_rms_.var.to(reward.dtype()) + 1e-8).sqrt();
        discounted_return_ = discounted_return_ * (~done).to(reward.dtype());
      }
      add_truncation_bootstrap(
          reward, buf.terminated, buf.truncated,
          [&](const torch::Tensor& idx) {
            return policy_->value(observe(buf.final_obs.index_select(0, idx), false));
          },
          gamma);
      rew_t[t] = reward;
      done_t[t] = done.to(torch::kFloat);
      if (done.any().item<bool>()) {
        const torch::Tensor idx = done.nonzero().squeeze(-1).cpu();
        const torch::Tensor rets = buf.episode_return.cpu(), lens = buf.episode_length.cpu();
        const auto* r = rets.data_ptr<float>();
        const auto* l = lens.data_ptr<int32_t>();
        for (int64_t k = 0; k < idx.numel(); ++k) {
          const int64_t i = idx.data_ptr<int64_t>()[k];
          recent_returns_.push_back(r[i]);
          recent_lengths_.push_back(static_cast<float>(l[i]));
          if (recent_returns_.size() > 100) {
            recent_returns_.pop_front();
            recent_lengths_.pop_front();
          }
        }
      }
      obs = observe(buf.obs, true);
      env_steps_ += N;
      const auto& threshold = spec.reward_threshold;
      if (!solved_seconds_ && threshold && recent_returns_.size() >= 100 &&
          mean_of(recent_returns_) >= *threshold) {
        solved_seconds_ =
            elapsed_before_ +
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      }
    }
    const torch::Tensor next_value = policy_->value(obs);
    const torch::Tensor adv =
        compute_gae(rew_t, val_t, done_t, next_value, gamma, cfg_.ppo.gae_lambda);
    val_t = torch::stack({val_t, adv + val_t});  // [2, T, N]: old values and returns
    rew_t = adv;
  }

  // Optimization: epochs of shuffled minibatches over the flattened rollout.
  policy_->train();
  const int64_t B = T * N, mb = B / cfg_.ppo.num_minibatches;
  const torch::Tensor b_obs = obs_t.reshape({B, obs_dim});
  const torch::Tensor b_act = policy_->discrete() ? act_t.reshape({B}) : act_t.reshape({B, -1});
  const torch::Tensor b_logp = logp_t.reshape({B}), b_adv = rew_t.reshape({B});
  const torch::Tensor b_val = val_t[0].reshape({B}), b_ret = val_t[1].reshape({B});
  lr_ = current_lr();
  for (auto& group : optimizer_->param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr_);
  UpdateStats stats;
  int64_t count = 0;
  const double clip = cfg_.ppo.clip_coef;
  for (int64_t epoch = 0; epoch < cfg_.ppo.update_epochs; ++epoch) {
    const torch::Tensor perm =
        torch::randperm(B, gen_, torch::TensorOptions().dtype(torch::kLong)).to(device_);
    double epoch_kl = 0;
    int64_t epoch_batches = 0;
    for (int64_t start = 0; start < B; start += mb) {
      const torch::Tensor idx = perm.slice(0, start, start + mb);
      const PolicyOutput out = policy_->act(b_obs.index_select(0, idx), b_act.index_select(0, idx));
      const torch::Tensor logratio = out.log_prob - b_logp.index_select(0, idx);
      const torch::Tensor ratio = logratio.exp();
      torch::Tensor adv = b_adv.index_select(0, idx);
      if (cfg_.ppo.norm_adv) adv = (adv - adv.mean()) / (adv.std() + 1e-8);
      const torch::Tensor pg_loss =
          torch::max(-adv * ratio, -adv * torch::clamp(ratio, 1 - clip, 1 + clip)).mean();
      const torch::Tensor ret = b_ret.index_select(0, idx);
      torch::Tensor v_loss;
      if (cfg_.ppo.clip_vloss) {
        const torch::Tensor old_v = b_val.index_select(0, idx);
        const torch::Tensor v_clipped = old_v + torch::clamp(out.value - old_v, -clip, clip);
        v_loss = 0.5 * torch::max((out.value - ret).pow(2), (v_clipped - ret).pow(2)).mean();
      } else {
        v_loss = 0.5 * (out.value - ret).pow(2).mean();
      }
      const torch::Tensor entropy = out.entropy.mean();
      const torch::Tensor loss = pg_loss - cfg_.ppo.ent_coef * entropy + cfg_.ppo.vf_coef * v_loss;
      optimizer_->zero_grad();
      loss.backward();
      torch::nn::utils::clip_grad_norm_(policy_->parameters(), cfg_.ppo.max_grad_norm);
      optimizer_->step();
      {
        torch::NoGradGuard no_grad;
        const double kl = ((ratio - 1) - logratio).mean().item<double>();
        stats.approx_kl += kl;
        epoch_kl += kl;
        ++epoch_batches;
        stats.clipfrac += ((ratio - 1.0).abs() > clip).to(torch::kFloat).mean().item<double>();
        stats.pg_loss += pg_loss.item<double>();
        stats.v_loss += v_loss.item<double>();
        stats.entropy += entropy.item<double>();
        ++count;
      }
    }
    // KL-adaptive learning rate (as rl_games does it): shrink when the policy moved too far.
    if (cfg_.ppo.lr_schedule == "kl_adaptive") {
      const double kl = epoch_kl / std::max<int64_t>(epoch_batches, 1);
      if (kl > 2.0 * cfg_.ppo.target_kl) lr_ = std::max(lr_ / 1.5, 1e-6);
      if (kl < 0.5 * cfg_.ppo.target_kl) lr_ = std::min(lr_ * 1.5, 1e-2);
      for (auto& group : optimizer_->param_groups())
        static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr_);
    }
  }
  for (double* v :
       {&stats.pg_loss, &stats.v_loss, &stats.entropy, &stats.approx_kl, &stats.clipfrac})
    *v /= std::max<int64_t>(count, 1);
  stats.lr = lr_;
  ++updates_;
  return stats;
}

TrainSummary Trainer::train() {
  const auto since = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  };
  const std::string ckpt_dir =
      run_dir_.empty() ? "" : (std::filesystem::path(run_dir_) / "checkpoints").string();
  const int64_t steps_at_start = env_steps_;
  while (!finished()) {
    const UpdateStats s = update();
    const double wall = since();
    const double sps = (env_steps_ - steps_at_start) / std::max(wall, 1e-9);
    logs_->log(env_steps_, {{"charts/episode_return", mean_of(recent_returns_)},
                            {"charts/episode_length", mean_of(recent_lengths_)},
                            {"charts/learning_rate", s.lr},
                            {"charts/steps_per_second", sps},
                            {"charts/wall_seconds", elapsed_before_ + wall},
                            {"losses/policy_loss", s.pg_loss},
                            {"losses/value_loss", s.v_loss},
                            {"losses/entropy", s.entropy},
                            {"losses/approx_kl", s.approx_kl},
                            {"losses/clipfrac", s.clipfrac}});
    logs_->progress(env_steps_, sps, mean_of(recent_returns_), cfg_.run.log_every_seconds);
    if (!ckpt_dir.empty() && cfg_.run.checkpoint_every > 0 &&
        updates_ % cfg_.run.checkpoint_every == 0)
      save_checkpoint(ckpt_dir + "/last.pt");
  }
  const double wall = since();
  logs_->progress(env_steps_, (env_steps_ - steps_at_start) / std::max(wall, 1e-9),
                  mean_of(recent_returns_), 0, true);
  logs_->finish_line();

  TrainSummary summary;
  summary.env_steps = env_steps_;
  summary.updates = updates_;
  summary.wall_seconds = elapsed_before_ + wall;
  summary.solved_seconds = solved_seconds_;
  summary.diverged = env_->diverged_count();
  summary.run_dir = run_dir_;
  if (!ckpt_dir.empty()) {
    summary.checkpoint = ckpt_dir + "/last.pt";
    save_checkpoint(summary.checkpoint);
  }
  if (cfg_.run.eval_episodes > 0) {
    LoadedPolicy p = snapshot();
    summary.eval = evaluate(p, cfg_.run.eval_episodes, cfg_.run.seed + 1000003);
  }
  if (cfg_.eval.record && !run_dir_.empty()) {
    LoadedPolicy p = snapshot();
    RecordOptions o;
    o.envs = cfg_.eval.record_envs;
    o.episodes = cfg_.eval.record_episodes;
    o.seed = cfg_.run.seed + 1000003;
    o.checkpoint = summary.checkpoint;
    // A failed recording must not lose the run's summary: warn and go on.
    try {
      record_to_file(p, o, run_dir_ + "/eval.replay");
      summary.replay = run_dir_ + "/eval.replay";
    } catch (const std::exception& e) {
      std::cerr << "myriad train: warning: eval.record failed: " << e.what() << std::endl;
    }
  }
  return summary;
}

EnvSpec configured_spec(const TrainConfig& c) {
  const EnvSpec spec = envs::spec_of(c.env.id);
  if (!spec.observation_space.shape.empty() && spec.observation_space.flat_size() > 0) return spec;
  // Spaces that depend on options (MJCF-v0's model): ask one instance.
  return envs::make(c.env.id, 1, Device::kCpu, 0, c.env.options, env_text_options(c.env))->spec();
}

LoadedPolicy Trainer::snapshot() const {
  LoadedPolicy p;
  p.config = cfg_;
  p.spec = env_->spec();
  p.policy = make_policy(cfg_, env_->spec());
  p.policy->to(device_);
  {
    torch::NoGradGuard no_grad;
    const auto src = policy_->parameters();
    auto dst = p.policy->parameters();
    for (size_t k = 0; k < src.size(); ++k) dst[k].copy_(src[k]);
  }
  p.obs_rms = obs_rms_;
  p.ret_rms = ret_rms_;
  return p;
}

torch::Tensor LoadedPolicy::network_input(const torch::Tensor& obs) const {
  const int64_t width = spec.observation_space.flat_size();
  if (obs.dim() != 2 || obs.size(1) != width)
    throw std::invalid_argument("policy: expected observations of shape [B, " +
                                std::to_string(width) + "], got " +
                                envs::shape_string(obs.sizes()));
  torch::Tensor x = obs.to(torch::kFloat);
  if (config.ppo.normalize_obs) x = obs_rms.normalize(x, config.ppo.obs_clip);
  return x;
}

torch::Tensor LoadedPolicy::act(const torch::Tensor& obs) {
  torch::NoGradGuard no_grad;
  policy->eval();
  torch::Tensor a = policy->deterministic_action(network_input(obs));
  if (policy->discrete()) return a.to(torch::kInt);
  const auto low = torch::tensor(spec.action_space.low).to(a.device());
  const auto high = torch::tensor(spec.action_space.high).to(a.device());
  return torch::max(torch::min(a, high), low);
}

torch::Tensor LoadedPolicy::value(const torch::Tensor& obs) {
  torch::NoGradGuard no_grad;
  policy->eval();
  torch::Tensor v = policy->value(network_input(obs));
  if (config.ppo.normalize_reward && ret_rms.var.defined())
    v = v * (ret_rms.var.to(v.dtype()) + 1e-8).sqrt();
  return v;
}

LearnerThreads::LearnerThreads(const TrainConfig& config) : previous_(torch::get_num_threads()) {
  if (config.run.learner_threads > 0) torch::set_num_threads(config.run.learner_threads);
}
LearnerThreads::~LearnerThreads() { torch::set_num_threads(previous_); }

EvalResult evaluate(LoadedPolicy& p, int64_t episodes, uint64_t seed) {
  EvalResult result;
  if (episodes <= 0) return result;
  const LearnerThreads threads(p.config);
  const Device device = resolve_device(p.config.env.device);
  auto env = envs::make(p.config.env.id, episodes, device, seed, p.config.env.options,
                        env_text_options(p.config.env));
  const auto& buf = env->buffers();
  std::vector<double> returns(episodes, NAN), lengths(episodes, 0);
  int64_t remaining = episodes;
  // Every env runs exactly its first episode; the limit bounds the loop.
  for (int64_t t = 0; t < env->spec().max_episode_steps && remaining > 0; ++t) {
    env->step(p.act(buf.obs));
    const torch::Tensor done = torch::logical_or(buf.terminated, buf.truncated).cpu();
    const torch::Tensor rets = buf.episode_return.cpu(), lens = buf.episode_length.cpu();
    const bool* d = done.data_ptr<bool>();
    for (int64_t i = 0; i < episodes; ++i) {
      if (d[i] && std::isnan(returns[i])) {
        returns[i] = rets.data_ptr<float>()[i];
        lengths[i] = lens.data_ptr<int32_t>()[i];
        --remaining;
      }
    }
  }
  double sum = 0, sq = 0, len = 0;
  for (int64_t i = 0; i < episodes; ++i) {
    sum += returns[i];
    sq += returns[i] * returns[i];
    len += lengths[i];
  }
  result.episodes = episodes;
  result.return_mean = sum / episodes;
  result.return_std =
      std::sqrt(std::max(sq / episodes - result.return_mean * result.return_mean, 0.0));
  result.length_mean = len / episodes;
  return result;
}

}  // namespace myriad::learner
