#include "server/server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <map>
#include <stdexcept>
#include <thread>

#include "server/link.h"

namespace myriad::server {

namespace asio = boost::asio;
using detail::Clock;
using detail::tcp;

namespace {

struct AtomicCounters {
#define MYRIAD_SERVER_COUNTERS(X) \
  X(accepted)                     \
  X(refused_full)                 \
  X(evicted)                      \
  X(authenticated)                \
  X(rejected_auth)                \
  X(malformed)                    \
  X(oversized) X(timed_out) X(slow) X(closed) X(frames_in) X(frames_out) X(bytes_in) X(bytes_out)
#define X(name) std::atomic<uint64_t> name{0};
  MYRIAD_SERVER_COUNTERS(X)
#undef X
  ServerCounters snapshot() const {
    ServerCounters c;
#define X(name) c.name = name.load(std::memory_order_relaxed);
    MYRIAD_SERVER_COUNTERS(X)
#undef X
    return c;
  }
};

}  // namespace

class ServerConn;

// Everything the server owns; the I/O thread runs on it.
struct ServerState {
  ServerState(std::string secret_, ServerOptions options_, ServerCallbacks callbacks_)
      : secret(std::move(secret_)),
        options(std::move(options_)),
        callbacks(std::move(callbacks_)),
        acceptor(io) {}

  void do_accept();
  void remove(uint64_t id);
  void evict_oldest_pending();

  // io first: destroyed last, after everything that holds its sockets and timers.
  asio::io_context io;
  std::string secret;
  ServerOptions options;
  ServerCallbacks callbacks;
  tcp::acceptor acceptor;
  std::thread thread;
  std::atomic<uint16_t> port{0};
  bool started = false;
  bool stopped = false;
  uint64_t next_id = 1;
  std::map<uint64_t, std::shared_ptr<ServerConn>> conns;  // I/O thread only
  AtomicCounters counters;
  std::atomic<size_t> open{0};
  std::atomic<size_t> authenticated{0};
  std::atomic<size_t> pending{0};       // admitted, not authenticated, not closing
  asio::steady_timer accept_retry{io};  // after a failed accept (EMFILE), before the next
};

// One accepted connection: unauthenticated (handshake) -> authenticated (data) -> closed.
class ServerConn : public detail::FrameLink {
 public:
  ServerConn(ServerState& server, tcp::socket socket, uint64_t id)
      : FrameLink(std::move(socket), server.options.max_payload, server.options.max_queued_bytes),
        server_(server),
        id_(id),
        handshake_(server.secret, id, random_nonce()),
        timer_(socket_.get_executor()) {
    set_max_payload(std::min(kMaxHandshakePayload, server.options.max_payload));
    boost::system::error_code ec;
    const auto ep = socket_.remote_endpoint(ec);
    peer_address_ =
        ec ? std::string("?") : ep.address().to_string() + ":" + std::to_string(ep.port());
  }

  uint64_t id() const { return id_; }
  bool authenticated() const { return authenticated_; }

  bool pending() const { return pending_; }

  void start() {
    pending_ = true;
    server_.pending++;
    deadline_ = Clock::now() + server_.options.handshake_timeout;
    arm_timer();
    start_reading();
  }

  // Closed to make room for a newer connection while its handshake is still pending.
  void evict() {
    // Logged at 1, 2, 4, 8, ... evictions: a flood must not flood the log too.
    const uint64_t n = ++server_.counters.evicted;
    if ((n & (n - 1)) == 0)
      spdlog::warn("myriad server: {} evicted: over {} pending handshakes ({} evicted so far)",
                   who(), server_.options.max_pending_handshakes, n);
    close("evicted: too many pending handshakes");
  }

  // Turned away at the connection cap: a Reject, then closed.
  void refuse() {
    refused_ = true;
    send(
        Frame{FrameType::Reject, reject_payload(RejectCode::ServerFull, "connection cap reached")});
    close_after_flush("server full", server_.options.linger);
  }

 private:
  std::string who() const {
    return "connection " + std::to_string(id_) + " (" + peer_address_ +
           (authenticated_
                ? ", " + std::string(to_string(handshake_.peer().role)) + " " + handshake_.peer().id
                : std::string()) +
           ")";
  }

  // Send a Reject and close after it is flushed.
  void fail(RejectCode code, const std::string& reason) {
    send(Frame{FrameType::Reject, reject_payload(code, reason)});
    close_after_flush(reason, server_.options.linger);
  }

