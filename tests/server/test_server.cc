// The server and client over real loopback sockets: honest exchange, wrong secrets, hostile
// bytes next to an honest client, timeouts, the connection cap, reconnection after a restart.
// Every wait is on a condition with a deadline; nothing sleeps and hopes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/client.h"
#include "server/handshake.h"
#include "server/server.h"

namespace myriad::server {
namespace {

using namespace std::chrono_literals;

const std::string kSecret = "test-secret-0123456789abcdef";

// Polls `pred` until it holds or `timeout` passes.
bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// A blocking socket that can send anything: the hostile peer.
class RawPeer {
 public:
  explicit RawPeer(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawPeer() { ::close(fd_); }
  bool connected() const { return connected_; }

  bool send_bytes(const std::string& bytes) {
    size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<size_t>(n);
    }
    return true;
  }
  bool send_frame(FrameType type, const std::string& payload) {
    return send_bytes(encode(type, payload));
  }
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }

  // The next frame, or nothing if the connection closed (or 5 s passed).
  std::optional<Frame> read_frame() {
    Frame f;
    for (;;) {
      const auto status = decoder_.next(f);
      if (status == FrameDecoder::Status::Frame) return f;
      if (status == FrameDecoder::Status::Error) return std::nullopt;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return std::nullopt;
      decoder_.feed(buf, static_cast<size_t>(n));
    }
  }

  // True once the server has closed the connection (reads return EOF or reset), discarding
  // what comes before; false if it is still open after 5 s.
  bool wait_closed() {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET || errno == EPIPE;
      decoder_.feed(buf, static_cast<size_t>(n));
    }
  }

  // Runs the client side of the handshake. Returns the outcome.
  HandshakeOutcome authenticate(const std::string& secret, const std::string& id = "raw") {
    handshake_.emplace(secret, Peer{Role::Actor, id}, random_nonce());
    send_frame(FrameType::Hello, handshake_->hello().payload);
    for (;;) {
      auto f = read_frame();
      if (!f) return HandshakeOutcome::ProtocolError;
      HandshakeStep step = handshake_->on_frame(*f);
      for (const auto& r : step.replies) send_frame(r.type, r.payload);
      if (step.outcome != HandshakeOutcome::Continue) return step.outcome;
    }
  }
  RejectCode reject_code() const { return handshake_->reject_code(); }

 private:
  int fd_ = -1;
  bool connected_ = false;
  FrameDecoder decoder_;
  std::optional<ClientHandshake> handshake_;
};

// A server that records what it receives and echoes each Chunk back to its sender as Weights.
class Harness {
 public:
  explicit Harness(ServerOptions options = {}, std::string secret = kSecret) {
    ServerCallbacks cb;
    cb.on_connect = [this](uint64_t conn, const Peer& peer) {
      std::lock_guard<std::mutex> lock(mu_);
      peers_.push_back(peer.id);
      last_conn_ = conn;
    };
    cb.on_frame = [this](uint64_t conn, Frame&& frame) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        frames_.push_back(frame);
      }
      if (frame.type == FrameType::Chunk) server->send(conn, FrameType::Weights, frame.payload);
    };
    cb.on_disconnect = [this](uint64_t, const std::string& reason) {
      std::lock_guard<std::mutex> lock(mu_);
      disconnects_.push_back(reason);
    };
    server = std::make_unique<Server>(secret, options, cb);
    server->start();
  }
  // Stop first: the server's thread calls back into the members below until it is joined.
  ~Harness() { server->stop(); }
  uint16_t port() const { return server->port(); }
  std::vector<Frame> frames() const {
    std::lock_guard<std::mutex> lock(mu_);
    return frames_;
  }
  size_t frame_count() const { return frames().size(); }
  std::vector<std::string> disconnects() const {
    std::lock_guard<std::mutex> lock(mu_);
    return disconnects_;
  }
  std::vector<std::string> peers() const {
    std::lock_guard<std::mutex> lock(mu_);
    return peers_;
  }

  std::unique_ptr<Server> server;

 private:
  mutable std::mutex mu_;
  std::vector<Frame> frames_;
  std::vector<std::string> disconnects_;
  std::vector<std::string> peers_;
  uint64_t last_conn_ = 0;
};

