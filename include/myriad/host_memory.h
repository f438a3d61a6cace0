// Sizes refused before they are allocated: a batch too big for this machine's memory is a clear
// error naming the bytes it needs, not an OOM kill once Linux's overcommit runs out.
#pragma once

#include <cstdint>
#include <string>

namespace myriad {

// Bytes of memory the kernel could give this process now (MemAvailable), or of physical
// memory where that is unknown.
int64_t host_memory_available();

// Throws std::invalid_argument naming `what` and both sizes when `bytes` is more than
// host_memory_available(); `bytes` < 0 stands for an overflowed count.
void check_host_allocation(int64_t bytes, const std::string& what);

// a * b, or -1 when that overflows int64 (for check_host_allocation).
int64_t checked_product(int64_t a, int64_t b);

}  // namespace myriad
