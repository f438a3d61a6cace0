// `myriad serve`: the learner end of self-play. Listens (server/server.h), gives each actor the
// current policy and an opponent drawn from the pool, trains PPO on the chunks actors stream
// back, drops chunks older than serve.max_lag policy versions, rates the learner against its
// snapshots from match results (Elo), and checkpoints policies, pool and ratings.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace myriad::selfplay {

struct ServeOptions {
  std::string config;                  // YAML config path
  std::vector<std::string> overrides;  // key.path=value
  std::string out;                     // run folder (serve.csv, summary.json, checkpoints/)
  std::string resume;                  // a server checkpoint to continue from
  bool overwrite = false;   // replace the run in `out` (its run files only), as `myriad train`
  std::string secret_file;  // the shared secret's file, or
  std::string secret_env = "MYRIAD_SECRET";  // the environment variable holding it
  int64_t max_updates = 0;                   // 0: until run.total_env_steps
  double max_seconds = 0;                    // 0: no wall-clock limit
  // false: a transport benchmark; chunks are received, decoded and counted, then discarded
  // (no PPO update, the version stays), and more are granted at once.
  bool train = true;
  // For tests that run the server in-process: the port it bound, stored once it listens, and
  // a flag that stops it as SIGTERM does.
  std::atomic<int>* listening_port = nullptr;
  const std::atomic<bool>* stop = nullptr;
};

// The run folder follows `myriad train`'s rules (learner/run_dir.h): an --out holding a run
// (train's or serve's) is refused unless resumed in place or overwritten, a default folder is
// claimed atomically, and the folder is locked (<out>/.lock, flock) for the process's life.
// Every Chunk is checked (selfplay/chunk_check.h) before the learner sees it: a bad one is
// dropped, counted per actor (serve.csv, summary.json) and logged; an actor sending 3 in a row
// or 10 in all is disconnected. An update that goes non-finite is refused and undone. Nothing
// an actor sends ends the server.
// Runs until run.total_env_steps env steps were trained on, max_updates, max_seconds, or SIGINT/
// SIGTERM; then writes checkpoints/server.pt and summary.json. Returns the exit status.
int run_serve(const ServeOptions& options);

}  // namespace myriad::selfplay
