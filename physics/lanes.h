// Lanes<S, W>: W envs' values of one scalar S, one env per SIMD lane, for the smooth stages of
// pipeline.h on the CPU (physics/tile.h runs them over a tile of W envs). Arithmetic is
// element-wise in plain loops over W that the compiler turns into vector instructions; every
// lane computes exactly what the scalar code computes for its env (no FMA contraction in this
// target), so each lane's result is bitwise the scalar result. A branch on a value becomes
// select(mask, a, b): both sides computed, each lane keeps its own. sqrt is exact in IEEE
// arithmetic and vectorizes; sin, cos and atan2 stay one libm call per lane (vector versions
// round differently).
//
// The same source runs scalar (physics/value.h: select(bool, a, b), scalar_of<S> = S), so
// pipeline.h's smooth stages, templated on their value type V, read the same for V = float,
// double or Lanes<S, W>. CPU only: never included by a .cu file.
#pragma once

#include <cmath>
#include <type_traits>

#include "physics/value.h"

namespace myriad::physics {

template <int W>
struct LaneMask {
  bool m[W];
};

template <class S, int W>
struct Lanes {
  S v[W];
  Lanes() = default;
  // Broadcast: a model constant or a literal in every lane.
  Lanes(S x) {  // NOLINT(google-explicit-constructor): S converts as a scalar would
    for (int l = 0; l < W; ++l) v[l] = x;
  }
  Lanes& operator+=(const Lanes& b) {
    for (int l = 0; l < W; ++l) v[l] += b.v[l];
    return *this;
  }
  Lanes& operator-=(const Lanes& b) {
    for (int l = 0; l < W; ++l) v[l] -= b.v[l];
    return *this;
  }
  Lanes& operator*=(const Lanes& b) {
    for (int l = 0; l < W; ++l) v[l] *= b.v[l];
    return *this;
  }
};

// The scalar of Lanes<S, W> (physics/value.h has the scalar case).
template <class S, int W>
struct ScalarOf<Lanes<S, W>> {
  using type = S;
};

// A non-deduced S, so that `lanes * 2.0f` converts the scalar instead of failing to deduce.
template <class T>
struct Ident {
  using type = T;
};

#define MYRIAD_LANES_BINARY(op)                                                     \
  template <class S, int W>                                                         \
  inline Lanes<S, W> operator op(const Lanes<S, W>& a, const Lanes<S, W>& b) {      \
    Lanes<S, W> r;                                                                  \
    for (int l = 0; l < W; ++l) r.v[l] = a.v[l] op b.v[l];                          \
    return r;                                                                       \
  }                                                                                 \
  template <class S, int W>                                                         \
  inline Lanes<S, W> operator op(const Lanes<S, W>& a, typename Ident<S>::type b) { \
    Lanes<S, W> r;                                                                  \
    for (int l = 0; l < W; ++l) r.v[l] = a.v[l] op b;                               \
    return r;                                                                       \
  }                                                                                 \
  template <class S, int W>                                                         \
  inline Lanes<S, W> operator op(typename Ident<S>::type a, const Lanes<S, W>& b) { \
    Lanes<S, W> r;                                                                  \
    for (int l = 0; l < W; ++l) r.v[l] = a op b.v[l];                               \
    return r;                                                                       \
  }
MYRIAD_LANES_BINARY(+)
MYRIAD_LANES_BINARY(-)
MYRIAD_LANES_BINARY(*)
MYRIAD_LANES_BINARY(/)
#undef MYRIAD_LANES_BINARY

template <class S, int W>
inline Lanes<S, W> operator-(const Lanes<S, W>& a) {
  Lanes<S, W> r;
  for (int l = 0; l < W; ++l) r.v[l] = -a.v[l];
  return r;
}

#define MYRIAD_LANES_COMPARE(op)                                                    \
  template <class S, int W>                                                         \
  inline LaneMask<W> operator op(const Lanes<S, W>& a, const Lanes<S, W>& b) {      \
    LaneMask<W> r;                                                                  \
    for (int l = 0; l < W; ++l) r.m[l] = a.v[l] op b.v[l];                          \
    return r;                                                                       \
  }                                                                                 \
  template <class S, int W>                                                         \
  inline LaneMask<W> operator op(const Lanes<S, W>& a, typename Ident<S>::type b) { \
    LaneMask<W> r;                                                                  \
    for (int l = 0; l < W; ++l) r.m[l] = a.v[l] op b;                               \
    return r;                                                                       \
  }
MYRIAD_LANES_COMPARE(<)
MYRIAD_LANES_COMPARE(>)
MYRIAD_LANES_COMPARE(==)
#undef MYRIAD_LANES_COMPARE

template <int W>
inline LaneMask<W> operator&&(const LaneMask<W>& a, const LaneMask<W>& b) {
  LaneMask<W> r;
  for (int l = 0; l < W; ++l) r.m[l] = a.m[l] && b.m[l];
  return r;
}
template <int W>
inline LaneMask<W> operator||(const LaneMask<W>& a, const LaneMask<W>& b) {
  LaneMask<W> r;
  for (int l = 0; l < W; ++l) r.m[l] = a.m[l] || b.m[l];
  return r;
}
template <int W>
inline LaneMask<W> operator!(const LaneMask<W>& a) {
  LaneMask<W> r;
  for (int l = 0; l < W; ++l) r.m[l] = !a.m[l];
  return r;
}

template <class S, int W>
inline Lanes<S, W> select(const LaneMask<W>& c, const Lanes<S, W>& a, const Lanes<S, W>& b) {
  Lanes<S, W> r;
  for (int l = 0; l < W; ++l) r.v[l] = c.m[l] ? a.v[l] : b.v[l];
  return r;
}

// Whether any lane's mask is set (for work that every lane can skip only together).
template <int W>
inline bool any(const LaneMask<W>& c) {
  bool r = false;
  for (int l = 0; l < W; ++l) r = r || c.m[l];
  return r;
}

#define MYRIAD_LANES_UNARY(fn)                            \
  template <class S, int W>                               \
  inline Lanes<S, W> fn(const Lanes<S, W>& a) {           \
    Lanes<S, W> r;                                        \
    for (int l = 0; l < W; ++l) r.v[l] = std::fn(a.v[l]); \
    return r;                                             \
  }
MYRIAD_LANES_UNARY(sqrt)
MYRIAD_LANES_UNARY(sin)
MYRIAD_LANES_UNARY(cos)
MYRIAD_LANES_UNARY(fabs)
#undef MYRIAD_LANES_UNARY

template <class S, int W>
inline Lanes<S, W> atan2(const Lanes<S, W>& y, const Lanes<S, W>& x) {
  Lanes<S, W> r;
  for (int l = 0; l < W; ++l) r.v[l] = std::atan2(y.v[l], x.v[l]);
  return r;
}

}  // namespace myriad::physics
