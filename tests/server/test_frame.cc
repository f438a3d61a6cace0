// The frame codec, secret loading, HMAC and the handshake state machines, without sockets.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "myriad/crc32c.h"
#include "server/auth.h"
#include "server/frame.h"
#include "server/handshake.h"
#include "tests/temp_dir.h"

namespace myriad::server {
namespace {

using Status = FrameDecoder::Status;

const std::string kSecret = "0123456789abcdef0123456789abcdef";

uint32_t u32_at(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

void set_u32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

TEST(ServerFrame, HeaderLayout) {
  const std::string bytes = encode(FrameType::Chunk, "hello");
  ASSERT_EQ(bytes.size(), kHeaderSize + 5);
  EXPECT_EQ(bytes.substr(0, 4), "MYRD");
  EXPECT_EQ(static_cast<uint8_t>(bytes[4]), kVersion);
  EXPECT_EQ(static_cast<uint8_t>(bytes[5]), static_cast<uint8_t>(FrameType::Chunk));
  EXPECT_EQ(bytes[6], 0);
  EXPECT_EQ(bytes[7], 0);
  EXPECT_EQ(u32_at(bytes, 8), 5u);
  EXPECT_EQ(u32_at(bytes, 12), crc32c("hello", 5));
  EXPECT_EQ(bytes.substr(16), "hello");
}

TEST(ServerFrame, Crc32cKnownValue) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  EXPECT_EQ(crc32c_portable("123456789", 9), 0xE3069283u);
  // The hardware path equals the table at every length and alignment.
  std::string bytes(300, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 + 7);
  for (size_t offset = 0; offset < 8; ++offset)
    for (size_t n = 0; offset + n <= bytes.size(); n += 1 + n / 8)
      ASSERT_EQ(crc32c(bytes.data() + offset, n), crc32c_portable(bytes.data() + offset, n))
          << "offset " << offset << " length " << n;
}

TEST(ServerFrame, RoundTripEveryTypeFedByteByByte) {
  std::string stream;
  for (uint8_t t = 1; t <= kMaxFrameType; ++t)
    stream += encode(static_cast<FrameType>(t), std::string(t * 7, static_cast<char>('a' + t)));
  stream += encode(FrameType::Heartbeat, "");
  FrameDecoder decoder;
  std::vector<Frame> frames;
  for (const char c : stream) {
    decoder.feed(&c, 1);
    Frame f;
    while (decoder.next(f) == Status::Frame) frames.push_back(f);
  }
  ASSERT_EQ(frames.size(), kMaxFrameType + 1u);
  for (uint8_t t = 1; t <= kMaxFrameType; ++t) {
    EXPECT_EQ(frames[t - 1].type, static_cast<FrameType>(t));
    EXPECT_EQ(frames[t - 1].payload, std::string(t * 7, static_cast<char>('a' + t)));
  }
  EXPECT_EQ(frames.back().type, FrameType::Heartbeat);
  EXPECT_TRUE(frames.back().payload.empty());
  EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(ServerFrame, EverySplitPointOfTwoFrames) {
  const std::string stream = encode(FrameType::Chunk, "first") + encode(FrameType::Weights, "2nd");
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    FrameDecoder decoder;
    std::vector<Frame> frames;
    Frame f;
    decoder.feed(stream.data(), cut);
    while (decoder.next(f) == Status::Frame) frames.push_back(f);
    decoder.feed(stream.data() + cut, stream.size() - cut);
    while (decoder.next(f) == Status::Frame) frames.push_back(f);
    ASSERT_EQ(frames.size(), 2u) << "cut " << cut;
    EXPECT_EQ(frames[0].payload, "first");
    EXPECT_EQ(frames[1].type, FrameType::Weights);
    EXPECT_EQ(frames[1].payload, "2nd");
  }
}

DecodeError decode_error_of(const std::string& bytes, uint32_t max_payload = kDefaultMaxPayload) {
  FrameDecoder decoder(max_payload);
  decoder.feed(bytes.data(), bytes.size());
  Frame f;
  Status s;
  while ((s = decoder.next(f)) == Status::Frame) {
  }
  return s == Status::Error ? decoder.error() : DecodeError::None;
}

TEST(ServerFrame, GarbageFailsOnItsFirstByte) {
  FrameDecoder decoder;
  decoder.feed("G", 1);
  Frame f;
  EXPECT_EQ(decoder.next(f), Status::Error);
  EXPECT_EQ(decoder.error(), DecodeError::BadMagic);
  EXPECT_EQ(decode_error_of("GET / HTTP/1.1\r\n\r\n"), DecodeError::BadMagic);
  EXPECT_EQ(decode_error_of("MYRX"), DecodeError::BadMagic);
}

TEST(ServerFrame, PreciseHeaderErrors) {
  const std::string good = encode(FrameType::Chunk, "payload");
  std::string bad = good;
  bad[4] = 2;
  EXPECT_EQ(decode_error_of(bad), DecodeError::BadVersion);
  bad = good;
  bad[5] = 0;
  EXPECT_EQ(decode_error_of(bad), DecodeError::UnknownType);
  bad[5] = static_cast<char>(kMaxFrameType + 1);
  EXPECT_EQ(decode_error_of(bad), DecodeError::UnknownType);
  bad = good;
  bad[7] = 1;
  EXPECT_EQ(decode_error_of(bad), DecodeError::BadReserved);
  bad = good;
  bad[kHeaderSize + 3] ^= 0x10;
  EXPECT_EQ(decode_error_of(bad), DecodeError::BadChecksum);
  bad = good;
  bad[13] ^= 0x01;
  EXPECT_EQ(decode_error_of(bad), DecodeError::BadChecksum);
}

TEST(ServerFrame, OversizedLengthRefusedFromTheHeaderAlone) {
  std::string header = encode(FrameType::Chunk, "").substr(0, kHeaderSize);
  set_u32(header, 8, 1001);
  FrameDecoder decoder(1000);
  decoder.feed(header.data(), header.size());
  Frame f;
  EXPECT_EQ(decoder.next(f), Status::Error);
  EXPECT_EQ(decoder.error(), DecodeError::TooLong);
  set_u32(header, 8, 0xFFFFFFFFu);
  EXPECT_EQ(decode_error_of(header), DecodeError::TooLong);
  // Exactly the limit is fine.
  EXPECT_EQ(decode_error_of(encode(FrameType::Chunk, std::string(1000, 'x'), 1000), 1000),
            DecodeError::None);
  EXPECT_THROW(encode(FrameType::Chunk, std::string(1001, 'x'), 1000), std::length_error);
}

TEST(ServerFrame, TheLimitCanBeRaisedMidStream) {
  const std::string stream =
      encode(FrameType::Hello, "small") + encode(FrameType::Chunk, std::string(600, 'c'));
  FrameDecoder decoder(kMaxHandshakePayload);
  decoder.feed(stream.data(), stream.size());
  Frame f;
  ASSERT_EQ(decoder.next(f), Status::Frame);
  decoder.set_max_payload(1 << 20);  // authenticated
  ASSERT_EQ(decoder.next(f), Status::Frame);
  EXPECT_EQ(f.payload.size(), 600u);
  FrameDecoder strict(kMaxHandshakePayload);
  strict.feed(stream.data(), stream.size());
  ASSERT_EQ(strict.next(f), Status::Frame);
  EXPECT_EQ(strict.next(f), Status::Error);
  EXPECT_EQ(strict.error(), DecodeError::TooLong);
}

TEST(ServerFrame, ErrorsAreSticky) {
  FrameDecoder decoder;
  decoder.feed("XXXX", 4);
  Frame f;
  EXPECT_EQ(decoder.next(f), Status::Error);
  const std::string good = encode(FrameType::Chunk, "ok");
  decoder.feed(good.data(), good.size());
  EXPECT_EQ(decoder.next(f), Status::Error);
  EXPECT_EQ(decoder.error(), DecodeError::BadMagic);
}

TEST(ServerFrame, TornFrameLeavesBufferedBytes) {
  const std::string good = encode(FrameType::Chunk, "0123456789");
  FrameDecoder decoder;
  decoder.feed(good.data(), good.size() - 3);
  Frame f;
  EXPECT_EQ(decoder.next(f), Status::NeedMore);
  EXPECT_EQ(decoder.buffered(), good.size() - 3);
}

TEST(ServerFrame, Names) {
  EXPECT_STREQ(to_string(FrameType::MatchResult), "MatchResult");
  EXPECT_STREQ(to_string(static_cast<FrameType>(99)), "unknown");
  EXPECT_STREQ(to_string(DecodeError::TooLong), "payload length over the limit");
}

// ---- secrets ----

std::string write_file(const testing_util::TempDir& dir, const std::string& name,
                       const std::string& content, mode_t mode) {
  const std::string path = dir.file(name);
  std::ofstream(path) << content;
  chmod(path.c_str(), mode);
  return path;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const AuthError& e) {
    return e.what();
  }
  return "";
}

TEST(ServerSecret, FromAPrivateFile) {
  testing_util::TempDir dir("secret");
  EXPECT_EQ(load_secret_file(write_file(dir, "s", kSecret + "\n", 0600)), kSecret);
  EXPECT_EQ(load_secret_file(write_file(dir, "crlf", kSecret + "\r\n", 0400)), kSecret);
  EXPECT_EQ(load_secret(write_file(dir, "plain", kSecret, 0600), ""), kSecret);
}

TEST(ServerSecret, RefusesFilesOthersCanRead) {
  testing_util::TempDir dir("secret");
  for (const mode_t mode : {0644, 0640, 0604, 0660, 0602}) {
    const std::string path = write_file(dir, "open" + std::to_string(mode), kSecret, mode);
    const std::string msg = error_of([&] { load_secret_file(path); });
    EXPECT_NE(msg.find("too open"), std::string::npos) << msg;
    EXPECT_NE(msg.find("chmod 600"), std::string::npos) << msg;
    EXPECT_EQ(msg.find(kSecret), std::string::npos) << "the message must not show the secret";
  }
}

TEST(ServerSecret, RefusesMissingEmptyShortAndDirectories) {
  testing_util::TempDir dir("secret");
  EXPECT_NE(error_of([&] { load_secret_file(dir.file("missing")); }).find("cannot open"),
            std::string::npos);
  EXPECT_NE(error_of([&] { load_secret_file(write_file(dir, "empty", "\n", 0600)); }).find("empty"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              load_secret_file(write_file(dir, "short", "abc", 0600));
            }).find("at least 16"),
            std::string::npos);
  EXPECT_NE(error_of([&] { load_secret_file(dir.path()); }).find("not a regular file"),
            std::string::npos);
}

