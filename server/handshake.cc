#include "server/handshake.h"

#include <openssl/crypto.h>

#include <cstring>
#include <stdexcept>

namespace myriad::server {
namespace {

constexpr std::string_view kClientLabel = "myriad/1 client";
constexpr std::string_view kServerLabel = "myriad/1 server";

std::string_view bytes(const Nonce& n) {
  return {reinterpret_cast<const char*>(n.data()), n.size()};
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t get_u64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

bool valid_role(uint8_t role) { return role == 1 || role == 2; }

// role | id_len | id: the peer as the Hello carries it and the client proof covers it.
std::string peer_bytes(const Peer& peer) {
  std::string out;
  out.push_back(static_cast<char>(peer.role));
  out.push_back(static_cast<char>(peer.id.size()));
  out += peer.id;
  return out;
}

Mac client_proof(std::string_view secret, const Nonce& server_nonce, const Nonce& client_nonce,
                 const Peer& peer) {
  std::string msg(kClientLabel);
  msg += bytes(server_nonce);
  msg += bytes(client_nonce);
  msg += peer_bytes(peer);
  return hmac_sha256(secret, msg);
}

Mac server_proof(std::string_view secret, const Nonce& client_nonce, const Nonce& server_nonce,
                 uint64_t conn_id) {
  std::string msg(kServerLabel);
  msg += bytes(client_nonce);
  msg += bytes(server_nonce);
  put_u64(msg, conn_id);
  return hmac_sha256(secret, msg);
}

void wipe(std::string& s) {
  if (!s.empty()) OPENSSL_cleanse(s.data(), s.size());
}

}  // namespace

const char* to_string(Role role) {
  switch (role) {
    case Role::Actor:
      return "actor";
    case Role::Evaluator:
      return "evaluator";
  }
  return "unknown";
}

bool valid_peer_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxPeerIdBytes) return false;
  for (const char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

const char* to_string(RejectCode code) {
  switch (code) {
    case RejectCode::AuthFailed:
      return "authentication failed";
    case RejectCode::Protocol:
      return "protocol error";
    case RejectCode::ServerFull:
      return "server full";
    case RejectCode::Timeout:
      return "timed out";
    case RejectCode::ShuttingDown:
      return "server shutting down";
  }
  return "unknown";
}

std::string reject_payload(RejectCode code, std::string_view reason) {
  std::string out(1, static_cast<char>(code));
  out += reason.substr(0, kMaxRejectReasonBytes);
  return out;
}

bool parse_reject(std::string_view payload, RejectCode& code, std::string& reason) {
  if (payload.empty() || payload.size() > 1 + kMaxRejectReasonBytes) return false;
  const auto c = static_cast<uint8_t>(payload[0]);
  if (c < 1 || c > 5) return false;
  code = static_cast<RejectCode>(c);
  reason.assign(payload.substr(1));
  return true;
}

const char* to_string(HandshakeOutcome outcome) {
  switch (outcome) {
    case HandshakeOutcome::Continue:
      return "continue";
    case HandshakeOutcome::Authenticated:
      return "authenticated";
    case HandshakeOutcome::AuthFailed:
      return "authentication failed";
    case HandshakeOutcome::Rejected:
      return "rejected";
    case HandshakeOutcome::ProtocolError:
      return "protocol error";
  }
  return "unknown";
}

// ---- server side ----

ServerHandshake::ServerHandshake(std::string_view secret, uint64_t conn_id,
                                 const Nonce& server_nonce)
    : secret_(secret), conn_id_(conn_id), server_nonce_(server_nonce) {}

ServerHandshake::~ServerHandshake() { wipe(secret_); }

HandshakeStep ServerHandshake::fail(HandshakeOutcome outcome, RejectCode code, std::string error) {
  state_ = State::Failed;
  HandshakeStep step;
  step.outcome = outcome;
  // An honest peer with a bug learns what was wrong; a wrong secret learns nothing more.
  step.replies.push_back(
      Frame{FrameType::Reject,
            reject_payload(code, code == RejectCode::Protocol ? error : to_string(code))});
  step.error = std::move(error);
  return step;
}

HandshakeStep ServerHandshake::on_frame(const Frame& frame) {
  switch (state_) {
    case State::AwaitHello: {
      if (frame.type != FrameType::Hello)
        return fail(HandshakeOutcome::ProtocolError, RejectCode::Protocol,
                    std::string("expected Hello, got ") + to_string(frame.type));
      const std::string& p = frame.payload;
      if (p.size() < kNonceBytes + 2)
        return fail(HandshakeOutcome::ProtocolError, RejectCode::Protocol, "Hello too short");
      const auto role = static_cast<uint8_t>(p[kNonceBytes]);
      const auto id_len = static_cast<uint8_t>(p[kNonceBytes + 1]);
      if (p.size() != kNonceBytes + 2 + id_len)
        return fail(HandshakeOutcome::ProtocolError, RejectCode::Protocol,
                    "Hello length does not match its id length");
      if (!valid_role(role))
        return fail(HandshakeOutcome::ProtocolError, RejectCode::Protocol, "Hello: unknown role");
      const std::string_view id(p.data() + kNonceBytes + 2, id_len);
      if (!valid_peer_id(id))
        return fail(HandshakeOutcome::ProtocolError, RejectCode::Protocol, "Hello: invalid id");
      std::memcpy(client_nonce_.data(), p.data(), kNonceBytes);
      peer_.role = static_cast<Role>(role);
      peer_.id.assign(id);
      state_ = State::AwaitResponse;
      HandshakeStep step;
      step.replies.push_back(Frame{FrameType::Challenge, std::string(bytes(server_nonce_))});
      return step;
    }
    case State::AwaitResponse: {
      if (frame.type != FrameType::Response)
        return fail(HandshakeOutcome::ProtocolError, RejectCode::Protocol,
                    std::string("expected Response, got ") + to_string(frame.type));
      if (frame.payload.size() != kMacBytes)
        return fail(HandshakeOutcome::ProtocolError, RejectCode::Protocol,
                    "Response is not a 32-byte MAC");
      Mac got{};
      std::memcpy(got.data(), frame.payload.data(), kMacBytes);
      if (!mac_equal(got, client_proof(secret_, server_nonce_, client_nonce_, peer_)))
        return fail(HandshakeOutcome::AuthFailed, RejectCode::AuthFailed, "wrong client proof");
      state_ = State::Done;
      HandshakeStep step;
      step.outcome = HandshakeOutcome::Authenticated;
      std::string welcome;
      put_u64(welcome, conn_id_);
      const Mac proof = server_proof(secret_, client_nonce_, server_nonce_, conn_id_);
      welcome.append(reinterpret_cast<const char*>(proof.data()), proof.size());
      step.replies.push_back(Frame{FrameType::Welcome, std::move(welcome)});
      return step;
    }
    case State::Done:
    case State::Failed:
      break;
  }
  return fail(HandshakeOutcome::ProtocolError, RejectCode::Protocol,
              "handshake frame after the handshake ended");
}

// ---- client side ----

ClientHandshake::ClientHandshake(std::string_view secret, Peer self, const Nonce& client_nonce)
    : secret_(secret), self_(std::move(self)), client_nonce_(client_nonce) {
  if (!valid_peer_id(self_.id))
    throw std::invalid_argument("invalid peer id '" + self_.id +
                                "': 1 to 64 characters of A-Z a-z 0-9 . _ : -");
  if (!valid_role(static_cast<uint8_t>(self_.role))) throw std::invalid_argument("invalid role");
}

ClientHandshake::~ClientHandshake() { wipe(secret_); }

Frame ClientHandshake::hello() const {
  Frame f{FrameType::Hello, std::string(bytes(client_nonce_))};
  f.payload += peer_bytes(self_);
  return f;
}

HandshakeStep ClientHandshake::fail(HandshakeOutcome outcome, std::string error) {
  state_ = State::Failed;
  HandshakeStep step;
  step.outcome = outcome;
  step.error = std::move(error);
  return step;
}

HandshakeStep ClientHandshake::on_frame(const Frame& frame) {
  if (state_ == State::Done || state_ == State::Failed)
    return fail(HandshakeOutcome::ProtocolError, "handshake frame after the handshake ended");
  if (frame.type == FrameType::Reject) {
    std::string reason;
    if (!parse_reject(frame.payload, reject_code_, reason))
      return fail(HandshakeOutcome::ProtocolError, "malformed Reject");
    return fail(HandshakeOutcome::Rejected, std::string(to_string(reject_code_)) + ": " + reason);
  }
  if (state_ == State::AwaitChallenge) {
    if (frame.type != FrameType::Challenge)
      return fail(HandshakeOutcome::ProtocolError,
                  std::string("expected Challenge, got ") + to_string(frame.type));
    if (frame.payload.size() != kNonceBytes)
      return fail(HandshakeOutcome::ProtocolError, "Challenge is not a 32-byte nonce");
    std::memcpy(server_nonce_.data(), frame.payload.data(), kNonceBytes);
    const Mac proof = client_proof(secret_, server_nonce_, client_nonce_, self_);
    state_ = State::AwaitWelcome;
    HandshakeStep step;
    step.replies.push_back(Frame{
        FrameType::Response, std::string(reinterpret_cast<const char*>(proof.data()), kMacBytes)});
    return step;
  }
  // AwaitWelcome
  if (frame.type != FrameType::Welcome)
    return fail(HandshakeOutcome::ProtocolError,
                std::string("expected Welcome, got ") + to_string(frame.type));
  if (frame.payload.size() != 8 + kMacBytes)
    return fail(HandshakeOutcome::ProtocolError, "Welcome has the wrong length");
  const uint64_t conn_id = get_u64(frame.payload.data());
  Mac got{};
  std::memcpy(got.data(), frame.payload.data() + 8, kMacBytes);
  if (!mac_equal(got, server_proof(secret_, client_nonce_, server_nonce_, conn_id)))
    return fail(HandshakeOutcome::AuthFailed, "wrong server proof (the server has another secret)");
  conn_id_ = conn_id;
  state_ = State::Done;
  HandshakeStep step;
  step.outcome = HandshakeOutcome::Authenticated;
  return step;
}

}  // namespace myriad::server
