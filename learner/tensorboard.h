// Minimal TensorBoard event-file writer: scalar summaries only, framed as TFRecords, with the
// Event protobuf encoded by hand so the project needs neither protoc nor TensorFlow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

namespace myriad::learner {

// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as used by TFRecord framing.
uint32_t crc32c(const void* data, size_t size);

// TFRecord's masked CRC: rotated and offset so CRCs of data containing CRCs stay well-mixed.
uint32_t masked_crc32c(const void* data, size_t size);

class TensorBoardWriter {
 public:
  // Creates `dir` if missing and opens events.out.tfevents.<unix_seconds>.<hostname> in it,
  // writing the file_version "brain.Event:2" record first. Throws std::runtime_error naming
  // the path on failure.
  explicit TensorBoardWriter(const std::string& dir);
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;
  ~TensorBoardWriter();  // flushes; never throws

  // Appends one scalar (stored as float32, as TensorBoard's simple_value is). A negative
  // wall_time means now.
  void add_scalar(const std::string& tag, double value, int64_t step, double wall_time = -1);
  // Throws std::runtime_error naming the path if the file could not be written.
  void flush();
  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& data);

  std::string path_;
  std::ofstream out_;
};

}  // namespace myriad::learner
