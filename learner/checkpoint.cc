#include "learner/checkpoint.h"

#include <filesystem>
#include <stdexcept>

#include "learner/trainer.h"
#include "myriad/registry.h"

namespace myriad::learner {

constexpr int64_t kCheckpointVersion = 1;

void save_archive_atomically(torch::serialize::OutputArchive& archive, const std::string& path) {
  const std::string tmp = path + ".tmp";
  archive.save_to(tmp);
  std::filesystem::rename(tmp, path);
}

void load_archive(torch::serialize::InputArchive& archive, const std::string& path) {
  if (!std::filesystem::exists(path))
    throw std::invalid_argument("checkpoint '" + path + "' does not exist");
  try {
    archive.load_from(path);
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

torch::Tensor to_tensor(const std::deque<float>& d) {
  return torch::tensor(std::vector<float>(d.begin(), d.end()), torch::kFloat);
}

std::deque<float> to_deque(const torch::Tensor& t) {
  const torch::Tensor c = t.contiguous();
  return std::deque<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

}  // namespace

void Trainer::save_checkpoint(const std::string& path) const {
  torch::serialize::OutputArchive a;
  write_tensor(a, "version", torch::tensor({kCheckpointVersion}));
  write_string(a, "config_yaml", to_yaml(cfg_));
  torch::serialize::OutputArchive model, optim;
  policy_->save(model);
  optimizer_->save(optim);
  a.write("policy", model);
  a.write("optimizer", optim);
  write_rms(a, "obs_rms", obs_rms_);
  write_rms(a, "ret_rms", ret_rms_);
  write_tensor(a, "discounted_return", discounted_return_);
  write_tensor(a, "generator", gen_.defined() ? gen_.get_state() : torch::Tensor());
  const double wall =
      elapsed_before_ +
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  write_tensor(a, "counters", torch::tensor({env_steps_, updates_}));
  write_tensor(a, "scalars",
               torch::tensor({lr_, wall, solved_seconds_.value_or(-1.0)}, torch::kFloat64));
  write_tensor(a, "recent_returns", to_tensor(recent_returns_));
  write_tensor(a, "recent_lengths", to_tensor(recent_lengths_));
  for (const auto& [key, t] : env_->save_rollout_state()) write_tensor(a, "env." + key, t);
  save_archive_atomically(a, path);
}

void Trainer::load_checkpoint(const std::string& path) {
  torch::serialize::InputArchive a;
  load_archive(a, path);
  if (read_tensor(a, "version").item<int64_t>() > kCheckpointVersion)
    throw std::invalid_argument("checkpoint '" + path + "' was written by a newer Myriad");
  const TrainConfig saved = parse_config(read_string(a, "config_yaml"), {});
  if (saved.env.id != cfg_.env.id || saved.env.num_envs != cfg_.env.num_envs ||
      saved.ppo.hidden_sizes != cfg_.ppo.hidden_sizes)
    throw std::invalid_argument("checkpoint '" + path + "' was trained on " + saved.env.id + " x" +
                                std::to_string(saved.env.num_envs) +
                                " with other network sizes; resume needs the same env.id, "
                                "env.num_envs and ppo.hidden_sizes");
  torch::serialize::InputArchive model, optim;
  a.read("policy", model);
  a.read("optimizer", optim);
  policy_->load(model);
  policy_->to(device_);
  optimizer_->load(optim);
  read_rms(a, "obs_rms", obs_rms_, device_);
  read_rms(a, "ret_rms", ret_rms_, device_);
  discounted_return_ = read_tensor(a, "discounted_return").to(device_);
  const torch::Tensor g = read_tensor(a, "generator");
  if (g.defined() && g.numel() > 0 && gen_.defined()) gen_.set_state(g);
  const torch::Tensor counters = read_tensor(a, "counters");
  env_steps_ = counters[0].item<int64_t>();
  updates_ = counters[1].item<int64_t>();
  const torch::Tensor scalars = read_tensor(a, "scalars");
  lr_ = scalars[0].item<double>();
  elapsed_before_ = scalars[1].item<double>();
  if (scalars[2].item<double>() >= 0) solved_seconds_ = scalars[2].item<double>();
  recent_returns_ = to_deque(read_tensor(a, "recent_returns"));
  recent_lengths_ = to_deque(read_tensor(a, "recent_lengths"));
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
  if (!device.empty()) p.config.env.device = device;
  p.spec = configured_spec(p.config);
  const EnvSpec& spec = p.spec;
  const auto& c = p.config;
  p.policy = ActorCritic(spec.observation_space.flat_size(), spec.action_space, c.ppo.hidden_sizes,
                         c.ppo.activation, c.ppo.init_log_std);
  torch::serialize::InputArchive model;
  a.read("policy", model);
  p.policy->load(model);
  const Device d = resolve_device(p.config.env.device);
  const torch::Device td =
      d == Device::kCpu ? torch::Device(torch::kCPU) : torch::Device(torch::kCUDA, 0);
  p.policy->to(td);
  read_rms(a, "obs_rms", p.obs_rms, td);
  read_rms(a, "ret_rms", p.ret_rms, td);
  return p;
}

}  // namespace myriad::learner
