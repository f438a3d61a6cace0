// Checkpoint files: one torch archive holding the config (YAML text), the policy, the
// optimizer, the observation/return normalizers, the RNG and env rollout state and the step
// counters, so that resuming gives the same next update as an uninterrupted run.
//
// Format 3 (written since issue 13): the torch archive's bytes followed by a 24-byte trailer,
//   "MYRIADCK" | payload length (u64 LE) | CRC32C of the payload (u32 LE) | format (u32 LE),
// so a truncated or corrupted file is refused by name before torch parses it. Zip readers
// ignore trailing bytes: plain torch.jit.load still reads the archive. Format 2 (the same
// archive without the trailer) is still read everywhere, without a checksum to check.
//
// Written in memory, then to PATH.tmp (every write, the fsync and the close checked), then
// renamed over PATH: a crash or a full disk never leaves a half-written checkpoint at PATH; a
// failed write removes PATH.tmp and throws std::runtime_error naming PATH and the OS error.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>

namespace myriad::learner {

// 2: flat Adam state, the episode window on the device, the sampling generator on every device.
// 3: format 2 plus the checksum trailer and the env's spaces ("spaces.observation/action").
constexpr int64_t kCheckpointVersion = 3;
constexpr int64_t kOldestReadableCheckpointVersion = 2;

void save_archive_atomically(torch::serialize::OutputArchive& archive, const std::string& path);
// Verifies the trailer (length, checksum, format) and loads the archive onto the host. Returns
// the checkpoint's format. Throws std::invalid_argument naming `path` and what is wrong.
int64_t load_archive(torch::serialize::InputArchive& archive, const std::string& path);

// Writes `bytes` to path atomically as described above.
void write_file_atomically(const std::string& bytes, const std::string& path);

void write_tensor(torch::serialize::OutputArchive& a, const std::string& key,
                  const torch::Tensor& t);
torch::Tensor read_tensor(torch::serialize::InputArchive& a, const std::string& key);
void write_string(torch::serialize::OutputArchive& a, const std::string& key, const std::string& s);
std::string read_string(torch::serialize::InputArchive& a, const std::string& key);

}  // namespace myriad::learner