TEST(ServerSecret, FromTheEnvironment) {
  setenv("MYRIAD_TEST_SECRET", kSecret.c_str(), 1);
  EXPECT_EQ(load_secret_env("MYRIAD_TEST_SECRET"), kSecret);
  EXPECT_EQ(load_secret("", "MYRIAD_TEST_SECRET"), kSecret);
  setenv("MYRIAD_TEST_SECRET", "short", 1);
  EXPECT_NE(error_of([] { load_secret_env("MYRIAD_TEST_SECRET"); }).find("at least"),
            std::string::npos);
  setenv("MYRIAD_TEST_SECRET", "", 1);
  EXPECT_NE(error_of([] { load_secret_env("MYRIAD_TEST_SECRET"); }).find("empty"),
            std::string::npos);
  unsetenv("MYRIAD_TEST_SECRET");
  EXPECT_NE(error_of([] { load_secret_env("MYRIAD_TEST_SECRET"); }).find("not set"),
            std::string::npos);
  EXPECT_NE(error_of([] { load_secret("", ""); }).find("no shared secret"), std::string::npos);
  EXPECT_NE(error_of([] { load_secret("f", "E"); }).find("not both"), std::string::npos);
}

TEST(ServerHmac, Rfc4231TestCase2) {
  const Mac mac = hmac_sha256("Jefe", "what do ya want for nothing?");
  static const char* expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
  std::string hex;
  for (const uint8_t b : mac) {
    static const char* digits = "0123456789abcdef";
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  EXPECT_EQ(hex, expected);
  Mac other = mac;
  EXPECT_TRUE(mac_equal(mac, other));
  other[31] ^= 1;
  EXPECT_FALSE(mac_equal(mac, other));
  EXPECT_NE(random_nonce(), random_nonce());
}

// ---- handshake ----

struct Exchange {
  HandshakeOutcome server = HandshakeOutcome::Continue;
  HandshakeOutcome client = HandshakeOutcome::Continue;
  std::vector<Frame> to_client;
};

// Runs both sides against each other to the end.
Exchange run_handshake(ServerHandshake& server, ClientHandshake& client) {
  Exchange ex;
  HandshakeStep s = server.on_frame(client.hello());
  ex.server = s.outcome;
  std::vector<Frame> pending = s.replies;
  while (!pending.empty()) {
    std::vector<Frame> next;
    for (const auto& f : pending) {
      ex.to_client.push_back(f);
      HandshakeStep c = client.on_frame(f);
      ex.client = c.outcome;
      for (const auto& r : c.replies) {
        HandshakeStep s2 = server.on_frame(r);
        ex.server = s2.outcome;
        next.insert(next.end(), s2.replies.begin(), s2.replies.end());
      }
    }
    pending = next;
  }
  return ex;
}

TEST(ServerHandshake, HonestPeersAuthenticateEachOther) {
  ServerHandshake server(kSecret, 42, random_nonce());
  ClientHandshake client(kSecret, Peer{Role::Actor, "actor-7"}, random_nonce());
  const Exchange ex = run_handshake(server, client);
  EXPECT_EQ(ex.server, HandshakeOutcome::Authenticated);
  EXPECT_EQ(ex.client, HandshakeOutcome::Authenticated);
  EXPECT_TRUE(server.authenticated());
  EXPECT_TRUE(client.authenticated());
  EXPECT_EQ(client.conn_id(), 42u);
  EXPECT_EQ(server.peer().id, "actor-7");
  EXPECT_EQ(server.peer().role, Role::Actor);
  // Anything after the end is a protocol error.
  EXPECT_EQ(server.on_frame(client.hello()).outcome, HandshakeOutcome::ProtocolError);
}

TEST(ServerHandshake, WrongClientSecretIsRejected) {
  ServerHandshake server(kSecret, 1, random_nonce());
  ClientHandshake client("another-secret-of-enough-length", Peer{Role::Actor, "a"}, random_nonce());
  const Exchange ex = run_handshake(server, client);
  EXPECT_EQ(ex.server, HandshakeOutcome::AuthFailed);
  EXPECT_EQ(ex.client, HandshakeOutcome::Rejected);
  EXPECT_EQ(client.reject_code(), RejectCode::AuthFailed);
  EXPECT_FALSE(server.authenticated());
}

TEST(ServerHandshake, ClientRefusesAServerWithAnotherSecret) {
  // The impostor server accepts anything: it answers the Response with a Welcome whose proof
  // it cannot compute.
  const Nonce server_nonce = random_nonce();
  ClientHandshake client(kSecret, Peer{Role::Evaluator, "e"}, random_nonce());
  HandshakeStep c = client.on_frame(Frame{
      FrameType::Challenge, std::string(reinterpret_cast<const char*>(server_nonce.data()), 32)});
  ASSERT_EQ(c.outcome, HandshakeOutcome::Continue);
  ASSERT_EQ(c.replies.size(), 1u);
  ServerHandshake impostor("impostor-secret-0123456789", 5, server_nonce);
  impostor.on_frame(client.hello());
  std::string welcome(8, '\0');
  welcome += std::string(32, 'x');
  EXPECT_EQ(client.on_frame(Frame{FrameType::Welcome, welcome}).outcome,
            HandshakeOutcome::AuthFailed);
  EXPECT_FALSE(client.authenticated());
}

TEST(ServerHandshake, AResponseCannotBeReplayedOnAnotherConnection) {
  const Nonce client_nonce = random_nonce();
  ServerHandshake first(kSecret, 1, random_nonce());
  ClientHandshake client(kSecret, Peer{Role::Actor, "a"}, client_nonce);
  const Frame hello = client.hello();
  const HandshakeStep challenge = first.on_frame(hello);
  const HandshakeStep response = client.on_frame(challenge.replies.at(0));
  ASSERT_EQ(first.on_frame(response.replies.at(0)).outcome, HandshakeOutcome::Authenticated);
  // An eavesdropper replays the same Hello and Response to a fresh connection.
  ServerHandshake second(kSecret, 2, random_nonce());
  second.on_frame(hello);
  EXPECT_EQ(second.on_frame(response.replies.at(0)).outcome, HandshakeOutcome::AuthFailed);
}

TEST(ServerHandshake, AProofIsBoundToThePeerId) {
  ServerHandshake server(kSecret, 1, random_nonce());
  ClientHandshake honest(kSecret, Peer{Role::Actor, "alice"}, random_nonce());
  Frame hello = honest.hello();
  const HandshakeStep challenge = server.on_frame(hello);
  // A man in the middle relabels the client; alice's proof no longer matches.
  ServerHandshake server2(kSecret, 2, random_nonce());
  Frame relabelled = hello;
  relabelled.payload.replace(34, 5, "mally");
  const HandshakeStep challenge2 = server2.on_frame(relabelled);
  const HandshakeStep response = honest.on_frame(challenge2.replies.at(0));
  EXPECT_EQ(server2.on_frame(response.replies.at(0)).outcome, HandshakeOutcome::AuthFailed);
  (void)challenge;
}

TEST(ServerHandshake, MalformedOrOutOfOrderFramesAreProtocolErrors) {
  const auto first_outcome = [](const Frame& f) {
    ServerHandshake server(kSecret, 1, random_nonce());
    HandshakeStep step = server.on_frame(f);
    if (step.outcome == HandshakeOutcome::ProtocolError) {
      RejectCode code{};
      std::string reason;
      EXPECT_EQ(step.replies.size(), 1u);
      EXPECT_TRUE(parse_reject(step.replies.at(0).payload, code, reason));
      EXPECT_EQ(code, RejectCode::Protocol);
    }
    return step.outcome;
  };
  ClientHandshake client(kSecret, Peer{Role::Actor, "ok"}, random_nonce());
  const Frame hello = client.hello();
  EXPECT_EQ(first_outcome(hello), HandshakeOutcome::Continue);
  EXPECT_EQ(first_outcome(Frame{FrameType::Chunk, "data before auth"}),
            HandshakeOutcome::ProtocolError);
  EXPECT_EQ(first_outcome(Frame{FrameType::Response, std::string(32, 'x')}),
            HandshakeOutcome::ProtocolError);
  Frame f = hello;
  f.payload.pop_back();  // id shorter than its length byte says
  EXPECT_EQ(first_outcome(f), HandshakeOutcome::ProtocolError);
  f = hello;
  f.payload[32] = 9;  // unknown role
  EXPECT_EQ(first_outcome(f), HandshakeOutcome::ProtocolError);
  f = hello;
  f.payload[34] = ' ';  // id with a space
  EXPECT_EQ(first_outcome(f), HandshakeOutcome::ProtocolError);
  f = hello;
  f.payload[33] = 0;  // empty id
  f.payload.resize(34);
  EXPECT_EQ(first_outcome(f), HandshakeOutcome::ProtocolError);
  EXPECT_EQ(first_outcome(Frame{FrameType::Hello, ""}), HandshakeOutcome::ProtocolError);

  ServerHandshake server(kSecret, 1, random_nonce());
  server.on_frame(hello);
  EXPECT_EQ(server.on_frame(Frame{FrameType::Response, "short"}).outcome,
            HandshakeOutcome::ProtocolError);
}

TEST(ServerHandshake, PeerIds) {
  EXPECT_TRUE(valid_peer_id("actor-3.node_1:gpu0"));
  EXPECT_FALSE(valid_peer_id(""));
  EXPECT_FALSE(valid_peer_id(std::string(65, 'a')));
  EXPECT_FALSE(valid_peer_id("a b"));
  EXPECT_FALSE(valid_peer_id("a\nb"));
  EXPECT_THROW(ClientHandshake(kSecret, Peer{Role::Actor, "bad id"}, random_nonce()),
               std::invalid_argument);
}

TEST(ServerHandshake, RejectPayloads) {
  RejectCode code{};
  std::string reason;
  EXPECT_TRUE(parse_reject(reject_payload(RejectCode::ServerFull, "busy"), code, reason));
  EXPECT_EQ(code, RejectCode::ServerFull);
  EXPECT_EQ(reason, "busy");
  EXPECT_EQ(reject_payload(RejectCode::Protocol, std::string(1000, 'x')).size(),
            1 + kMaxRejectReasonBytes);
  EXPECT_FALSE(parse_reject("", code, reason));
  EXPECT_FALSE(parse_reject(std::string(1, '\x09') + "x", code, reason));
}

}  // namespace
}  // namespace myriad::server
