#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "learner/tensorboard.h"
#include "tests/temp_dir.h"
#include "tests/test_python.h"

namespace myriad::learner {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test (the writer must create a missing subdirectory itself).
class TempDir {
 public:
  explicit TempDir(const std::string& name) : root_(name), path_(fs::path(root_.path()) / "tb") {}
  const fs::path& path() const { return path_; }

 private:
  testing_util::TempDir root_;
  fs::path path_;
};

uint64_t read_u64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(s[at + i])) << (8 * i);
  return v;
}

uint32_t read_u32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(s[at + i])) << (8 * i);
  return v;
}

// Splits a TFRecord file into its payloads, checking both CRCs of every record.
std::vector<std::string> read_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> records;
  size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < 12) {
      ADD_FAILURE() << "truncated header at offset " << at;
      break;
    }
    const uint64_t length = read_u64(bytes, at);
    EXPECT_EQ(read_u32(bytes, at + 8), masked_crc32c(bytes.data() + at, 8)) << "offset " << at;
    at += 12;
    if (bytes.size() - at < length + 4) {
      ADD_FAILURE() << "truncated record at offset " << at;
      break;
    }
    records.emplace_back(bytes.substr(at, length));
    EXPECT_EQ(read_u32(bytes, at + length), masked_crc32c(bytes.data() + at, length))
        << "offset " << at;
    at += length + 4;
  }
  return records;
}

TEST(TensorBoard, Crc32cCheckValue) {
  const char* check = "123456789";
  EXPECT_EQ(crc32c(check, std::strlen(check)), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
}

TEST(TensorBoard, WritesFramedScalarEvents) {
  TempDir dir("scalars");
  std::string path;
  {
    // The subdirectory does not exist yet: the writer must create it.
    TensorBoardWriter writer((dir.path() / "run").string());
    path = writer.path();
    EXPECT_EQ(fs::path(path).parent_path(), dir.path() / "run");
    EXPECT_EQ(fs::path(path).filename().string().rfind("events.out.tfevents.", 0), 0u) << path;
    // These tags, values and steps are what read_events.py asserts.
    writer.add_scalar("train/episode_return", 1.5, 10);
    writer.add_scalar("train/loss", 0.25, 10);
    writer.add_scalar("train/episode_return", 2.5, 20, 1700000000.0);
    writer.flush();
    EXPECT_EQ(read_records(path).size(), 4u);
    writer.add_scalar("train/episode_return", 3.5, 30);
  }  // the destructor flushes the last scalar

  const std::vector<std::string> records = read_records(path);
  ASSERT_EQ(records.size(), 5u);
  EXPECT_NE(records[0].find("brain.Event:2"), std::string::npos);
  EXPECT_NE(records[1].find("train/episode_return"), std::string::npos);
  EXPECT_NE(records[2].find("train/loss"), std::string::npos);

  const char* python = testing_util::test_python();
  if (*python == '\0') return;  // no Python with tensorboard to cross-check
  const char* source_dir = std::getenv("MYRIAD_SOURCE_DIR");
  // Without MYRIAD_SOURCE_DIR, find the script next to this source file.
  const fs::path script = source_dir != nullptr && *source_dir != '\0'
                              ? fs::path(source_dir) / "tests/learner/read_events.py"
                              : fs::path(__FILE__).parent_path() / "read_events.py";
  const std::string command = std::string(python) + " '" + script.string() + "' '" + path + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(TensorBoard, ThrowsNamingPathWhenDirectoryCannotBeCreated) {
  TempDir dir("bad");
  fs::create_directories(dir.path());
  const fs::path blocker = dir.path() / "not_a_dir";
  std::ofstream(blocker) << "x";
  const std::string bad = (blocker / "run").string();
  try {
    TensorBoardWriter writer(bad);
    FAIL() << "expected std::runtime_error for " << bad;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad::learner
