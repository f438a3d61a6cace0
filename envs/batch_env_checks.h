// What ClassicBatchEnv and MultiAgentBatchEnv check and copy alike, written once: batch size,
// the options every env takes, seeds, set_state rows, and the rollout state's save and load.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "myriad/env_spec.h"
#include "myriad/host_memory.h"
#include "myriad/registry.h"

namespace myriad::envs {

// num_envs in [1, 2^31] and, on the CPU, bytes_per_env * num_envs within available memory.
inline void check_batch_size(const EnvSpec& spec, int64_t num_envs, bool on_cpu,
                             int64_t bytes_per_env) {
  if (num_envs <= 0)
    throw std::invalid_argument("num_envs must be positive, got " + std::to_string(num_envs));
  if (num_envs > (int64_t{1} << 31))
    throw std::invalid_argument("num_envs must be at most 2^31, got " + std::to_string(num_envs));
  if (on_cpu)  // every [N, ...] buffer of the env, counted before the first is allocated
    check_host_allocation(checked_product(num_envs, bytes_per_env),
                          spec.id + " with num_envs=" + std::to_string(num_envs));
}

// Refuses a non-finite option value; takes max_episode_steps (into spec) and returns true, or
// returns false for an option of the env itself.
inline bool take_common_option(EnvSpec& spec, const std::string& key, double value) {
  if (!std::isfinite(value))
    throw std::invalid_argument(spec.id + " option " + key + " must be finite, got " +
                                std::to_string(value));
  if (key != "max_episode_steps") return false;
  if (!(value >= 1 && value <= std::numeric_limits<int32_t>::max()) || value != std::floor(value))
    throw std::invalid_argument(
        "env option max_episode_steps must be an integer in [1, 2147483647], got " +
        std::to_string(value));
  spec.max_episode_steps = static_cast<int>(value);
  return true;
}

// Env state and checkpoints store the seed as int64: a larger one would come back negative.
inline void check_seed(const EnvSpec& spec, uint64_t seed) {
  if (seed > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw std::invalid_argument(spec.id + " reset: seed must lie in [0, 2**63-1], got " +
                                std::to_string(seed));
}

// set_state: writes rows env_ids (all when undefined) of state [N, S] from given [rows, S].
inline void write_state_rows(const EnvSpec& spec, at::Tensor& state, const at::Tensor& given,
                             const at::Tensor& env_ids) {
  const int64_t n = state.size(0), width = state.size(1);
  const int64_t rows = env_ids.defined() ? env_ids.numel() : n;
  if (given.dim() != 2 || given.size(0) != rows || given.size(1) != width)
    throw std::invalid_argument("set_state: expected state of shape [" + std::to_string(rows) +
                                ", " + std::to_string(width) + "] (" + spec.id + " state), got " +
                                shape_string(given.sizes()));
  const at::Tensor values = given.to(state.options());
  if (!at::isfinite(values).all().item<bool>())
    throw std::invalid_argument("set_state: state contains NaN or infinity");
  if (!env_ids.defined()) {
    state.copy_(values);
    return;
  }
  const at::Tensor ids = env_ids.to(at::TensorOptions().dtype(at::kLong).device(state.device()));
  if (rows > 0 && (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= n))
    throw std::invalid_argument("set_state: env_ids must lie in [0, " + std::to_string(n) + ")");
  state.index_copy_(0, ids, values);
}

// The tensors a rollout state holds, by name (ATen writes through a const Tensor).
using RolloutTensors = std::vector<std::pair<const char*, const at::Tensor*>>;

// Copies to the CPU (also from the CPU, so the snapshot does not move on with the env).
inline std::map<std::string, at::Tensor> save_rollout(const RolloutTensors& named, uint64_t seed) {
  std::map<std::string, at::Tensor> out;
  for (const auto& [key, t] : named) out[key] = t->to(at::kCPU, false, /*copy=*/true);
  out["seed"] = at::tensor({static_cast<int64_t>(seed)}, at::kLong);
  return out;
}

// Every entry is checked before any is copied, so a refused state changes nothing; returns the
// saved seed.
inline uint64_t load_rollout(const std::map<std::string, at::Tensor>& saved,
                             const RolloutTensors& named) {
  for (const auto& [key, into] : named) {
    auto it = saved.find(key);
    if (it == saved.end()) throw std::invalid_argument(std::string("rollout state lacks ") + key);
    if (!it->second.sizes().equals(into->sizes()))
      throw std::invalid_argument(std::string("rollout state '") + key + "' has shape " +
                                  shape_string(it->second.sizes()) + ", expected " +
                                  shape_string(into->sizes()));
  }
  const auto seed = saved.find("seed");
  if (seed == saved.end() || seed->second.numel() != 1)
    throw std::invalid_argument("rollout state lacks its seed");
  for (const auto& [key, into] : named) into->copy_(saved.at(key));
  return static_cast<uint64_t>(seed->second.item<int64_t>());
}

}  // namespace myriad::envs
