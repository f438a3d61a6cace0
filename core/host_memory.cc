#include "myriad/host_memory.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace myriad {
namespace {

std::string gib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  return text;
}

}  // namespace

int64_t host_memory_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page
                               : std::numeric_limits<int64_t>::max();
}

int64_t checked_product(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return -1;
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) return -1;
  return a * b;
}

void check_host_allocation(int64_t bytes, const std::string& what) {
  if (bytes < 0) throw std::invalid_argument(what + " needs more bytes than a 64-bit count holds");
  const int64_t available = host_memory_available();
  if (bytes > available)
    throw std::invalid_argument(what + " needs " + std::to_string(bytes) + " bytes (" + gib(bytes) +
                                ") but this machine has " + gib(available) + " available");
}

}  // namespace myriad
