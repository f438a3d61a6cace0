#include "selfplay/serve.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "learner/run_dir.h"
#include "myriad/device.h"
#include "myriad/version.h"
#include "selfplay/chunk_check.h"
#include "selfplay/evaluate.h"
#include "selfplay/learner.h"
#include "server/auth.h"
#include "server/server.h"

namespace myriad::selfplay {
namespace {

// The first SIGINT/SIGTERM stops training (a checkpoint is saved and the head-to-head
// evaluation runs); a second one also cuts that evaluation short.
std::atomic<bool> g_stop{false};
std::atomic<bool> g_abort{false};
void on_signal(int) {
  if (g_stop) g_abort = true;
  g_stop = true;
}

// What the server's I/O thread hands the learner thread.
struct Event {
  enum Kind { kConnect, kDisconnect, kFrame } kind = kFrame;
  uint64_t conn = 0;
  std::string peer;     // kConnect: the actor's id; kDisconnect: why it left
  std::string address;  // kConnect: host:port
  server::Frame frame;
};

// Frames wait here for the learner thread. Granted chunks keep it short; an actor that sends
// without grants could grow it while the learner updates, so data frames past `max_bytes`
// queued are refused (push returns false) and their connection is closed by the caller.
class EventQueue {
 public:
  explicit EventQueue(size_t max_bytes) : max_bytes_(max_bytes) {}
  bool push(Event e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      const size_t size = e.frame.payload.size();
      if (e.kind == Event::kFrame && bytes_ + size > max_bytes_) return false;
      bytes_ += size;
      q_.push_back(std::move(e));
    }
    cv_.notify_one();
    return true;
  }
  bool pop(Event& e, std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, wait, [this] { return !q_.empty(); })) return false;
    e = std::move(q_.front());
    q_.pop_front();
    bytes_ -= e.frame.payload.size();
    return true;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> q_;
  size_t bytes_ = 0, max_bytes_;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// An actor that sends this many bad chunks in a row, or this many in all under one id, is
// disconnected (after the total, each further bad chunk disconnects it again: it may reconnect,
// it is not banned, since a fixed actor under the same id is welcome).
constexpr int64_t kBadChunksInARow = 3;
constexpr int64_t kBadChunksInAll = 10;

// Claims the run folder as `myriad train` does (learner/run_dir.h) and locks it for the
// process's life. A given --out is locked before it is claimed, so an --overwrite cannot delete
// the files of a server still running there.
std::string claim_serve_dir(const ServeOptions& o, learner::RunDirLock& lock) {
  const std::string stem = std::filesystem::path(o.config).stem().string();
  if (o.out.empty()) {
    const std::string dir = learner::claim_run_dir("", stem, "", false);
    lock = learner::lock_run_dir(dir);
    return dir;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) throw std::runtime_error("cannot create run folder " + o.out + ": " + ec.message());
  lock = learner::lock_run_dir(o.out);
  const std::string found = learner::run_file_in(o.out);
  try {
    return learner::claim_run_dir(o.out, stem, o.resume, o.overwrite);
  } catch (const learner::RunDirExists&) {
    std::error_code ignored;
    const bool serve_run =
        std::filesystem::exists(std::filesystem::path(o.out) / "serve.csv", ignored) ||
        std::filesystem::exists(std::filesystem::path(o.out) / "checkpoints" / "server.pt",
                                ignored);
    throw learner::RunDirExists(
        "run folder '" + o.out + "' already holds " +
        (serve_run ? "a myriad serve run" : "a run (not a myriad serve one)") + " (it has " +
        found + "); refusing to overwrite it. Choose a new --out" +
        (serve_run ? ", continue it in place with --resume " +
                         (std::filesystem::path(o.out) / "checkpoints" / "server.pt").string()
                   : std::string()) +
        ", or replace it with --overwrite");
  }
}

}  // namespace

