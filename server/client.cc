#include "server/client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "server/link.h"

namespace myriad::server {

namespace asio = boost::asio;
using detail::Clock;
using detail::tcp;

std::chrono::milliseconds backoff_delay(std::chrono::milliseconds initial,
                                        std::chrono::milliseconds max, int retry, double unit) {
  double ms = static_cast<double>(std::max<int64_t>(initial.count(), 1));
  const double cap = static_cast<double>(std::max(max.count(), initial.count()));
  for (int i = 0; i < retry && ms < cap; ++i) ms *= 2;
  ms = std::min(ms, cap);
  unit = std::clamp(unit, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<int64_t>(ms * (0.5 + 0.5 * unit)));
}

class ClientSession;

// Everything the client owns; the I/O thread runs on it.
struct ClientState {
  ClientState(std::string secret_, ClientOptions options_, ClientCallbacks callbacks_)
      : secret(std::move(secret_)),
        options(std::move(options_)),
        callbacks(std::move(callbacks_)),
        retry_timer(io),
        rng(options.jitter_seed != 0 ? options.jitter_seed : std::random_device{}()) {}

  void connect();
  void schedule_retry(const std::string& why);
  void session_authenticated(uint64_t conn_id);
  void session_ended(ClientSession* s, const std::string& reason, bool was_authenticated,
                     bool fatal);

  asio::io_context io;  // first: destroyed last
  std::string secret;
  ClientOptions options;
  ClientCallbacks callbacks;
  asio::steady_timer retry_timer;
  std::mt19937_64 rng;
  std::thread thread;
  bool started = false;
  bool stopped = false;
  // I/O thread only:
  bool stopping = false;
  int retry = 0;
  std::shared_ptr<ClientSession> session;
  std::shared_ptr<tcp::socket> connecting;
  // Any thread:
  std::atomic<bool> connected{false};
  std::atomic<bool> fatal{false};
  mutable std::mutex mu;
  mutable std::condition_variable cv;
#define MYRIAD_CLIENT_COUNTERS(X) \
  X(connect_attempts)             \
  X(authenticated) X(disconnects) X(frames_in) X(frames_out) X(bytes_in) X(bytes_out)
#define X(name) std::atomic<uint64_t> name{0};
  MYRIAD_CLIENT_COUNTERS(X)
#undef X
};

// One TCP connection of the client: handshake, then data frames and heartbeats.
class ClientSession : public detail::FrameLink {
 public:
  ClientSession(ClientState& client, tcp::socket socket)
      : FrameLink(std::move(socket), client.options.max_payload, client.options.max_queued_bytes),
        client_(client),
        handshake_(client.secret, client.options.self, random_nonce()),
        timer_(socket_.get_executor()) {
    set_max_payload(std::min(kMaxHandshakePayload, client.options.max_payload));
  }

  bool authenticated() const { return authenticated_; }

  void begin() {
    send(handshake_.hello());
    deadline_ = Clock::now() + client_.options.connect_timeout;
    last_rx_ = Clock::now();
    arm_timer();
    start_reading();
  }

 private:
  void on_frame(Frame&& frame) override {
    client_.frames_in++;
    last_rx_ = Clock::now();
    if (!authenticated_) {
      HandshakeStep step = handshake_.on_frame(frame);
      for (const auto& reply : step.replies) send(reply);
      switch (step.outcome) {
        case HandshakeOutcome::Continue:
          return;
        case HandshakeOutcome::Authenticated:
          authenticated_ = true;
          set_max_payload(client_.options.max_payload);
          client_.session_authenticated(handshake_.conn_id());
          return;
        case HandshakeOutcome::AuthFailed:
          fatal_ = true;
          close(step.error);
          return;
        case HandshakeOutcome::Rejected:
          fatal_ = handshake_.reject_code() == RejectCode::AuthFailed;
          close("rejected by the server: " + step.error);
          return;
        default:
          close("handshake protocol error: " + step.error);
          return;
      }
    }
    switch (frame.type) {
      case FrameType::Heartbeat:
        return;
      case FrameType::Bye:
        close("the server said bye");
        return;
      case FrameType::Reject: {
        RejectCode code{};
        std::string reason;
        if (!parse_reject(frame.payload, code, reason)) {
          close("malformed Reject");
          return;
        }
        close(std::string("rejected by the server: ") + to_string(code) + ": " + reason);
        return;
      }
      case FrameType::Chunk:
      case FrameType::MatchResult:
      case FrameType::Weights:
        if (client_.callbacks.on_frame) client_.callbacks.on_frame(std::move(frame));
        return;
      default:
        close(std::string("unexpected ") + to_string(frame.type) + " from the server");
    }
  }

