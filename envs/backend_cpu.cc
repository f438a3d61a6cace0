// CPU (OpenMP) instantiation of every env's kernels. envs/CMakeLists.txt compiles this file once
// per x86-64 level: baseline x86-64 (SSE2; runs on every x86-64 CPU) and x86-64-v3 (AVX2, FMA);
// envs/backend_cpu_dispatch.cc picks one per process by what the CPU supports. Both copies are
// built without FMA contraction (-ffp-contract=off), so they compute bitwise the same numbers.
//
// The v3 copy is compiled with namespace myriad renamed (-Dmyriad=myriad_x86_64_v3): none of
// its inline functions or template instances can then stand in for the baseline copy's at link
// time (which would run AVX2 code on a CPU without it); tests/envs check its symbols. Its tables
// leave through a C name, which the renaming leaves alone.
#include "envs/backend.h"
#include "envs/batch_launch.inl"
#include "envs/cpu_tables.h"
#include "envs/env_list.h"

#ifndef MYRIAD_CPU_TABLES
#error "envs/CMakeLists.txt names this copy's entry point (MYRIAD_CPU_TABLES)"
#endif

namespace myriad::envs {

template <class Env>
Backend<Env> cpu_table() {
  return {&launch_reset<Device::kCpu, Env>, &launch_step<Device::kCpu, Env>,
          &launch_observe<Device::kCpu, Env>};
}

}  // namespace myriad::envs

extern "C" void MYRIAD_CPU_TABLES(void* out) {
  using namespace myriad::envs;
  CpuTables& t = *static_cast<CpuTables*>(out);
#define MYRIAD_X(Env) t.table_##Env = cpu_table<Env>();
  MYRIAD_BATCH_ENVS(MYRIAD_X)
#undef MYRIAD_X
}
