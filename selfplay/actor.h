// `myriad actor`: the acting end of self-play. Connects to `myriad serve` (reconnecting with
// backoff when it goes), runs a batch of envs with local LibTorch inference for the learner's
// policy (the env's first team) and the opponent it was given (every other team), streams
// trajectory chunks of the learner's side with behaviour log-probabilities and the match results,
// and takes new weights between chunks.
#pragma once

#include <cstdint>
#include <string>

namespace myriad::selfplay {

struct ActorOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string id = "actor";                  // peer id in the server's logs
  std::string secret_file;                   // the shared secret's file, or
  std::string secret_env = "MYRIAD_SECRET";  // the environment variable holding it
  std::string device = "cpu";                // where envs and inference run: cpu, cuda, auto
  int64_t envs = 0;                          // 0: the server's serve.num_envs (or env.num_envs)
  uint64_t seed = 0;                         // 0: from the id and the clock
  double max_seconds = 0;                    // 0: until SIGINT/SIGTERM
  // A transport benchmark (with `myriad serve --no-train`): collect one chunk, then send the
  // same bytes for every grant without stepping envs.
  bool repeat_chunk = false;
};

// Returns the exit status: 0 stopped by a signal or max_seconds, 1 refused by the server (a wrong
// secret) or an error.
int run_actor(const ActorOptions& options);

}  // namespace myriad::selfplay