int run_serve(const ServeOptions& o) {
  std::vector<std::string> overrides = o.overrides;
  learner::TrainConfig config = learner::load_config(o.config, overrides);
  check_selfplay(config);
  const std::string secret =
      server::load_secret(o.secret_file, o.secret_file.empty() ? o.secret_env : "");
  learner::RunDirLock dir_lock;
  const std::string dir = claim_serve_dir(o, dir_lock);
  std::filesystem::create_directories(std::filesystem::path(dir) / "checkpoints");
  const std::string ckpt = (std::filesystem::path(dir) / "checkpoints" / "server.pt").string();

  SelfPlayLearner learner(config);
  if (!o.resume.empty()) {
    learner.load(o.resume);
    std::cout << "myriad serve: resumed " << o.resume << " at version " << learner.version() << " ("
              << learner.league().snapshots().size() << " snapshots)" << std::endl;
  }
  const learner::ServeConfig& sc = config.serve;
  std::mt19937_64 rng(config.run.seed * 7919 + learner.version());
  // The learner's fused math splits its large products among run.threads, as in `myriad train`.
  if (config.run.threads > 0) myriad::set_cpu_threads(config.run.threads);
  torch::set_num_threads(std::max(config.run.learner_threads, 1));

  // Room for every granted chunk many times over (a chunk is at most one frame, 64 MiB).
  EventQueue events(size_t{1} << 30);
  server::Server* srv_ptr = nullptr;  // set below; callbacks run only after start()
  server::ServerOptions so;
  so.host = sc.host;
  so.port = static_cast<uint16_t>(sc.port);
  server::ServerCallbacks cb;
  cb.on_connect = [&](uint64_t conn, const server::Peer& peer) {
    events.push({Event::kConnect, conn, peer.id, peer.address, {}});
  };
  cb.on_disconnect = [&](uint64_t conn, const std::string& reason) {
    events.push({Event::kDisconnect, conn, reason, "", {}});
  };
  std::atomic<int64_t> overflowed{0};  // frames refused at the queue's cap (I/O thread)
  cb.on_frame = [&](uint64_t conn, server::Frame&& f) {
    if (!events.push({Event::kFrame, conn, "", "", std::move(f)})) {
      // Over the queue's cap: only an actor sending what it was not granted gets here.
      if (overflowed++ == 0)
        std::cout << "myriad serve: conn " << conn
                  << " sends faster than it was granted; closing it" << std::endl;
      srv_ptr->close(conn);
    }
  };
  server::Server srv(secret, so, cb);
  srv_ptr = &srv;
  srv.start();
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::cout << "myriad serve: " << config.env.id << ", listening on " << sc.host << ":"
            << srv.port() << ", run folder " << dir << std::endl;

  std::ofstream csv(std::filesystem::path(dir) / "serve.csv", std::ios::app);
  if (csv.tellp() == 0)
    csv << "version,env_steps,wall_seconds,steps_per_second,chunk_bytes,chunks_used,"
           "chunks_dropped,lag_mean,lag_max,elo_learner,elo_first,pool,actors,policy_loss,"
           "value_loss,entropy,approx_kl,chunks_refused,updates_refused,refused_by_actor\n";

  // Flow control: an actor sends only the chunks granted to it (Weights.grant). The server keeps
  // chunks_per_update chunks in the batch or granted, plus one ahead per connected actor, so the
  // actors keep collecting while the learner updates and nothing piles up unread.
  struct ActorState {
    std::string id, address;
    int64_t outstanding = 0;  // granted, not yet received
  };
  std::map<uint64_t, ActorState> actors;  // by connection
  // Bad chunks by actor id (across its connections): in a row, in all, and the last reason.
  struct Refusals {
    int64_t in_a_row = 0, total = 0, disconnects = 0;
    std::string last;
  };
  std::map<std::string, Refusals> refused;
  int64_t chunks_refused = 0, updates_refused = 0;
  const ChunkSpec chunk_check_spec = chunk_spec(config);
  const auto refused_text = [&] {
    std::string out;
    for (const auto& [id, r] : refused)
      out += (out.empty() ? "" : ";") + id + "=" + std::to_string(r.total);
    return out;
  };
  // A bad chunk (or MatchResult) from `conn`: dropped, counted under its actor and logged naming
  // the actor and the field; an actor that keeps sending them is disconnected.
  const auto refuse = [&](uint64_t conn, const std::string& why) {
    ++chunks_refused;
    const auto a = actors.find(conn);
    const std::string id = a != actors.end() ? a->second.id : "?";
    const std::string address = a != actors.end() ? a->second.address : "?";
    Refusals& r = refused[id];
    ++r.in_a_row, ++r.total;
    r.last = why;
    std::cout << "myriad serve: refused a chunk from actor '" << id << "' (conn " << conn << ", "
              << address << "): " << why << " [" << r.in_a_row << " in a row, " << r.total
              << " in all]" << std::endl;
    if (r.in_a_row >= kBadChunksInARow || r.total >= kBadChunksInAll) {
      ++r.disconnects;
      r.in_a_row = 0;
      std::cout << "myriad serve: disconnecting actor '" << id << "' (conn " << conn
                << "): it keeps sending bad chunks" << std::endl;
      srv.close(conn);
    }
  };
  std::vector<ChunkMsg> batch;
  std::map<int64_t, int64_t> lag_histogram;  // lag (versions) -> chunks received
  int64_t chunks_used = 0, chunks_dropped = 0, malformed = 0, results = 0, connects = 0;
  int64_t chunk_bytes = 0, batch_lag_sum = 0, batch_lag_max = 0, batch_rows = 0;
  const auto start = std::chrono::steady_clock::now();
  auto last_print = start;
  int64_t updates_here = 0, steps_here = 0;
  auto first_chunk = start;  // throughput is counted from the first chunk received
  const auto send_weights = [&](uint64_t conn, int64_t grant) {
    WeightsMsg w = learner.weights(rng);
    w.grant = grant;
    srv.send(conn, server::FrameType::Weights, encode(w));
  };
  // Grants chunks up to the target, each to the actor owing the fewest; sends Weights to those
  // granted some, to every actor when `everyone` (new weights), and to `also`.
  const auto top_up = [&](bool everyone, uint64_t also) {
    int64_t have = static_cast<int64_t>(batch.size());
    for (const auto& [conn, a] : actors) have += a.outstanding;
    // A batch of enough chunks but too few transitions for the minibatches takes one more.
    const int64_t in_batch = static_cast<int64_t>(batch.size());
    const int64_t want = (in_batch >= sc.chunks_per_update ? in_batch + 1 : sc.chunks_per_update) +
                         static_cast<int64_t>(actors.size());
    std::map<uint64_t, int64_t> grants;
    for (; have < want && !actors.empty(); ++have) {
      auto least = actors.begin();
      for (auto it = actors.begin(); it != actors.end(); ++it)
        if (it->second.outstanding < least->second.outstanding) least = it;
      ++least->second.outstanding;
      ++grants[least->first];
    }
    for (const auto& [conn, a] : actors)
      if (everyone || grants.count(conn) || conn == also) send_weights(conn, grants[conn]);
  };
  if (o.listening_port) o.listening_port->store(srv.port());
  const auto finished = [&] {
    if (g_stop || (o.stop && o.stop->load())) return true;
    if (learner.env_steps() >= config.run.total_env_steps) return true;
    if (o.max_updates > 0 && updates_here >= o.max_updates) return true;
    return o.max_seconds > 0 && seconds_since(start) >= o.max_seconds;
  };

  while (!finished()) {
    Event e;
    if (!events.pop(e, std::chrono::milliseconds(100))) continue;
    if (e.kind == Event::kConnect) {
      actors[e.conn] = {e.peer, e.address, 0};
      ++connects;
      std::cout << "myriad serve: actor '" << e.peer << "' connected (conn " << e.conn << ", "
                << actors.size() << " connected)" << std::endl;
      top_up(false, e.conn);
      continue;
    }
    if (e.kind == Event::kDisconnect) {
      std::cout << "myriad serve: actor '" << actors[e.conn].id << "' left (conn " << e.conn
                << "): " << e.peer << std::endl;
      actors.erase(e.conn);  // what it owed is lost: granted to the others instead
      top_up(false, 0);
      continue;
    }
    if (e.frame.type == server::FrameType::MatchResult) {
      try {
        const MatchResultMsg m = decode_result(e.frame.payload);
        const std::string why = check_result(m, chunk_check_spec.steps << 20);
        if (!why.empty()) {
          ++malformed;
          std::cout << "myriad serve: ignored a MatchResult from actor '" << actors[e.conn].id
                    << "' (conn " << e.conn << "): " << why << std::endl;
        } else if (learner.league().record(m.opponent_id, m.wins, m.draws, m.losses)) {
          results += m.wins + m.draws + m.losses;
        }
      } catch (const std::invalid_argument&) {
        ++malformed;
      }
      continue;
    }
    if (e.frame.type != server::FrameType::Chunk) continue;
    auto owner = actors.find(e.conn);
    if (owner != actors.end() && owner->second.outstanding > 0) --owner->second.outstanding;
    ChunkMsg m;
    std::string why;
    try {
      m = decode_chunk(e.frame.payload);
      why = check_chunk(m, chunk_check_spec);
    } catch (const std::exception& x) {  // std::invalid_argument; c10::Error never, but if
      why = x.what();
    }
    if (!why.empty()) {
      refuse(e.conn, why);
      top_up(false, 0);
      continue;
    }
    refused[actors.count(e.conn) ? actors[e.conn].id : "?"].in_a_row = 0;
    if (chunk_bytes == 0) first_chunk = std::chrono::steady_clock::now();
    chunk_bytes += static_cast<int64_t>(e.frame.payload.size());
    const int64_t lag = learner.version() - m.version;
    ++lag_histogram[lag];
    // Too old, or from a future this server never had (it restarted from an older checkpoint).
    if (lag > sc.max_lag || lag < 0) {
      ++chunks_dropped;
      top_up(false, 0);
      continue;
    }
    batch_lag_sum += lag;
    batch_lag_max = std::max(batch_lag_max, lag);
    batch_rows += m.steps();
    batch.push_back(std::move(m));
    // Enough chunks, and at least 2 transitions per PPO minibatch (actors choose their B; a
    // minibatch of 1 has no advantage std to normalize by).
    if (static_cast<int64_t>(batch.size()) < sc.chunks_per_update) continue;
    if (batch_rows < 2 * config.ppo.num_minibatches) {
      top_up(false, 0);
      continue;
    }
    if (!o.train) {
      for (const ChunkMsg& c : batch) steps_here += c.steps();
      chunks_used += static_cast<int64_t>(batch.size());
      batch.clear();
      batch_lag_sum = batch_lag_max = batch_rows = 0;
      top_up(false, 0);
      continue;
    }

    UpdateFigures f;
    try {
      f = learner.update(batch);
    } catch (const std::exception& x) {
      // Non-finite (put back by the learner) or anything else the checks above missed: the
      // batch is dropped, the policy stays as it was, the server goes on.
      ++updates_refused;
      std::string from;
      for (const auto& [conn, a] : actors) from += (from.empty() ? "" : ", ") + a.id;
      std::cout << "myriad serve: update refused, " << batch.size()
                << " chunks dropped (actors connected: " << from << "): " << x.what() << std::endl;
      batch.clear();
      batch_lag_sum = batch_lag_max = batch_rows = 0;
      top_up(false, 0);
      continue;
    }
    ++updates_here;
    steps_here += f.env_steps;
    chunks_used += f.chunks;
    const double lag_mean = static_cast<double>(batch_lag_sum) / f.chunks;
    batch.clear();
    batch_lag_sum = batch_lag_max = batch_rows = 0;
    top_up(true, 0);
    const double wall = seconds_since(first_chunk);
    const auto& pool = learner.league().snapshots();
    csv << learner.version() << "," << learner.env_steps() << "," << wall << ","
        << steps_here / std::max(wall, 1e-9) << "," << chunk_bytes << "," << chunks_used << ","
        << chunks_dropped << "," << lag_mean << "," << batch_lag_max << ","
        << learner.league().learner_rating() << "," << pool.front().rating << "," << pool.size()
        << "," << actors.size() << "," << f.pg_loss << "," << f.v_loss << "," << f.entropy << ","
        << f.approx_kl << "," << chunks_refused << "," << updates_refused << "," << refused_text()
        << std::endl;
    if (config.run.checkpoint_every > 0 && learner.version() % config.run.checkpoint_every == 0)
      learner.save(ckpt);
    if (seconds_since(last_print) >= config.run.log_every_seconds) {
      last_print = std::chrono::steady_clock::now();
      std::cout << std::fixed << std::setprecision(1) << "myriad serve: version "
                << learner.version() << ", " << learner.env_steps() << " env steps, "
                << steps_here / std::max(wall, 1e-9) << " steps/s, elo "
                << learner.league().learner_rating() << " (first snapshot " << pool.front().rating
                << "), " << actors.size() << " actors, " << chunks_dropped << " chunks dropped"
                << std::endl;
    }
  }
  if (o.train) learner.save(ckpt);
  const double wall = seconds_since(start), busy = seconds_since(first_chunk);
  const server::ServerCounters sc_counters = srv.counters();
  srv.stop();

  // The Elo table's claim checked head to head: the latest policy against the first snapshot.
  nlohmann::json head_to_head = nullptr;
  if (o.train && config.run.eval_episodes > 0) {
    if (g_stop)
      std::cout << "myriad serve: stopping on a signal; a second one skips the head-to-head "
                   "evaluation"
                << std::endl;
    const MatchTally m = play_match(
        config, learner.weights(rng).learner,
        learner.snapshot_parameters(learner.league().snapshots().front().id),
        config.run.eval_episodes, config.run.seed + 1000003, [] { return g_abort.load(); });
    const double x = m.score();
    head_to_head = {{"episodes", config.run.eval_episodes},
                    {"wins", m.wins},
                    {"draws", m.draws},
                    {"losses", m.losses},
                    {"score", x},
                    {"elo_gap_implied", x > 0 && x < 1 ? 400.0 * std::log10(x / (1.0 - x)) : NAN},
                    {"cancelled", m.cancelled}};
    std::cout << std::fixed << std::setprecision(3) << "myriad serve: latest (v"
              << learner.version() << ") vs first snapshot over " << config.run.eval_episodes
              << " episodes: " << m.wins << " wins, " << m.draws << " draws, " << m.losses
              << " losses, score " << x << (m.cancelled ? " (cut short by a second signal)" : "")
              << std::endl;
  }
  nlohmann::json pool = nlohmann::json::array();
  for (const Snapshot& s : learner.league().snapshots())
    pool.push_back({{"id", s.id},
                    {"version", s.version},
                    {"elo", s.rating},
                    {"games", s.games},
                    {"learner_score", s.learner_score}});
  nlohmann::json refused_json = nlohmann::json::object();
  for (const auto& [id, r] : refused)
    if (r.total > 0)
      refused_json[id] = {{"chunks", r.total}, {"disconnects", r.disconnects}, {"last", r.last}};
  nlohmann::json lags = nlohmann::json::object();
  for (const auto& [lag, n] : lag_histogram) lags[std::to_string(lag)] = n;
  const nlohmann::json summary = {{"myriad_version", MYRIAD_VERSION},
                                  {"env", config.env.id},
                                  {"version", learner.version()},
                                  {"env_steps", learner.env_steps()},
                                  {"updates_this_session", updates_here},
                                  {"wall_seconds", wall},
                                  {"trained", o.train},
                                  {"seconds_from_first_chunk", busy},
                                  {"steps_per_second", steps_here / std::max(busy, 1e-9)},
                                  {"chunk_bytes", chunk_bytes},
                                  {"chunk_bytes_per_second", chunk_bytes / std::max(busy, 1e-9)},
                                  {"chunks_used", chunks_used},
                                  {"chunks_dropped", chunks_dropped},
                                  {"chunks_malformed", malformed},
                                  {"chunks_refused", chunks_refused},
                                  {"updates_refused", updates_refused},
                                  {"frames_over_queue_cap", overflowed.load()},
                                  {"refused_by_actor", refused_json},
                                  {"games", results},
                                  {"lag_histogram", lags},
                                  {"max_lag", sc.max_lag},
                                  {"elo_learner", learner.league().learner_rating()},
                                  {"latest_vs_first", head_to_head},
                                  {"pool", pool},
                                  {"connects", connects},
                                  {"server",
                                   {{"authenticated", sc_counters.authenticated},
                                    {"rejected_auth", sc_counters.rejected_auth},
                                    {"bytes_in", sc_counters.bytes_in},
                                    {"bytes_out", sc_counters.bytes_out}}},
                                  {"checkpoint", ckpt}};
  std::ofstream(std::filesystem::path(dir) / "summary.json") << summary.dump(2) << "\n";
  std::cout << std::fixed << std::setprecision(1) << "myriad serve: stopped at version "
            << learner.version() << " (" << learner.env_steps() << " env steps); elo "
            << learner.league().learner_rating() << " vs first snapshot "
            << learner.league().snapshots().front().rating << "; checkpoint " << ckpt << std::endl;
  return 0;
}

}  // namespace myriad::selfplay
