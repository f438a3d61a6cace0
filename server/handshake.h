// The handshake state machines, over frames and without sockets (so they can be fuzzed).
//
// Mutual HMAC-SHA256 challenge-response over a shared secret K (auth.h):
//
//   client -> Hello     { client_nonce[32], role u8, id_len u8, id[id_len] }
//   server -> Challenge { server_nonce[32] }
//   client -> Response  { HMAC(K, "myriad/1 client" | server_nonce | client_nonce | role | id_len |
//   id) } server -> Welcome   { conn_id u64, HMAC(K, "myriad/1 server" | client_nonce |
//   server_nonce | conn_id) }
//           or Reject   { code u8, reason }            and closes
//
// Both nonces come from RAND_bytes, so neither proof can be replayed on another connection;
// the labels keep a client proof from ever passing as a server proof. The server proves itself
// only after the client has, so it is no oracle for strangers. The handshake authenticates;
// it does not encrypt (run over a trusted network or a tunnel).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/auth.h"
#include "server/frame.h"

namespace myriad::server {

// The largest handshake frame payload (a Hello with a 64-byte id is 98 bytes; a Reject 257).
// Until a connection is authenticated its decoder refuses anything longer, so a stranger cannot
// make the server buffer max_payload bytes.
inline constexpr uint32_t kMaxHandshakePayload = 512;

enum class Role : uint8_t { Actor = 1, Evaluator = 2 };
const char* to_string(Role role);

// An id is 1..kMaxPeerIdBytes of [A-Za-z0-9._:-] (it ends up in logs).
inline constexpr size_t kMaxPeerIdBytes = 64;
bool valid_peer_id(std::string_view id);

struct Peer {
  Role role = Role::Actor;
  std::string id;
  std::string address;  // server side: the peer's host:port (for logs), set by the server
};

enum class RejectCode : uint8_t {
  AuthFailed = 1,    // wrong secret: the client should not retry
  Protocol = 2,      // a malformed or unexpected frame
  ServerFull = 3,    // the connection cap is reached: retry later
  Timeout = 4,       // handshake deadline or idle timeout
  ShuttingDown = 5,  // the server is stopping: retry later
};
const char* to_string(RejectCode code);
inline constexpr size_t kMaxRejectReasonBytes = 256;

// A Reject payload (the reason is cut to kMaxRejectReasonBytes).
std::string reject_payload(RejectCode code, std::string_view reason);
// False if `payload` is not a well-formed Reject.
bool parse_reject(std::string_view payload, RejectCode& code, std::string& reason);

enum class HandshakeOutcome {
  Continue,       // send `replies` and wait for the next frame
  Authenticated,  // send `replies`; the connection may now carry data frames
  AuthFailed,     // the peer's proof is wrong: send `replies` (a Reject, server side), close
  Rejected,       // client side: the server sent Reject (code in reject_code())
  ProtocolError,  // malformed or out-of-order frame: send `replies` (a Reject, server side), close
};
const char* to_string(HandshakeOutcome outcome);

struct HandshakeStep {
  HandshakeOutcome outcome = HandshakeOutcome::Continue;
  std::vector<Frame> replies;
  std::string error;  // why, for the log, when not Continue/Authenticated
};

// The server's side of one connection. After a terminal outcome every further frame is a
// ProtocolError.
class ServerHandshake {
 public:
  ServerHandshake(std::string_view secret, uint64_t conn_id, const Nonce& server_nonce);
  ~ServerHandshake();
  ServerHandshake(const ServerHandshake&) = delete;
  ServerHandshake& operator=(const ServerHandshake&) = delete;

  HandshakeStep on_frame(const Frame& frame);
  bool authenticated() const { return state_ == State::Done; }
  const Peer& peer() const { return peer_; }  // valid once a Hello parsed

 private:
  enum class State { AwaitHello, AwaitResponse, Done, Failed };
  HandshakeStep fail(HandshakeOutcome outcome, RejectCode code, std::string error);

  std::string secret_;
  uint64_t conn_id_;
  Nonce server_nonce_;
  Nonce client_nonce_{};
  Peer peer_;
  State state_ = State::AwaitHello;
};

// The client's side: send hello(), then feed each frame received until a terminal outcome.
class ClientHandshake {
 public:
  // Throws std::invalid_argument if `id` is not a valid peer id.
  ClientHandshake(std::string_view secret, Peer self, const Nonce& client_nonce);
  ~ClientHandshake();
  ClientHandshake(const ClientHandshake&) = delete;
  ClientHandshake& operator=(const ClientHandshake&) = delete;

  Frame hello() const;
  HandshakeStep on_frame(const Frame& frame);
  bool authenticated() const { return state_ == State::Done; }
  uint64_t conn_id() const { return conn_id_; }
  RejectCode reject_code() const { return reject_code_; }

 private:
  enum class State { AwaitChallenge, AwaitWelcome, Done, Failed };
  HandshakeStep fail(HandshakeOutcome outcome, std::string error);

  std::string secret_;
  Peer self_;
  Nonce client_nonce_;
  Nonce server_nonce_{};
  uint64_t conn_id_ = 0;
  RejectCode reject_code_ = RejectCode::Protocol;
  State state_ = State::AwaitChallenge;
};

}  // namespace myriad::server
