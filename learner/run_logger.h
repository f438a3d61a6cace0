// What a training run reports while it runs: a progress bar on a terminal (plain lines
// otherwise), metrics.csv and TensorBoard scalars in the run folder.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "learner/tensorboard.h"

namespace myriad::learner {

class RunLogger {
 public:
  // run_dir "" logs to the terminal only. resumed_at_step >= 0: a run resumed from a checkpoint
  // at that env step. Its metrics.csv, if any, keeps the rows up to that step and is appended
  // to; its event files are cut back to that step (see truncate_event_files_after), so a run
  // resumed in place never holds a step twice. Throws std::runtime_error naming the file on
  // failure.
  RunLogger(const std::string& run_dir, int64_t total_steps, int64_t resumed_at_step = -1);

  // One row per update; keys are fixed by the first call.
  void log(int64_t env_steps, const std::map<std::string, double>& scalars);
  // Terminal progress, at most every `every_seconds`.
  void progress(int64_t env_steps, double steps_per_second, double return_mean,
                double every_seconds, bool force = false);
  void finish_line();

 private:
  std::ofstream csv_;
  std::string csv_path_;
  std::unique_ptr<TensorBoardWriter> tb_;
  std::string header_;
  int64_t total_;
  bool tty_;
  std::chrono::steady_clock::time_point last_print_{};
};

}  // namespace myriad::learner
