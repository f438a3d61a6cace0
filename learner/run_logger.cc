#include "learner/run_logger.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>

namespace myriad::learner {

RunLogger::RunLogger(const std::string& run_dir, int64_t total_steps, bool resumed)
    : total_(total_steps), tty_(isatty(fileno(stdout))) {
  if (run_dir.empty()) return;
  const auto csv_path = std::filesystem::path(run_dir) / "metrics.csv";
  const bool append = resumed && std::filesystem::exists(csv_path);
  csv_.open(csv_path, append ? std::ios::app : std::ios::trunc);
  if (append) header_ = "(resumed)";
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