// A Client that records what it receives.
class Actor {
 public:
  Actor(uint16_t port, const std::string& id, std::string secret = kSecret,
        std::function<void(ClientOptions&)> tweak = {}) {
    ClientOptions options;
    options.port = port;
    options.self = Peer{Role::Actor, id};
    options.heartbeat_interval = 50ms;
    options.backoff_initial = 10ms;
    options.backoff_max = 100ms;
    options.jitter_seed = 7;
    if (tweak) tweak(options);
    ClientCallbacks cb;
    cb.on_connected = [this](uint64_t) { connects++; };
    cb.on_frame = [this](Frame&& f) {
      std::lock_guard<std::mutex> lock(mu);
      received.push_back(std::move(f));
    };
    cb.on_disconnected = [this](const std::string&) { disconnects++; };
    cb.on_fatal = [this](const std::string& reason) {
      std::lock_guard<std::mutex> lock(mu);
      fatal_reason = reason;
    };
    client = std::make_unique<Client>(std::move(secret), options, cb);
    client->start();
  }
  ~Actor() { client->stop(); }
  size_t received_count() {
    std::lock_guard<std::mutex> lock(mu);
    return received.size();
  }
  // Sends a Chunk and waits for the server's echo.
  bool round_trip(const std::string& payload) {
    const size_t before = received_count();
    if (!client->send(FrameType::Chunk, payload)) return false;
    return wait_until([&] {
      std::lock_guard<std::mutex> lock(mu);
      for (size_t i = before; i < received.size(); ++i)
        if (received[i].payload == payload) return true;
      return false;
    });
  }

  std::unique_ptr<Client> client;
  std::mutex mu;
  std::vector<Frame> received;
  std::string fatal_reason;
  std::atomic<int> connects{0};
  std::atomic<int> disconnects{0};
};

TEST(ServerSockets, ListensOnLoopbackByDefault) {
  EXPECT_EQ(ServerOptions{}.host, "127.0.0.1");
  EXPECT_EQ(ClientOptions{}.host, "127.0.0.1");
}

TEST(ServerSockets, HonestClientsExchangeFrames) {
  Harness h;
  Actor a(h.port(), "actor-a"), b(h.port(), "actor-b");
  ASSERT_TRUE(a.client->wait_connected(5s));
  ASSERT_TRUE(b.client->wait_connected(5s));
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(a.client->send(FrameType::Chunk, "a" + std::to_string(i)));
    ASSERT_TRUE(b.client->send(FrameType::MatchResult, "b" + std::to_string(i)));
  }
  ASSERT_TRUE(wait_until([&] { return h.frame_count() == 100; }));
  ASSERT_TRUE(wait_until([&] { return a.received_count() == 50; }));
  // Per-connection order is kept.
  int next_a = 0, next_b = 0;
  for (const auto& f : h.frames()) {
    if (f.type == FrameType::Chunk) EXPECT_EQ(f.payload, "a" + std::to_string(next_a++));
    if (f.type == FrameType::MatchResult) EXPECT_EQ(f.payload, "b" + std::to_string(next_b++));
  }
  for (int i = 0; i < 50; ++i) EXPECT_EQ(a.received[i].payload, "a" + std::to_string(i));

  h.server->broadcast(FrameType::Weights, std::string(100000, 'w'));
  ASSERT_TRUE(wait_until([&] { return a.received_count() == 51 && b.received_count() == 1; }));
  EXPECT_EQ(b.received[0].payload.size(), 100000u);

  const ServerCounters c = h.server->counters();
  EXPECT_EQ(c.authenticated, 2u);
  EXPECT_EQ(c.rejected_auth + c.malformed + c.oversized + c.timed_out, 0u);
  EXPECT_EQ(h.server->authenticated_connections(), 2u);
  EXPECT_GE(c.frames_in, 100u + 4u);  // data plus two Hello/Response pairs
  EXPECT_GT(c.bytes_in, 0u);
  EXPECT_GT(c.bytes_out, 200000u);
  auto peers = h.peers();
  std::sort(peers.begin(), peers.end());
  EXPECT_EQ(peers, (std::vector<std::string>{"actor-a", "actor-b"}));

  // stop() says Bye; the server sees a clean disconnect.
  a.client->stop();
  ASSERT_TRUE(wait_until([&] { return h.disconnects().size() == 1; }));
  EXPECT_EQ(h.disconnects()[0], "bye");
  EXPECT_TRUE(b.round_trip("still here"));
}