  void on_decode_error(DecodeError error) override {
    close(std::string("bad frame from the server: ") + to_string(error));
  }

  void on_read_end(const boost::system::error_code& ec, size_t torn_bytes) override {
    close(torn_bytes > 0
              ? "the server closed mid-frame"
              : (ec == asio::error::eof ? "the server closed the connection" : ec.message()));
  }

  void on_closed() override {
    timer_.cancel();
    client_.session_ended(this, close_reason(), authenticated_, fatal_);
  }

  void on_bytes(size_t in, size_t out) override {
    client_.bytes_in += in;
    client_.bytes_out += out;
  }
  void on_frame_sent() override { client_.frames_out++; }

  // Ticks every heartbeat interval: the handshake deadline before, heartbeats and the
  // server-silence check after.
  void arm_timer() {
    timer_.expires_after(
        std::min(client_.options.heartbeat_interval, client_.options.connect_timeout));
    auto self = std::static_pointer_cast<ClientSession>(shared_from_this());
    timer_.async_wait([this, self](const boost::system::error_code& ec) {
      if (ec || is_closing()) return;
      const auto now = Clock::now();
      if (!authenticated_) {
        if (now >= deadline_) {
          close("handshake timed out");
          return;
        }
      } else if (now - last_rx_ >= client_.options.idle_timeout) {
        close("the server is silent");
        return;
      } else {
        send(Frame{FrameType::Heartbeat, {}});
      }
      arm_timer();
    });
  }

  ClientState& client_;
  ClientHandshake handshake_;
  asio::steady_timer timer_;
  Clock::time_point deadline_;
  Clock::time_point last_rx_;
  bool authenticated_ = false;
  bool fatal_ = false;
};

void ClientState::connect() {
  if (stopping) return;
  connect_attempts++;
  const std::string where = options.host + ":" + std::to_string(options.port);
  boost::system::error_code ec;
  // Resolved on the I/O thread, blocking: one connection attempt at a time has nothing else to do.
  tcp::resolver resolver(io);
  const auto endpoints = resolver.resolve(options.host, std::to_string(options.port), ec);
  if (ec) {
    schedule_retry("cannot resolve " + where + ": " + ec.message());
    return;
  }
  auto socket = std::make_shared<tcp::socket>(io);
  auto timer = std::make_shared<asio::steady_timer>(io, options.connect_timeout);
  connecting = socket;
  timer->async_wait([socket](const boost::system::error_code& e) {
    if (!e) {
      boost::system::error_code ignored;
      socket->close(ignored);
    }
  });
  asio::async_connect(
      *socket, endpoints,
      [this, socket, timer, where](const boost::system::error_code& e, const tcp::endpoint&) {
        timer->cancel();
        if (connecting == socket) connecting.reset();
        if (stopping) return;
        if (e) {
          schedule_retry("cannot connect to " + where + ": " + e.message());
          return;
        }
        boost::system::error_code ignored;
        socket->set_option(tcp::no_delay(true), ignored);
        session = std::make_shared<ClientSession>(*this, std::move(*socket));
        session->begin();
      });
}

void ClientState::schedule_retry(const std::string& why) {
  if (stopping) return;
  if (!options.reconnect) {
    spdlog::warn("myriad client: {}; not reconnecting", why);
    return;
  }
  const auto delay = backoff_delay(options.backoff_initial, options.backoff_max, retry++,
                                   std::uniform_real_distribution<double>(0.0, 1.0)(rng));
  spdlog::info("myriad client: {}; retrying in {} ms", why, delay.count());
  retry_timer.expires_after(delay);
  retry_timer.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) connect();
  });
}

