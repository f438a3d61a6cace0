// Checkpoint files: one torch archive holding the config (YAML text), the policy, the
// optimizer, the observation/return normalizers, the RNG and env rollout state and the step
// counters, so that resuming gives the same next update as an uninterrupted run. Written to a
// temporary file first, then renamed, so a crash never leaves a half-written checkpoint.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>

namespace myriad::learner {

void save_archive_atomically(torch::serialize::OutputArchive& archive, const std::string& path);
void load_archive(torch::serialize::InputArchive& archive, const std::string& path);

void write_tensor(torch::serialize::OutputArchive& a, const std::string& key,
                  const torch::Tensor& t);
torch::Tensor read_tensor(torch::serialize::InputArchive& a, const std::string& key);
void write_string(torch::serialize::OutputArchive& a, const std::string& key, const std::string& s);
std::string read_string(torch::serialize::InputArchive& a, const std::string& key);

}  // namespace myriad::learner