TEST(ServerSockets, WrongSecretGetsNothingIn) {
  Harness h;
  RawPeer raw(h.port());
  ASSERT_TRUE(raw.connected());
  EXPECT_EQ(raw.authenticate("wrong-secret-0123456789abcdef"), HandshakeOutcome::Rejected);
  EXPECT_EQ(raw.reject_code(), RejectCode::AuthFailed);
  // Whatever it sends next is never delivered, and the server closes the connection.
  raw.send_frame(FrameType::Chunk, "let me in");
  EXPECT_TRUE(raw.wait_closed());
  EXPECT_TRUE(wait_until([&] { return h.server->open_connections() == 0; }));

  // The Client gives up at once instead of retrying a wrong secret.
  Actor bad(h.port(), "bad", "wrong-secret-0123456789abcdef");
  ASSERT_TRUE(wait_until([&] { return bad.client->failed(); }));
  EXPECT_FALSE(bad.client->connected());
  EXPECT_FALSE(bad.client->send(FrameType::Chunk, "x"));
  EXPECT_EQ(bad.client->counters().connect_attempts, 1u);

  const ServerCounters c = h.server->counters();
  EXPECT_EQ(c.rejected_auth, 2u);
  EXPECT_EQ(c.authenticated, 0u);
  EXPECT_EQ(h.frame_count(), 0u);
  EXPECT_TRUE(h.peers().empty());
}

TEST(ServerSockets, DataBeforeTheHandshakeIsRefused) {
  Harness h;
  RawPeer raw(h.port());
  raw.send_frame(FrameType::Chunk, "sneaky");
  EXPECT_TRUE(raw.wait_closed());
  EXPECT_TRUE(wait_until([&] { return h.server->counters().malformed == 1; }));
  EXPECT_EQ(h.frame_count(), 0u);
}

// Hostile peers, each next to an honest actor that must keep exchanging frames throughout.
class ServerHostilePeer : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.max_payload = 1 << 20;
    h = std::make_unique<Harness>(options);
    honest = std::make_unique<Actor>(h->port(), "honest", kSecret,
                                     [](ClientOptions& o) { o.max_payload = 1 << 20; });
    ASSERT_TRUE(honest->client->wait_connected(5s));
    // The honest actor streams in the background for the whole test.
    pump_ = std::thread([this] {
      int i = 0;
      while (!stop_) {
        if (honest->client->send(FrameType::Chunk, "bg" + std::to_string(i))) ++i;
        std::this_thread::sleep_for(1ms);
      }
    });
  }
  void TearDown() override {
    stop_ = true;
    if (pump_.joinable()) pump_.join();
    // The honest actor never noticed anything.
    EXPECT_TRUE(honest->round_trip("after"));
    EXPECT_EQ(honest->disconnects.load(), 0);
    EXPECT_EQ(honest->connects.load(), 1);
    EXPECT_EQ(h->server->authenticated_connections(), 1u);
    for (const auto& f : h->frames()) EXPECT_EQ(f.type, FrameType::Chunk);
  }
  // The hostile connection is closed, the counter moved, nothing of its got delivered.
  void expect_refused(RawPeer& raw, uint64_t ServerCounters::*counter) {
    EXPECT_TRUE(raw.wait_closed());
    EXPECT_TRUE(wait_until([&] { return h->server->counters().*counter == 1; }));
    for (const auto& f : h->frames()) EXPECT_EQ(f.payload.rfind("bg", 0), 0u) << f.payload;
    EXPECT_TRUE(honest->round_trip("during"));
  }

  std::unique_ptr<Harness> h;
  std::unique_ptr<Actor> honest;
  std::atomic<bool> stop_{false};
  std::thread pump_;
};

