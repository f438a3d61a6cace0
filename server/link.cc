#include "server/link.h"

namespace myriad::server::detail {

namespace asio = boost::asio;

FrameLink::FrameLink(tcp::socket socket, uint32_t max_payload, size_t max_queued_bytes)
    : socket_(std::move(socket)),
      decoder_(max_payload),
      max_send_payload_(max_payload),
      max_queued_bytes_(max_queued_bytes),
      linger_timer_(socket_.get_executor()) {}

void FrameLink::start_reading() {
  if (reading_ || closed_) return;
  reading_ = true;
  do_read();
}

void FrameLink::do_read() {
  auto self = shared_from_this();
  socket_.async_read_some(asio::buffer(read_buffer_),
                          [this, self](const boost::system::error_code& ec, size_t n) {
                            if (closed_) return;
                            if (n > 0) on_bytes(n, 0);
                            if (ec) {
                              if (draining_) {
                                close(close_reason_);
                              } else {
                                on_read_end(ec, decoder_.buffered());
                                if (!closed_ && !draining_)
                                  close(ec == asio::error::eof ? "peer closed" : ec.message());
                              }
                              return;
                            }
                            if (!draining_) {
                              decoder_.feed(read_buffer_.data(), n);
                              Frame frame;
                              // Stop at once if a frame handler closed or failed the link.
                              while (!closed_ && !draining_) {
                                const auto status = decoder_.next(frame);
                                if (status == FrameDecoder::Status::NeedMore) break;
                                if (status == FrameDecoder::Status::Error) {
                                  on_decode_error(decoder_.error());
                                  break;
                                }
                                on_frame(std::move(frame));
                              }
                            }
                            if (!closed_) do_read();
                          });
}

void FrameLink::send(const Frame& frame) {
  send_encoded(std::make_shared<const std::string>(encode(frame, max_send_payload_)));
}

void FrameLink::send_encoded(std::shared_ptr<const std::string> bytes) {
  if (closed_) return;
  if (draining_ && !writing_ && queue_.empty()) return;  // already half-closed
  queued_bytes_ += bytes->size();
  queue_.push_back(std::move(bytes));
  if (queued_bytes_ > max_queued_bytes_) {
    on_send_overflow();
    close("send queue over " + std::to_string(max_queued_bytes_) + " bytes (peer too slow)");
    return;
  }
  if (!writing_) do_write();
}

void FrameLink::do_write() {
  writing_ = true;
  auto self = shared_from_this();
  const auto& front = queue_.front();
  asio::async_write(socket_, asio::buffer(*front),
                    [this, self](const boost::system::error_code& ec, size_t n) {
                      writing_ = false;
                      if (closed_) return;
                      if (ec) {
                        close("write failed: " + ec.message());
                        return;
                      }
                      on_bytes(0, n);
                      on_frame_sent();
                      queued_bytes_ -= queue_.front()->size();
                      queue_.pop_front();
                      if (!queue_.empty()) {
                        do_write();
                      } else if (draining_) {
                        finish_flush();
                      }
                    });
}

void FrameLink::close_after_flush(const std::string& reason, std::chrono::milliseconds linger) {
  if (closed_ || draining_) return;
  draining_ = true;
  close_reason_ = reason;
  auto self = shared_from_this();
  linger_timer_.expires_after(linger);
  linger_timer_.async_wait([this, self](const boost::system::error_code& ec) {
    if (!ec && !closed_) close(close_reason_);
  });
  if (!writing_ && queue_.empty()) finish_flush();
}

void FrameLink::finish_flush() {
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  // Keep reading (and discarding) until the peer closes, so our close sends FIN, not RST.
  start_reading();
}

void FrameLink::close(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  if (close_reason_.empty()) close_reason_ = reason;
  boost::system::error_code ignored;
  linger_timer_.cancel();
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  queue_.clear();
  queued_bytes_ = 0;
  on_closed();
}

}  // namespace myriad::server::detail
