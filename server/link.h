// Internal: one TCP connection carrying frames (Asio), shared by the server and the client.
// Not part of the public API: everything here runs on one io_context thread.
#pragma once

#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "server/frame.h"

namespace myriad::server::detail {

using boost::asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// Reads frames into on_frame(), writes a queue of encoded frames, and closes exactly once.
// A subclass decides what frames mean and owns its own timers.
class FrameLink : public std::enable_shared_from_this<FrameLink> {
 public:
  // `max_payload` bounds both the frames read (until set_max_payload) and those sent.
  FrameLink(tcp::socket socket, uint32_t max_payload, size_t max_queued_bytes);
  virtual ~FrameLink() = default;
  FrameLink(const FrameLink&) = delete;
  FrameLink& operator=(const FrameLink&) = delete;

  void start_reading();
  // Queues an encoded frame. Past max_queued_bytes the peer is too slow: the link closes.
  void send_encoded(std::shared_ptr<const std::string> bytes);
  void send(const Frame& frame);
  // Stops decoding, sends what is queued, half-closes, drains the peer's bytes until it closes
  // or `linger` passes, then closes with `reason`. For a Reject: the peer reads it before the
  // connection goes.
  void close_after_flush(const std::string& reason, std::chrono::milliseconds linger);
  // Closes now (idempotent); on_closed() runs once, on the first call.
  void close(const std::string& reason);

  void set_max_payload(uint32_t max_payload) { decoder_.set_max_payload(max_payload); }
  bool is_open() const { return !closed_; }
  bool is_closing() const { return closed_ || draining_; }
  const std::string& close_reason() const { return close_reason_; }

 protected:
  virtual void on_frame(Frame&& frame) = 0;
  virtual void on_decode_error(DecodeError error) = 0;
  // The peer closed, or reading failed; `torn_bytes` are the bytes of an incomplete frame.
  virtual void on_read_end(const boost::system::error_code& ec, size_t torn_bytes) = 0;
  virtual void on_closed() = 0;
  virtual void on_bytes(size_t in, size_t out) = 0;
  virtual void on_frame_sent() = 0;
  // The send queue went over max_queued_bytes; the link closes right after.
  virtual void on_send_overflow() {}

  tcp::socket socket_;

 private:
  void do_read();
  void do_write();
  void finish_flush();

  FrameDecoder decoder_;
  uint32_t max_send_payload_;
  size_t max_queued_bytes_;
  std::array<char, 64 * 1024> read_buffer_{};
  std::deque<std::shared_ptr<const std::string>> queue_;
  size_t queued_bytes_ = 0;
  bool reading_ = false;
  bool writing_ = false;
  bool draining_ = false;  // close_after_flush was called: frames are no longer decoded
  bool closed_ = false;
  std::string close_reason_;
  boost::asio::steady_timer linger_timer_;
};

}  // namespace myriad::server::detail