void ClientState::session_authenticated(uint64_t conn_id) {
  retry = 0;
  authenticated++;
  {
    std::lock_guard<std::mutex> lock(mu);
    connected = true;
  }
  cv.notify_all();
  spdlog::info("myriad client: {} {} authenticated as connection {}", to_string(options.self.role),
               options.self.id, conn_id);
  if (callbacks.on_connected) callbacks.on_connected(conn_id);
}

void ClientState::session_ended(ClientSession* s, const std::string& reason, bool was_authenticated,
                                bool is_fatal) {
  auto keep = session;  // `s` may be the last owner's object: keep it alive until we return
  if (session.get() == s) session.reset();
  if (was_authenticated) {
    {
      std::lock_guard<std::mutex> lock(mu);
      connected = false;
    }
    disconnects++;
    if (callbacks.on_disconnected) callbacks.on_disconnected(reason);
  }
  if (stopping) {
    io.stop();
    return;
  }
  if (is_fatal) {
    spdlog::error("myriad client: {}; giving up (check the shared secret)", reason);
    {
      std::lock_guard<std::mutex> lock(mu);
      fatal = true;
    }
    cv.notify_all();
    if (callbacks.on_fatal) callbacks.on_fatal(reason);
    return;
  }
  schedule_retry(reason);
}

struct Client::Impl : ClientState {
  using ClientState::ClientState;
};

Client::Client(std::string secret, ClientOptions options, ClientCallbacks callbacks)
    : impl_(std::make_unique<Impl>(std::move(secret), std::move(options), std::move(callbacks))) {
  // Fail early on a bad id rather than on the I/O thread.
  if (!valid_peer_id(impl_->options.self.id))
    throw std::invalid_argument("invalid client id '" + impl_->options.self.id +
                                "': 1 to 64 characters of A-Z a-z 0-9 . _ : -");
}

Client::~Client() { stop(); }

void Client::start() {
  Impl& c = *impl_;
  if (c.started) throw std::logic_error("myriad client: start() called twice");
  c.started = true;
  asio::post(c.io, [&c] { c.connect(); });
  c.thread = std::thread([&c] {
    // Keep running while nothing is pending (e.g. after a fatal rejection) until stop().
    auto guard = asio::make_work_guard(c.io);
    c.io.run();
  });
}

void Client::stop() {
  Impl& c = *impl_;
  if (!c.started || c.stopped) return;
  c.stopped = true;
  asio::post(c.io, [&c] {
    c.stopping = true;
    c.retry_timer.cancel();
    if (c.connecting) {
      boost::system::error_code ignored;
      c.connecting->close(ignored);
    }
    if (c.session && c.session->authenticated() && !c.session->is_closing()) {
      // A goodbye the server can log, then our half of the close; session_ended stops io.
      c.session->send(Frame{FrameType::Bye, {}});
      c.session->close_after_flush("client stopping", std::chrono::milliseconds(500));
    } else {
      if (c.session) c.session->close("client stopping");
      c.io.stop();
    }
  });
  if (c.thread.joinable()) c.thread.join();
  c.connected = false;
}

bool Client::send(FrameType type, std::string_view payload) {
  Impl& c = *impl_;
  if (!c.connected) return false;
  auto bytes = std::make_shared<const std::string>(encode(type, payload, c.options.max_payload));
  asio::post(c.io, [&c, bytes = std::move(bytes)] {
    if (c.session && c.session->authenticated() && !c.session->is_closing())
      c.session->send_encoded(bytes);
  });
  return true;
}

bool Client::connected() const { return impl_->connected; }
bool Client::failed() const { return impl_->fatal; }

bool Client::wait_connected(std::chrono::milliseconds timeout) const {
  Impl& c = *impl_;
  std::unique_lock<std::mutex> lock(c.mu);
  c.cv.wait_for(lock, timeout, [&c] { return c.connected.load() || c.fatal.load(); });
  return c.connected;
}

ClientCounters Client::counters() const {
  ClientCounters out;
#define X(name) out.name = impl_->name.load();
  MYRIAD_CLIENT_COUNTERS(X)
#undef X
  return out;
}

}  // namespace myriad::server
