#include "learner/checkpoint.h"

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "learner/trainer.h"
#include "myriad/registry.h"
#include "myriad/torch_device.h"

namespace myriad::learner {

// 2: flat Adam state, the episode window on the device, the sampling generator on every device.
constexpr int64_t kCheckpointVersion = 2;

void save_archive_atomically(torch::serialize::OutputArchive& archive, const std::string& path) {
  const std::string tmp = path + ".tmp";
  archive.save_to(tmp);
  std::filesystem::rename(tmp, path);
}

void load_archive(torch::serialize::InputArchive& archive, const std::string& path) {
  if (!std::filesystem::exists(path))
    throw std::invalid_argument("checkpoint '" + path + "' does not exist");
  try {
    // Always to the host first, then to wherever it is needed: a checkpoint written on a GPU
    // loads on a machine without one.
    archive.load_from(path, torch::kCPU);
  } catch (const c10::Error& e) {
    throw std::invalid_argument("checkpoint '" + path + "' is not a readable Myriad checkpoint");
  }
}

void write_tensor(torch::serialize::OutputArchive& a, const std::string& key,
                  const torch::Tensor& t) {
  a.write(key, t.cpu(), /*is_buffer=*/true);
}

torch::Tensor read_tensor(torch::serialize::InputArchive& a, const std::string& key) {
  torch::Tensor t;
  if (!a.try_read(key, t, /*is_buffer=*/true))
    throw std::invalid_argument("checkpoint lacks '" + key + "'");
  return t;
}

void write_string(torch::serialize::OutputArchive& a, const std::string& key,
                  const std::string& s) {
  a.write(key, c10::IValue(s));
}

std::string read_string(torch::serialize::InputArchive& a, const std::string& key) {
  c10::IValue v;
  if (!a.try_read(key, v)) throw std::invalid_argument("checkpoint lacks '" + key + "'");
  return v.toStringRef();
}

namespace {

void write_rms(torch::serialize::OutputArchive& a, const std::string& key,
               const RunningMeanStd& r) {
  write_tensor(a, key + ".mean", r.mean);
  write_tensor(a, key + ".var", r.var);
  write_tensor(a, key + ".count", r.count);
}

void read_rms(torch::serialize::InputArchive& a, const std::string& key, RunningMeanStd& r,
              const torch::Device& device) {
  r.mean = read_tensor(a, key + ".mean").to(device);
  r.var = read_tensor(a, key + ".var").to(device);
  r.count = read_tensor(a, key + ".count").to(device);
}

}  // namespace

void Trainer::save_checkpoint(const std::string& path) const {
  torch::serialize::OutputArchive a;
  write_tensor(a, "version", torch::tensor({kCheckpointVersion}));
  write_string(a, "config_yaml", to_yaml(cfg_));
  torch::serialize::OutputArchive model;
  policy_->save(model);
  a.write("policy", model);
  const std::vector<torch::Tensor> adam = optimizer_.state();
  for (size_t k = 0; k < adam.size(); ++k) write_tensor(a, "adam." + std::to_string(k), adam[k]);
  write_rms(a, "obs_rms", obs_rms_);
  write_rms(a, "ret_rms", ret_rms_);
  write_tensor(a, "discounted_return", discounted_return_);
  write_tensor(a, "generator", gen_.get_state());
  write_string(a, "generator_device", gen_.device().is_cpu() ? "cpu" : "cuda");
  write_tensor(a, "counters", torch::tensor({env_steps_, updates_}));
  write_tensor(a, "scalars",
               torch::tensor({seconds(), solved_seconds_.value_or(-1.0)}, torch::kFloat64));
  write_tensor(a, "episodes.values", episodes_.values());
  write_tensor(a, "episodes.count", episodes_.count());
  for (const auto& [key, t] : env_->save_rollout_state()) write_tensor(a, "env." + key, t);
  save_archive_atomically(a, path);
}

void Trainer::load_checkpoint(const std::string& path) {
  torch::serialize::InputArchive a;
  load_archive(a, path);
  const int64_t version = read_tensor(a, "version").item<int64_t>();
  if (version > kCheckpointVersion)
    throw std::invalid_argument("checkpoint '" + path + "' was written by a newer Myriad");
  if (version < kCheckpointVersion)
    throw std::invalid_argument("checkpoint '" + path + "' has format " + std::to_string(version) +
                                "; resuming needs format " + std::to_string(kCheckpointVersion) +
                                " (myriad eval still reads it)");
  const TrainConfig saved = parse_config(read_string(a, "config_yaml"), {});
  if (saved.env.id != cfg_.env.id || saved.env.num_envs != cfg_.env.num_envs ||
      saved.ppo.hidden_sizes != cfg_.ppo.hidden_sizes ||
      saved.ppo.num_steps != cfg_.ppo.num_steps || saved.ppo.activation != cfg_.ppo.activation ||
      saved.env.options != cfg_.env.options || saved.env.xml != cfg_.env.xml)
    throw std::invalid_argument("checkpoint '" + path + "' was trained on " + saved.env.id + " x" +
                                std::to_string(saved.env.num_envs) +
                                " with another env, network or rollout; resume needs the same "
                                "env.id, env.num_envs, env.options, env.xml, ppo.num_steps, "
                                "ppo.hidden_sizes and ppo.activation");
  torch::serialize::InputArchive model;
  a.read("policy", model);
  policy_->load(model);  // host tensors: Module::load replaces the parameters' storage
  policy_->to(device_);
  optimizer_.rebind(policy_->parameters());
  std::vector<torch::Tensor> adam;
  for (int k = 0; k < 4; ++k) adam.push_back(read_tensor(a, "adam." + std::to_string(k)));
  optimizer_.load_state(adam);
  read_rms(a, "obs_rms", obs_rms_, device_);
  read_rms(a, "ret_rms", ret_rms_, device_);
  discounted_return_ = read_tensor(a, "discounted_return").to(device_);
  const torch::Tensor counters = read_tensor(a, "counters");
  env_steps_ = counters[0].item<int64_t>();
  updates_ = counters[1].item<int64_t>();
  // The sampling stream continues where it was on the same kind of device. Moved between CPU
  // and CUDA (whose generator states differ), it restarts from (seed, updates): the run goes on,
  // but not bitwise as it would have on the first device.
  const std::string saved_gen = read_string(a, "generator_device");
  if (saved_gen == (gen_.device().is_cpu() ? "cpu" : "cuda")) {
    gen_.set_state(read_tensor(a, "generator"));
  } else {
    gen_.set_current_seed(cfg_.run.seed + static_cast<uint64_t>(updates_));
    std::cerr << "myriad: resuming a " << saved_gen << " run on " << device_.str()
              << ": the sampling generator restarts from (seed, updates)\n";
  }
  const torch::Tensor scalars = read_tensor(a, "scalars");
  elapsed_before_ = scalars[0].item<double>();
  if (scalars[1].item<double>() >= 0) solved_seconds_ = scalars[1].item<double>();
  episodes_.load(read_tensor(a, "episodes.values"), read_tensor(a, "episodes.count"));
  std::map<std::string, torch::Tensor> env_state;
  for (const auto& [key, _] : env_->save_rollout_state())
    env_state[key] = read_tensor(a, "env." + key);
  env_->load_rollout_state(env_state);
}

LoadedPolicy load_policy(const std::string& checkpoint, const std::string& device) {
  torch::serialize::InputArchive a;
  load_archive(a, checkpoint);
  LoadedPolicy p;
  p.config = parse_config(read_string(a, "config_yaml"), {});
  if (!device.empty()) {
    p.config.env.device = device;
  } else if (p.config.env.device.rfind("cuda", 0) == 0 && !cuda_available()) {
    // Trained on a GPU, evaluated where there is none: the policy runs on the CPU.
    p.config.env.device = "cpu";
  }
  p.spec = configured_spec(p.config);
  const EnvSpec& spec = p.spec;
  const auto& c = p.config;
  p.policy = ActorCritic(spec.observation_space.flat_size(), spec.action_space, c.ppo.hidden_sizes,
                         c.ppo.activation, c.ppo.init_log_std);
  torch::serialize::InputArchive model;
  a.read("policy", model);
  p.policy->load(model);
  const torch::Device td = torch_device(p.config.env.device);
  p.policy->to(td);
  read_rms(a, "obs_rms", p.obs_rms, td);
  read_rms(a, "ret_rms", p.ret_rms, td);
  return p;
}

}  // namespace myriad::learner
