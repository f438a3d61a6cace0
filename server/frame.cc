#include "server/frame.h"

#include <cstring>
#include <stdexcept>

#include "myriad/crc32c.h"

namespace myriad::server {
namespace {

void put_u32(char* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint32_t get_u32(const char* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

}  // namespace

const char* to_string(FrameType type) {
  switch (type) {
    case FrameType::Hello:
      return "Hello";
    case FrameType::Challenge:
      return "Challenge";
    case FrameType::Response:
      return "Response";
    case FrameType::Welcome:
      return "Welcome";
    case FrameType::Reject:
      return "Reject";
    case FrameType::Heartbeat:
      return "Heartbeat";
    case FrameType::Chunk:
      return "Chunk";
    case FrameType::MatchResult:
      return "MatchResult";
    case FrameType::Weights:
      return "Weights";
    case FrameType::Bye:
      return "Bye";
  }
  return "unknown";
}

bool is_known_frame_type(uint8_t type) { return type >= 1 && type <= kMaxFrameType; }

const char* to_string(DecodeError error) {
  switch (error) {
    case DecodeError::None:
      return "no error";
    case DecodeError::BadMagic:
      return "bad magic (not a Myriad frame)";
    case DecodeError::BadVersion:
      return "unsupported protocol version";
    case DecodeError::UnknownType:
      return "unknown frame type";
    case DecodeError::BadReserved:
      return "reserved header bits set";
    case DecodeError::TooLong:
      return "payload length over the limit";
    case DecodeError::BadChecksum:
      return "payload checksum mismatch";
  }
  return "unknown error";
}

std::string encode(FrameType type, std::string_view payload, uint32_t max_payload) {
  if (payload.size() > max_payload)
    throw std::length_error("frame payload of " + std::to_string(payload.size()) +
                            " bytes exceeds the limit of " + std::to_string(max_payload));
  std::string out(kHeaderSize + payload.size(), '\0');
  std::memcpy(out.data(), kMagic, 4);
  out[4] = static_cast<char>(kVersion);
  out[5] = static_cast<char>(type);
  put_u32(out.data() + 8, static_cast<uint32_t>(payload.size()));
  put_u32(out.data() + 12, crc32c(payload.data(), payload.size()));
  if (!payload.empty()) std::memcpy(out.data() + kHeaderSize, payload.data(), payload.size());
  return out;
}

void FrameDecoder::feed(const void* data, size_t size) {
  if (error_ != DecodeError::None || size == 0) return;
  // Drop consumed bytes first so the buffer stays bounded by one frame plus this piece.
  if (start_ > 0 && (start_ == buffer_.size() || start_ >= (buffer_.size() >> 1))) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  buffer_.append(static_cast<const char*>(data), size);
}

FrameDecoder::Status FrameDecoder::next(Frame& out) {
  if (error_ != DecodeError::None) return Status::Error;
  const size_t available = buffer_.size() - start_;
  const char* h = buffer_.data() + start_;
  // Check the magic byte by byte as it arrives: garbage fails on its first wrong byte.
  for (size_t i = 0; i < 4 && i < available; ++i) {
    if (h[i] != kMagic[i]) {
      error_ = DecodeError::BadMagic;
      return Status::Error;
    }
  }
  if (available < kHeaderSize) return Status::NeedMore;
  if (static_cast<uint8_t>(h[4]) != kVersion) {
    error_ = DecodeError::BadVersion;
    return Status::Error;
  }
  if (!is_known_frame_type(static_cast<uint8_t>(h[5]))) {
    error_ = DecodeError::UnknownType;
    return Status::Error;
  }
  if (h[6] != 0 || h[7] != 0) {
    error_ = DecodeError::BadReserved;
    return Status::Error;
  }
  const uint32_t length = get_u32(h + 8);
  if (length > max_payload_) {
    error_ = DecodeError::TooLong;
    return Status::Error;
  }
  if (available - kHeaderSize < length) return Status::NeedMore;
  const char* payload = h + kHeaderSize;
  if (crc32c(payload, length) != get_u32(h + 12)) {
    error_ = DecodeError::BadChecksum;
    return Status::Error;
  }
  out.type = static_cast<FrameType>(h[5]);
  out.payload.assign(payload, length);
  start_ += kHeaderSize + length;
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  return Status::Frame;
}

}  // namespace myriad::server
