// myriad serve / myriad actor: self-play over the transport (selfplay/).
#include "selfplay/serve.h"

#include <stdexcept>
#include <string>

#include "selfplay/actor.h"
#include "tools/commands.h"

namespace myriad::tools {
namespace {

const char* kSecretHelp =
    "The shared secret comes from --secret-file or the environment variable named by "
    "--secret-env (default MYRIAD_SECRET), never from the command line";

// "HOST:PORT" => host, port. Throws std::invalid_argument when malformed.
void split_host_port(const std::string& s, std::string& host, uint16_t& port) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size())
    throw std::invalid_argument("--connect: expected HOST:PORT, got '" + s + "'");
  host = s.substr(0, colon);
  const int p = std::stoi(s.substr(colon + 1));
  if (p <= 0 || p > 65535)
    throw std::invalid_argument("--connect: port out of range in '" + s + "'");
  port = static_cast<uint16_t>(p);
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto o = std::make_shared<selfplay::ServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Self-play learner: trains on actors' chunks against a pool of its snapshots");
  cmd->footer(kSecretHelp);
  cmd->add_option("config", o->config, "Config file (configs/sumo_selfplay.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("overrides", o->overrides, "key.path=value overrides, e.g. serve.port=7000");
  cmd->add_option("--out", o->out, "Run folder (default runs/<config>-<timestamp>)");
  cmd->add_option("--resume", o->resume, "Server checkpoint to continue from (policies, pool, Elo)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--overwrite", o->overwrite,
                "Replace the run in --out (its run files only) instead of refusing it");
  cmd->add_option("--secret-file", o->secret_file, "File holding the shared secret (mode 600)");
  cmd->add_option("--secret-env", o->secret_env, "Environment variable holding the secret")
      ->capture_default_str();
  cmd->add_option("--max-updates", o->max_updates, "Stop after this many updates (0: no limit)");
  cmd->add_option("--max-seconds", o->max_seconds, "Stop after this many seconds (0: no limit)");
  auto no_train = std::make_shared<bool>(false);
  cmd->add_flag("--no-train", *no_train,
                "Transport benchmark: receive, decode and count chunks, never update");
  cmd->callback([o, no_train] {
    o->train = !*no_train;
    const int rc = selfplay::run_serve(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

void add_actor_command(CLI::App& app) {
  auto o = std::make_shared<selfplay::ActorOptions>();
  auto connect = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "actor", "Self-play actor: runs envs with the learner's policy and streams chunks to it");
  cmd->footer(kSecretHelp);
  cmd->add_option("--connect", *connect, "The server's HOST:PORT")->required();
  cmd->add_option("--id", o->id, "This actor's name in the server's logs")->capture_default_str();
  cmd->add_option("--device", o->device, "cpu, cuda or auto")->capture_default_str();
  cmd->add_option("--envs", o->envs, "Parallel envs (default: the server's serve.num_envs)");
  cmd->add_option("--seed", o->seed, "Seed of envs and sampling (0: from the id and the clock)");
  cmd->add_option("--secret-file", o->secret_file, "File holding the shared secret (mode 600)");
  cmd->add_option("--secret-env", o->secret_env, "Environment variable holding the secret")
      ->capture_default_str();
  cmd->add_option("--max-seconds", o->max_seconds, "Stop after this many seconds (0: no limit)");
  cmd->add_flag("--repeat-chunk", o->repeat_chunk,
                "Transport benchmark: collect one chunk, then resend it for every grant");
  cmd->callback([o, connect] {
    split_host_port(*connect, o->host, o->port);
    const int rc = selfplay::run_actor(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace myriad::tools
