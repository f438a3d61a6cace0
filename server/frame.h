// The self-play wire format: length-prefixed, checksummed frames, and an incremental decoder.
//
// Every frame is a 16-byte header followed by its payload (all integers little-endian):
//
//   offset  size  field
//   0       4     magic "MYRD" (bytes 'M' 'Y' 'R' 'D')
//   4       1     version (kVersion)
//   5       1     type (FrameType)
//   6       2     reserved, must be 0
//   8       4     payload length in bytes (<= the receiver's max_payload)
//   12      4     CRC32C of the payload
//
// Plain functions over bytes: no sockets, no allocation beyond the decoder's buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace myriad::server {

inline constexpr char kMagic[4] = {'M', 'Y', 'R', 'D'};
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderSize = 16;
// The default cap on one payload (weights of a large policy fit; a bogus length does not).
inline constexpr uint32_t kDefaultMaxPayload = 64u << 20;

enum class FrameType : uint8_t {
  Hello = 1,        // client -> server: client nonce, role, id (handshake.h)
  Challenge = 2,    // server -> client: server nonce
  Response = 3,     // client -> server: the client's HMAC proof
  Welcome = 4,      // server -> client: connection id and the server's HMAC proof
  Reject = 5,       // either way: a RejectCode byte and a reason; the sender then closes
  Heartbeat = 6,    // either way after the handshake; the server echoes it
  Chunk = 7,        // actor -> learner: a trajectory chunk (opaque here)
  MatchResult = 8,  // actor -> learner: a finished match (opaque here)
  Weights = 9,      // learner -> actor: policy weights (opaque here)
  Bye = 10,         // either way: a clean goodbye; the receiver closes
};
inline constexpr uint8_t kMaxFrameType = 10;

// "Hello", "Chunk", ...; "unknown" for a value outside the enum.
const char* to_string(FrameType type);
bool is_known_frame_type(uint8_t type);

struct Frame {
  FrameType type = FrameType::Heartbeat;
  std::string payload;  // raw bytes
};

// The header plus `payload`. Throws std::length_error if the payload is longer than
// `max_payload` (a sender never emits what its peer would refuse).
std::string encode(FrameType type, std::string_view payload,
                   uint32_t max_payload = kDefaultMaxPayload);
inline std::string encode(const Frame& frame, uint32_t max_payload = kDefaultMaxPayload) {
  return encode(frame.type, frame.payload, max_payload);
}

enum class DecodeError : uint8_t {
  None = 0,
  BadMagic,     // the first four bytes are not "MYRD" (garbage, or not our protocol)
  BadVersion,   // a version this build does not speak
  UnknownType,  // a type byte outside FrameType
  BadReserved,  // reserved header bits set
  TooLong,      // the length field exceeds max_payload (refused before reading the payload)
  BadChecksum,  // the payload's CRC32C does not match the header
};
const char* to_string(DecodeError error);

// Takes a byte stream in pieces of any size and yields whole frames. The header is checked
// as soon as its 16 bytes are in, so an oversized length is refused before any of its payload
// is buffered; the decoder then never holds more than kHeaderSize + max_payload bytes of a
// frame. The first error is sticky: the stream cannot be resynchronized and must be closed.
class FrameDecoder {
 public:
  enum class Status { NeedMore, Frame, Error };

  explicit FrameDecoder(uint32_t max_payload = kDefaultMaxPayload) : max_payload_(max_payload) {}

  // Appends `size` bytes (ignored once in error).
  void feed(const void* data, size_t size);
  // Frame: `out` holds the next frame. NeedMore: feed more bytes. Error: see error().
  Status next(Frame& out);

  DecodeError error() const { return error_; }
  // Bytes fed but not yet returned as frames: nonzero at end of stream means a torn frame.
  size_t buffered() const { return buffer_.size() - start_; }
  uint32_t max_payload() const { return max_payload_; }
  // Changes the limit for the frames not yet returned (a connection raises it once
  // authenticated: before that only small handshake frames are expected).
  void set_max_payload(uint32_t max_payload) { max_payload_ = max_payload; }

 private:
  uint32_t max_payload_;
  std::string buffer_;
  size_t start_ = 0;  // the first unconsumed byte of buffer_
  DecodeError error_ = DecodeError::None;
};

}  // namespace myriad::server
