// Replay files: a round trip keeps every array and header key; truncated, corrupt, foreign and
// newer-major files are refused with a message saying which, never a crash.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>

#include "myriad/replay.h"
#include "tests/temp_dir.h"

namespace myriad::replay {
namespace {

Replay sample() {
  Replay r;
  r.header = {{"env", "Test-v0"}, {"num_envs", 2}, {"num_frames", 3}};
  std::vector<float> pose(2 * 3 * 2 * 7);
  for (size_t k = 0; k < pose.size(); ++k) pose[k] = 0.25f * k - 3;
  r.arrays["body_pose"] = make_array({2, 3, 2, 7}, pose);
  r.arrays["episode"] = make_array<int32_t>({2, 3}, {0, 0, 1, 0, 0, -1});
  r.arrays["flags"] = make_array<uint8_t>({2, 3}, {1, 2, 1, 1, 4, 0});
  return r;
}

std::string message_of(const std::vector<uint8_t>& bytes) {
  try {
    decode(bytes, "f.replay");
  } catch (const ReplayError& e) {
    return e.what();
  }
  return "";
}

TEST(ReplayFile, RoundTripKeepsArraysAndHeader) {
  testing_util::TempDir dir("replay");
  const Replay a = sample();
  write_file(dir.file("a.replay"), a);
  const Replay b = read_file(dir.file("a.replay"));
  EXPECT_EQ(b.header.at("env"), "Test-v0");
  EXPECT_EQ(b.header.at("format"), "myriad-replay");
  EXPECT_EQ(b.header.at("version"), nlohmann::json({kMajorVersion, kMinorVersion}));
  ASSERT_EQ(b.arrays.size(), a.arrays.size());
  for (const auto& [name, arr] : a.arrays) {
    const Array& got = b.arrays.at(name);
    EXPECT_EQ(got.dtype, arr.dtype) << name;
    EXPECT_EQ(got.shape, arr.shape) << name;
    EXPECT_EQ(got.bytes, arr.bytes) << name;
  }
}

TEST(ReplayFile, RefusesForeignTruncatedCorruptAndNewerFiles) {
  const std::vector<uint8_t> good = encode(sample());
  EXPECT_EQ(message_of(good), "");

  std::vector<uint8_t> foreign = good;
  foreign[0] = 'X';
  EXPECT_NE(message_of(foreign).find("not a Myriad replay"), std::string::npos);

  for (size_t keep : {size_t{12}, size_t{30}, good.size() - 1}) {
    const std::vector<uint8_t> cut(good.begin(), good.begin() + keep);
    EXPECT_NE(message_of(cut).find("truncated"), std::string::npos) << keep << " bytes";
  }

  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_NE(message_of(longer).find("1 bytes after the payload"), std::string::npos);

  std::vector<uint8_t> corrupt = good;
  for (size_t k = good.size() - 20; k < good.size() - 4; ++k) corrupt[k] ^= 0x5a;
  EXPECT_NE(message_of(corrupt).find("corrupt"), std::string::npos);

  std::vector<uint8_t> newer = good;
  newer[8] = static_cast<uint8_t>(kMajorVersion + 1);
  const std::string m = message_of(newer);
  EXPECT_NE(m.find("newer than this reader"), std::string::npos) << m;
  EXPECT_NE(m.find("f.replay"), std::string::npos) << m;

  // A newer minor version still reads.
  std::vector<uint8_t> minor = good;
  minor[10] = 9;
  EXPECT_EQ(message_of(minor), "");
}

TEST(ReplayFile, RefusesAnArrayOutsideThePayload) {
  std::vector<uint8_t> bytes = encode(sample());
  uint32_t header_len;
  std::memcpy(&header_len, bytes.data() + 12, 4);
  std::string header(bytes.begin() + 24, bytes.begin() + 24 + header_len);
  // Same length, bigger shape: the array no longer fits its byte count.
  const size_t at = header.find("[2,3]");
  ASSERT_NE(at, std::string::npos);
  header.replace(at, 5, "[9,3]");
  std::copy(header.begin(), header.end(), bytes.begin() + 24);
  EXPECT_NE(message_of(bytes).find("does not fit"), std::string::npos);
}

// The file with its JSON header replaced by edit(header), lengths fixed up.
template <class F>
std::vector<uint8_t> with_header(const std::vector<uint8_t>& good, F edit) {
  uint32_t header_len = 0;
  for (int k = 0; k < 4; ++k) header_len |= uint32_t{good[12 + k]} << (8 * k);
  nlohmann::json header = nlohmann::json::parse(good.begin() + 24, good.begin() + 24 + header_len);
  edit(header);
  const std::string text = header.dump();
  std::vector<uint8_t> out(good.begin(), good.begin() + 24);
  for (int k = 0; k < 4; ++k) out[12 + k] = static_cast<uint8_t>(text.size() >> (8 * k));
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), good.begin() + 24 + header_len, good.end());
  return out;
}

TEST(ReplayFile, HostileHeadersAreRefusedWithoutHugeAllocations) {
  const std::vector<uint8_t> good = encode(sample());
  EXPECT_NE(message_of(with_header(good, [](auto& h) { h["payload_bytes"] = 1ull << 40; }))
                .find("cannot come from"),
            std::string::npos);
  const auto huge_shape = [](auto& h) {
    h["arrays"]["episode"]["shape"] = {int64_t{1} << 32, int64_t{1} << 32};
  };
  EXPECT_NE(message_of(with_header(good, huge_shape)).find("larger than the payload"),
            std::string::npos);
  EXPECT_NE(message_of(with_header(good, [](auto& h) { h["format"] = "zip"; }))
                .find("not a Myriad replay"),
            std::string::npos);
  EXPECT_NE(message_of(with_header(good, [](auto& h) { h["arrays"] = 3; })).find("corrupt"),
            std::string::npos);
}

TEST(ReplayFile, MissingFileIsAnError) {
  EXPECT_THROW(read_file("/nonexistent/x.replay"), ReplayError);
}

}  // namespace
}  // namespace myriad::replay
