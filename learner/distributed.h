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
#include <utility>
#include <vector>

#include "learner/config.h"

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
  // Every rank's `t` (the same shape and dtype on every rank), stacked: [world_size, ...] on
  // the CPU.
  torch::Tensor all_gather(const torch::Tensor& t);

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

// Settings as (key path, value) pairs in a fixed order (learner/config.h settings()).
using Settings = std::vector<std::pair<std::string, std::string>>;

// The settings as text, one "key = value" line each; parse_settings reads it back.
std::string settings_text(const Settings& s);
Settings parse_settings(const std::string& text);

// Where two ranks' settings differ: "ranks disagree on ppo.hidden_sizes: rank 0 has [64, 64],
// rank 1 has [32]" for the first differing key in `a`'s order (a key only one side has counts
// as "(absent)" on the other), with how many more differ; "" when they agree.
std::string describe_disagreement(const Settings& a, int rank_a, const Settings& b, int rank_b);

// This rank's share of the job's envs: a recipe means the same at every world size, so
// env.num_envs is the job's count, split evenly (and each rank's batch of num_envs / world_size
// * ppo.num_steps splits into ppo.num_minibatches shares of the job's minibatches). Throws
// std::invalid_argument naming env.num_envs when the world size does not divide it, or
// ppo.num_minibatches when it does not divide a rank's batch into minibatches of 2 or more.
int64_t rank_num_envs(const TrainConfig& config, int world_size);

// The settings every rank of a job must share: settings(config) less those that may differ per
// rank without changing what the job computes: run.threads (each node's cores; rollouts do not
// depend on the thread count) and run.log_every_seconds (printing). run.resume is compared as
// set or unset, not as a path (each node may read its own copy of the checkpoint). The run
// folder (--out) and the device index are not config settings.
Settings job_settings(const TrainConfig& config);

// A collective, the first of a job: every rank all-gathers a 24-byte digest of its settings
// (two 64-bit hashes and the length of settings_text); where they differ, every rank gathers
// every rank's text (padded to the longest) and throws std::invalid_argument naming the first
// setting on which the lowest disagreeing rank differs from rank 0 (describe_disagreement),
// the same message on every rank, so every rank exits cleanly before any tensor of the
// training is exchanged.
void check_ranks_agree(Comm& comm, const Settings& settings);

}  // namespace myriad::learner
