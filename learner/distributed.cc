#include "learner/distributed.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "learner/gloo_backend.h"
#include "learner/nccl_backend.h"

namespace myriad::learner {
namespace {

const char* get(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int integer(const char* name, const char* text, int lo) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < lo || v > 1 << 30)
    throw std::invalid_argument(std::string("environment variable ") + name + "='" + text +
                                "' is not an integer >= " + std::to_string(lo));
  return static_cast<int>(v);
}

int integer_or(const char* name, int fallback, int lo) {
  const char* v = get(name);
  return v ? integer(name, v, lo) : fallback;
}

}  // namespace

std::string first_slurm_host(const std::string& nodelist) {
  // "prefix[01-04,07],other" -> "prefix01"; "a,b" -> "a".
  const size_t comma = nodelist.find(',');
  const size_t bracket = nodelist.find('[');
  if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket))
    return nodelist.substr(0, comma);
  const size_t close = nodelist.find(']', bracket);
  if (close == std::string::npos)
    throw std::invalid_argument("SLURM_JOB_NODELIST='" + nodelist + "' has an unclosed '['");
  std::string first = nodelist.substr(bracket + 1, close - bracket - 1);
  first = first.substr(0, std::min(first.find(','), first.find('-')));
  return nodelist.substr(0, bracket) + first;
}

RankInfo rank_from_environment() {
  RankInfo r;
  if (get("RANK") || get("WORLD_SIZE")) {
    for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"})
      if (!get(name))
        throw std::invalid_argument(std::string("environment variable ") + name +
                                    " is not set (a distributed run needs RANK, WORLD_SIZE, "
                                    "MASTER_ADDR and MASTER_PORT, as torchrun sets them)");
    r.source = "torchrun";
    r.rank = integer("RANK", get("RANK"), 0);
    r.world_size = integer("WORLD_SIZE", get("WORLD_SIZE"), 1);
    r.local_rank = integer_or("LOCAL_RANK", r.rank, 0);
    r.master_addr = get("MASTER_ADDR");
    r.master_port = integer("MASTER_PORT", get("MASTER_PORT"), 1);
  } else if (get("SLURM_PROCID") && get("SLURM_NTASKS")) {
    r.source = "slurm";
    r.rank = integer("SLURM_PROCID", get("SLURM_PROCID"), 0);
    r.world_size = integer("SLURM_NTASKS", get("SLURM_NTASKS"), 1);
    r.local_rank = integer_or("SLURM_LOCALID", 0, 0);
    const char* nodes = get("SLURM_JOB_NODELIST");
    r.master_addr =
        get("MASTER_ADDR") ? get("MASTER_ADDR") : (nodes ? first_slurm_host(nodes) : "127.0.0.1");
    r.master_port = integer_or("MASTER_PORT", 29500, 1);
  } else {
    return r;
  }
  if (r.rank >= r.world_size)
    throw std::invalid_argument("rank " + std::to_string(r.rank) + " is not below the world size " +
                                std::to_string(r.world_size));
  if (r.master_port > 65535)
    throw std::invalid_argument("MASTER_PORT " + std::to_string(r.master_port) +
                                " is not a TCP port");
  r.restart = integer_or("TORCHELASTIC_RESTART_COUNT", integer_or("MYRIAD_RESTART_COUNT", 0, 0), 0);
  const char* agent = get("TORCHELASTIC_USE_AGENT_STORE");
  r.agent_store = agent && std::string(agent) == "True";
  return r;
}

uint64_t rank_seed(uint64_t seed, int rank) {
  if (rank == 0) return seed;
  // splitmix64 of (seed, rank), kept to the 63 bits a seed may have.
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rank + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) & 0x7FFFFFFFFFFFFFFFull;
}

std::string rank_device(const std::string& configured, const RankInfo& info, int gpus) {
  if (info.world_size == 1) return configured;
  const bool cuda = configured == "cuda" || (configured == "auto" && gpus > 0);
  if (!cuda) return configured;    // "cpu", "cuda:K", or a name resolve_device_id will refuse
  if (gpus == 1) return "cuda:0";  // each rank sees its own GPU
  if (info.local_rank < gpus) return "cuda:" + std::to_string(info.local_rank);
  throw std::invalid_argument(
      "rank " + std::to_string(info.rank) + " (local rank " + std::to_string(info.local_rank) +
      ") has no GPU of its own: this node shows " + std::to_string(gpus) +
      " CUDA device(s) to it; start at most that many ranks per node, or give each rank one GPU "
      "(CUDA_VISIBLE_DEVICES, srun --gpus-per-task=1)");
}

struct Comm::Impl {
  c10::intrusive_ptr<c10d::Backend> backend;
};

