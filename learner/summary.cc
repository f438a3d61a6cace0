#include "learner/summary.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace myriad::learner {

nlohmann::json summary_json(const TrainSummary& s) {
  auto text_or_null = [](const std::string& v) {
    return v.empty() ? nlohmann::json() : nlohmann::json(v);
  };
  return {
      {"env_steps", s.env_steps},
      {"updates", s.updates},
      {"wall_seconds", s.wall_seconds},
      {"solved_seconds", s.solved_seconds ? nlohmann::json(*s.solved_seconds) : nlohmann::json()},
      {"eval_return_mean", s.eval.return_mean},
      {"eval_return_std", s.eval.return_std},
      {"eval_length_mean", s.eval.length_mean},
      {"eval_episodes", s.eval.episodes},
      {"diverged_episodes", s.diverged},
      {"checkpoint", s.checkpoint},
      {"run_dir", s.run_dir},
      {"replay", text_or_null(s.replay)}};
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
