// Chooses the CPU kernel copy (envs/backend_cpu.cc) once per process; compiled for baseline
// x86-64 so that the check itself runs anywhere.
#include <cstdlib>
#include <stdexcept>

#include "envs/backend.h"
#include "envs/cpu_tables.h"

// Entry points of the copies envs/CMakeLists.txt built (C names: see envs/backend_cpu.cc).
extern "C" void myriad_cpu_tables_base(void* out);
#if defined(MYRIAD_CPU_X86_64_V3)
extern "C" void myriad_cpu_tables_x86_64_v3(void* out);
#endif

namespace myriad::envs {
namespace {

bool cpu_has_x86_64_v3_built() {
#if defined(MYRIAD_CPU_X86_64_V3)
  return true;
#else
  return false;
#endif
}

bool cpu_has_x86_64_v3() {
#if defined(MYRIAD_CPU_X86_64_V3)
  return __builtin_cpu_supports("x86-64-v3");
#else
  return false;
#endif
}

struct Chosen {
  std::string level;
  CpuTables tables{};
};

Chosen choose(const std::string& want) {
  Chosen c;
#if defined(MYRIAD_CPU_NATIVE)
  c.level = "native";
#else
  c.level = "x86-64";
#endif
  if (!want.empty() && want != "x86-64" && want != "x86-64-v3")
    throw std::invalid_argument("CPU kernel level '" + want + "' (valid: x86-64, x86-64-v3)");
  if (want == "x86-64-v3" && !cpu_has_x86_64_v3())
    throw std::invalid_argument("CPU kernel level x86-64-v3 requested, but this " +
                                std::string(cpu_has_x86_64_v3_built() ? "CPU" : "build") +
                                " lacks it; use x86-64");
#if defined(MYRIAD_CPU_X86_64_V3)
  if (want != "x86-64" && cpu_has_x86_64_v3()) {
    c.level = "x86-64-v3";
    myriad_cpu_tables_x86_64_v3(&c.tables);
    return c;
  }
#endif
  myriad_cpu_tables_base(&c.tables);
  return c;
}

Chosen& chosen() {
  static Chosen c = [] {
    const char* forced = std::getenv("MYRIAD_CPU_LEVEL");
    return choose(forced ? forced : "");
  }();
  return c;
}

template <class Env>
const Backend<Env>& table_of(const CpuTables& t);
#define MYRIAD_X(Env)                                \
  template <>                                        \
  const Backend<Env>& table_of(const CpuTables& t) { \
    return t.table_##Env;                            \
  }
MYRIAD_BATCH_ENVS(MYRIAD_X)
#undef MYRIAD_X

}  // namespace

std::string cpu_kernel_level() { return chosen().level; }

void select_cpu_kernels(const std::string& level) { chosen() = choose(level); }

template <class Env>
Backend<Env> cpu_backend() {
  return table_of<Env>(chosen().tables);
}

#define MYRIAD_X(Env) template Backend<Env> cpu_backend<Env>();
MYRIAD_BATCH_ENVS(MYRIAD_X)
#undef MYRIAD_X

}  // namespace myriad::envs
