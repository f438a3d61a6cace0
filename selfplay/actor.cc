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

// The newest Weights from the server and the chunks it granted on the current connection.
struct Inbox {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<WeightsMsg> weights;  // not yet taken
  int64_t credits = 0;                // chunks the server will take
  uint64_t connection = 0;            // counts connections: credits belong to one
  void put(WeightsMsg w) {
    {
      std::lock_guard<std::mutex> lock(mu);
      credits += w.grant;
      weights = std::move(w);
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
      inbox.credits = 0;  // a new session: wait for this server's weights and grants
      ++inbox.connection;
    }
    std::cout << "myriad actor " << o.id << ": connected to " << o.host << ":" << o.port
              << " (conn " << conn << ")" << std::endl;
  };
  cb.on_frame = [&](server::Frame&& f) {
    if (f.type != server::FrameType::Weights) return;
    try {
      inbox.put(decode_weights(f.payload));
    } catch (const std::invalid_argument& e) {
      std::cerr << "myriad actor " << o.id << ": bad Weights: " << e.what() << std::endl;
    }
  };
  cb.on_disconnected = [&](const std::string& reason) {
    std::cout << "myriad actor " << o.id << ": disconnected (" << reason << ")" << std::endl;
  };
  cb.on_fatal = [&](const std::string& reason) {
    std::cerr << "myriad actor " << o.id << ": refused: " << reason << std::endl;
    inbox.cv.notify_all();
  };
  server::Client client(secret, co, cb);
  client.start();
  const auto start = std::chrono::steady_clock::now();
  const auto out_of_time = [&] {
    return g_stop ||
           (o.max_seconds > 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
                o.max_seconds);
  };
  // Blocks until weights of the current connection are in; nullopt when stopping or refused.
  // Waits for a granted chunk (connected, weights in); takes the newest weights if any came.
  // False when stopping or refused.
  uint64_t session = 0;
  const auto wait_for_grant = [&](std::optional<WeightsMsg>& newest) {
    std::unique_lock<std::mutex> lock(inbox.mu);
    while ((!client.connected() || inbox.credits <= 0) && !out_of_time() && !client.failed())
      inbox.cv.wait_for(lock, std::chrono::milliseconds(100));
    if (out_of_time() || client.failed()) return false;
    if (inbox.weights) newest = std::move(inbox.weights);
    inbox.weights.reset();
    session = inbox.connection;
    return true;
  };

  std::optional<WeightsMsg> first;
  if (!wait_for_grant(first) || !first) return client.failed() ? 1 : 0;
  WeightsMsg w = std::move(*first);
  const learner::TrainConfig config = learner::parse_config(w.config_yaml, {});
  const int64_t n = o.envs > 0                  ? o.envs
                    : config.serve.num_envs > 0 ? config.serve.num_envs
                                                : config.env.num_envs;
  const uint64_t seed = o.seed ? o.seed
                               : (std::hash<std::string>{}(o.id) ^
                                  static_cast<uint64_t>(start.time_since_epoch().count())) >>
                                     2;  // envs take seeds below 2**63
  if (config.run.threads > 0) myriad::set_cpu_threads(config.run.threads);
  torch::set_num_threads(std::max(config.run.learner_threads, 1));
  auto env = envs::make(config.env.id, n, resolve_device_id(o.device), seed, config.env.options,
                        learner::env_text_options(config.env));
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
  // Sampling draws on the envs' device (on CUDA a clone of its default generator, reseeded).
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  if (!device.is_cpu()) {
    gen = at::globalContext().defaultGenerator(device).clone();
    gen.set_current_seed(seed);
  }
  const learner::ActionAdapter to_env(spec.action_space, device);

  int64_t chunks = 0, sent = 0;
  std::string repeated;  // repeat_chunk: the first chunk's bytes
  bool have_grant = true;
  while (have_grant) {
    if (!repeated.empty()) {
      sent += client.send(server::FrameType::Chunk, repeated) ? 1 : 0;
      ++chunks;
      {
        std::lock_guard<std::mutex> lock(inbox.mu);
        if (inbox.connection == session) --inbox.credits;
      }
      std::optional<WeightsMsg> ignored;
      have_grant = wait_for_grant(ignored);
      continue;
    }
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
    if (o.repeat_chunk) repeated = encode(c);
    if (client.send(server::FrameType::Chunk, o.repeat_chunk ? repeated : encode(c))) {
      ++sent;
      client.send(server::FrameType::MatchResult, encode(m));
    }
    {
      std::lock_guard<std::mutex> lock(inbox.mu);
      if (inbox.connection == session) --inbox.credits;
    }
    // The next grant, with the newest weights (after an update, or from a restarted server).
    std::optional<WeightsMsg> next;
    have_grant = wait_for_grant(next);
    if (next) w = std::move(*next);
  }
  client.stop();
  std::cout << "myriad actor " << o.id << ": stopped after " << chunks << " chunks (" << sent
            << " sent)" << std::endl;
  return client.failed() ? 1 : 0;
}

}  // namespace myriad::selfplay
