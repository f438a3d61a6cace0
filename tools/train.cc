// myriad train / myriad eval.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "learner/distributed.h"
#include "learner/evaluation.h"
#include "learner/record.h"
#include "learner/run_dir.h"
#include "learner/summary.h"
#include "learner/trainer.h"
#include "tools/commands.h"

namespace myriad::tools {
namespace {

struct TrainOptions {
  std::string config, out, resume;
  std::string physics;  // physics envs: env.physics (myriad or mujoco)
  std::vector<std::string> overrides;
  bool overwrite = false;
};

void run_train(const TrainOptions& o) {
  std::vector<std::string> overrides = o.overrides;
  if (!o.resume.empty()) overrides.push_back("run.resume=" + o.resume);
  if (!o.physics.empty()) overrides.push_back("env.physics=" + o.physics);
  const learner::RankInfo rank = learner::rank_from_environment();
  const std::string restart =
      learner::restart_resume_override(rank.restart, o.out, !o.resume.empty());
  if (!restart.empty()) overrides.push_back(restart);
  const learner::TrainConfig config = learner::load_config(o.config, overrides);
  learner::check_trainable(config);
  // Never over another run: see learner/run_dir.h (rank 0 owns a data-parallel job's folder).
  const std::string dir =
      learner::claim_job_run_dir(rank.rank, o.out, std::filesystem::path(o.config).stem().string(),
                                 config.run.resume, o.overwrite);
  if (rank.world_size > 1)
    std::cout << "myriad train: rank " << rank.rank << " of " << rank.world_size << " ("
              << rank.source << ", master " << rank.master_addr << ":" << rank.master_port
              << (rank.restart ? ", restart " + std::to_string(rank.restart) : std::string()) << ")"
              << std::endl;
  std::cout << "myriad train: " << config.env.id << " x" << config.env.num_envs
            << (rank.world_size > 1
                    ? " (" + std::to_string(config.env.num_envs / rank.world_size) + " per rank)"
                    : std::string())
            << ", " << config.run.total_env_steps << " env steps -> "
            << (dir.empty() ? "(rank 0)" : dir) << std::endl;
  learner::Trainer trainer(config, dir);
  const learner::TrainSummary s = trainer.train();
  if (rank.world_size > 1)
    std::cout << "myriad train: rank " << rank.rank << ": parameters crc32c " << s.params_crc32c
              << " (the same on all " << rank.world_size << " ranks)" << std::endl;
  if (rank.rank != 0) return;
  learner::write_summary(s, dir);
  std::cout << std::fixed << std::setprecision(1) << "evaluation: mean return "
            << s.eval.return_mean << " +- " << s.eval.return_std << " over " << s.eval.episodes
            << " episodes (deterministic policy)\n"
            << learner::eval_teams_text(s.eval);
  for (const auto& [key, value] : s.eval.errors)
    std::cout << std::setprecision(3) << "  " << key << ": " << value << " (mean per step)\n";
  for (const auto& [key, value] : s.eval.reward_terms)
    std::cout << std::setprecision(3) << "  " << key << ": " << value << " (mean per episode)\n";
  std::cout << std::setprecision(1) << "trained " << s.env_steps << " env steps in "
            << s.wall_seconds << " s; solved at "
            << (s.solved_seconds ? std::to_string(*s.solved_seconds) + " s" : "n/a") << "\n"
            << "run written to " << dir << " (summary.json, metrics.csv, checkpoints/)\n";
  if (!s.replay.empty())
    std::cout << "replay of the evaluation written to " << s.replay << " (myriad view " << s.replay
              << ")\n";
}

struct EvalOptions {
  std::string checkpoint, device, record;
  std::string physics;  // physics envs: evaluate on this sim (sim-to-sim transfer)
  int64_t episodes = 100, envs = 4;
  bool episodes_given = false;
  uint64_t seed = 12345;
  bool json = false;
  bool train_conditions = false;  // envs with a play mode: evaluate as trained (noise, pushes)
};

void run_eval(const EvalOptions& o) {
  learner::LoadedPolicy p = learner::load_policy(o.checkpoint, o.device);
  if (!o.physics.empty()) {
    // The policy as trained, on another sim: same env id, options and observation statistics.
    if (!p.spec.dt)
      throw std::invalid_argument("--physics: '" + p.config.env.id +
                                  "' is not a physics env (MJCF-v0 and the locomotion envs are)");
    p.config.env.physics = o.physics;
  }
  if (o.train_conditions) {
    if (!learner::has_play_mode(p.config.env.id))
      throw std::invalid_argument("--train-conditions: '" + p.config.env.id +
                                  "' has no play mode (the legged tasks have one); it is "
                                  "evaluated as trained already");
    p.config.env.options["play"] = 0;
  }
  learner::EvalResult r;
  if (o.record.empty()) {
    r = learner::evaluate(p, o.episodes, o.seed);
  } else {
    learner::RecordOptions ro;
    ro.envs = o.envs;
    ro.episodes = o.episodes_given ? o.episodes : 1;
    ro.seed = o.seed;
    ro.checkpoint = o.checkpoint;
    r = learner::record_to_file(p, ro, o.record);
    if (!o.json)
      std::cout << "replay of " << ro.envs << " env(s) x " << ro.episodes
                << " episode(s) written to " << o.record << " (myriad view " << o.record << ")\n";
  }
  if (o.json) {
    nlohmann::json j = {
        {"env", p.config.env.id},     {"physics", p.spec.dt ? p.config.env.physics : ""},
        {"episodes", r.episodes},     {"return_mean", r.return_mean},
        {"return_std", r.return_std}, {"length_mean", r.length_mean}};
    if (!r.teams.empty()) j["teams"] = learner::eval_teams_json(r);
    if (std::isfinite(r.draw_rate)) j["draw_rate"] = r.draw_rate;
    if (!o.record.empty()) j["replay"] = o.record;
    for (const auto& [key, value] : r.errors) j[key] = value;
    for (const auto& [key, value] : r.reward_terms) j[key] = value;
    if (!r.errors.empty() || !r.reward_terms.empty()) j["diverged_episodes"] = r.diverged;
    std::cout << j.dump() << std::endl;
  } else {
    std::cout << std::fixed << std::setprecision(2) << p.config.env.id << ": mean return "
              << r.return_mean << " +- " << r.return_std << ", mean length " << r.length_mean
              << " over " << r.episodes << " episodes (deterministic policy)\n"
              << learner::eval_teams_text(r);
    for (const auto& [key, value] : r.errors)
      std::cout << "  " << key << ": " << value << " (mean per step)\n";
    for (const auto& [key, value] : r.reward_terms)
      std::cout << "  " << key << ": " << value << " (mean per episode)\n";
    if (r.diverged > 0)
      std::cout << "  " << r.diverged << " episode(s) ended by a diverged step (cut, counted)\n";
  }
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train a policy with PPO from a YAML config");
  cmd->add_option("config", o->config, "Config file (configs/*.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("overrides", o->overrides,
                  "key.path=value overrides, e.g. ppo.learning_rate=1e-3");
  cmd->add_option(
      "--out", o->out,
      "Run folder (default runs/<config>-<timestamp>[-k]); one holding another run is refused");
  cmd->add_option("--resume", o->resume,
                  "Checkpoint to continue from (in place when it lies in --out's run)");
  cmd->add_flag("--overwrite", o->overwrite,
                "Replace the run already in --out (without it, such an --out is refused)");
  cmd->add_option("--physics", o->physics,
                  "Physics envs: myriad or mujoco (the same as the override env.physics=...)")
      ->check(CLI::IsMember({"myriad", "mujoco"}));
  cmd->callback([o] { run_train(*o); });
}

void add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate a checkpoint with its deterministic policy");
  cmd->add_option("checkpoint", o->checkpoint, "Checkpoint file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--episodes", o->episodes,
                  "Episodes (one per parallel env); with --record, episodes per env (default 1)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->each([o](const std::string&) { o->episodes_given = true; });
  cmd->add_option("--record", o->record, "Write a replay of the episodes to this file");
  cmd->add_option("--envs", o->envs, "With --record: envs recorded side by side")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--device", o->device, "cpu, cuda or auto (default: the checkpoint's)");
  cmd->add_option("--physics", o->physics,
                  "Physics envs: myriad or mujoco (default: the checkpoint's); evaluates a policy "
                  "trained on one sim on the other")
      ->check(CLI::IsMember({"myriad", "mujoco"}));
  cmd->add_option("--seed", o->seed, "Seed of the evaluation episodes")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON line");
  cmd->add_flag("--train-conditions", o->train_conditions,
                "Envs with a play mode (the legged tasks): evaluate under the training "
                "conditions (actor noise, pushes) instead of play mode");
  cmd->callback([o] { run_eval(*o); });
}

}  // namespace myriad::tools
