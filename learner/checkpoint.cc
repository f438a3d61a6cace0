#include "learner/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "learner/tensorboard.h"
#include "learner/trainer.h"
#include "myriad/registry.h"
#include "myriad/torch_device.h"

namespace myriad::learner {
namespace {

constexpr char kTrailerMagic[8] = {'M', 'Y', 'R', 'I', 'A', 'D', 'C', 'K'};
constexpr size_t kTrailerSize = 24;

template <typename T>
void put_le(std::string& out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

template <typename T>
T get_le(const char* p) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<T>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

std::string os_error(int err) { return std::strerror(err); }

}  // namespace

void write_file_atomically(const std::string& bytes, const std::string& path) {
  const std::string tmp = path + ".tmp";
  const auto fail = [&](const std::string& what, int err, int fd) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());  // never leave a stale PATH.tmp behind
    throw std::runtime_error("cannot write checkpoint '" + path + "': " + what + " " + tmp + ": " +
                             os_error(err) + "; the previous checkpoint (if any) is unchanged");
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("opening", errno, -1);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("writing", n < 0 ? errno : ENOSPC, fd);
    done += static_cast<size_t>(n);
  }
  // A full disk can surface only here (delayed allocation), so both are checked.
  if (::fsync(fd) != 0) fail("syncing", errno, fd);
  if (::close(fd) != 0) fail("closing", errno, -1);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("renaming", errno, -1);
  // Make the rename itself durable; a failure here loses nothing already written.
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void save_archive_atomically(torch::serialize::OutputArchive& archive, const std::string& path) {
  std::ostringstream buffer;
  try {
    archive.save_to(buffer);
  } catch (const c10::Error& e) {
    throw std::runtime_error("cannot write checkpoint '" + path +
                             "': serializing it failed: " + e.what_without_backtrace());
  }
  std::string bytes = buffer.str();
  const uint32_t crc = crc32c(bytes.data(), bytes.size());
  const uint64_t length = bytes.size();
  bytes.append(kTrailerMagic, sizeof kTrailerMagic);
  put_le(bytes, length);
  put_le(bytes, crc);
  put_le(bytes, static_cast<uint32_t>(kCheckpointVersion));
  write_file_atomically(bytes, path);
}

int64_t load_archive(torch::serialize::InputArchive& archive, const std::string& path) {
  const std::string where = "checkpoint '" + path + "'";
  if (!std::filesystem::exists(path)) throw std::invalid_argument(where + " does not exist");
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw std::invalid_argument(where + " could not be read");
  const bool has_trailer =
      bytes.size() >= kTrailerSize &&
      std::memcmp(bytes.data() + bytes.size() - kTrailerSize, kTrailerMagic, 8) == 0;
  int64_t trailer_format = 0;
  size_t payload = bytes.size();
  if (has_trailer) {
    const char* t = bytes.data() + bytes.size() - kTrailerSize + 8;
    const auto length = get_le<uint64_t>(t);
    const auto crc = get_le<uint32_t>(t + 8);
    trailer_format = get_le<uint32_t>(t + 12);
    if (trailer_format > kCheckpointVersion)
      throw std::invalid_argument(where + " has format " + std::to_string(trailer_format) +
                                  ", written by a newer Myriad; this build reads formats " +
                                  std::to_string(kOldestReadableCheckpointVersion) + " to " +
                                  std::to_string(kCheckpointVersion));
    payload = bytes.size() - kTrailerSize;
    if (length != payload)
      throw std::invalid_argument(where + " is truncated or damaged: its trailer records " +
                                  std::to_string(length) + " bytes of data but the file holds " +
                                  std::to_string(payload));
    if (crc32c(bytes.data(), payload) != crc)
      throw std::invalid_argument(where +
                                  " is corrupted: the checksum (CRC32C) of its contents does not "
                                  "match the one recorded when it was written");
  }
  try {
    // Always to the host first, then to wherever it is needed: a checkpoint written on a GPU
    // loads on a machine without one.
    archive.load_from(bytes.data(), payload, torch::kCPU);
  } catch (const c10::Error&) {
    throw std::invalid_argument(
        where + (has_trailer ? " passed its checksum but is not a readable Myriad checkpoint"
                             : " is truncated or not a Myriad checkpoint (it has no format-3 "
                               "trailer and is not a readable format-2 archive)"));
  }
  torch::Tensor v;
  if (!archive.try_read("version", v, /*is_buffer=*/true) || v.numel() != 1)
    throw std::invalid_argument(where + " is not a Myriad checkpoint (it has no format version)");
  const int64_t version = v.item<int64_t>();
  if (version > kCheckpointVersion)
    throw std::invalid_argument(where + " has format " + std::to_string(version) +
                                ", written by a newer Myriad; this build reads formats " +
                                std::to_string(kOldestReadableCheckpointVersion) + " to " +
                                std::to_string(kCheckpointVersion));
  if (version < kOldestReadableCheckpointVersion)
    throw std::invalid_argument(where + " has format " + std::to_string(version) +
                                ", which this build no longer reads (it reads formats " +
                                std::to_string(kOldestReadableCheckpointVersion) + " to " +
                                std::to_string(kCheckpointVersion) + ")");
  if (version >= 3 && !has_trailer)
    throw std::invalid_argument(where + " has format " + std::to_string(version) +
                                " but lacks its checksum trailer: the file is truncated");
  if (has_trailer && trailer_format != version)
    throw std::invalid_argument(where + " is damaged: its trailer says format " +
                                std::to_string(trailer_format) + ", its contents format " +
                                std::to_string(version));
  return version;
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

// The config of a `myriad train` checkpoint. A `myriad serve` (self-play) checkpoint has its own
// layout (selfplay/learner.h: "serve_format"), so it is named as such with what to do instead.
TrainConfig train_checkpoint_config(torch::serialize::InputArchive& a, const std::string& path) {
  torch::Tensor serve_format;
  if (a.try_read("serve_format", serve_format))
    throw std::invalid_argument(
        path +
        " is a myriad serve (self-play) checkpoint, not a myriad train one: `myriad eval` and "
        "`myriad train --resume` cannot load it. Continue it with `myriad serve CONFIG --resume " +
        path +
        "`; the serve run's summary.json holds its head-to-head evaluation "
        "(latest_vs_first)");
  return parse_config(read_string(a, "config_yaml"), {});
}

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

// A task env's curriculum clock in its rollout state (its step() calls since it was made). A
// checkpoint written before the env kept one lacks it, and a rank that starts new episodes on
// resume does not read it: both set it to the run's steps per env so far.
constexpr const char* kEnvStepCount = "env.curriculum_step";

// Reads rank-state entry `key` (stored as prefix + key) into out; only the env's step count may be
// missing.
void read_rank_entry(torch::serialize::InputArchive& a, const std::string& prefix,
                     const std::string& key, std::map<std::string, torch::Tensor>& out) {
  torch::Tensor t;
  if (a.try_read(prefix + key, t, /*is_buffer=*/true))
    out[key] = t;
  else if (key != kEnvStepCount)
    throw std::invalid_argument("checkpoint lacks '" + prefix + key + "'");
}

void set_env_step_count(BatchEnv& env, int64_t steps) {
  std::map<std::string, at::Tensor> state = env.save_rollout_state();
  const auto it = state.find("curriculum_step");
  if (it == state.end()) return;
  it->second.fill_(steps);
  env.load_rollout_state(state);
}

}  // namespace

std::map<std::string, torch::Tensor> Trainer::rank_state() const {
  std::map<std::string, torch::Tensor> out;
  for (const TeamLearner& l : teams_) {
    const std::string p = checkpoint_prefix(l.team);
    if (l.team.learns) out[p + "discounted_return"] = l.discounted_return;
    out[p + "episodes.values"] = l.episodes.values();
    out[p + "episodes.count"] = l.episodes.count();
    if (env_->spec().decides_winner) {
      out[p + "wins.values"] = l.wins.values();
      out[p + "wins.count"] = l.wins.count();
    }
  }
  out["generator"] = gen_.get_state();
  for (const auto& [key, t] : env_->save_rollout_state()) out["env." + key] = t;
  return out;
}

void Trainer::load_rank_state(const std::map<std::string, torch::Tensor>& state) {
  const auto get = [&](const std::string& key) {
    const auto it = state.find(key);
    if (it == state.end()) throw std::invalid_argument("checkpoint lacks '" + key + "'");
    return it->second;
  };
  for (TeamLearner& l : teams_) {
    const std::string p = checkpoint_prefix(l.team);
    if (l.team.learns) l.discounted_return = get(p + "discounted_return").to(device_);
    l.episodes.load(get(p + "episodes.values"), get(p + "episodes.count"));
    if (env_->spec().decides_winner) l.wins.load(get(p + "wins.values"), get(p + "wins.count"));
  }
  gen_.set_state(get("generator"));
  std::map<std::string, torch::Tensor> env_state;
  bool count_missing = false;
  for (const auto& [key, now] : env_->save_rollout_state()) {
    if ("env." + key == kEnvStepCount && !state.count(kEnvStepCount)) {
      count_missing = true;  // an older checkpoint: set from the run's updates below
      env_state[key] = now;
      continue;
    }
    env_state[key] = get("env." + key);
  }
  env_->load_rollout_state(env_state);
  if (count_missing) set_env_step_count(*env_, updates_ * cfg_.ppo.num_steps);
}

std::map<std::string, torch::Tensor> Trainer::gather_rank_states() const {
  std::map<std::string, torch::Tensor> out;
  if (!comm_) return out;
  const std::map<std::string, torch::Tensor> mine = rank_state();
  // Every rank holds the same keys, shapes and dtypes (the same env count and device kind), so
  // each rank r in turn broadcasts its tensors as bytes, and rank 0 keeps them.
  for (int r = 1; r < comm_->world_size(); ++r) {
    for (const auto& [key, t] : mine) {
      const torch::Tensor src = t.cpu().contiguous();
      const int64_t bytes = src.numel() * static_cast<int64_t>(src.element_size());
      torch::Tensor buf = torch::empty({bytes}, torch::kUInt8);
      if (comm_->rank() == r && bytes > 0) std::memcpy(buf.data_ptr(), src.data_ptr(), bytes);
      if (bytes > 0) comm_->broadcast_(buf, r);
      if (comm_->rank() == 0) {
        torch::Tensor v = torch::empty(src.sizes(), src.options());
        if (bytes > 0) std::memcpy(v.data_ptr(), buf.data_ptr(), bytes);
        out["rank" + std::to_string(r) + "." + key] = v;
      }
    }
  }
  return out;
}

void Trainer::checkpoint_job(const std::string& path) const {
  const std::map<std::string, torch::Tensor> others = gather_rank_states();
  if (rank_.rank == 0) save_checkpoint(path, others);
}

void Trainer::save_checkpoint(const std::string& path,
                              const std::map<std::string, torch::Tensor>& other_ranks) const {
  torch::serialize::OutputArchive a;
  write_tensor(a, "version", torch::tensor({kCheckpointVersion}));
  write_string(a, "config_yaml", to_yaml(cfg_));
  write_string(a, "spaces.observation", env_->spec().observation_space.describe());
  write_string(a, "spaces.action", env_->spec().action_space.describe());
  for (const TeamLearner& l : teams_) {
    const std::string p = checkpoint_prefix(l.team);
    if (l.team.learns) {
      torch::serialize::OutputArchive model;
      l.policy->save(model);
      a.write(p + "policy", model);
      const std::vector<torch::Tensor> adam = l.optimizer.state();
      for (size_t k = 0; k < adam.size(); ++k)
        write_tensor(a, p + "adam." + std::to_string(k), adam[k]);
      write_rms(a, p + "obs_rms", l.obs_rms);
      write_rms(a, p + "ret_rms", l.ret_rms);
    }
  }
  if (env_->spec().decides_winner) {
    write_tensor(a, "draws.values", draws_.values());
    write_tensor(a, "draws.count", draws_.count());
  }
  write_string(a, "generator_device", gen_.device().is_cpu() ? "cpu" : "cuda");
  write_tensor(a, "counters", torch::tensor({env_steps_, updates_}));
  write_tensor(a, "scalars",
               torch::tensor({seconds(), solved_seconds_.value_or(-1.0)}, torch::kFloat64));
  // This rank's (rank 0's) envs, generator, returns and episode windows, then the other ranks'.
  for (const auto& [key, t] : rank_state()) write_tensor(a, key, t);
  write_tensor(a, "world_size", torch::tensor({static_cast<int64_t>(rank_.world_size)}));
  for (const auto& [key, t] : other_ranks) write_tensor(a, key, t);
  save_archive_atomically(a, path);
}

void Trainer::load_checkpoint(const std::string& path) {
  torch::serialize::InputArchive a;
  load_archive(a, path);
  const TrainConfig saved = train_checkpoint_config(a, path);
  // Every setting that shapes the network, its input or the saved rollout state must match:
  // the same sizes with another activation or normalization would load and silently differ.
  std::vector<std::string> mismatches;
  const auto check = [&](const std::string& key, const std::string& ckpt, const std::string& now) {
    if (ckpt != now)
      mismatches.push_back(key + " is " + ckpt + " in the checkpoint but " + now +
                           " in the config");
  };
  const auto sizes = [](const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
    return s + "]";
  };
  const auto options = [](const std::map<std::string, double>& m) {
    std::ostringstream s;
    s << "{";
    for (const auto& [k, v] : m) s << (s.tellp() > 1 ? ", " : "") << k << ": " << v;
    s << "}";
    return s.str();
  };
  const auto text_options = [](const std::map<std::string, std::string>& m) {
    std::string s = "{";
    for (const auto& [k, v] : m) s += (s.size() > 1 ? ", " : "") + k + ": '" + v + "'";
    return s + "}";
  };
  const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  check("env.id", saved.env.id, cfg_.env.id);
  check("env.xml", "'" + saved.env.xml + "'", "'" + cfg_.env.xml + "'");
  check("env.options", options(saved.env.options), options(cfg_.env.options));
  check("env.options (ranges and names)", text_options(saved.env.text_options),
        text_options(cfg_.env.text_options));
  check("env.randomize", "'" + saved.env.randomize + "'", "'" + cfg_.env.randomize + "'");
  check("env.num_envs", std::to_string(saved.env.num_envs), std::to_string(cfg_.env.num_envs));
  check("ppo.num_steps", std::to_string(saved.ppo.num_steps), std::to_string(cfg_.ppo.num_steps));
  check("ppo.hidden_sizes", sizes(saved.ppo.hidden_sizes), sizes(cfg_.ppo.hidden_sizes));
  check("ppo.activation", saved.ppo.activation, cfg_.ppo.activation);
  check("ppo.normalize_obs", flag(saved.ppo.normalize_obs), flag(cfg_.ppo.normalize_obs));
  check("ppo.normalize_reward", flag(saved.ppo.normalize_reward), flag(cfg_.ppo.normalize_reward));
  check("agents.agent_id", flag(saved.agents.agent_id), flag(cfg_.agents.agent_id));
  check("agents.central_value", flag(saved.agents.central_value), flag(cfg_.agents.central_value));
  const auto names = [](const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + v[k];
    return s + "]";
  };
  check("agents.random_teams", names(saved.agents.random_teams), names(cfg_.agents.random_teams));
  // Format 3 records the env's spaces: an MJCF file changed in place is caught here too.
  c10::IValue space;
  if (a.try_read("spaces.observation", space))
    check("the observation space", space.toStringRef(), env_->spec().observation_space.describe());
  if (a.try_read("spaces.action", space))
    check("the action space", space.toStringRef(), env_->spec().action_space.describe());
  if (!mismatches.empty()) {
    std::string msg = "checkpoint '" + path + "' cannot be resumed with this config: ";
    for (size_t k = 0; k < mismatches.size(); ++k) msg += (k ? "; " : "") + mismatches[k];
    throw std::invalid_argument(msg);
  }
  for (TeamLearner& l : teams_) {
    const std::string p = checkpoint_prefix(l.team);
    if (l.team.learns) {
      torch::serialize::InputArchive model;
      a.read(p + "policy", model);
      l.policy->load(model);  // host tensors: Module::load replaces the parameters' storage
      l.policy->to(device_);
      l.optimizer.rebind(l.policy->parameters());
      std::vector<torch::Tensor> adam;
      for (int k = 0; k < 4; ++k) adam.push_back(read_tensor(a, p + "adam." + std::to_string(k)));
      l.optimizer.load_state(adam);
      read_rms(a, p + "obs_rms", l.obs_rms, device_);
      read_rms(a, p + "ret_rms", l.ret_rms, device_);
      l.discounted_return = read_tensor(a, p + "discounted_return").to(device_);
      // Another world size splits env.num_envs into other shares: the returns start anew.
      const int64_t rows = l.rollout.rewards.size(1);
      if (l.discounted_return.dim() != 1 || l.discounted_return.size(0) != rows)
        l.discounted_return = torch::zeros({rows}, torch::TensorOptions(device_));
    }
    l.episodes.load(read_tensor(a, p + "episodes.values"), read_tensor(a, p + "episodes.count"));
    if (env_->spec().decides_winner)
      l.wins.load(read_tensor(a, p + "wins.values"), read_tensor(a, p + "wins.count"));
  }
  if (env_->spec().decides_winner)
    draws_.load(read_tensor(a, "draws.values"), read_tensor(a, "draws.count"));
  const torch::Tensor counters = read_tensor(a, "counters");
  env_steps_ = counters[0].item<int64_t>();
  updates_ = counters[1].item<int64_t>();
  // The sampling stream continues where it was on the same kind of device. Moved between CPU
  // and CUDA (whose generator states differ), it restarts from (seed, updates): the run goes on,
  // but not bitwise as it would have on the first device.
  const std::string saved_gen = read_string(a, "generator_device");
  const torch::Tensor scalars = read_tensor(a, "scalars");
  elapsed_before_ = scalars[0].item<double>();
  if (scalars[1].item<double>() >= 0) solved_seconds_ = scalars[1].item<double>();
  torch::Tensor world;
  const bool has_world = a.try_read("world_size", world, /*is_buffer=*/true);
  // Rank 0's own state has its share of env.num_envs, which another world size changes.
  const bool rank0_fits = !has_world || world.item<int64_t>() == rank_.world_size;
  if (rank_.rank != 0 || !rank0_fits) {
    // A checkpoint of a job of the same world size holds this rank's own state: it resumes
    // where it was. Otherwise (an older checkpoint or a changed world size) this rank starts new
    // episodes from (seed, rank, updates): the job continues, but not bitwise.
    const std::string prefix = "rank" + std::to_string(rank_.rank) + ".";
    if (rank_.rank != 0 && has_world && world.item<int64_t>() == rank_.world_size) {
      std::map<std::string, torch::Tensor> mine;
      for (const auto& [key, _] : rank_state()) read_rank_entry(a, prefix, key, mine);
      load_rank_state(mine);
      return;
    }
    const uint64_t seed = rank_seed(cfg_.run.seed + static_cast<uint64_t>(updates_), rank_.rank);
    gen_.set_current_seed(seed);
    // The count first: the reset draws the first commands from the ranges in force at it.
    set_env_step_count(*env_, updates_ * cfg_.ppo.num_steps);
    env_->reset(seed);
    return;
  }
  const bool same_device_kind = saved_gen == (gen_.device().is_cpu() ? "cpu" : "cuda");
  if (!same_device_kind) {
    gen_.set_current_seed(cfg_.run.seed + static_cast<uint64_t>(updates_));
    std::cerr << "myriad: resuming a " << saved_gen << " run on " << device_.str()
              << ": the sampling generator restarts from (seed, updates)\n";
  }
  std::map<std::string, torch::Tensor> mine;
  for (const auto& [key, _] : rank_state()) {
    if (key == "generator" && !same_device_kind)
      mine[key] = gen_.get_state();
    else
      read_rank_entry(a, "", key, mine);
  }
  load_rank_state(mine);
}

LoadedPolicy load_policy(const std::string& checkpoint, const std::string& device) {
  torch::serialize::InputArchive a;
  load_archive(a, checkpoint);
  LoadedPolicy p;
  p.config = train_checkpoint_config(a, checkpoint);
  if (!device.empty()) {
    p.config.env.device = device;
  } else if (p.config.env.device.rfind("cuda", 0) == 0 && !cuda_available()) {
    // Trained on a GPU, evaluated where there is none: the policy runs on the CPU.
    p.config.env.device = "cpu";
  }
  p.spec = configured_spec(p.config);
  const EnvSpec& spec = p.spec;
  c10::IValue space;
  if (a.try_read("spaces.observation", space) &&
      space.toStringRef() != spec.observation_space.describe())
    throw std::invalid_argument("checkpoint '" + checkpoint + "' was trained on observations " +
                                space.toStringRef() + " but its env now has " +
                                spec.observation_space.describe());
  if (a.try_read("spaces.action", space) && space.toStringRef() != spec.action_space.describe())
    throw std::invalid_argument("checkpoint '" + checkpoint + "' was trained on actions " +
                                space.toStringRef() + " but its env now has " +
                                spec.action_space.describe());
  const auto& c = p.config;
  const torch::Device td = torch_device(p.config.env.device);
  for (Team& team : make_teams(spec, c.agents, td)) {
    TeamPolicy t;
    t.team = std::move(team);
    if (t.team.learns) {
      const std::string prefix = checkpoint_prefix(t.team);
      t.policy = ActorCritic(t.team.input_dim(), spec.action_space, c.ppo.hidden_sizes,
                             c.ppo.activation, c.ppo.init_log_std, t.team.actor_dim());
      torch::serialize::InputArchive model;
      a.read(prefix + "policy", model);
      t.policy->load(model);
      t.policy->to(td);
      read_rms(a, prefix + "obs_rms", t.obs_rms, td);
      if (!p.policy) {
        p.policy = t.policy;
        p.obs_rms = t.obs_rms;
        read_rms(a, prefix + "ret_rms", p.ret_rms, td);
      }
    }
    p.teams.push_back(std::move(t));
  }
  p.random_gen = td.is_cpu() ? at::make_generator<at::CPUGeneratorImpl>(c.run.seed)
                             : at::globalContext().defaultGenerator(td).clone();
  p.random_gen.set_current_seed(c.run.seed);
  return p;
}

}  // namespace myriad::learner
