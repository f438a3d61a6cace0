// Replay files: a round trip keeps every array and header key; truncated, corrupt, foreign and
// newer-major files are refused with a message saying which, never a crash.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <cstring>
#include <fstream>

#include "myriad/replay.h"
#include "tests/temp_dir.h"

namespace myriad::replay {
namespace {

// A small recording: 2 envs, 3 frames, 2 bodies, the seven per-frame arrays and a scene.
Replay sample() {
  Replay r;
  r.header = {{"env", "Test-v0"}, {"num_envs", 2}, {"num_frames", 3}};
  std::vector<float> pose(2 * 3 * 2 * 7);
  for (size_t k = 0; k < pose.size(); ++k) pose[k] = 0.25f * k - 3;
  r.arrays["body_pose"] = make_array({2, 3, 2, 7}, pose);
  r.arrays["reward"] = make_array<float>({2, 3}, {0, 1, 1, 0, 1, 0});
  r.arrays["value"] = make_array<float>({2, 3}, {5, 4, 3, 5, 4, 0});
  r.arrays["action"] = make_array<float>({2, 3, 1}, {1, 0, 0, 1, 1, 0});
  r.arrays["episode"] = make_array<int32_t>({2, 3}, {0, 0, 1, 0, 0, -1});
  r.arrays["flags"] = make_array<uint8_t>({2, 3}, {1, 2, 1, 1, 4, 0});
  r.arrays["num_frames"] = make_array<int32_t>({2}, {3, 2});
  Scene s;
  s.bodies = {"world", "ball"};
  s.geoms.push_back({"ball", "sphere", 1, -1, {0.1f, 0, 0}});
  add_scene(r, s);
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
  EXPECT_NE(message_of(with_header(good, huge_shape)).find("larger than the"), std::string::npos);
  EXPECT_NE(message_of(with_header(good, [](auto& h) { h["format"] = "zip"; }))
                .find("not a Myriad replay"),
            std::string::npos);
  EXPECT_NE(message_of(with_header(good, [](auto& h) { h["arrays"] = 3; })).find("corrupt"),
            std::string::npos);
}

// The rules the Python reader (python/myriad/replay.py) applies too; tests/python/
// test_replay_mutations.py checks that both give the same verdict on thousands of files.
TEST(ReplayFile, RefusesHeadersBothReadersRefuse) {
  const std::vector<uint8_t> good = encode(sample());
  const auto refused = [&](auto edit, const std::string& why) {
    const std::string m = message_of(with_header(good, edit));
    EXPECT_NE(m.find(why), std::string::npos) << "got: " << m;
  };
  refused([](auto& h) { h["payload_bytes"] = 1.5; }, "payload_bytes is 1.5, not an integer");
  refused([](auto& h) { h["payload_bytes"] = true; }, "not an integer");
  refused([](auto& h) { h["payload_bytes"] = "12"; }, "not an integer");
  refused([](auto& h) { h["arrays"]["reward"]["offset"] = -8; }, "offset is -8");
  refused([](auto& h) { h["arrays"]["reward"]["bytes"] = uint64_t{1} << 63; }, "0..2^63-1");
  refused([](auto& h) { h["arrays"]["reward"]["shuffle"] = 1; }, "not true or false");
  refused([](auto& h) { h["arrays"]["reward"]["shape"] = "23"; }, "not a list");
  refused([](auto& h) { h["arrays"] = nlohmann::json::array(); }, "not an object");
  refused([](auto& h) { h["arrays"]["value"]["offset"] = h["arrays"]["reward"]["offset"]; },
          "overlap");
  refused([](auto& h) { h["arrays"]["value"]["offset"] = 4; }, "not a multiple of 8");
  refused([](auto& h) { h["arrays"].erase("reward"); }, "array 'reward' is missing");
  refused([](auto& h) { h["arrays"]["reward"]["dtype"] = "int32"; }, "expected float32");
  refused([](auto& h) { h["num_envs"] = 3; }, "header num_envs says M = 3");
  refused([](auto& h) { h["scene"]["bodies"].push_back("extra"); }, "the scene 3");
  refused([](auto& h) { h["scene"]["geoms"][0]["body"] = 2; }, "refers to body 2 of 2");
}

// The raw JSON text: what one JSON library reads and the other might not.
TEST(ReplayFile, RefusesJsonTextBothReadersRefuse) {
  const std::vector<uint8_t> good = encode(sample());
  uint32_t header_len;
  std::memcpy(&header_len, good.data() + 12, 4);
  const std::string text(good.begin() + 24, good.begin() + 24 + header_len);
  const auto message = [&](const std::string& header) {
    std::vector<uint8_t> out(good.begin(), good.begin() + 24);
    const uint32_t n = static_cast<uint32_t>(header.size());
    std::memcpy(out.data() + 12, &n, 4);
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), good.begin() + 24 + header_len, good.end());
    return message_of(out);
  };
  const std::string open = text.substr(0, text.size() - 1) + ",\"x\":";
  EXPECT_NE(message(open + std::string(64, '[') + std::string(64, ']') + "}").find("nested"),
            std::string::npos);
  EXPECT_EQ(message(open + std::string(63, '[') + std::string(63, ']') + "}"), "");
  EXPECT_NE(message(open + std::string(100000, '[') + "}").find("nested deeper than 64"),
            std::string::npos);
  EXPECT_NE(message(open + "1,\"x\":2}").find("duplicate key \"x\""), std::string::npos);
  EXPECT_NE(message(text + std::string(1, '\0') + "junk").find("NUL byte"), std::string::npos);
  EXPECT_NE(message("\xEF\xBB\xBF" + text).find("byte-order mark"), std::string::npos);
  EXPECT_NE(message(open + "1e400}").find("overflow"), std::string::npos);
  EXPECT_NE(message(open + "\"\\ud800\"}").find("surrogate"), std::string::npos);
  EXPECT_EQ(message(open + "1e-400}"), "");
}

// A header may claim up to ~1032 bytes per compressed byte; the reader allocates only what the
// stream really holds (before, a 1 MB file made it allocate 1 GB).
TEST(ReplayFile, LyingPayloadBytesAllocatesOnlyWhatTheStreamHolds) {
  Replay r = sample();
  std::vector<uint8_t> noise(1 << 20);
  uint32_t x = 12345;
  for (uint8_t& b : noise) b = static_cast<uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
  r.arrays["noise"] = make_array<uint8_t>({static_cast<int64_t>(noise.size())}, noise);
  const std::vector<uint8_t> good = encode(r);
  uint64_t packed;
  std::memcpy(&packed, good.data() + 16, 8);
  const std::vector<uint8_t> lying =
      with_header(good, [&](auto& h) { h["payload_bytes"] = packed * 1032; });
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  EXPECT_NE(message_of(lying).find("decompresses to"), std::string::npos);
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024) << "KiB of peak memory";
}

TEST(ReplayFile, MissingFileIsAnError) {
  EXPECT_THROW(read_file("/nonexistent/x.replay"), ReplayError);
}

}  // namespace
}  // namespace myriad::replay