  void on_frame(Frame&& frame) override {
    server_.counters.frames_in++;
    if (!authenticated_) {
      HandshakeStep step = handshake_.on_frame(frame);
      if (step.outcome == HandshakeOutcome::Authenticated &&
          server_.authenticated.load() >= server_.options.max_connections) {
        // Proved itself into a full pool: no Welcome, a Reject (the client retries later).
        server_.counters.refused_full++;
        not_pending();
        spdlog::warn("myriad server: {} authenticated but the connection cap ({}) is reached",
                     who(), server_.options.max_connections);
        fail(RejectCode::ServerFull, "connection cap reached");
        return;
      }
      if (step.outcome != HandshakeOutcome::Continue) not_pending();
      for (const auto& reply : step.replies) send(reply);
      switch (step.outcome) {
        case HandshakeOutcome::Continue:
          return;
        case HandshakeOutcome::Authenticated:
          authenticated_ = true;
          set_max_payload(server_.options.max_payload);
          server_.counters.authenticated++;
          server_.authenticated++;
          deadline_ = Clock::now() + server_.options.idle_timeout;
          spdlog::info("myriad server: {} authenticated", who());
          if (server_.callbacks.on_connect) {
            Peer peer = handshake_.peer();
            peer.address = peer_address_;
            server_.callbacks.on_connect(id_, peer);
          }
          return;
        case HandshakeOutcome::AuthFailed:
          server_.counters.rejected_auth++;
          spdlog::warn("myriad server: {} failed authentication: {}", who(), step.error);
          close_after_flush("authentication failed", server_.options.linger);
          return;
        default:
          server_.counters.malformed++;
          spdlog::warn("myriad server: {} handshake protocol error: {}", who(), step.error);
          close_after_flush(step.error, server_.options.linger);
          return;
      }
    }
    deadline_ = Clock::now() + server_.options.idle_timeout;
    switch (frame.type) {
      case FrameType::Heartbeat:
        send(Frame{FrameType::Heartbeat, {}});
        return;
      case FrameType::Bye:
        close("bye");
        return;
      case FrameType::Chunk:
      case FrameType::MatchResult:
      case FrameType::Weights:
        if (server_.callbacks.on_frame) server_.callbacks.on_frame(id_, std::move(frame));
        return;
      default:
        server_.counters.malformed++;
        spdlog::warn("myriad server: {} sent {} after the handshake; closing", who(),
                     to_string(frame.type));
        fail(RejectCode::Protocol, std::string("unexpected ") + to_string(frame.type));
    }
  }

  void on_decode_error(DecodeError error) override {
    if (error == DecodeError::TooLong) {
      server_.counters.oversized++;
    } else {
      server_.counters.malformed++;
    }
    spdlog::warn("myriad server: {}: {}; closing", who(), to_string(error));
    fail(RejectCode::Protocol, to_string(error));
  }

  void on_read_end(const boost::system::error_code& ec, size_t torn_bytes) override {
    if (torn_bytes > 0) {
      server_.counters.malformed++;
      spdlog::warn("myriad server: {} closed in the middle of a frame ({} bytes)", who(),
                   torn_bytes);
      close("closed mid-frame");
      return;
    }
    close(ec == asio::error::eof ? "peer closed" : ec.message());
  }

  void on_closed() override {
    not_pending();
    timer_.cancel();
    server_.counters.closed++;
    if (refused_) return;
    server_.open--;
    if (authenticated_) {
      server_.authenticated--;
      spdlog::info("myriad server: {} closed: {}", who(), close_reason());
    }
    server_.remove(id_);
    if (authenticated_ && server_.callbacks.on_disconnect)
      server_.callbacks.on_disconnect(id_, close_reason());
  }

  void not_pending() {
    if (pending_) server_.pending--;
    pending_ = false;
  }

  void on_bytes(size_t in, size_t out) override {
    server_.counters.bytes_in += in;
    server_.counters.bytes_out += out;
  }

  void on_frame_sent() override { server_.counters.frames_out++; }

  void on_send_overflow() override {
    server_.counters.slow++;
    spdlog::warn("myriad server: {} is too slow to read; closing", who());
  }

  // One timer per connection at the current deadline; activity moves the deadline, and the
  // timer re-arms itself when it fires early, so a frame costs no timer operation.
  void arm_timer() {
    timer_.expires_at(deadline_);
    auto self = std::static_pointer_cast<ServerConn>(shared_from_this());
    timer_.async_wait([this, self](const boost::system::error_code& ec) {
      if (ec || is_closing()) return;
      if (Clock::now() < deadline_) {
        arm_timer();
        return;
      }
      server_.counters.timed_out++;
      const char* what = authenticated_ ? "idle timeout" : "handshake timeout";
      spdlog::warn("myriad server: {}: {}", who(), what);
      not_pending();
      fail(RejectCode::Timeout, what);
    });
  }

