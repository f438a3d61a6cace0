// Lanes<S, W>: W envs' values of one scalar S, one env per SIMD lane, for the smooth stages of
// pipeline.h on the CPU (physics/tile.h runs them over a tile of W envs). The value is a GCC
// vector (vector_size), so + - * / are the target's vector instructions (8 floats: two SSE
// registers in the project's portable x86-64 build, one register where the target has AVX);
// they are IEEE element-wise operations, and with no FMA contraction in this target each lane
// computes bitwise what the scalar code computes for its env. A branch on a value becomes
// select(mask, a, b): both sides computed, each lane keeps its own. sqrt is exact in IEEE
// arithmetic (one call per lane that the compiler vectorizes without errno); sin, cos and atan2
// stay one libm call per lane (vector versions round differently).
//
// The same source runs scalar (physics/value.h: select(bool, a, b), scalar_of<S> = S), so
// pipeline.h's smooth stages, templated on their value type V, read the same for V = float,
// double or Lanes<S, W>. CPU and GCC/Clang only: never included by a .cu file.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "physics/value.h"

namespace myriad::physics {

// The bytes of one native vector register: a vector wider than the target's registers is lowered
// by GCC one lane at a time for comparisons and selects, so Lanes holds W / (kVectorBytes /
// sizeof(S)) native vectors and loops over them.
#if defined(__AVX__)
constexpr int kVectorBytes = 32;
#else
constexpr int kVectorBytes = 16;
#endif

// The integer of a scalar's width: comparisons of S vectors give vectors of it (-1 or 0).
template <class S>
using LaneInt = std::conditional_t<sizeof(S) == 4, int32_t, int64_t>;

template <class S, int W>
struct LaneShape {
  static constexpr int kPer = kVectorBytes / int(sizeof(S)) < W ? kVectorBytes / int(sizeof(S)) : W;
  static constexpr int kChunks = W / kPer;
  static_assert(W % kPer == 0, "W is a multiple of a register's lanes");
  typedef S vec __attribute__((vector_size(sizeof(S) * kPer)));
  typedef LaneInt<S> ivec __attribute__((vector_size(sizeof(S) * kPer)));
};

template <class S, int W>
struct LaneMask {
  typename LaneShape<S, W>::ivec m[LaneShape<S, W>::kChunks];
};

template <class S, int W>
struct Lanes {
  using Shape = LaneShape<S, W>;
  static constexpr int kChunks = Shape::kChunks;
  typename Shape::vec c[kChunks];
  Lanes() = default;
  // Broadcast: a model constant or a literal in every lane (x - 0 keeps a negative zero).
  Lanes(S x) {  // NOLINT(google-explicit-constructor): as a scalar converts
    for (int k = 0; k < kChunks; ++k) c[k] = x - typename Shape::vec{};
  }
  // Lane l's value (vector subscripts: no type punning).
  S lane(int l) const { return c[l / Shape::kPer][l % Shape::kPer]; }
  void set_lane(int l, S x) { c[l / Shape::kPer][l % Shape::kPer] = x; }
  Lanes& operator+=(const Lanes& b) {
    for (int k = 0; k < kChunks; ++k) c[k] += b.c[k];
    return *this;
  }
  Lanes& operator-=(const Lanes& b) {
    for (int k = 0; k < kChunks; ++k) c[k] -= b.c[k];
    return *this;
  }
  Lanes& operator*=(const Lanes& b) {
    for (int k = 0; k < kChunks; ++k) c[k] *= b.c[k];
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
    for (int k = 0; k < Lanes<S, W>::kChunks; ++k) r.c[k] = a.c[k] op b.c[k];       \
    return r;                                                                       \
  }                                                                                 \
  template <class S, int W>                                                         \
  inline Lanes<S, W> operator op(const Lanes<S, W>& a, typename Ident<S>::type b) { \
    return a op Lanes<S, W>(b);                                                     \
  }                                                                                 \
  template <class S, int W>                                                         \
  inline Lanes<S, W> operator op(typename Ident<S>::type a, const Lanes<S, W>& b) { \
    return Lanes<S, W>(a) op b;                                                     \
  }
MYRIAD_LANES_BINARY(+)
MYRIAD_LANES_BINARY(-)
MYRIAD_LANES_BINARY(*)
MYRIAD_LANES_BINARY(/)
#undef MYRIAD_LANES_BINARY

template <class S, int W>
inline Lanes<S, W> operator-(const Lanes<S, W>& a) {
  Lanes<S, W> r;
  for (int k = 0; k < Lanes<S, W>::kChunks; ++k) r.c[k] = -a.c[k];
  return r;
}

#define MYRIAD_LANES_COMPARE(op)                                                       \
  template <class S, int W>                                                            \
  inline LaneMask<S, W> operator op(const Lanes<S, W>& a, const Lanes<S, W>& b) {      \
    LaneMask<S, W> r;                                                                  \
    for (int k = 0; k < Lanes<S, W>::kChunks; ++k) r.m[k] = a.c[k] op b.c[k];          \
    return r;                                                                          \
  }                                                                                    \
  template <class S, int W>                                                            \
  inline LaneMask<S, W> operator op(const Lanes<S, W>& a, typename Ident<S>::type b) { \
    return a op Lanes<S, W>(b);                                                        \
  }
MYRIAD_LANES_COMPARE(<)
MYRIAD_LANES_COMPARE(>)
MYRIAD_LANES_COMPARE(==)
#undef MYRIAD_LANES_COMPARE

template <class S, int W>
inline LaneMask<S, W> operator&&(const LaneMask<S, W>& a, const LaneMask<S, W>& b) {
  LaneMask<S, W> r;
  for (int k = 0; k < LaneShape<S, W>::kChunks; ++k) r.m[k] = a.m[k] & b.m[k];
  return r;
}
template <class S, int W>
inline LaneMask<S, W> operator||(const LaneMask<S, W>& a, const LaneMask<S, W>& b) {
  LaneMask<S, W> r;
  for (int k = 0; k < LaneShape<S, W>::kChunks; ++k) r.m[k] = a.m[k] | b.m[k];
  return r;
}
template <class S, int W>
inline LaneMask<S, W> operator!(const LaneMask<S, W>& a) {
  LaneMask<S, W> r;
  for (int k = 0; k < LaneShape<S, W>::kChunks; ++k) r.m[k] = ~a.m[k];
  return r;
}

// Per lane: a where the mask is set, else b, as bits ((a & mask) | (b & ~mask)).
template <class S, int W>
inline Lanes<S, W> select(const LaneMask<S, W>& c, const Lanes<S, W>& a, const Lanes<S, W>& b) {
  using Shape = LaneShape<S, W>;
  Lanes<S, W> r;
  for (int k = 0; k < Shape::kChunks; ++k) {
    // A cast between vector types of one size reinterprets the bits (no aliasing through a
    // reference of the other type).
    using ivec = typename Shape::ivec;
    using vec = typename Shape::vec;
    const ivec bits = ((ivec)a.c[k] & c.m[k]) | ((ivec)b.c[k] & ~c.m[k]);  // NOLINT
    r.c[k] = (vec)bits;                                                    // NOLINT
  }
  return r;
}

#define MYRIAD_LANES_UNARY(fn)                                     \
  template <class S, int W>                                        \
  inline Lanes<S, W> fn(const Lanes<S, W>& a) {                    \
    Lanes<S, W> r;                                                 \
    for (int l = 0; l < W; ++l) r.set_lane(l, std::fn(a.lane(l))); \
    return r;                                                      \
  }
MYRIAD_LANES_UNARY(sqrt)
MYRIAD_LANES_UNARY(sin)
MYRIAD_LANES_UNARY(cos)
MYRIAD_LANES_UNARY(fabs)
#undef MYRIAD_LANES_UNARY

template <class S, int W>
inline void sin_cos(const Lanes<S, W>& x, Lanes<S, W>* s, Lanes<S, W>* c) {
  for (int l = 0; l < W; ++l) {
    const S xl = x.lane(l);
    s->set_lane(l, std::sin(xl));
    c->set_lane(l, std::cos(xl));
  }
}

template <class S, int W>
inline Lanes<S, W> atan2(const Lanes<S, W>& y, const Lanes<S, W>& x) {
  Lanes<S, W> r;
  for (int l = 0; l < W; ++l) r.set_lane(l, std::atan2(y.lane(l), x.lane(l)));
  return r;
}

}  // namespace myriad::physics
