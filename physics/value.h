// The value-type vocabulary of pipeline.h's smooth stages, which are templated on the type V of
// one env's data values: a scalar (float, double: one env, on the CPU and on CUDA) or
// Lanes<S, W> (physics/lanes.h: W envs in SIMD lanes, CPU only). Model constants are always the
// scalar, scalar_of<V>. A branch on a data value is written select(condition, a, b), which for a
// scalar is the plain conditional and for lanes keeps each lane's side.
#pragma once

#include <type_traits>
#include <utility>

#include "myriad/hd.h"

namespace myriad::physics {

template <class T>
struct ScalarOf {
  using type = T;
};
template <class T>
using scalar_of = typename ScalarOf<T>::type;

// The value type that a pointer-like P reads (T*, const T*, or a blocked batch's Strided field).
template <class P>
using element_of = std::remove_cv_t<std::remove_reference_t<decltype(std::declval<P>()[0])>>;

// p's first N values where a plain pointer reads them: p itself, or, for a blocked batch's field,
// copied into buf (unused, and so free, for a pointer).
template <int N, class T, class P>
MYRIAD_HD const T* readable(P p, T (&buf)[N]) {
  if constexpr (std::is_pointer_v<P>) {
    return p;
  } else {
    for (int k = 0; k < N; ++k) buf[k] = p[k];
    return buf;
  }
}

template <class T>
MYRIAD_HD T select(bool c, const T& a, const T& b) {
  return c ? a : b;
}

}  // namespace myriad::physics
