#include "learner/cpu_math.h"

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace myriad::learner {
namespace {

bool has_avx2_fma() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

std::string value_of(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::string pin_cpu_math() {
  const char* native = std::getenv("MYRIAD_NATIVE_MATH");
  if (native && std::string(native) == "1") return "CPU math: native (MYRIAD_NATIVE_MATH=1)";
  if (!has_avx2_fma()) return "CPU math: native (no AVX2/FMA on this CPU)";
  setenv("MKL_CBWR", "COMPATIBLE,STRICT", /*overwrite=*/0);
  setenv("ATEN_CPU_CAPABILITY", "avx2", /*overwrite=*/0);
  return "CPU math: MKL_CBWR=" + value_of("MKL_CBWR") +
         ", ATEN_CPU_CAPABILITY=" + value_of("ATEN_CPU_CAPABILITY");
}

void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest: blocks up to 32 MiB come from the heap
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

}  // namespace myriad::learner
