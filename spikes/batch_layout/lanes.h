// Lanes<W>: W envs' values of one scalar, one per SIMD lane. Arithmetic is element-wise in plain
// loops over W, which the compiler turns into vector instructions (SSE at x86-64, AVX2 at
// x86-64-v3); every lane computes exactly what the scalar code computes for its env, so a lane's
// result is bitwise the scalar result (with -ffp-contract=off). Branches on values become
// select(mask, a, b): both sides are computed, each lane keeps its own.
#pragma once

#include <cmath>
#include <type_traits>

namespace spike {

template <int W>
struct Lanes {
  float v[W];
  static Lanes all(float x) {
    Lanes r;
    for (int l = 0; l < W; ++l) r.v[l] = x;
    return r;
  }
};

template <int W>
struct Mask {
  bool m[W];
};

#define SPIKE_LANES_OP(op)                                            \
  template <int W>                                                    \
  inline Lanes<W> operator op(const Lanes<W>& a, const Lanes<W>& b) { \
    Lanes<W> r;                                                       \
    for (int l = 0; l < W; ++l) r.v[l] = a.v[l] op b.v[l];            \
    return r;                                                         \
  }                                                                   \
  template <int W>                                                    \
  inline Lanes<W> operator op(const Lanes<W>& a, float b) {           \
    Lanes<W> r;                                                       \
    for (int l = 0; l < W; ++l) r.v[l] = a.v[l] op b;                 \
    return r;                                                         \
  }                                                                   \
  template <int W>                                                    \
  inline Lanes<W> operator op(float a, const Lanes<W>& b) {           \
    Lanes<W> r;                                                       \
    for (int l = 0; l < W; ++l) r.v[l] = a op b.v[l];                 \
    return r;                                                         \
  }
SPIKE_LANES_OP(+)
SPIKE_LANES_OP(-)
SPIKE_LANES_OP(*)
SPIKE_LANES_OP(/)
#undef SPIKE_LANES_OP

template <int W>
inline Lanes<W> operator-(const Lanes<W>& a) {
  Lanes<W> r;
  for (int l = 0; l < W; ++l) r.v[l] = -a.v[l];
  return r;
}

template <int W>
inline Mask<W> operator<(const Lanes<W>& a, float b) {
  Mask<W> r;
  for (int l = 0; l < W; ++l) r.m[l] = a.v[l] < b;
  return r;
}

template <int W>
inline Lanes<W> select(const Mask<W>& c, const Lanes<W>& a, const Lanes<W>& b) {
  Lanes<W> r;
  for (int l = 0; l < W; ++l) r.v[l] = c.m[l] ? a.v[l] : b.v[l];
  return r;
}

// Element-wise functions; sin and cos stay one call per lane (no vector versions without
// libmvec and -ffast-math, which round differently).
#define SPIKE_LANES_FN(fn)                                \
  template <int W>                                        \
  inline Lanes<W> fn(const Lanes<W>& a) {                 \
    Lanes<W> r;                                           \
    for (int l = 0; l < W; ++l) r.v[l] = std::fn(a.v[l]); \
    return r;                                             \
  }
SPIKE_LANES_FN(sqrt)
SPIKE_LANES_FN(sin)
SPIKE_LANES_FN(cos)
#undef SPIKE_LANES_FN

// The scalar side of the same vocabulary.
inline float select(bool c, float a, float b) { return c ? a : b; }
using std::cos;
using std::sin;
using std::sqrt;

template <class T>
inline T broadcast(float x) {
  if constexpr (std::is_same_v<T, float>)
    return x;
  else
    return T::all(x);
}

}  // namespace spike
