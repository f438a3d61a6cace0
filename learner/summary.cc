#include "learner/summary.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "myriad/version.h"

namespace myriad::learner {

namespace {

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nullptr; }

}  // namespace

nlohmann::json eval_teams_json(const EvalResult& r) {
  nlohmann::json teams = nlohmann::json::array();
  for (const TeamEval& t : r.teams)
    teams.push_back({{"name", t.name},
                     {"learns", t.learns},
                     {"return_mean", t.return_mean},
                     {"return_std", t.return_std},
                     {"win_rate", number_or_null(t.win_rate)}});
  return teams;
}

std::string eval_teams_text(const EvalResult& r) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2);
  for (const TeamEval& t : r.teams) {
    out << "  " << t.name << (t.learns ? " (trained)" : " (random)") << ": mean return per agent "
        << t.return_mean << " +- " << t.return_std;
    if (std::isfinite(t.win_rate)) out << ", win rate " << t.win_rate;
    out << "\n";
  }
  if (std::isfinite(r.draw_rate)) out << "  draws: " << r.draw_rate << "\n";
  return out.str();
}

nlohmann::json summary_json(const TrainSummary& s) {
  auto text_or_null = [](const std::string& v) {
    return v.empty() ? nlohmann::json() : nlohmann::json(v);
  };
  nlohmann::json j = {
      {"myriad_version", MYRIAD_VERSION},
      {"env_steps", s.env_steps},
      {"updates", s.updates},
      {"wall_seconds", s.wall_seconds},
      {"solved_seconds", s.solved_seconds ? nlohmann::json(*s.solved_seconds) : nlohmann::json()},
      {"eval_return_mean", s.eval.return_mean},
      {"eval_return_std", s.eval.return_std},
      {"eval_length_mean", s.eval.length_mean},
      {"eval_episodes", s.eval.episodes},
      {"diverged_episodes", s.diverged},
      {"world_size", s.world_size},
      {"ppo_math", s.ppo_math},
      {"params_crc32c", s.params_crc32c},
      {"checkpoint", s.checkpoint},
      {"run_dir", s.run_dir},
      {"replay", text_or_null(s.replay)}};
  if (!s.eval.teams.empty()) j["eval_teams"] = eval_teams_json(s.eval);
  if (std::isfinite(s.eval.draw_rate)) j["eval_draw_rate"] = s.eval.draw_rate;
  for (const auto& [key, value] : s.eval.errors) j["eval_" + key] = value;
  for (const auto& [key, value] : s.eval.reward_terms) j["eval_" + key] = value;
  return j;
}

void write_summary(const TrainSummary& s, const std::string& run_dir) {
  const std::filesystem::path dir(run_dir);
  const std::filesystem::path tmp = dir / "summary.json.tmp";
  {
    std::ofstream out(tmp);
    out << summary_json(s).dump(2) << "\n";
    out.close();
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  // rename() replaces the old file in one step on POSIX file systems.
  std::filesystem::rename(tmp, dir / "summary.json");
}

}  // namespace myriad::learner