TEST_F(ServerHostilePeer, GarbageBytes) {
  RawPeer raw(h->port());
  raw.send_bytes("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
  expect_refused(raw, &ServerCounters::malformed);
}

TEST_F(ServerHostilePeer, GarbageAfterAuthenticating) {
  RawPeer raw(h->port());
  ASSERT_EQ(raw.authenticate(kSecret, "flaky"), HandshakeOutcome::Authenticated);
  raw.send_frame(FrameType::Chunk, "bad-but-valid");  // delivered: it is a valid frame
  raw.send_bytes(std::string(100, '\xAB'));
  EXPECT_TRUE(raw.wait_closed());
  EXPECT_TRUE(wait_until([&] { return h->server->counters().malformed == 1; }));
  EXPECT_TRUE(honest->round_trip("during"));
  // Stop TearDown from tripping on the one valid frame of the flaky peer.
  EXPECT_TRUE(wait_until([&] { return h->disconnects().size() == 1; }));
}

TEST_F(ServerHostilePeer, TruncatedFrameThenClose) {
  RawPeer raw(h->port());
  ASSERT_EQ(raw.authenticate(kSecret, "torn"), HandshakeOutcome::Authenticated);
  const std::string frame = encode(FrameType::Chunk, "torn-payload");
  raw.send_bytes(frame.substr(0, frame.size() - 4));
  raw.shutdown_write();
  expect_refused(raw, &ServerCounters::malformed);
  EXPECT_TRUE(wait_until([&] { return h->disconnects().size() == 1; }));
  EXPECT_EQ(h->disconnects()[0], "closed mid-frame");
}

TEST_F(ServerHostilePeer, OversizedLengthHeader) {
  RawPeer raw(h->port());
  ASSERT_EQ(raw.authenticate(kSecret, "huge"), HandshakeOutcome::Authenticated);
  std::string header = encode(FrameType::Chunk, "").substr(0, kHeaderSize);
  const uint32_t huge = 0xFFFFFFF0u;
  for (int i = 0; i < 4; ++i) header[8 + i] = static_cast<char>((huge >> (8 * i)) & 0xFF);
  raw.send_bytes(header);
  expect_refused(raw, &ServerCounters::oversized);
}

TEST_F(ServerHostilePeer, OversizedBeforeAuthenticating) {
  RawPeer raw(h->port());
  // Under the 1 MiB limit of authenticated peers, over what a handshake frame may be.
  std::string header = encode(FrameType::Hello, "").substr(0, kHeaderSize);
  const uint32_t over = kMaxHandshakePayload + 1;
  for (int i = 0; i < 4; ++i) header[8 + i] = static_cast<char>((over >> (8 * i)) & 0xFF);
  raw.send_bytes(header);
  expect_refused(raw, &ServerCounters::oversized);
}

TEST_F(ServerHostilePeer, BadChecksum) {
  RawPeer raw(h->port());
  ASSERT_EQ(raw.authenticate(kSecret, "crc"), HandshakeOutcome::Authenticated);
  std::string frame = encode(FrameType::Chunk, "flipped");
  frame[kHeaderSize] ^= 0x01;
  raw.send_bytes(frame);
  expect_refused(raw, &ServerCounters::malformed);
}

TEST_F(ServerHostilePeer, HandshakeFrameAfterTheHandshake) {
  RawPeer raw(h->port());
  ASSERT_EQ(raw.authenticate(kSecret, "again"), HandshakeOutcome::Authenticated);
  raw.send_frame(FrameType::Hello, "again");
  expect_refused(raw, &ServerCounters::malformed);
}

TEST_F(ServerHostilePeer, ManyAtOnce) {
  std::vector<std::unique_ptr<RawPeer>> raws;
  for (int i = 0; i < 8; ++i) {
    raws.push_back(std::make_unique<RawPeer>(h->port()));
    raws.back()->send_bytes(std::string(1 + i * 13, static_cast<char>(i * 31)));
  }
  for (auto& raw : raws) EXPECT_TRUE(raw->wait_closed());
  EXPECT_TRUE(wait_until([&] { return h->server->counters().malformed == 8; }));
  EXPECT_TRUE(honest->round_trip("during"));
}

TEST(ServerSockets, HandshakeAndIdleTimeouts) {
  ServerOptions options;
  options.handshake_timeout = 200ms;
  options.idle_timeout = 300ms;
  Harness h(options);
  // Connects and says nothing.
  RawPeer mute(h.port());
  // Authenticates, then says nothing.
  RawPeer idle(h.port());
  ASSERT_EQ(idle.authenticate(kSecret, "idle"), HandshakeOutcome::Authenticated);
  // Heartbeats every 50 ms keep an honest actor in.
  Actor alive(h.port(), "alive");
  ASSERT_TRUE(alive.client->wait_connected(5s));

  auto reject = mute.read_frame();
  ASSERT_TRUE(reject.has_value());
  EXPECT_EQ(reject->type, FrameType::Reject);
  EXPECT_EQ(static_cast<RejectCode>(reject->payload[0]), RejectCode::Timeout);
  EXPECT_TRUE(mute.wait_closed());
  EXPECT_TRUE(idle.wait_closed());
  EXPECT_TRUE(wait_until([&] { return h.server->counters().timed_out == 2; }));
  EXPECT_TRUE(wait_until([&] { return h.disconnects().size() == 1; }));
  EXPECT_EQ(h.disconnects()[0], "idle timeout");
  // The honest actor outlived both deadlines several times over.
  EXPECT_TRUE(wait_until([&] { return alive.client->counters().frames_out >= 20; }));
  EXPECT_TRUE(alive.round_trip("alive"));
  EXPECT_EQ(alive.disconnects.load(), 0);
}

TEST(ServerSockets, APeerThatDoesNotReadIsClosedAlone) {
  ServerOptions options;
  options.max_queued_bytes = 1 << 20;
  Harness h(options);
  RawPeer deaf(h.port());
  ASSERT_EQ(deaf.authenticate(kSecret, "deaf"), HandshakeOutcome::Authenticated);
  Actor reader(h.port(), "reader");
  ASSERT_TRUE(reader.client->wait_connected(5s));
  // Paced broadcasts: the reader keeps up, the deaf peer's queue grows past the limit once
  // the kernel's socket buffers are full.
  const std::string weights(256 << 10, 'w');
  size_t sent = 0;
  while (h.server->counters().slow == 0 && sent < 400) {
    h.server->broadcast(FrameType::Weights, weights);
    ++sent;
    ASSERT_TRUE(wait_until([&] { return reader.received_count() == sent; }));
  }
  EXPECT_EQ(h.server->counters().slow, 1u);
  EXPECT_TRUE(deaf.wait_closed());
  EXPECT_TRUE(reader.round_trip("still reading"));
  EXPECT_EQ(reader.disconnects.load(), 0);
}

TEST(ServerSockets, ConnectionCap) {
  ServerOptions options;
  options.max_connections = 2;
  Harness h(options);
  auto first = std::make_unique<RawPeer>(h.port());
  RawPeer second(h.port());
  ASSERT_EQ(first->authenticate(kSecret, "one"), HandshakeOutcome::Authenticated);
  ASSERT_EQ(second.authenticate(kSecret, "two"), HandshakeOutcome::Authenticated);
  RawPeer third(h.port());
  auto reject = third.read_frame();
  ASSERT_TRUE(reject.has_value());
  EXPECT_EQ(reject->type, FrameType::Reject);
  EXPECT_EQ(static_cast<RejectCode>(reject->payload[0]), RejectCode::ServerFull);
  EXPECT_TRUE(third.wait_closed());
  EXPECT_EQ(h.server->counters().refused_full, 1u);
  EXPECT_EQ(h.server->counters().accepted, 2u);
  // A slot frees up when one leaves.
  first.reset();
  ASSERT_TRUE(wait_until([&] { return h.server->open_connections() == 1; }));
  RawPeer fourth(h.port());
  EXPECT_EQ(fourth.authenticate(kSecret, "four"), HandshakeOutcome::Authenticated);
}

// Anyone who can reach the port can open connections and never say Hello. Held open by the
// thousand, they must not keep a real actor out: pending handshakes have their own pool, where
// the oldest is evicted for a newcomer, and authenticated slots are not theirs to take.
TEST(ServerSockets, AFloodOfUnauthenticatedConnectionsCannotKeepAnActorOut) {
  constexpr int kFlood = 1000;
  // This process holds both ends' descriptors (the flood's and the server's).
  rlimit lim{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &lim), 0);
  const rlim_t want = 3 * kFlood + 256;
  if (lim.rlim_cur < want) {
    lim.rlim_cur = std::min(want, lim.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &lim), 0);
  if (lim.rlim_cur < want) GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << lim.rlim_max;

  ServerOptions options;
  options.handshake_timeout = 60s;  // the flood is not timed out: eviction alone must do
  Harness h(options);
  std::vector<std::unique_ptr<RawPeer>> flood;
  for (int i = 0; i < kFlood; ++i) {
    flood.push_back(std::make_unique<RawPeer>(h.port()));
    ASSERT_TRUE(flood.back()->connected()) << i;
  }
  // Every one of them was taken in (none refused at a cap), and at most the pending pool holds.
  ASSERT_TRUE(wait_until([&] { return h.server->counters().accepted == kFlood; }, 10s));
  EXPECT_LE(h.server->pending_connections(), options.max_pending_handshakes);
  EXPECT_EQ(h.server->counters().refused_full, 0u);
  EXPECT_GE(h.server->counters().evicted, kFlood - options.max_pending_handshakes);

  // A real actor, while the flood is held open: connected and authenticated within 10 s.
  const auto start = std::chrono::steady_clock::now();
  Actor actor(h.port(), "real");
  ASSERT_TRUE(actor.client->wait_connected(10s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_TRUE(actor.round_trip("through the flood"));

  // More strangers keep coming while it works: it stays in, and a second actor gets in too.
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    std::vector<std::unique_ptr<RawPeer>> more;
    for (int i = 0; i < kFlood && !stop; ++i) more.push_back(std::make_unique<RawPeer>(h.port()));
  });
  Actor second(h.port(), "second");
  EXPECT_TRUE(second.client->wait_connected(10s));
  stop = true;
  churn.join();
  EXPECT_TRUE(actor.round_trip("after the churn"));
  EXPECT_EQ(actor.disconnects.load(), 0);
  EXPECT_EQ(h.server->authenticated_connections(), 2u);
}