Comm::Comm(const RankInfo& info, std::chrono::milliseconds timeout, const torch::Device& device)
    : impl_(std::make_unique<Impl>()),
      rank_(info.rank),
      world_(info.world_size),
      device_(device.is_cuda() ? device : torch::Device(torch::kCPU)),
      backend_name_(device.is_cuda() ? "nccl" : "gloo") {
  if (device_.is_cuda() && !device_.has_index())
    throw std::invalid_argument(
        "distributed: the NCCL process group needs this rank's GPU index "
        "(cuda:K), got " +
        device.str());
  run("joining the process group at " + info.master_addr + ":" + std::to_string(info.master_port),
      0, [&] {
        c10d::TCPStoreOptions o;
        o.port = static_cast<uint16_t>(info.master_port);
        o.isServer = info.rank == 0 && !info.agent_store;
        o.numWorkers = info.world_size;
        o.waitWorkers = true;
        o.timeout = timeout;
        auto tcp = c10::make_intrusive<c10d::TCPStore>(info.master_addr, o);
        // A store that outlives a restart (torchrun's agent) keeps each attempt's keys apart.
        auto store =
            c10::make_intrusive<c10d::PrefixStore>("myriad/" + std::to_string(info.restart), tcp);
        impl_->backend =
            device_.is_cuda()
                ? make_nccl_backend(store, info.rank, info.world_size, device_.index(), timeout)
                : make_gloo_backend(store, info.rank, info.world_size, timeout);
      });
}

// Shut down before the backend is released: ProcessGroupNCCL destroys its communicators there
// (and warns, or can hang at exit, when a group is dropped without it); Gloo's does nothing.
// A failing shutdown (a peer already gone) must not throw from a destructor.
Comm::~Comm() {
  if (impl_ == nullptr || !impl_->backend) return;
  try {
    impl_->backend->shutdown();
  } catch (const std::exception&) {
  }
}

void Comm::run(const std::string& what, int64_t bytes, const std::function<void()>& collective) {
  const auto start = std::chrono::steady_clock::now();
  try {
    collective();
    traffic_.calls += 1;
    traffic_.bytes += bytes;
    traffic_.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } catch (const std::exception& e) {
    throw std::runtime_error("distributed: rank " + std::to_string(rank_) + " of " +
                             std::to_string(world_) + " failed " + what + " over " + backend_name_ +
                             " (a peer rank stopped, or the collective timed out): " + e.what());
  }
}

namespace {

// The tensor the backend works on: `t` itself when it already lives on `device` and is
// contiguous, else a contiguous copy there (copy_back then writes the result into `t`).
torch::Tensor staged(const torch::Tensor& t, const torch::Device& device) {
  if (t.device() == device && t.is_contiguous()) return t;
  return t.to(device, /*non_blocking=*/false, /*copy=*/true).contiguous();
}

void copy_back(torch::Tensor& t, const torch::Tensor& work) {
  if (!work.is_same(t)) t.copy_(work);
}

}  // namespace

void Comm::all_reduce_mean_(torch::Tensor& t) {
  run("averaging a tensor across ranks", t.numel() * t.element_size(), [&] {
    std::vector<at::Tensor> tensors{staged(t, device_)};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::SUM;
    impl_->backend->allreduce(tensors, o)->wait();
    tensors[0].div_(world_);
    copy_back(t, tensors[0]);
  });
}

void Comm::broadcast_(torch::Tensor& t, int root) {
  run("receiving rank " + std::to_string(root) + "'s tensor", t.numel() * t.element_size(), [&] {
    std::vector<at::Tensor> tensors{staged(t, device_)};
    c10d::BroadcastOptions o;
    o.rootRank = root;
    impl_->backend->broadcast(tensors, o)->wait();
    copy_back(t, tensors[0]);
  });
}

torch::Tensor Comm::all_gather(const torch::Tensor& t) {
  torch::Tensor out;
  run("gathering every rank's tensor", t.numel() * t.element_size(), [&] {
    std::vector<at::Tensor> in{staged(t, device_)};
    std::vector<std::vector<at::Tensor>> outs(1);
    for (int r = 0; r < world_; ++r) outs[0].push_back(torch::empty_like(in[0]));
    impl_->backend->allgather(outs, in, c10d::AllgatherOptions())->wait();
    out = torch::stack(outs[0]).cpu();
  });
  return out;
}

int64_t rank_num_envs(const TrainConfig& c, int world_size) {
  if (world_size <= 1) return c.env.num_envs;
  const std::string world = std::to_string(world_size);
  if (c.env.num_envs % world_size != 0)
    throw std::invalid_argument(
        "config key 'env.num_envs': the job's env count is split evenly over its " + world +
        " ranks, so it must be a multiple of " + world + ", got " + std::to_string(c.env.num_envs));
  const int64_t n = c.env.num_envs / world_size, batch = n * c.ppo.num_steps;
  if (batch % c.ppo.num_minibatches != 0 || batch / c.ppo.num_minibatches < 2)
    throw std::invalid_argument(
        "config key 'ppo.num_minibatches': each of the " + world + " ranks takes a share of " +
        std::to_string(batch) + " samples (env.num_envs / " + world +
        " * ppo.num_steps) of every minibatch, so it must divide " + std::to_string(batch) +
        " into shares of 2 or more, got " + std::to_string(c.ppo.num_minibatches));
  return n;
}

