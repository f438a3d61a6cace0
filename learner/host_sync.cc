#include "learner/host_sync.h"

#include <ATen/record_function.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace myriad::learner {
namespace {

std::atomic<int64_t> g_planned{0};

// Ops whose CUDA implementation waits for the device. Boolean indexing and masked ops reach
// nonzero, which is listed, so they are counted through it.
constexpr const char* kSyncingOps[] = {
    "aten::_local_scalar_dense",  // .item(), bool(tensor), Scalar conversion
    "aten::nonzero",
    "aten::masked_select",
    "aten::unique_consecutive",
    "aten::_unique",
    "aten::_unique2",
    "aten::unique_dim",
    "aten::equal",
    "aten::repeat_interleave"};

bool is_syncing(const char* name) {
  for (const char* op : kSyncingOps)
    if (std::strcmp(op, name) == 0) return true;
  return false;
}

// The counter of this thread's active HostSyncCounter (one at a time per thread).
thread_local std::map<std::string, int64_t>* t_counts = nullptr;

}  // namespace

torch::Tensor read_to_host(const torch::Tensor& t) {
  g_planned.fetch_add(1, std::memory_order_relaxed);
  return t.to(torch::kCPU);
}

int64_t planned_host_reads() { return g_planned.load(std::memory_order_relaxed); }

HostSyncCounter::HostSyncCounter() : planned_at_start_(planned_host_reads()) {
  static thread_local std::map<std::string, int64_t> counts;
  counts.clear();
  t_counts = &counts;
  // A nested op (e.g. nonzero inside boolean indexing) reports its own name: each counts once.
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback([](const at::RecordFunction& fn)
                                     -> std::unique_ptr<at::ObserverContext> {
        if (t_counts && is_syncing(fn.name())) ++(*t_counts)[fn.name()];
        return nullptr;
      }).scopes({at::RecordScope::FUNCTION}));
}

HostSyncCounter::~HostSyncCounter() {
  at::removeCallback(handle_);
  t_counts = nullptr;
}

int64_t HostSyncCounter::stray() const {
  int64_t total = 0;
  if (t_counts)
    for (const auto& [_, n] : *t_counts) total += n;
  return total;
}

int64_t HostSyncCounter::planned() const { return planned_host_reads() - planned_at_start_; }

std::map<std::string, int64_t> HostSyncCounter::by_op() const {
  return t_counts ? *t_counts : std::map<std::string, int64_t>{};
}

}  // namespace myriad::learner
