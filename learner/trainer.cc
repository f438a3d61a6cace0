#include "learner/trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "learner/advantages.h"
#include "learner/checkpoint.h"
#include "learner/host_sync.h"
#include "learner/ppo.h"
#include "learner/record.h"
#include "myriad/registry.h"

namespace myriad::learner {
namespace {

ActorCritic make_policy(const TrainConfig& c, const EnvSpec& spec) {
  return ActorCritic(spec.observation_space.flat_size(), spec.action_space, c.ppo.hidden_sizes,
                     c.ppo.activation, c.ppo.init_log_std);
}

// A generator of the trainer's own on the env's device, seeded from the run's seed. On CUDA it
// is a clone of the device's default generator, so the rollout never draws on the host.
at::Generator make_generator(const torch::Device& device, uint64_t seed) {
  if (device.is_cpu()) return at::make_generator<at::CPUGeneratorImpl>(seed);
  at::Generator g = at::globalContext().defaultGenerator(device).clone();
  g.set_current_seed(seed);
  return g;
}

}  // namespace

Trainer::Trainer(TrainConfig config, std::string run_dir)
    : cfg_(std::move(config)), run_dir_(std::move(run_dir)) {
  set_cpu_threads(cfg_.run.threads);
  // Small MLPs run fastest on one LibTorch thread; more would contend with the env threads.
  if (cfg_.run.learner_threads > 0) torch::set_num_threads(cfg_.run.learner_threads);
  check_trainable(cfg_);
  env_ = envs::make(cfg_.env.id, cfg_.env.num_envs, resolve_device_id(cfg_.env.device),
                    cfg_.run.seed, cfg_.env.options, env_text_options(cfg_.env));
  device_ = env_->buffers().obs.device();
  const EnvSpec& spec = env_->spec();
  const int64_t obs_dim = spec.observation_space.flat_size();
  torch::manual_seed(cfg_.run.seed);
  policy_ = make_policy(cfg_, spec);
  policy_->to(device_);
  optimizer_ = FlatAdam(policy_->parameters(), cfg_.ppo.learning_rate);
  schedule_ = lr_schedule_from_name(cfg_.ppo.lr_schedule);
  obs_rms_ = RunningMeanStd(std::vector<int64_t>{obs_dim}, 1e-4, device_);
  ret_rms_ = RunningMeanStd(std::vector<int64_t>{}, 1e-4, device_);
  discounted_return_ = torch::zeros({cfg_.env.num_envs}, torch::TensorOptions(device_));
  to_env_ = ActionAdapter(spec.action_space, device_);
  gen_ = make_generator(device_, cfg_.run.seed);
  rollout_ = Rollout(cfg_.ppo.num_steps, cfg_.env.num_envs, obs_dim, spec.action_space, device_);
  episodes_ = EpisodeStats(kEpisodeWindow, device_);
  const bool resumed = !cfg_.run.resume.empty();
  if (resumed) load_checkpoint(cfg_.run.resume);
  if (!run_dir_.empty()) {
    std::filesystem::create_directories(std::filesystem::path(run_dir_) / "checkpoints");
    const auto config_path = std::filesystem::path(run_dir_) / "config.yaml";
    std::ofstream config_file(config_path);
    config_file << to_yaml(cfg_) << std::flush;
    if (!config_file) throw std::runtime_error("cannot write " + config_path.string());
  }
  logs_ =
      std::make_unique<RunLogger>(run_dir_, cfg_.run.total_env_steps, resumed ? env_steps_ : -1);
  start_ = std::chrono::steady_clock::now();
}

Trainer::~Trainer() = default;

bool Trainer::finished() const {
  if (env_steps_ >= cfg_.run.total_env_steps) return true;
  return cfg_.run.stop_when_solved && solved_seconds_.has_value();
}

double Trainer::seconds() const {
  return elapsed_before_ +
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

UpdateStats Trainer::update() {
  const PpoConfig& c = cfg_.ppo;
  const int64_t T = rollout_.T, N = rollout_.N;
  using clock = std::chrono::steady_clock;
  const auto seconds_since = [](clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  };
  UpdateStats s;
  // Allocations without an explicit device land on the env's GPU (a rank on cuda:3 stays there).
  const c10::DeviceGuard on_device(device_);
  auto mark = clock::now();
  // Schedule: (env steps) => learning rate (kl_adaptive moves it on the device instead).
  if (schedule_ != LrSchedule::kKlAdaptive)
    optimizer_.set_lr(
        scheduled_lr(schedule_, c.learning_rate, env_steps_, cfg_.run.total_env_steps));

  // Collect: (policy, env) => rollout, under observation statistics frozen for the rollout.
  const Standardizer obs_norm =
      c.normalize_obs ? Standardizer(obs_rms_, c.obs_clip, torch::kFloat) : Standardizer();
  collect_rollout({policy_, env_.get(), obs_norm, to_env_, &gen_, start_, elapsed_before_},
                  rollout_);
  s.collect_seconds = seconds_since(mark);
  mark = clock::now();

  // Advantages: (rollout, critic) => scaled and bootstrapped rewards, advantages, returns.
  compute_returns({policy_, obs_norm, c.normalize_reward ? &ret_rms_ : nullptr, &discounted_return_,
                   c.reward_clip, c.gamma, c.gae_lambda},
                  rollout_);

  // Statistics: (rollout) => observation normalizer, episode window, solved step.
  if (c.normalize_obs) obs_rms_.update(rollout_.raw_obs.reshape({T * N, -1}));
  const auto& threshold = env_->spec().reward_threshold;
  const torch::Tensor solved_step =
      episodes_.add(rollout_.dones, rollout_.episode_returns, rollout_.episode_lengths,
                    solved_seconds_ ? std::nullopt : threshold);
  env_steps_ += T * N;
  s.advantages_seconds = seconds_since(mark);
  mark = clock::now();

  // PPO: (rollout) => policy, optimizer; losses stay on the device.
  const torch::Tensor metrics = ppo_update({policy_, &optimizer_, &c, schedule_, &gen_}, rollout_);
  s.ppo_seconds = seconds_since(mark);
  mark = clock::now();

  // The update's one host read: losses, episode window, solved step, learning rate.
  const auto f64 = metrics.options();
  const torch::Tensor host = read_to_host(torch::cat(
      {metrics, torch::stack({episodes_.mean_return(), episodes_.mean_length(),
                              solved_step.to(torch::kFloat64), optimizer_.lr().to(torch::kFloat64),
                              optimizer_.flat_params().isfinite().all().to(torch::kFloat64)})
                    .to(f64)}));
  const double* h = host.data_ptr<double>();
  s.read_seconds = seconds_since(mark);
  s.pg_loss = h[kPolicyLoss];
  s.v_loss = h[kValueLoss];
  s.entropy = h[kEntropy];
  s.approx_kl = h[kApproxKl];
  s.clipfrac = h[kClipFrac];
  s.episode_return = h[kNumPpoMetrics];
  s.episode_length = h[kNumPpoMetrics + 1];
  const auto solved_at = static_cast<int64_t>(h[kNumPpoMetrics + 2]);
  if (!solved_seconds_ && solved_at < T) solved_seconds_ = rollout_.step_seconds[solved_at + 1];
  s.lr = h[kNumPpoMetrics + 3];
  ++updates_;
  check_finite(s, h[kNumPpoMetrics + 4] != 0);
  last_ = s;
  return s;
}

void Trainer::check_finite(const UpdateStats& s, bool params_finite) const {
  const std::pair<const char*, double> losses[] = {{"losses/policy_loss", s.pg_loss},
                                                   {"losses/value_loss", s.v_loss},
                                                   {"losses/entropy", s.entropy},
                                                   {"losses/approx_kl", s.approx_kl}};
  std::string bad;
  for (const auto& [name, value] : losses)
    if (!std::isfinite(value))
      bad += (bad.empty() ? "" : ", ") + std::string(name) + " = " + std::to_string(value);
  if (!params_finite) bad += (bad.empty() ? "" : ", ") + std::string("a network parameter");
  if (bad.empty()) return;
  // Nothing of this update is logged or checkpointed: the last checkpoint predates it.
  throw NonFiniteTraining("update " + std::to_string(updates_) + " (env step " +
                          std::to_string(env_steps_) + ") went non-finite: " + bad +
                          ". Training stopped; lower ppo.learning_rate or ppo.max_grad_norm, or "
                          "check the env's rewards and observations");
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
    logs_->log(env_steps_, {{"charts/episode_return", s.episode_return},
                            {"charts/episode_length", s.episode_length},
                            {"charts/learning_rate", s.lr},
                            {"charts/steps_per_second", sps},
                            {"charts/wall_seconds", elapsed_before_ + wall},
                            {"losses/policy_loss", s.pg_loss},
                            {"losses/value_loss", s.v_loss},
                            {"losses/entropy", s.entropy},
                            {"losses/approx_kl", s.approx_kl},
                            {"losses/clipfrac", s.clipfrac},
                            {"perf/collect_seconds", s.collect_seconds},
                            {"perf/advantages_seconds", s.advantages_seconds},
                            {"perf/ppo_seconds", s.ppo_seconds},
                            {"perf/read_seconds", s.read_seconds}});
    logs_->progress(env_steps_, sps, s.episode_return, cfg_.run.log_every_seconds);
    if (!ckpt_dir.empty() && cfg_.run.checkpoint_every > 0 &&
        updates_ % cfg_.run.checkpoint_every == 0)
      save_checkpoint(ckpt_dir + "/last.pt");
  }
  const double wall = since();
  logs_->progress(env_steps_, (env_steps_ - steps_at_start) / std::max(wall, 1e-9),
                  last_.episode_return, 0, true);
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
    summary.eval = evaluate(p, cfg_.run.eval_episodes, cfg_.run.seed + kEvalSeedOffset);
  }
  if (cfg_.eval.record && !run_dir_.empty()) {
    LoadedPolicy p = snapshot();
    RecordOptions o;
    o.envs = cfg_.eval.record_envs;
    o.episodes = cfg_.eval.record_episodes;
    o.seed = cfg_.run.seed + kEvalSeedOffset;
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

void check_trainable(const TrainConfig& c) {
  // PPO here trains one policy over [N, obs] observations; multi-agent PPO is a later part.
  const EnvSpec s = envs::spec_of(c.env.id);
  if (s.multi_agent())
    throw std::invalid_argument("multi-agent PPO is not implemented yet: " + s.id + " has " +
                                std::to_string(s.num_agents) +
                                " agents (env.id must name a single-agent env)");
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
  if (config.ppo.normalize_obs) x = Standardizer(obs_rms, config.ppo.obs_clip, torch::kFloat)(x);
  return x;
}

torch::Tensor LoadedPolicy::act(const torch::Tensor& obs) {
  torch::NoGradGuard no_grad;
  policy->eval();
  const torch::Tensor a = policy->deterministic_action(network_input(obs));
  return ActionAdapter(spec.action_space, a.device())(a);
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
  const DeviceId device = resolve_device_id(p.config.env.device);
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
