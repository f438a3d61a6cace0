// One code path for LibTorch's CPU math, so that a seed's run does not depend on which x86-64
// CPU it ran on. MKL picks its kernels by CPU vendor and model, and ATen its vector kernels by
// the widest ISA the CPU has. Pinned by default:
//   MKL_CBWR=COMPATIBLE,STRICT  MKL's conditional numerical reproducibility, COMPATIBLE branch
//                               (SSE2 without the approximate rcpps/rsqrtps): the one branch
//                               besides AUTO that MKL offers on non-Intel CPUs. Its AVX2 branch
//                               exists on Intel CPUs only; on AMD, MKL_CBWR=AVX2 falls back to
//                               AUTO (MKL's own per-CPU choice), so it pinned nothing there.
//   ATEN_CPU_CAPABILITY=avx2    ATen's AVX2 kernels (AVX-512 CPUs included)
// Only on CPUs with AVX2 and FMA (any x86-64 since 2013-2015); elsewhere nothing is pinned.
// Variables the user already set win; MYRIAD_NATIVE_MATH=1 skips pinning (each CPU's own
// fastest path, reproducible only on the same CPU model). Takes effect only if called before the
// first LibTorch op of the process. What was measured, and what is not yet shown across vendors:
// docs/lab-notebook.md, "Same seed, same run on another CPU".
#pragma once

#include <string>

namespace myriad::learner {

// Sets the variables above (unless set); returns a one-line description of what is in force.
std::string pin_cpu_math();

// Keeps freed memory in the process heap (glibc mallopt): by default glibc hands blocks over
// 128 KiB back to the kernel, so every minibatch's tensors fault fresh pages in again; that
// cost 28% of a CartPole training run's wall time here (docs/lab-notebook.md). Process-wide;
// `myriad` and `import myriad` call it. A no-op without glibc.
void keep_freed_memory();

}  // namespace myriad::learner
