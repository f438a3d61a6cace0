#include "learner/tensorboard.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

namespace myriad::learner {
namespace {

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Protobuf wire format: each field is a varint key (field_number << 3 | wire_type), then data.
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_key(std::string& out, uint32_t field, uint32_t wire_type) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}

template <typename T>
void put_little_endian(std::string& out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void put_double(std::string& out, uint32_t field, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  put_key(out, field, 1);  // wire type 1: fixed64
  put_little_endian(out, bits);
}

void put_float(std::string& out, uint32_t field, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  put_key(out, field, 5);  // wire type 5: fixed32
  put_little_endian(out, bits);
}

void put_int64(std::string& out, uint32_t field, int64_t v) {
  put_key(out, field, 0);  // wire type 0: varint; negatives take 10 bytes, as in protobuf
  put_varint(out, static_cast<uint64_t>(v));
}

void put_bytes(std::string& out, uint32_t field, const std::string& bytes) {
  put_key(out, field, 2);  // wire type 2: length-delimited (strings and sub-messages)
  put_varint(out, bytes.size());
  out += bytes;
}

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

}  // namespace

uint32_t masked_crc32c(const void* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::vector<EventRecord> read_event_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open TensorBoard event file " + path);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto u64 = [&](size_t at) {
    uint64_t v = 0;
    for (size_t i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    return v;
  };
  const auto u32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i)
      v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    return v;
  };
  std::vector<EventRecord> records;
  size_t at = 0;
  while (at + 16 <= bytes.size()) {
    const uint64_t length = u64(at);
    if (masked_crc32c(bytes.data() + at, 8) != u32(at + 8)) break;
    if (length > bytes.size() - at - 16) break;
    const char* data = bytes.data() + at + 12;
    if (masked_crc32c(data, length) != u32(at + 12 + length)) break;
    // Event.step is field 2 (varint); skip the others by wire type.
    EventRecord r;
    size_t k = 0;
    bool ok = true;
    const auto varint = [&](uint64_t& v) {
      v = 0;
      for (int shift = 0; k < length && shift < 64; shift += 7) {
        const auto b = static_cast<unsigned char>(data[k++]);
        v |= static_cast<uint64_t>(b & 0x7F) << shift;
        if (!(b & 0x80)) return true;
      }
      return false;
    };
    while (ok && k < length) {
      uint64_t key = 0, v = 0;
      if (!varint(key)) break;
      switch (key & 7) {
        case 0:
          ok = varint(v);
          if ((key >> 3) == 2) r.step = static_cast<int64_t>(v);
          break;
        case 1:
          k += 8;
          break;
        case 5:
          k += 4;
          break;
        case 2:
          ok = varint(v) && v <= length - k;
          k += v;
          break;
        default:
          ok = false;
      }
    }
    at += 16 + length;
    r.end = at;
    records.push_back(r);
  }
  return records;
}

int64_t truncate_event_files_after(const std::string& dir, int64_t step) {
  int64_t dropped = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("events.out.tfevents.", 0) != 0 || !entry.is_regular_file()) continue;
    const std::string path = entry.path().string();
    const std::vector<EventRecord> records = read_event_records(path);
    uint64_t keep = 0;
    size_t kept = 0;
    // Steps grow through a file, so everything after the first one past `step` goes.
    while (kept < records.size() && records[kept].step <= step) keep = records[kept++].end;
    dropped += static_cast<int64_t>(records.size() - kept);
    if (keep == entry.file_size()) continue;
    if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0)
      throw std::runtime_error("cannot cut TensorBoard event file " + path +
                               " back to the checkpoint's step: " + std::strerror(errno));
  }
  return dropped;
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir) {
  const auto seconds = static_cast<int64_t>(now_seconds());
  const std::string base = (std::filesystem::path(dir) /
                            ("events.out.tfevents." + std::to_string(seconds) + "." + hostname()))
                               .string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw std::runtime_error("TensorBoardWriter: cannot create directory " + dir + " for " + base +
                             ": " + ec.message());
  }
  path_ = base;
  for (int k = 1; std::filesystem::exists(path_); ++k) path_ = base + "." + std::to_string(k);
  out_.open(path_, std::ios::binary | std::ios::trunc);
  if (!out_) throw std::runtime_error("TensorBoardWriter: cannot open " + path_);

  std::string event;
  put_double(event, 1, now_seconds());   // Event.wall_time
  put_bytes(event, 3, "brain.Event:2");  // Event.file_version
  write_record(event);
  flush();
}

TensorBoardWriter::~TensorBoardWriter() {
  try {
    flush();
  } catch (...) {
    // A destructor must not throw; a caller wanting the error calls flush() first.
  }
}

void TensorBoardWriter::add_scalar(const std::string& tag, double value, int64_t step,
                                   double wall_time) {
  std::string summary_value;
  put_bytes(summary_value, 1, tag);                        // Summary.Value.tag
  put_float(summary_value, 2, static_cast<float>(value));  // Summary.Value.simple_value
  std::string summary;
  put_bytes(summary, 1, summary_value);  // Summary.value (repeated)

  std::string event;
  put_double(event, 1, wall_time < 0 ? now_seconds() : wall_time);  // Event.wall_time
  put_int64(event, 2, step);                                        // Event.step
  put_bytes(event, 5, summary);                                     // Event.summary
  write_record(event);
}

void TensorBoardWriter::flush() {
  out_.flush();
  if (!out_) throw std::runtime_error("TensorBoardWriter: failed writing " + path_);
}

void TensorBoardWriter::write_record(const std::string& data) {
  // TFRecord framing: length, masked CRC of the length bytes, data, masked CRC of the data.
  std::string header;
  put_little_endian(header, static_cast<uint64_t>(data.size()));
  const uint32_t length_crc = masked_crc32c(header.data(), header.size());
  put_little_endian(header, length_crc);
  std::string footer;
  put_little_endian(footer, masked_crc32c(data.data(), data.size()));
  out_.write(header.data(), static_cast<std::streamsize>(header.size()));
  out_.write(data.data(), static_cast<std::streamsize>(data.size()));
  out_.write(footer.data(), static_cast<std::streamsize>(footer.size()));
}

}  // namespace myriad::learner
