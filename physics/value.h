// The value-type vocabulary of pipeline.h's smooth stages, which are templated on the type V of
// one env's data values: a scalar (float, double: one env, on the CPU and on CUDA) or
// Lanes<S, W> (physics/lanes.h: W envs in SIMD lanes, CPU only). Model constants are always the
// scalar, scalar_of<V>. A branch on a data value is written select(condition, a, b), which for a
// scalar is the plain conditional and for lanes keeps each lane's side.
#pragma once

#include "myriad/hd.h"

namespace myriad::physics {

template <class T>
struct ScalarOf {
  using type = T;
};
template <class T>
using scalar_of = typename ScalarOf<T>::type;

template <class T>
MYRIAD_HD T select(bool c, const T& a, const T& b) {
  return c ? a : b;
}

}  // namespace myriad::physics
