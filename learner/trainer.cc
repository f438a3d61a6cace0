#include "learner/trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "learner/advantages.h"
#include "learner/checkpoint.h"
#include "learner/host_sync.h"
#include "learner/ppo.h"
#include "learner/record.h"
#include "learner/tensorboard.h"
#include "myriad/registry.h"

namespace myriad::learner {
namespace {

ActorCritic make_policy(const TrainConfig& c, const EnvSpec& spec, const Team& team) {
  return ActorCritic(team.input_dim(), spec.action_space, c.ppo.hidden_sizes, c.ppo.activation,
                     c.ppo.init_log_std, team.actor_dim());
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
  rank_ = rank_from_environment();
  // Ranks would read their own clocks and stop at different updates, one waiting for the rest.
  if (rank_.world_size > 1 && cfg_.run.max_minutes > 0)
    throw std::invalid_argument(
        "run.max_minutes: a wall-clock budget is not available to a job "
        "of several ranks yet (give run.total_env_steps instead)");
  // One GPU per rank in a job of several ranks (cuda:LOCAL_RANK); NCCL among GPUs, Gloo on CPUs.
  const DeviceId device_id =
      resolve_device_id(rank_device(cfg_.env.device, rank_, cuda_device_count()));
  if (rank_.world_size > 1)
    comm_ = std::make_unique<Comm>(
        rank_,
        std::chrono::milliseconds(static_cast<int64_t>(cfg_.distributed.timeout_seconds * 1000.0)),
        device_id.is_cpu() ? torch::Device(torch::kCPU)
                           : torch::Device(torch::kCUDA, static_cast<int8_t>(device_id.index)));
  // Before anything else crosses ranks (and before each builds its envs): the same settings.
  if (comm_) check_ranks_agree(*comm_, job_settings(cfg_));
  num_envs_ = rank_num_envs(cfg_, rank_.world_size);
  // Each rank's envs and samples come from (seed, rank); rank 0 of any job is the plain run.
  const uint64_t seed = rank_seed(cfg_.run.seed, rank_.rank);
  env_ = envs::make(cfg_.env.id, num_envs_, device_id, seed, cfg_.env.options,
                    env_text_options(cfg_.env));
  device_ = env_->buffers().obs.device();
  const EnvSpec& spec = env_->spec();
  torch::manual_seed(cfg_.run.seed);
  schedule_ = lr_schedule_from_name(cfg_.ppo.lr_schedule);
  gen_ = make_generator(device_, seed);
  for (Team& team : make_teams(spec, cfg_.agents, device_)) {
    TeamLearner l;
    l.team = std::move(team);
    const int64_t rows = num_envs_ * l.team.size(), width = l.team.input_dim();
    if (l.team.learns) {
      l.policy = make_policy(cfg_, spec, l.team);
      l.policy->to(device_);
      l.optimizer = FlatAdam(l.policy->parameters(), cfg_.ppo.learning_rate);
      l.cpu_kernels = use_cpu_kernels(cfg_.run.learner_math, *l.policy, cfg_.run.learner_threads);
      l.obs_rms = RunningMeanStd(std::vector<int64_t>{width}, 1e-4, device_);
      l.ret_rms = RunningMeanStd(std::vector<int64_t>{}, 1e-4, device_);
      l.discounted_return = torch::zeros({rows}, torch::TensorOptions(device_));
    }
    l.to_env = ActionAdapter(spec.action_space, device_);
    l.rollout =
        Rollout(cfg_.ppo.num_steps, rows, width, spec.action_space, device_, spec.decides_winner);
    l.episodes = EpisodeStats(kEpisodeWindow, device_);
    l.wins = EpisodeStats(kEpisodeWindow, device_);
    teams_.push_back(std::move(l));
  }
  draws_ = EpisodeStats(kEpisodeWindow, device_);
  const bool resumed = !cfg_.run.resume.empty();
  if (resumed) load_checkpoint(cfg_.run.resume);
  if (!resumed && cfg_.run.random_episode_starts) stagger_episode_starts(*env_, seed);
  // Every rank starts from rank 0's parameters (they already agree: same init seed, same file).
  for (TeamLearner& l : teams_)
    if (comm_ && l.team.learns) comm_->broadcast_(l.optimizer.flat_params());
  if (!run_dir_.empty()) {
    std::filesystem::create_directories(std::filesystem::path(run_dir_) / "checkpoints");
    const auto config_path = std::filesystem::path(run_dir_) / "config.yaml";
    std::ofstream config_file(config_path);
    config_file << to_yaml(cfg_) << std::flush;
    if (!config_file) throw std::runtime_error("cannot write " + config_path.string());
  }
  checkpoints_ = !run_dir_.empty();
  if (comm_) {  // rank 0 owns the run folder; the others must join its checkpoints' gathers
    torch::Tensor flag = torch::tensor({checkpoints_ ? 1.0f : 0.0f});
    comm_->broadcast_(flag);
    checkpoints_ = flag.item<float>() > 0;
  }
  logs_ =
      std::make_unique<RunLogger>(run_dir_, cfg_.run.total_env_steps, resumed ? env_steps_ : -1);
  start_ = std::chrono::steady_clock::now();
}

Trainer::~Trainer() = default;

bool Trainer::finished() const {
  if (env_steps_ >= cfg_.run.total_env_steps) return true;
  // The wall-clock budget ends the run after an update (a fresh run makes at least one).
  if (cfg_.run.max_minutes > 0 && updates_ > 0 && seconds() >= cfg_.run.max_minutes * 60.0)
    return true;
  return cfg_.run.stop_when_solved && solved_seconds_.has_value();
}

double Trainer::seconds() const {
  return elapsed_before_ +
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

Trainer::TeamLearner& Trainer::first_learner() {
  for (TeamLearner& l : teams_)
    if (l.team.learns) return l;
  throw std::logic_error("no team learns");  // make_teams refuses such configs
}
const Trainer::TeamLearner& Trainer::first_learner() const {
  return const_cast<Trainer*>(this)->first_learner();
}

namespace {

// Per-env rows [T, N] of a team's [T, N * a] rollout buffer (its first agent's rows).
torch::Tensor env_rows(const torch::Tensor& x, const Team& team) {
  return x.reshape({x.size(0), -1, team.size()}).select(2, 0);
}

}  // namespace

UpdateStats Trainer::update() {
  const PpoConfig& c = cfg_.ppo;
  const int64_t T = cfg_.ppo.num_steps, N = num_envs_;  // this rank's envs
  using clock = std::chrono::steady_clock;
  const auto seconds_since = [](clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  };
  UpdateStats s;
  const Comm::Traffic traffic_before = comm_ ? comm_->traffic() : Comm::Traffic();
  // Allocations without an explicit device land on the env's GPU (a rank on cuda:3 stays there).
  const c10::DeviceGuard on_device(device_);
  auto mark = clock::now();
  // Schedule: (env steps) => learning rate (kl_adaptive moves it on the device instead).
  for (TeamLearner& l : teams_)
    if (l.team.learns && schedule_ != LrSchedule::kKlAdaptive)
      l.optimizer.set_lr(
          scheduled_lr(schedule_, c.learning_rate, env_steps_, cfg_.run.total_env_steps));

  // Collect: (policies, env) => rollouts, under observation statistics frozen for the rollout.
  CollectInputs collect{{}, env_.get(), &gen_, start_, elapsed_before_};
  torch::Tensor info_means;
  collect.info_keys = logged_info_keys(*env_);
  collect.info_means = &info_means;
  std::vector<Standardizer> obs_norm;
  for (TeamLearner& l : teams_) {
    obs_norm.push_back(c.normalize_obs && l.team.learns
                           ? Standardizer(l.obs_rms, c.obs_clip, torch::kFloat)
                           : Standardizer());
    collect.teams.push_back(
        {&l.team, l.policy, obs_norm.back(), l.to_env, &l.rollout, l.cpu_kernels});
  }
  collect_rollout(collect);
  s.collect_seconds = seconds_since(mark);
  mark = clock::now();

  // Advantages: (rollout, critic) => scaled and bootstrapped rewards, advantages, returns.
  for (size_t k = 0; k < teams_.size(); ++k) {
    TeamLearner& l = teams_[k];
    if (!l.team.learns) continue;
    compute_returns({l.policy, obs_norm[k], c.normalize_reward ? &l.ret_rms : nullptr,
                     &l.discounted_return, c.reward_clip, c.gamma, c.gae_lambda, comm_.get()},
                    l.rollout);
  }

  // Statistics: (rollouts) => observation normalizers, episode windows, solved step.
  const auto& threshold = env_->spec().reward_threshold;
  torch::Tensor solved_step;
  for (TeamLearner& l : teams_) {
    Rollout& r = l.rollout;
    if (l.team.learns && c.normalize_obs)
      l.obs_rms.update(r.raw_obs.reshape({r.T * r.N, -1}), comm_.get());
    const torch::Tensor done =
        l.team.learns ? r.dones : torch::logical_or(r.terminated, r.truncated);
    const torch::Tensor solved =
        l.episodes.add(done, r.episode_returns, r.episode_lengths,
                       solved_seconds_ || l.team.multi_agent() ? std::nullopt : threshold);
    if (!solved_step.defined()) solved_step = solved;
    if (r.winner.defined()) {
      const torch::Tensor env_done = env_rows(done, l.team), winner = env_rows(r.winner, l.team);
      const torch::Tensor lengths = env_rows(r.episode_lengths, l.team);
      l.wins.add(env_done, winner.eq(l.team.id), lengths, std::nullopt);
      if (&l == &teams_.front()) draws_.add(env_done, winner.eq(-1), lengths, std::nullopt);
    }
  }
  env_steps_ += T * N * rank_.world_size;  // the job's: N * world_size = env.num_envs
  s.advantages_seconds = seconds_since(mark);
  mark = clock::now();

  // PPO: (rollout) => policy, optimizer; losses stay on the device.
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device_);
  std::vector<torch::Tensor> parts;  // per team: PPO metrics, mean return, length, win rate
  for (TeamLearner& l : teams_) {
    parts.push_back(l.team.learns ? ppo_update({l.policy, &l.optimizer, &c, schedule_, &gen_,
                                                comm_.get(), l.cpu_kernels},
                                               l.rollout)
                                  : torch::full({kNumPpoMetrics}, NAN, f64));
    parts.push_back(
        torch::stack({l.episodes.mean_return(), l.episodes.mean_length(), l.wins.mean_return()})
            .to(f64));
  }
  s.ppo_seconds = seconds_since(mark);
  mark = clock::now();

  // The update's one host read: losses, episode windows, solved step, learning rate, finiteness.
  TeamLearner& first = first_learner();
  torch::Tensor finite = torch::ones({}, f64);
  for (TeamLearner& l : teams_)
    if (l.team.learns) finite = finite * l.optimizer.flat_params().isfinite().all().to(f64);
  parts.push_back(
      torch::stack({solved_step.to(torch::kFloat64), first.optimizer.lr().to(torch::kFloat64),
                    finite, draws_.mean_return()})
          .to(f64));
  if (info_means.defined()) parts.push_back(info_means.to(f64));
  torch::Tensor merged = torch::cat(parts);
  // Data-parallel: the means over ranks (losses, episode windows), the same on every rank, so
  // every rank decides alike (stop when solved, non-finite) and rank 0 logs the job's figures.
  if (comm_) comm_->all_reduce_mean_(merged);
  const torch::Tensor host = read_to_host(merged);
  const double* h = host.data_ptr<double>();
  s.read_seconds = seconds_since(mark);
  constexpr int64_t kPerTeam = kNumPpoMetrics + 3;
  for (size_t k = 0; k < teams_.size(); ++k) {
    const double* t = h + k * kPerTeam;
    TeamStats ts;
    ts.pg_loss = t[kPolicyLoss];
    ts.v_loss = t[kValueLoss];
    ts.entropy = t[kEntropy];
    ts.approx_kl = t[kApproxKl];
    ts.clipfrac = t[kClipFrac];
    ts.name = teams_[k].team.name;
    ts.learns = teams_[k].team.learns;
    ts.episode_return = t[kNumPpoMetrics];
    ts.win_rate = env_->spec().decides_winner ? t[kNumPpoMetrics + 2] : NAN;
    if (&teams_[k] == &first) {
      static_cast<PpoLosses&>(s) = ts;
      s.episode_return = ts.episode_return;
      s.episode_length = t[kNumPpoMetrics + 1];
    }
    if (env_->spec().multi_agent()) s.teams.push_back(ts);
  }
  const double* tail = h + teams_.size() * kPerTeam;
  const auto solved_at = static_cast<int64_t>(tail[0]);
  if (!solved_seconds_ && solved_at < T)
    solved_seconds_ = teams_.front().rollout.step_seconds[solved_at + 1];
  s.lr = tail[1];
  for (size_t k = 0; k < collect.info_keys.size() && info_means.defined(); ++k)
    s.env_info[collect.info_keys[k]] = tail[4 + k];
  if (env_->spec().decides_winner) s.draw_rate = tail[3];
  if (comm_) {
    const Comm::Traffic& now = comm_->traffic();
    s.comm_calls = static_cast<double>(now.calls - traffic_before.calls);
    s.comm_bytes = static_cast<double>(now.bytes - traffic_before.bytes);
    s.comm_seconds = now.seconds - traffic_before.seconds;
  }
  ++updates_;
  check_finite(s, tail[2] == 1.0);
  last_ = s;
  return s;
}

std::map<std::string, double> update_scalars(const UpdateStats& s, double sps, double wall) {
  std::map<std::string, double> m = {{"charts/learning_rate", s.lr},
                                     {"charts/steps_per_second", sps},
                                     {"charts/wall_seconds", wall},
                                     {"perf/collect_seconds", s.collect_seconds},
                                     {"perf/advantages_seconds", s.advantages_seconds},
                                     {"perf/ppo_seconds", s.ppo_seconds},
                                     {"perf/read_seconds", s.read_seconds}};
  if (s.comm_calls >= 0) {
    m["perf/allreduce_calls"] = s.comm_calls;
    m["perf/allreduce_bytes"] = s.comm_bytes;
    m["perf/allreduce_seconds"] = s.comm_seconds;
  }
  const auto put_losses = [&m](const std::string& prefix, const PpoLosses& t) {
    m["losses/" + prefix + "policy_loss"] = t.pg_loss;
    m["losses/" + prefix + "value_loss"] = t.v_loss;
    m["losses/" + prefix + "entropy"] = t.entropy;
    m["losses/" + prefix + "approx_kl"] = t.approx_kl;
    m["losses/" + prefix + "clipfrac"] = t.clipfrac;
  };
  // One team (every single-agent env, Spread-v0): the plain keys. Several: a set per team.
  if (s.teams.size() <= 1) {
    m["charts/episode_return"] = s.episode_return;
    m["charts/episode_length"] = s.episode_length;
    put_losses("", s);
  } else {
    m["charts/episode_length"] = s.episode_length;
    for (const TeamStats& t : s.teams) {
      m["charts/" + t.name + "/episode_return"] = t.episode_return;
      if (std::isfinite(t.win_rate) || std::isfinite(s.draw_rate))
        m["charts/" + t.name + "/win_rate"] = t.win_rate;
      if (t.learns) put_losses(t.name + "/", t);
    }
    if (std::isfinite(s.draw_rate)) m["charts/draw_rate"] = s.draw_rate;
  }
  for (const auto& [key, value] : s.env_info) m["env/" + key] = value;
  return m;
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
  for (const TeamStats& t : s.teams) {
    if (!t.learns || !bad.empty()) continue;
    for (const auto& [name, value] : {std::pair<const char*, double>{"policy_loss", t.pg_loss},
                                      {"value_loss", t.v_loss},
                                      {"entropy", t.entropy},
                                      {"approx_kl", t.approx_kl}})
      if (!std::isfinite(value))
        bad += (bad.empty() ? "" : ", ") + std::string("losses/") + t.name + "/" + name + " = " +
               std::to_string(value);
  }
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
    logs_->log(env_steps_, update_scalars(s, sps, elapsed_before_ + wall));
    if (rank_.rank == 0)
      logs_->progress(env_steps_, sps, s.episode_return, cfg_.run.log_every_seconds);
    if (checkpoints_ && cfg_.run.checkpoint_every > 0 && updates_ % cfg_.run.checkpoint_every == 0)
      checkpoint_job(ckpt_dir + "/last.pt");
  }
  const double wall = since();
  if (rank_.rank == 0) {
    logs_->progress(env_steps_, (env_steps_ - steps_at_start) / std::max(wall, 1e-9),
                    last_.episode_return, 0, true);
    logs_->finish_line();
  }

