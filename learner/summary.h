// summary.json: the one writer of a training run's summary, used by `myriad train` and by
// myriad.train() in Python, so both write the same keys the same way.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "learner/trainer.h"

namespace myriad::learner {

// The summary as JSON. Keys (always present; null where there is no value): myriad_version (the
// VERSION that wrote it), env_steps, updates,
// wall_seconds, solved_seconds, eval_return_mean, eval_return_std, eval_length_mean,
// eval_episodes, diverged_episodes, world_size, ppo_math ("fused" or "libtorch"), params_crc32c,
// checkpoint, run_dir, replay;
// multi-agent envs add eval_teams (eval_teams_json) and, where the env decides winners,
// eval_draw_rate; envs with error_* info keys (a task's tracking errors) add eval_error_*, and
// envs with reward_* info keys (reward terms) eval_reward_* (each term's mean episode sum).
nlohmann::json summary_json(const TrainSummary& s);

// A multi-agent evaluation's teams: [{name, learns, return_mean, return_std, win_rate}] (win_rate
// null unless the env decides winners).
nlohmann::json eval_teams_json(const EvalResult& r);

// One line per team ("  adversaries (trained): mean return 12.30 +- 4.00, win rate 0.55"), for
// the terminal; "" for a single-agent evaluation.
std::string eval_teams_text(const EvalResult& r);

// Writes run_dir/summary.json atomically (a temporary file renamed over it), so a reader never
// sees a partial file. Throws std::runtime_error when the file cannot be written.
void write_summary(const TrainSummary& s, const std::string& run_dir);

}  // namespace myriad::learner
