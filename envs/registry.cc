// The registry: each env type of envs/env_list.h under its Gymnasium id.
#include "myriad/registry.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>

#include "envs/classic_batch_env.h"
#include "envs/env_list.h"
#include "envs/env_options.h"
#include "envs/locomotion/env_list.h"
#include "envs/mjcf/mjcf_env.h"
#include "envs/multi_agent_batch_env.h"
#include "envs/physics_batch_env.h"

namespace myriad::envs {

std::string shape_string(at::IntArrayRef shape) {
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + "]";
}

at::Tensor observations_for_drawing(const at::Tensor& obs, const EnvSpec& spec) {
  const int64_t width = spec.observation_space.flat_size();
  if (obs.dim() != 2 || obs.size(1) != width)
    throw std::invalid_argument(spec.id + " body_poses: expected observations of shape [B, " +
                                std::to_string(width) + "], got " + shape_string(obs.sizes()));
  return obs.to(at::kCPU, at::kFloat).contiguous();
}

namespace {

struct Entry {
  std::function<EnvSpec()> spec;
  std::function<std::unique_ptr<BatchEnv>(int64_t, DeviceId, uint64_t, const EnvOptions&,
                                          const EnvTextOptions&)>
      make;
};

// Envs whose options are all numbers: text given for an option is refused naming it.
void refuse_text_options(const EnvSpec& spec, const EnvTextOptions& text) {
  if (text.empty()) return;
  const auto& [key, value] = *text.begin();
  const auto& names = spec.option_names;
  if (key == "max_episode_steps" || std::find(names.begin(), names.end(), key) != names.end())
    throw std::invalid_argument("env '" + spec.id + "' option " + key + " takes a number, got '" +
                                value + "'");
  unknown_option(spec, key);
}

template <class Env>
Entry entry() {
  return {&Env::spec,
          [](int64_t n, DeviceId d, uint64_t seed, const EnvOptions& o, const EnvTextOptions& t) {
            refuse_text_options(Env::spec(), t);
            return std::unique_ptr<BatchEnv>(new ClassicBatchEnv<Env>(n, d, seed, o));
          }};
}

// A multi-agent scenario in its discrete and continuous variants: the option `continuous` (0 or
// 1, default 0) chooses between them; the rest go to the variant.
template <class Discrete, class Continuous>
Entry multi_agent_entry() {
  return {
      &Discrete::spec,
      [](int64_t n, DeviceId d, uint64_t seed, const EnvOptions& o, const EnvTextOptions& t) {
        const std::string id = Discrete::spec().id;
        refuse_text_options(Discrete::spec(), t);
        EnvOptions rest = o;
        bool continuous = false;
        if (auto it = rest.find("continuous"); it != rest.end()) {
          if (it->second != 0.0 && it->second != 1.0)
            throw std::invalid_argument("env '" + id +
                                        "' option continuous must be 0 (discrete actions) or "
                                        "1 (continuous actions), got " +
                                        std::to_string(it->second));
          continuous = it->second == 1.0;
          rest.erase(it);
        }
        if (continuous)
          return std::unique_ptr<BatchEnv>(new MultiAgentBatchEnv<Continuous>(n, d, seed, rest));
        return std::unique_ptr<BatchEnv>(new MultiAgentBatchEnv<Discrete>(n, d, seed, rest));
      }};
}

// A physics env (envs/locomotion/); its spec is that of a one-env batch with default options.
template <class Env>
Entry physics_entry() {
  return {[] {
            return PhysicsBatchEnv<Env>(1, DeviceId{Device::kCpu, 0}, 0, {}, {}).spec();
          },
          [](int64_t n, DeviceId d, uint64_t seed, const EnvOptions& o, const EnvTextOptions& t) {
            return std::unique_ptr<BatchEnv>(new PhysicsBatchEnv<Env>(n, d, seed, o, t));
          }};
}

const std::map<std::string, Entry>& table() {
  static const std::map<std::string, Entry> t = [] {
    std::map<std::string, Entry> m;
    auto add = [&](Entry e) { m.emplace(e.spec().id, std::move(e)); };
#define MYRIAD_X(Env) add(entry<Env>());
    MYRIAD_CLASSIC_ENVS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_Y(Discrete, Continuous, ...) add(multi_agent_entry<Discrete, Continuous>());
    MYRIAD_MULTI_AGENT_ENVS(MYRIAD_Y, )
#undef MYRIAD_Y
    add({&mjcf_spec_template, &make_mjcf_env});
#define MYRIAD_X(Env) m.emplace(Env::kId, physics_entry<Env>());
    MYRIAD_PHYSICS_ENVS(MYRIAD_X)
    MYRIAD_TASK_ENVS(MYRIAD_X)
#undef MYRIAD_X
    return m;
  }();
  return t;
}

const Entry& find(const std::string& id) {
  auto it = table().find(id);
  if (it == table().end()) {
    std::string ids;
    for (const auto& [name, _] : table()) ids += (ids.empty() ? "" : ", ") + name;
    throw std::invalid_argument("unknown env id '" + id + "' (registered: " + ids + ")");
  }
  return it->second;
}

}  // namespace

std::unique_ptr<BatchEnv> make(const std::string& id, int64_t num_envs, DeviceId device,
                               uint64_t seed, const EnvOptions& options,
                               const EnvTextOptions& text_options) {
  const Entry& entry = find(id);
  // Env state and checkpoints store the seed as int64: a larger one would come back negative.
  if (seed > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw std::invalid_argument("env '" + id + "': seed must lie in [0, 2**63-1], got " +
                                std::to_string(seed));
  if (device.is_cuda()) {
    if (!cuda_compiled())
      throw std::invalid_argument("env '" + id + "' on " + device_name(device) +
                                  ": this Myriad build has no CUDA backend (nvcc was not found "
                                  "or MYRIAD_CUDA was OFF when it was configured); use device=cpu");
    const int gpus = cuda_device_count();
    if (device.index < 0 || device.index >= gpus)
      throw std::invalid_argument("env '" + id + "': device " + device_name(device) +
                                  " does not exist (this process sees " + std::to_string(gpus) +
                                  " CUDA GPU" + (gpus == 1 ? "" : "s") + ")");
  }
  return entry.make(num_envs, device, seed, options, text_options);
}

std::unique_ptr<BatchEnv> make(const std::string& id, int64_t num_envs, Device device,
                               uint64_t seed, const EnvOptions& options,
                               const EnvTextOptions& text_options) {
  const DeviceId d{device, device == Device::kCuda ? cuda_current_device() : 0};
  return make(id, num_envs, d, seed, options, text_options);
}

std::vector<std::string> registered_ids() {
  std::vector<std::string> ids;
  for (const auto& [name, _] : table()) ids.push_back(name);
  return ids;
}

EnvSpec spec_of(const std::string& id) { return find(id).spec(); }

}  // namespace myriad::envs
