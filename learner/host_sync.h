// Host synchronisations: the moments the host waits for the device. On CUDA each one stalls the
// launch queue, so the training loop reads the device once per update (for logging) and never
// per env step or minibatch (docs/architecture.md).
//
// Two counts, both kept on CPU-only builds too, so a CPU test can hold the CUDA path to account:
//  - planned reads: every deliberate device-to-host read goes through read_to_host(), which
//    counts it;
//  - stray syncs: HostSyncCounter watches ATen's operator stream (RecordFunction) for the ops
//    that make the host wait on CUDA whatever their device (.item() and bool conversion, nonzero,
//    masked_select, boolean indexing, unique, equal, ...). On the CPU they are free, which is why
//    they go unnoticed until a GPU run; the counter sees them anyway.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>

namespace myriad::learner {

// Copies `t` to the host (one synchronisation on CUDA) and counts it as a planned read.
torch::Tensor read_to_host(const torch::Tensor& t);
// Planned reads since the program started.
int64_t planned_host_reads();

// While alive, counts on the calling thread the ATen ops that synchronise with a CUDA device.
class HostSyncCounter {
 public:
  HostSyncCounter();
  ~HostSyncCounter();
  HostSyncCounter(const HostSyncCounter&) = delete;
  HostSyncCounter& operator=(const HostSyncCounter&) = delete;

  int64_t stray() const;                         // syncing ops seen
  int64_t planned() const;                       // read_to_host calls since construction
  std::map<std::string, int64_t> by_op() const;  // stray syncs by op name

 private:
  uint64_t handle_;
  int64_t planned_at_start_;
};

}  // namespace myriad::learner
