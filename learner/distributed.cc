#include "learner/distributed.h"

#include <cstdlib>
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

Comm::~Comm() = default;

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

}  // namespace myriad::learner
