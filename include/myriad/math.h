// Float math for env and physics kernels, written once for CPU and CUDA. Plain arithmetic with
// no library calls, so a CPU loop over envs vectorizes and both backends compute alike.
#pragma once

#include <cmath>

#include "myriad/hd.h"

namespace myriad {

// sin and cos of x, within 2 ulp of the correctly rounded float for |x| < 1e4 (Cody-Waite
// reduction to [-pi/4, pi/4] by multiples of pi/2, then minimax polynomials as in Cephes).
MYRIAD_HD void sin_cos(float x, float* sin_out, float* cos_out) {
  const float k = rintf(x * 0.63661977236758134f);  // nearest multiple of pi/2
  const float r =
      ((x - k * 1.5703125f) - k * 4.837512969970703125e-4f) - k * 7.54978995489188216e-8f;
  const float r2 = r * r;
  const float s =
      r + r * r2 * (-1.6666654611e-1f + r2 * (8.3321608736e-3f + r2 * -1.9515295891e-4f));
  const float c =
      1.0f - 0.5f * r2 +
      r2 * r2 *
          (4.166664568298827e-2f + r2 * (-1.388731625493765e-3f + r2 * 2.443315711809948e-5f));
  const int q = static_cast<int>(k) & 3;
  const float sq = (q & 1) ? c : s, cq = (q & 1) ? s : c;
  *sin_out = (q & 2) ? -sq : sq;
  *cos_out = ((q + 1) & 2) ? -cq : cq;
}

// Clips x to [lo, hi] as numpy.clip does: NaN stays NaN (fminf/fmaxf would drop it), so a
// NaN action reaches the divergence check instead of acting as a bound.
MYRIAD_HD float clip(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

MYRIAD_HD float sin_f(float x) {
  float s, c;
  sin_cos(x, &s, &c);
  return s;
}

MYRIAD_HD float cos_f(float x) {
  float s, c;
  sin_cos(x, &s, &c);
  return c;
}

}  // namespace myriad