// The authenticated pool is capped apart from the pending one: a peer that proves itself when
// it is full gets Reject ServerFull instead of Welcome.
TEST(ServerSockets, AuthenticatingIntoAFullPoolIsRefused) {
  ServerOptions options;
  options.max_connections = 1;
  Harness h(options);
  RawPeer first(h.port()), second(h.port());  // both admitted while nobody is authenticated
  ASSERT_EQ(first.authenticate(kSecret, "one"), HandshakeOutcome::Authenticated);
  EXPECT_EQ(second.authenticate(kSecret, "two"), HandshakeOutcome::Rejected);
  EXPECT_EQ(second.reject_code(), RejectCode::ServerFull);
  EXPECT_EQ(h.server->authenticated_connections(), 1u);
}

TEST(ServerSockets, ClientReconnectsAfterARestartOnTheSamePort) {
  auto h = std::make_unique<Harness>();
  const uint16_t port = h->port();
  Actor actor(port, "phoenix");
  ASSERT_TRUE(actor.client->wait_connected(5s));
  ASSERT_TRUE(actor.round_trip("before"));

  h.reset();  // the server goes away
  ASSERT_TRUE(wait_until([&] { return !actor.client->connected(); }));
  EXPECT_EQ(actor.disconnects.load(), 1);
  // It keeps retrying (backoff) while nothing listens.
  ASSERT_TRUE(wait_until([&] { return actor.client->counters().connect_attempts >= 3; }));

  ServerOptions options;
  options.port = port;
  Harness again(options);
  ASSERT_EQ(again.port(), port);
  ASSERT_TRUE(actor.client->wait_connected(5s));
  EXPECT_TRUE(actor.round_trip("after"));
  EXPECT_EQ(actor.connects.load(), 2);
  EXPECT_EQ(actor.client->counters().authenticated, 2u);
  EXPECT_FALSE(actor.client->failed());
}

