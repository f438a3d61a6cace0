#include "learner/run_logger.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace myriad::learner {

namespace {

// Rewrites metrics.csv with its header and the complete rows at env_steps <= step (rows past
// the checkpoint were trained again after it, and a row torn by a kill is dropped). Returns
// the header, or "" when the file holds none.
std::string cut_metrics_after(const std::filesystem::path& csv, int64_t step) {
  std::ifstream in(csv);
  std::string header, line, kept;
  if (!std::getline(in, header) || header.empty()) return "";
  const auto columns = std::count(header.begin(), header.end(), ',');
  while (std::getline(in, line)) {
    if (std::count(line.begin(), line.end(), ',') != columns) continue;
    char* end = nullptr;
    const long long s = std::strtoll(line.c_str(), &end, 10);
    if (end == line.c_str() || *end != ',' || s > step) continue;
    kept += line + "\n";
  }
  in.close();
  const std::filesystem::path tmp = csv.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << header << "\n" << kept;
    out.flush();
    if (!out)
      throw std::runtime_error("cannot rewrite " + csv.string() + " (writing " + tmp.string() +
                               ") to the checkpoint's step");
  }
  if (std::rename(tmp.c_str(), csv.c_str()) != 0)
    throw std::runtime_error("cannot replace " + csv.string() + ": " + std::strerror(errno));
  return header;
}

}  // namespace

RunLogger::RunLogger(const std::string& run_dir, int64_t total_steps, int64_t resumed_at_step)
    : total_(total_steps), tty_(isatty(fileno(stdout))) {
  if (run_dir.empty()) return;
  const auto csv_path = std::filesystem::path(run_dir) / "metrics.csv";
  if (resumed_at_step >= 0) {
    if (std::filesystem::exists(csv_path)) header_ = cut_metrics_after(csv_path, resumed_at_step);
    truncate_event_files_after(run_dir, resumed_at_step);
  }
  csv_path_ = csv_path.string();
  csv_.open(csv_path, header_.empty() ? std::ios::trunc : std::ios::app);
  if (!csv_) throw std::runtime_error("cannot open " + csv_path.string() + " for writing");
  tb_ = std::make_unique<TensorBoardWriter>(run_dir);
}

void RunLogger::log(int64_t env_steps, const std::map<std::string, double>& scalars) {
  if (csv_.is_open()) {
    if (header_.empty()) {
      header_ = "env_steps";
      for (const auto& [k, _] : scalars) header_ += "," + k;
      csv_ << header_ << "\n";
    }
    csv_ << env_steps;
    for (const auto& [_, v] : scalars) csv_ << "," << v;
    csv_ << "\n";
    csv_.flush();
    if (!csv_) throw std::runtime_error("failed writing " + csv_path_ + " (disk full?)");
  }
  if (tb_) {
    for (const auto& [k, v] : scalars)
      if (std::isfinite(v)) tb_->add_scalar(k, v, env_steps);
    tb_->flush();
  }
}

void RunLogger::progress(int64_t env_steps, double sps, double return_mean, double every,
                         bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && std::chrono::duration<double>(now - last_print_).count() < every) return;
  last_print_ = now;
  const double frac = total_ > 0 ? std::min(1.0, static_cast<double>(env_steps) / total_) : 0;
  char rate[32], ret[32];
  if (sps >= 1e6) {
    std::snprintf(rate, sizeof rate, "%.2fM", sps / 1e6);
  } else {
    std::snprintf(rate, sizeof rate, "%.0fk", sps / 1e3);
  }
  if (std::isfinite(return_mean)) {
    std::snprintf(ret, sizeof ret, "%.1f", return_mean);
  } else {
    std::snprintf(ret, sizeof ret, "n/a");
  }
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(frac * kWidth);
    std::string bar(filled, '#');
    bar.resize(kWidth, '.');
    std::printf("\r[%s] %3.0f%% %lld/%lld steps | %s steps/s | return %s   ", bar.c_str(),
                frac * 100, static_cast<long long>(env_steps), static_cast<long long>(total_), rate,
                ret);
  } else {
    std::printf("steps %lld/%lld (%.0f%%) | %s steps/s | return %s\n",
                static_cast<long long>(env_steps), static_cast<long long>(total_), frac * 100, rate,
                ret);
  }
  std::fflush(stdout);
}

void RunLogger::finish_line() {
  if (tty_) std::printf("\n");
  std::fflush(stdout);
}

}  // namespace myriad::learner
