// Minimal TensorBoard event-file writer: scalar summaries only, framed as TFRecords, with the
// Event protobuf encoded by hand so the project needs neither protoc nor TensorFlow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "myriad/crc32c.h"

namespace myriad::learner {

// CRC32C (Castagnoli), as used by TFRecord framing; lives in myriad::core.
using myriad::crc32c;

// TFRecord's masked CRC: rotated and offset so CRCs of data containing CRCs stay well-mixed.
uint32_t masked_crc32c(const void* data, size_t size);

// One TFRecord of an event file: the Event's step (0 when absent, as for the file_version
// record) and the file offset just past the record.
struct EventRecord {
  int64_t step = 0;
  uint64_t end = 0;
};
// The intact records of an event file, in order; reading stops at the first torn or
// CRC-failing record (a run killed mid-write). Throws std::runtime_error if it cannot be opened.
std::vector<EventRecord> read_event_records(const std::string& path);

// Resuming a run in place from a checkpoint at `step`: cuts every event file in `dir` after its
// last intact record with step <= `step`, so that no step is ever written twice. TensorBoard's
// readers disagree about a step seen twice (the Python EventAccumulator purges on an
// out-of-order step, the Rust data server expects each file's steps in order and reads
// files in name order), so the only layout both read correctly is one where the new
// session's file (named later) starts past every step the old ones keep. Returns the number of
// records dropped.
int64_t truncate_event_files_after(const std::string& dir, int64_t step);

class TensorBoardWriter {
 public:
  // Creates `dir` if missing and opens events.out.tfevents.<unix_seconds>.<hostname> in it
  // (with a ".<k>" suffix if that file exists: a resumed run never truncates its earlier
  // file), writing the file_version "brain.Event:2" record first. Throws std::runtime_error naming
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
