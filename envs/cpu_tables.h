// The CPU kernel tables of every env type (envs/env_list.h), as one copy of envs/backend_cpu.cc
// hands them out, and the choice between the copies (envs/backend_cpu_dispatch.cc).
#pragma once

#include <string>

#include "envs/backend.h"
#include "envs/env_list.h"

namespace myriad::envs {

// Plain function-pointer tables: the same layout in every copy, whatever its namespace.
struct CpuTables {
#define MYRIAD_X(Env) Backend<Env> table_##Env;
  MYRIAD_BATCH_ENVS(MYRIAD_X)
#undef MYRIAD_X
};

// Which copy runs (also declared in myriad/registry.h, which this torch-free target cannot
// include): "x86-64-v3", "x86-64" or "native".
std::string cpu_kernel_level();

// Switches the copy that envs made from now on use (an env keeps the one it was made with):
// "x86-64" or "x86-64-v3" (std::invalid_argument if the CPU or build lacks it); "" chooses as at
// startup. For tests and benchmarks that compare the copies in one process.
void select_cpu_kernels(const std::string& level);

}  // namespace myriad::envs
