#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_probe.h"
#include "myriad/parallel_for.h"
#include "myriad/stage_times.h"

namespace myriad {
bool cuda_probe_compiled() { return true; }
int cuda_probe_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}
int cuda_probe_current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return device;
}
}  // namespace myriad

// myriad/stage_times.h over the launches parallel_for recorded (include/myriad/parallel_for.h).
namespace myriad {
namespace {
void drop_events(detail::StageEvents& timed) {
  for (const auto& l : timed.launches) {
    cudaEventDestroy(l.start);
    cudaEventDestroy(l.stop);
  }
  timed.launches.clear();
}
}  // namespace

void stage_times_start() {
  detail::StageEvents& timed = detail::stage_events();
  const std::lock_guard<std::mutex> lock(timed.mutex);
  drop_events(timed);
  timed.on = true;
}

std::vector<StageTime> stage_times_stop() {
  detail::StageEvents& timed = detail::stage_events();
  timed.on = false;
  const std::lock_guard<std::mutex> lock(timed.mutex);
  std::vector<StageTime> out;
  for (const auto& l : timed.launches) {
    float ms = 0;
    if (cudaEventSynchronize(l.stop) != cudaSuccess ||
        cudaEventElapsedTime(&ms, l.start, l.stop) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    auto it =
        std::find_if(out.begin(), out.end(), [&](const StageTime& t) { return t.name == l.name; });
    if (it == out.end()) {
      out.push_back({l.name, 1, ms});
    } else {
      ++it->launches;
      it->ms += ms;
    }
  }
  drop_events(timed);
  return out;
}
}  // namespace myriad
