// The self-play transport's server: Boost.Asio TCP, one I/O thread, authenticated frames out
// to callbacks. No Asio in this header: the learner sees frames, connection ids and counters.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "server/frame.h"
#include "server/handshake.h"

namespace myriad::server {

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless told otherwise ("0.0.0.0" for all)
  uint16_t port = 0;               // 0: an ephemeral port (see Server::port())
  // Connections are admitted in two pools, so strangers cannot keep actors out:
  // authenticated ones up to max_connections (a connection arriving when they are full gets
  // Reject ServerFull at once, as does one that authenticates into a full pool), and
  // unauthenticated ones (handshake pending) up to max_pending_handshakes, where a newcomer
  // evicts the oldest pending one. An actor's handshake takes one round trip, so a flood of
  // held-open connections cannot starve it: they age out behind it.
  size_t max_connections = 64;                // authenticated connections
  size_t max_pending_handshakes = 32;         // unauthenticated connections; the oldest evicted
  uint32_t max_payload = kDefaultMaxPayload;  // per frame, both directions
  std::chrono::milliseconds handshake_timeout{5000};  // accept -> Welcome
  std::chrono::milliseconds idle_timeout{30000};      // no frame from an authenticated peer
  std::chrono::milliseconds linger{1000};             // after a Reject, before closing
  size_t max_queued_bytes = size_t{512} << 20;        // per connection; past it: closed
};

// Totals since start(); each a count of connections unless it says frames or bytes.
struct ServerCounters {
  uint64_t accepted = 0;       // TCP connections admitted under the cap
  uint64_t refused_full = 0;   // turned away at the cap (Reject ServerFull)
  uint64_t evicted = 0;        // pending handshakes closed to admit a newer connection
  uint64_t authenticated = 0;  // completed the handshake
  uint64_t rejected_auth = 0;  // wrong proof (wrong secret)
  uint64_t malformed = 0;      // bad magic/version/type/checksum, torn frame, protocol violation
  uint64_t oversized = 0;      // a length header over max_payload
  uint64_t timed_out = 0;      // handshake deadline or idle timeout
  uint64_t slow = 0;           // send queue over max_queued_bytes
  uint64_t closed = 0;         // connections closed, for any reason
  uint64_t frames_in = 0;
  uint64_t frames_out = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

// Run on the server's I/O thread, so they must not block; they may call send/broadcast/close.
struct ServerCallbacks {
  std::function<void(uint64_t conn, const Peer& peer)> on_connect;  // after the handshake
  // Data frames (Chunk, MatchResult, Weights) of authenticated connections only; handshake
  // frames, heartbeats and Bye are handled by the server.
  std::function<void(uint64_t conn, Frame&& frame)> on_frame;
  // An authenticated connection went away (peer closed, timeout, bad frame, stop()).
  std::function<void(uint64_t conn, const std::string& reason)> on_disconnect;
};

class Server {
 public:
  // `secret`: from load_secret() (auth.h). Nothing listens until start().
  Server(std::string secret, ServerOptions options, ServerCallbacks callbacks);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (SO_REUSEADDR, so a restarted server gets its port back), listens and
  // starts the I/O thread. Throws std::runtime_error naming the address if binding fails.
  void start();
  // Closes every connection and the listener and joins the I/O thread; idempotent. Not from a
  // callback (it would join its own thread).
  void stop();
  uint16_t port() const;  // the bound port, once started

  // Thread-safe; queued in order per connection. A frame for a connection that is gone or not
  // authenticated is dropped. Throws std::length_error if the payload exceeds max_payload.
  void send(uint64_t conn, FrameType type, std::string_view payload);
  // To every authenticated connection; the payload is encoded once and shared.
  void broadcast(FrameType type, std::string_view payload);
  void close(uint64_t conn);

  ServerCounters counters() const;
  size_t open_connections() const;           // any state
  size_t pending_connections() const;        // admitted, handshake not done
  size_t authenticated_connections() const;  // past the handshake

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace myriad::server
