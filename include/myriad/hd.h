// MYRIAD_HD marks a function that runs on the host and, under nvcc, on the device;
// MYRIAD_HD_LAMBDA does the same for a lambda passed to parallel_for. MYRIAD_NO_UNROLL keeps a
// loop rolled on the GPU, where unrolling it would hold several iterations' values in registers
// at once (a loop whose body is most of a kernel's registers); the CPU compiler decides there.
// MYRIAD_HD_OUTLINE is MYRIAD_HD kept out of line under nvcc: a call with its own frame, for a
// large function inlined into a kernel that has no room for its registers and stack besides its
// own (GJK/EPA); in the CPU build (g++, the engine's .cc files) it is MYRIAD_HD, inlined.
#pragma once

#if defined(__CUDACC__)
#define MYRIAD_HD __host__ __device__ __forceinline__
#define MYRIAD_HD_LAMBDA __host__ __device__
#define MYRIAD_HD_OUTLINE __host__ __device__ __noinline__
#define MYRIAD_UNROLL _Pragma("unroll")
#if defined(__CUDA_ARCH__)
#define MYRIAD_NO_UNROLL _Pragma("unroll 1")
#else
#define MYRIAD_NO_UNROLL
#endif
#else
#define MYRIAD_HD inline __attribute__((always_inline))
#define MYRIAD_HD_OUTLINE MYRIAD_HD
#define MYRIAD_HD_LAMBDA
// Fully unrolls a short fixed loop before GCC's vectorizer sees the loop over envs around it.
#define MYRIAD_UNROLL _Pragma("GCC unroll 16")
#define MYRIAD_NO_UNROLL
#endif

#include <cstdint>
#include <cstring>

namespace myriad {

// Finite test on the bits (not NaN, not +-inf); immune to -ffast-math and works on device.
MYRIAD_HD bool is_finite(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  return (bits & 0x7f800000u) != 0x7f800000u;
}

MYRIAD_HD bool is_finite(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  return (bits & 0x7ff0000000000000ull) != 0x7ff0000000000000ull;
}

}  // namespace myriad
