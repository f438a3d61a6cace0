#include "selfplay/actor.h"

#include <ATen/CPUGeneratorImpl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <functional>
#include <iostream>
#include <mutex>
#include <optional>

#include "learner/collect.h"
#include "learner/trainer.h"
#include "myriad/registry.h"
#include "selfplay/learner.h"
#include "server/auth.h"
#include "server/client.h"

namespace myriad::selfplay {
namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

// The newest Weights payload from the server, and whether one arrived since the last connect.
struct Inbox {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<std::string> weights;
  bool fresh = false;  // Weights received on the current connection
  void put(std::string payload) {
    {
      std::lock_guard<std::mutex> lock(mu);
      weights = std::move(payload);
      fresh = true;
    }
    cv.notify_all();
  }
};

}  // namespace

int run_actor(const ActorOptions& o) {
  const std::string secret =
      server::load_secret(o.secret_file, o.secret_file.empty() ? o.secret_env : "");
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  Inbox inbox;
  server::ClientOptions co;
  co.host = o.host;
  co.port = o.port;
  co.self = {server::Role::Actor, o.id};
  server::ClientCallbacks cb;
  cb.on_connected = [&](uint64_t conn) {
    {
      std::lock_guard<std::mutex> lock(inbox.mu);
      inbox.fresh = false;  // wait for this server's weights before collecting again
    }
    std::cout << "myriad actor " << o.id << ": connected to " << o.host << ":" << o.port
              << " (conn " << conn << ")" << std::endl;
  };
  cb.on_frame = [&](server::Frame&& f) {
    if (f.type == server::FrameType::Weights) inbox.put(std::move(f.payload));
  };
  cb.on_disconnected = [&](const std::string& reason) {
    std::cout << "myriad actor " << o.id << ": disconnected (" << reason << "); reconnecting"
              << std::endl;
  };
  cb.on_fatal = [&](const std::string& reason) {
    std::cerr << "myriad actor " << o.id << ": refused: " << reason << std::endl;
    inbox.cv.notify_all();
  };
  server::Client client(secret, co, cb);
  client.start();
  const auto start = std::chrono::steady_clock::now();
  const auto out_of_time = [&] {
    return g_stop || (o.max_seconds > 0 &&
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                              .count() >= o.max_seconds);
  };
  // Blocks until weights of the current connection are in; nullopt when stopping or refused.
  // Waits while there is no connection or it has not sent weights yet.
  const auto next_weights = [&]() -> std::optional<std::string> {
    std::unique_lock<std::mutex> lock(inbox.mu);
    while ((!client.connected() || !inbox.fresh) && !out_of_time() && !client.failed())
      inbox.cv.wait_for(lock, std::chrono::milliseconds(100));
    if (!inbox.fresh || !inbox.weights) return std::nullopt;
    std::optional<std::string> w = std::move(inbox.weights);
    inbox.weights.reset();
    return w;
  };

  std::optional<std::string> payload = next_weights();
  if (client.failed()) return 1;
  if (!payload) return 0;
  WeightsMsg w = decode_weights(*payload);
  const learner::TrainConfig config = learner::parse_config(w.config_yaml, {});
  const int64_t n = o.envs > 0                  ? o.envs
                    : config.serve.num_envs > 0 ? config.serve.num_envs
                                                : config.env.num_envs;
  const uint64_t seed =
      o.seed ? o.seed
             : std::hash<std::string>{}(o.id) ^
                   static_cast<uint64_t>(start.time_since_epoch().count());
  if (config.run.threads > 0) myriad::set_cpu_threads(config.run.threads);
  torch::set_num_threads(std::max(config.run.learner_threads, 1));
  auto env = envs::make(config.env.id, n, resolve_device_id(o.device), seed,
                        config.env.options, learner::env_text_options(config.env));
  const torch::Device device = env->buffers().obs.device();
  const EnvSpec& spec = env->spec();
  const std::vector<learner::Team> teams = learner::make_teams(spec, config.agents, device);
  // Team 0 plays the learner's policy, every other team the opponent's.
  learner::ActorCritic mine = make_team_policy(config, spec, teams[0]);
  learner::ActorCritic theirs = make_team_policy(config, spec, teams[0]);
  mine->to(device), theirs->to(device);
  std::vector<learner::Rollout> rollouts;
  for (const learner::Team& t : teams)
    rollouts.emplace_back(config.ppo.num_steps, n * t.size(), t.input_dim(), spec.action_space,
                          device, spec.decides_winner);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const learner::ActionAdapter to_env(spec.action_space, device);

  int64_t chunks = 0, sent = 0;
  while (!out_of_time() && !client.failed()) {
    load_flat_parameters(mine, w.learner.to(device));
    load_flat_parameters(theirs, w.opponent.to(device));
    learner::CollectInputs in{{}, env.get(), &gen, start, 0};
    for (size_t k = 0; k < teams.size(); ++k)
      in.teams.push_back(
          {&teams[k], k == 0 ? mine : theirs, learner::Standardizer(), to_env, &rollouts[k]});
    learner::collect_rollout(in);
    const learner::Rollout& r = rollouts[0];
    ChunkMsg c;
    c.version = w.version, c.opponent_id = w.opponent_id;
    c.obs = r.obs, c.actions = r.actions, c.logprobs = r.logprobs, c.rewards = r.rewards;
    c.terminated = r.terminated.to(torch::kByte), c.truncated = r.truncated.to(torch::kByte);
    c.final_obs = r.final_obs, c.next_obs = r.next_obs;
    MatchResultMsg m;
    m.version = w.version, m.opponent_id = w.opponent_id;
    if (r.winner.defined()) {
      // One row per env: the team's first agent's (learner/teams.h orders rows env-major).
      const int64_t a = teams[0].size();
      const auto per_env = [&](const torch::Tensor& x) {
        return x.reshape({x.size(0), -1, a}).select(2, 0);
      };
      const torch::Tensor done = per_env(r.terminated.logical_or(r.truncated));
      const torch::Tensor winner = per_env(r.winner);
      m.wins = done.logical_and(winner.eq(teams[0].id)).sum().item<int64_t>();
      m.draws = done.logical_and(winner.eq(-1)).sum().item<int64_t>();
      m.losses = done.sum().item<int64_t>() - m.wins - m.draws;
    }
    ++chunks;
    // At most once: a chunk collected across a lost connection is dropped here or by the server.
    if (client.send(server::FrameType::Chunk, encode(c))) {
      ++sent;
      client.send(server::FrameType::MatchResult, encode(m));
    }
    // New weights (after an update, or from a restarted server).
    std::optional<std::string> next = next_weights();
    if (next) w = decode_weights(*next);
  }
  client.stop();
  std::cout << "myriad actor " << o.id << ": stopped after " << chunks << " chunks (" << sent
            << " sent)" << std::endl;
  return client.failed() ? 1 : 0;
}

}  // namespace myriad::selfplay