Settings job_settings(const TrainConfig& config) {
  Settings out;
  for (auto& [key, value] : settings(config)) {
    if (key == "run.threads" || key == "run.log_every_seconds") continue;
    if (key == "run.resume") value = config.run.resume.empty() ? "(unset)" : "(set)";
    out.emplace_back(key, value);
  }
  return out;
}

std::string settings_text(const Settings& s) {
  std::string text;
  for (const auto& [key, value] : s) text += key + " = " + value + "\n";
  return text;
}

Settings parse_settings(const std::string& text) {
  Settings out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    out.emplace_back(line.substr(0, eq), line.substr(eq + 3));
  }
  return out;
}

namespace {

// A number as its shortest text that reads back the same ("3e-04", not the
// "0.00029999999999999997" YAML writes); anything else as it is.
std::string readable(const std::string& value) {
  double v = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, err] = std::from_chars(value.data(), end, v);
  if (err != std::errc() || ptr != end) return value;
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  const std::string shortest(buf, r.ptr);
  return shortest.size() < value.size() ? shortest : value;
}

}  // namespace

std::string describe_disagreement(const Settings& a, int rank_a, const Settings& b, int rank_b) {
  const std::map<std::string, std::string> in_a(a.begin(), a.end()), in_b(b.begin(), b.end());
  // The differing keys in a's order, then those only b has.
  std::vector<std::string> differ;
  for (const auto& [key, value] : a) {
    const auto it = in_b.find(key);
    if (it == in_b.end() || it->second != value) differ.push_back(key);
  }
  for (const auto& [key, value] : b)
    if (!in_a.count(key)) differ.push_back(key);
  if (differ.empty()) return "";
  const auto value_in = [](const std::map<std::string, std::string>& m, const std::string& key) {
    const auto it = m.find(key);
    return it == m.end() ? std::string("(absent)") : readable(it->second);
  };
  const std::string& key = differ.front();
  std::string msg = "ranks disagree on " + key + ": rank " + std::to_string(rank_a) + " has " +
                    value_in(in_a, key) + ", rank " + std::to_string(rank_b) + " has " +
                    value_in(in_b, key);
  if (differ.size() > 1) {
    msg += " (and on " + std::to_string(differ.size() - 1) + " more:";
    for (size_t k = 1; k < differ.size() && k < 6; ++k) msg += (k > 1 ? ", " : " ") + differ[k];
    msg += differ.size() > 6 ? ", ...)" : ")";
  }
  return msg;
}

namespace {

// Two 64-bit hashes of the text (FNV-1a and a multiply-rotate hash): a mismatch detector
// between cooperating ranks, not a defence against a forger.
std::pair<uint64_t, uint64_t> digest_of(const std::string& text) {
  uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x9E3779B97F4A7C15ull;
  for (const unsigned char c : text) {
    h1 = (h1 ^ c) * 0x100000001b3ull;
    h2 = ((h2 << 5) | (h2 >> 59)) ^ c;
    h2 *= 0xff51afd7ed558ccdull;
  }
  return {h1, h2};
}

}  // namespace

void check_ranks_agree(Comm& comm, const Settings& settings) {
  const std::string text = settings_text(settings);
  const auto [h1, h2] = digest_of(text);
  torch::Tensor mine = torch::empty({3}, torch::kInt64);
  const uint64_t words[3] = {h1, h2, static_cast<uint64_t>(text.size())};
  std::memcpy(mine.data_ptr(), words, sizeof words);
  const torch::Tensor digests = comm.all_gather(mine);  // [world, 3]
  std::vector<int> differ;
  for (int r = 1; r < comm.world_size(); ++r)
    if (!torch::equal(digests[r], digests[0])) differ.push_back(r);
  if (differ.empty()) return;
  // Every rank's text, padded to the longest (their lengths came with the digests).
  const int64_t longest = digests.select(1, 2).max().item<int64_t>();
  if (longest < 0 || longest > (int64_t{1} << 24))
    throw std::invalid_argument("distributed: a rank reports a config of " +
                                std::to_string(longest) + " bytes");
  torch::Tensor bytes = torch::zeros({longest}, torch::kUInt8);
  std::memcpy(bytes.data_ptr(), text.data(), text.size());
  const torch::Tensor texts = comm.all_gather(bytes).contiguous();  // [world, longest]
  const auto text_of = [&](int r) {
    const torch::Tensor row = texts[r].contiguous();
    return std::string(static_cast<const char*>(row.data_ptr()),
                       static_cast<size_t>(digests[r][2].item<int64_t>()));
  };
  std::string msg = describe_disagreement(parse_settings(text_of(0)), 0,
                                          parse_settings(text_of(differ.front())), differ.front());
  if (msg.empty())
    msg = "ranks 0 and " + std::to_string(differ.front()) + " disagree on their config";
  std::string ranks;
  for (int r : differ) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  throw std::invalid_argument(
      "distributed: " + msg + "; rank(s) " + ranks + " of " + std::to_string(comm.world_size()) +
      " differ from rank 0. Every rank must run the same config and overrides (run.threads and "
      "run.log_every_seconds may differ)");
}

}  // namespace myriad::learner
