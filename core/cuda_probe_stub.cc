#include "core/cuda_probe.h"

namespace myriad {
bool cuda_probe_compiled() { return false; }
int cuda_probe_device_count() { return 0; }
int cuda_probe_current_device() { return 0; }
}  // namespace myriad