  TrainSummary summary;
  summary.env_steps = env_steps_;
  summary.updates = updates_;
  summary.wall_seconds = elapsed_before_ + wall;
  summary.solved_seconds = solved_seconds_;
  summary.diverged = env_->diverged_count();
  summary.run_dir = run_dir_;
  summary.world_size = rank_.world_size;
  summary.ppo_math = teams_.empty() || !first_learner().cpu_kernels ? "libtorch" : "fused";
  summary.params_crc32c = params_crc32c();  // a collective: every rank, before rank 0 goes on
  if (checkpoints_) {
    if (!ckpt_dir.empty()) summary.checkpoint = ckpt_dir + "/last.pt";
    checkpoint_job(ckpt_dir + "/last.pt");
  }
  // Evaluation and replays: rank 0's job (the others hold the same policy).
  if (cfg_.run.eval_episodes > 0 && rank_.rank == 0) {
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

std::string Trainer::params_crc32c() {
  uint32_t crc = 0;
  for (TeamLearner& l : teams_) {
    if (!l.team.learns) continue;
    const torch::Tensor p = l.optimizer.flat_params().to(torch::kCPU).contiguous();
    crc = crc32c(p.data_ptr(), p.numel() * p.element_size()) ^ (crc * 31u);
  }
  if (comm_) {
    // Every rank's checksum, compared: the means over ranks of its 16-bit halves and of their
    // squares equal ours only if every rank's are (zero variance); all exact in float64.
    const double lo = crc & 0xFFFFu, hi = crc >> 16;
    const torch::Tensor mine = torch::tensor({lo, hi, lo * lo, hi * hi}, torch::kFloat64);
    torch::Tensor mean = mine.clone();
    comm_->all_reduce_mean_(mean);
    if (!torch::equal(mean, mine))
      throw std::runtime_error("distributed: the ranks' parameters differ after training (rank " +
                               std::to_string(rank_.rank) + ")");
  }
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", crc);
  return hex;
}

void check_trainable(const TrainConfig& c) {
  // Team names and counts depend only on the env's id: check them without building the env.
  make_teams(envs::spec_of(c.env.id), c.agents, torch::kCPU);
  // An empty action space (MJCF-v0 on a model without actuators) leaves a policy nothing to
  // control and zero-width tensors everywhere after: refused here, before a run dir is claimed.
  const EnvSpec spec = configured_spec(c);
  const Space& a = spec.action_space;
  if (a.is_discrete() ? a.n < 1 : a.flat_size() < 1)
    throw std::invalid_argument(
        "env.id " + c.env.id +
        (c.env.xml.empty()
             ? std::string(" has an empty action space ")
             : ": the model '" + c.env.xml + "' (env.xml) has no actuators, so its action space ") +
        a.describe() + (c.env.xml.empty() ? "" : " is empty") +
        " and a policy has nothing to control; give the model an <actuator> to train it "
        "(myriad.make still simulates it)");
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
  for (const TeamLearner& l : teams_) {
    TeamPolicy t;
    t.team = l.team;
    if (l.team.learns) {
      t.policy = make_policy(cfg_, env_->spec(), l.team);
      t.policy->to(device_);
      torch::NoGradGuard no_grad;
      const auto src = l.policy->parameters();
      auto dst = t.policy->parameters();
      for (size_t k = 0; k < src.size(); ++k) dst[k].copy_(src[k]);
      t.obs_rms = l.obs_rms;
    }
    p.teams.push_back(t);
  }
  const TeamLearner& first = first_learner();
  for (const TeamPolicy& t : p.teams)
    if (t.policy) {
      p.policy = t.policy;
      break;
    }
  p.obs_rms = first.obs_rms;
  p.ret_rms = first.ret_rms;
  p.random_gen = make_generator(device_, cfg_.run.seed);
  return p;
}

}  // namespace myriad::learner