TEST(ServerSockets, StopClosesEveryConnection) {
  Harness h;
  Actor a(h.port(), "a");
  ASSERT_TRUE(a.client->wait_connected(5s));
  h.server->stop();
  ASSERT_TRUE(wait_until([&] { return !a.client->connected(); }));
  EXPECT_EQ(h.disconnects().size(), 1u);
  EXPECT_NO_THROW(h.server->stop());  // idempotent
}

TEST(ServerSockets, BindFailureNamesTheAddress) {
  Harness h;
  ServerOptions options;
  options.port = h.port();
  Server clash(kSecret, options, {});
  // SO_REUSEADDR does not let two listeners share a port.
  try {
    clash.start();
    FAIL() << "expected a bind error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(h.port())),
              std::string::npos)
        << e.what();
  }
}

TEST(ServerClient, BackoffGrowsIsCappedAndJittered) {
  const auto d = [](int retry, double unit) {
    return backoff_delay(100ms, 5000ms, retry, unit).count();
  };
  EXPECT_EQ(d(0, 0.0), 50);
  EXPECT_EQ(d(0, 1.0), 100);
  EXPECT_EQ(d(1, 1.0), 200);
  EXPECT_EQ(d(3, 1.0), 800);
  EXPECT_EQ(d(10, 1.0), 5000);
  EXPECT_EQ(d(1000, 1.0), 5000);
  EXPECT_EQ(d(1000, 0.0), 2500);
  for (int r = 0; r < 20; ++r) EXPECT_LE(d(r, 0.3), d(r, 0.7));
}

TEST(ServerClient, RejectsAnInvalidId) {
  ClientOptions options;
  options.self.id = "no spaces";
  EXPECT_THROW(Client(kSecret, options, {}), std::invalid_argument);
}

}  // namespace
}  // namespace myriad::server
