// Data-parallel training across processes: where this process stands in the job (from
// torchrun's or SLURM's variables) and the collectives the learner needs, through LibTorch's
// c10d: a TCPStore rendezvous at MASTER_ADDR:MASTER_PORT, then ProcessGroupGloo for a job on
// the CPU or ProcessGroupNCCL for a job on GPUs (one GPU per rank).
//
// One process per device; every rank steps its own envs, seeded by (seed, rank). Parameters
// stay bitwise identical on every rank because each applies the same all-reduced gradient;
// statistics that decide control flow (losses, KL, episode windows) are all-reduced too, so
// every rank takes the same branch. A collective that fails (a peer died, or the timeout
// passed) throws std::runtime_error naming this rank: the job stops instead of hanging.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace myriad::learner {

struct RankInfo {
  int rank = 0, world_size = 1, local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  int restart = 0;              // TORCHELASTIC_RESTART_COUNT / MYRIAD_RESTART_COUNT
  bool agent_store = false;     // torchrun's agent already serves the store at MASTER_PORT
  std::string source = "none";  // "torchrun" (or myriad launch), "slurm" or "none"
};

// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (torchrun, myriad launch); else
// SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and the first host of SLURM_JOB_NODELIST (with
// MASTER_PORT, default 29500); else a single process. Throws std::invalid_argument naming the
// variable that is missing or malformed.
RankInfo rank_from_environment();

// The first host of a SLURM node list: "node[01-04],gpu7" -> "node01".
std::string first_slurm_host(const std::string& nodelist);

// The env seed of a rank: the run's seed for rank 0 (a 1-rank job is the plain run), a
// well-mixed 63-bit value of (seed, rank) for the others.
uint64_t rank_seed(uint64_t seed, int rank);

// The device a rank runs on, from the configured env.device. A one-rank job keeps it. In a
// job of several ranks "cuda" (and "auto" where a GPU answers) becomes this rank's own GPU:
// cuda:LOCAL_RANK, or cuda:0 where each rank sees one GPU (CUDA_VISIBLE_DEVICES, srun
// --gpus-per-task); "cpu" and an explicit "cuda:K" are kept. `gpus` is the count this process
// sees. Throws std::invalid_argument when a node starts more ranks than it has GPUs.
std::string rank_device(const std::string& configured, const RankInfo& info, int gpus);

class Comm {
 public:
  // Joins the job's process group: NCCL when `device` is a GPU (this rank's), Gloo on the CPU.
  // Collectives time out after `timeout`.
  Comm(const RankInfo& info, std::chrono::milliseconds timeout,
       const torch::Device& device = torch::kCPU);
  ~Comm();

  int rank() const { return rank_; }
  int world_size() const { return world_; }
  // "nccl" or "gloo".
  const std::string& backend() const { return backend_name_; }
  // Where the collectives run: a tensor elsewhere (a CPU tensor under NCCL, a CUDA one under
  // Gloo) is copied there and back, so callers pass tensors from any device.
  const torch::Device& device() const { return device_; }

  // In place on every rank: the sum over ranks divided by the world size.
  void all_reduce_mean_(torch::Tensor& t);
  // In place: rank `root`'s values on every rank.
  void broadcast_(torch::Tensor& t, int root = 0);

  // What this rank has sent through collectives so far: calls, payload bytes (the tensors'
  // sizes, not the wire traffic), and host wall seconds spent waiting for them.
  struct Traffic {
    int64_t calls = 0, bytes = 0;
    double seconds = 0;
  };
  const Traffic& traffic() const { return traffic_; }

 private:
  void run(const std::string& what, int64_t bytes, const std::function<void()>& collective);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int rank_ = 0, world_ = 1;
  torch::Device device_ = torch::kCPU;
  std::string backend_name_ = "gloo";
  Traffic traffic_;
};

}  // namespace myriad::learner
