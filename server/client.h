// The self-play transport's client (an actor's end): connects, authenticates, sends and
// receives frames, heartbeats, and reconnects with capped exponential backoff when the server
// goes away. One I/O thread; no Asio in this header.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "server/frame.h"
#include "server/handshake.h"

namespace myriad::server {

struct ClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  Peer self{Role::Actor, "actor"};
  uint32_t max_payload = kDefaultMaxPayload;
  std::chrono::milliseconds connect_timeout{5000};     // TCP connect + handshake
  std::chrono::milliseconds heartbeat_interval{1000};  // keep below the server's idle timeout
  std::chrono::milliseconds idle_timeout{10000};       // the server silent this long: reconnect
  bool reconnect = true;
  std::chrono::milliseconds backoff_initial{100};
  std::chrono::milliseconds backoff_max{5000};
  uint64_t jitter_seed = 0;  // 0: from std::random_device
  size_t max_queued_bytes = size_t{512} << 20;
};

// Before the k-th consecutive retry (k = 0, 1, ...): min(max, initial * 2^k), scaled by
// `unit` in [0, 1) into [1/2, 1) of itself ("equal jitter"), so actors restarted together
// spread out instead of reconnecting in lockstep.
std::chrono::milliseconds backoff_delay(std::chrono::milliseconds initial,
                                        std::chrono::milliseconds max, int retry, double unit);

struct ClientCounters {
  uint64_t connect_attempts = 0;
  uint64_t authenticated = 0;  // successful handshakes (1 + reconnections)
  uint64_t disconnects = 0;    // authenticated sessions lost
  uint64_t frames_in = 0;
  uint64_t frames_out = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

// Run on the client's I/O thread; they must not block.
struct ClientCallbacks {
  std::function<void(uint64_t conn_id)> on_connected;  // after each successful handshake
  std::function<void(Frame&& frame)> on_frame;         // data frames (Chunk, MatchResult, Weights)
  std::function<void(const std::string& reason)> on_disconnected;  // an authenticated session ended
  // The server refused our proof or we refused its (a wrong secret): retrying cannot help, so
  // the client stops.
  std::function<void(const std::string& reason)> on_fatal;
};

class Client {
 public:
  Client(std::string secret, ClientOptions options, ClientCallbacks callbacks);
  ~Client();  // stop()
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void start();  // starts the I/O thread and the first connection attempt
  void stop();   // sends Bye if connected, closes, joins; idempotent; not from a callback

  // Thread-safe. False (and the frame dropped) when no session is authenticated; a frame
  // queued on a session that then breaks is lost: delivery is at most once.
  // Throws std::length_error if the payload exceeds max_payload.
  bool send(FrameType type, std::string_view payload);

  bool connected() const;
  bool failed() const;  // on_fatal happened
  // Blocks until authenticated (true) or `timeout` passes or the client failed (false).
  bool wait_connected(std::chrono::milliseconds timeout) const;
  ClientCounters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace myriad::server
