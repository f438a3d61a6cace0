#include "core/cuda_probe.h"
#include "myriad/stage_times.h"

namespace myriad {
bool cuda_probe_compiled() { return false; }
int cuda_probe_device_count() { return 0; }
int cuda_probe_current_device() { return 0; }
}  // namespace myriad

namespace myriad {
void stage_times_start() {}
std::vector<StageTime> stage_times_stop() { return {}; }
}  // namespace myriad
