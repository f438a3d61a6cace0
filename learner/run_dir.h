// Run folders: a run never overwrites another. `myriad train` and myriad.train() both claim
// their folder here before the trainer writes anything.
#pragma once

#include <stdexcept>
#include <string>

namespace myriad::learner {

// The folder holds another run, and neither resuming it in place nor overwriting was asked for.
// (Python: FileExistsError.)
class RunDirExists : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The first run file found in `dir` (config.yaml, metrics.csv, summary.json, serve.csv, an event
// file or a non-empty checkpoints/), or "" if it holds none (missing and empty folders hold none).
std::string run_file_in(const std::string& dir);

// Returns the folder the run writes to, created.
// out "": a new folder <root>/<stem>-<YYYYmmdd-HHMMSS>, made with mkdir that fails if the
//   name exists, so runs started in the same second get "-2", "-3", ... and never share one.
// out given and holding a run: continued in place when `resume` (the checkpoint resumed from,
//   "" for none) lies inside it; otherwise replaced when `overwrite` (its run files, and only
//   those, are deleted first); otherwise RunDirExists naming the folder and the way out.
//   Resuming in place with overwrite is refused: it would delete what is resumed.
std::string claim_run_dir(const std::string& out, const std::string& stem,
                          const std::string& resume, bool overwrite,
                          const std::string& root = "runs");

// A lock on a run folder, held while the object lives: flock(2) on <dir>/.lock, which the
// kernel drops when the process ends however it ends (kill -9 included), so no stale lock
// outlives its writer. Two processes never write one folder at once.
class RunDirLock {
 public:
  RunDirLock() = default;
  ~RunDirLock();
  RunDirLock(RunDirLock&& other) noexcept;
  RunDirLock& operator=(RunDirLock&& other) noexcept;
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;

 private:
  friend RunDirLock lock_run_dir(const std::string& dir);
  int fd_ = -1;
};
// Takes the lock of `dir` (which must exist) without waiting. Throws RunDirExists naming the
// folder when another process holds it, std::runtime_error when the lock file cannot be made.
RunDirLock lock_run_dir(const std::string& dir);

// A process of a (possibly data-parallel) training job, before its trainer starts. A restarted
// job (restart count above 0: torchrun --max-restarts, myriad launch --max-restarts) resumes
// from `out`'s checkpoints/last.pt when it exists and no resume was asked for: the override
// "run.resume=..." to add, or "". Rank 0 claims the run folder as claim_run_dir does; the other
// ranks of a job write nothing (their run folder is "").
std::string restart_resume_override(int restart, const std::string& out, bool resume_given);
std::string claim_job_run_dir(int rank, const std::string& out, const std::string& stem,
                              const std::string& resume, bool overwrite);

}  // namespace myriad::learner