  ServerState& server_;
  uint64_t id_;
  ServerHandshake handshake_;
  asio::steady_timer timer_;
  Clock::time_point deadline_;
  std::string peer_address_;
  bool authenticated_ = false;
  bool refused_ = false;
  bool pending_ = false;  // counted in ServerState::pending
};

void ServerState::do_accept() {
  acceptor.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || stopped) return;
    if (ec) {
      // Out of file descriptors (EMFILE) and the like: retrying at once would spin this thread.
      spdlog::warn("myriad server: accept failed: {}; retrying in 100 ms", ec.message());
      accept_retry.expires_after(std::chrono::milliseconds(100));
      accept_retry.async_wait([this](const boost::system::error_code& e) {
        if (!e && !stopped) do_accept();
      });
      return;
    }
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    const uint64_t id = next_id++;
    auto conn = std::make_shared<ServerConn>(*this, std::move(socket), id);
    if (authenticated.load() >= options.max_connections) {
      counters.refused_full++;
      spdlog::warn("myriad server: connection cap ({}) reached; refusing a connection",
                   options.max_connections);
      conn->refuse();
    } else {
      if (pending.load() >= std::max<size_t>(options.max_pending_handshakes, 1))
        evict_oldest_pending();
      counters.accepted++;
      open++;
      conns.emplace(id, conn);
      conn->start();
    }
    do_accept();
  });
}

// Ids grow with time, so the first pending connection in the map is the oldest.
void ServerState::evict_oldest_pending() {
  for (auto& [id, conn] : conns)
    if (conn->pending() && !conn->is_closing()) {
      auto keep = conn;  // close() erases it from the map
      keep->evict();
      return;
    }
}

void ServerState::remove(uint64_t id) { conns.erase(id); }

struct Server::Impl : ServerState {
  using ServerState::ServerState;
};

Server::Server(std::string secret, ServerOptions options, ServerCallbacks callbacks)
    : impl_(std::make_unique<Impl>(std::move(secret), std::move(options), std::move(callbacks))) {}

Server::~Server() { stop(); }

void Server::start() {
  Impl& s = *impl_;
  if (s.started) throw std::logic_error("myriad server: start() called twice");
  const std::string where = s.options.host + ":" + std::to_string(s.options.port);
  try {
    const tcp::endpoint endpoint(asio::ip::make_address(s.options.host), s.options.port);
    s.acceptor.open(endpoint.protocol());
    s.acceptor.set_option(tcp::acceptor::reuse_address(true));
    s.acceptor.bind(endpoint);
    s.acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error("myriad server: cannot listen on " + where + ": " + e.what());
  }
  s.port = s.acceptor.local_endpoint().port();
  s.started = true;
  spdlog::info("myriad server: listening on {}:{}", s.options.host, s.port.load());
  s.do_accept();
  s.thread = std::thread([&s] { s.io.run(); });
}

void Server::stop() {
  Impl& s = *impl_;
  if (!s.started || s.stopped) return;
  asio::post(s.io, [&s] {
    s.stopped = true;
    boost::system::error_code ignored;
    s.acceptor.close(ignored);
    auto conns = s.conns;  // close() erases from the map
    for (auto& [id, conn] : conns) conn->close("server stopping");
    s.io.stop();
  });
  if (s.thread.joinable()) s.thread.join();
  s.stopped = true;
}

uint16_t Server::port() const { return impl_->port.load(); }

void Server::send(uint64_t conn, FrameType type, std::string_view payload) {
  auto bytes =
      std::make_shared<const std::string>(encode(type, payload, impl_->options.max_payload));
  Impl& s = *impl_;
  asio::post(s.io, [&s, conn, bytes = std::move(bytes)] {
    const auto it = s.conns.find(conn);
    if (it != s.conns.end() && it->second->authenticated() && !it->second->is_closing())
      it->second->send_encoded(bytes);
  });
}

void Server::broadcast(FrameType type, std::string_view payload) {
  auto bytes =
      std::make_shared<const std::string>(encode(type, payload, impl_->options.max_payload));
  Impl& s = *impl_;
  asio::post(s.io, [&s, bytes = std::move(bytes)] {
    auto conns = s.conns;  // a send may close (slow peer), which erases from the map
    for (auto& [id, conn] : conns)
      if (conn->authenticated() && !conn->is_closing()) conn->send_encoded(bytes);
  });
}

void Server::close(uint64_t conn) {
  Impl& s = *impl_;
  asio::post(s.io, [&s, conn] {
    const auto it = s.conns.find(conn);
    if (it != s.conns.end()) it->second->close("closed by the server");
  });
}

ServerCounters Server::counters() const { return impl_->counters.snapshot(); }
size_t Server::open_connections() const { return impl_->open.load(); }
size_t Server::pending_connections() const { return impl_->pending.load(); }
size_t Server::authenticated_connections() const { return impl_->authenticated.load(); }

}  // namespace myriad::server
