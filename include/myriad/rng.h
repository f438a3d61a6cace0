// Counter-based random numbers (Philox4x32-10, Salmon et al. 2011).
//
// A stream is keyed by (seed, env index) and positioned by (episode, step); each draw advances
// a draw counter. The same seed therefore gives the same numbers to env i whatever the thread
// count, the batch order or the device.
#pragma once

#include <cmath>
#include <cstdint>

#include "myriad/hd.h"

namespace myriad {

struct Philox4x32 {
  uint32_t v[4];

  MYRIAD_HD static void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
    const uint64_t p = static_cast<uint64_t>(a) * b;
    hi = static_cast<uint32_t>(p >> 32);
    lo = static_cast<uint32_t>(p);
  }

  // Ten rounds over counter c with key k.
  MYRIAD_HD static Philox4x32 generate(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                       uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; ++r) {
      uint32_t hi0, lo0, hi1, lo1;
      mulhilo(0xD2511F53u, c0, hi0, lo0);
      mulhilo(0xCD9E8D57u, c2, hi1, lo1);
      const uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
      c0 = n0, c1 = n1, c2 = n2, c3 = n3;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    return Philox4x32{{c0, c1, c2, c3}};
  }
};

// A per-env stream at (seed, env, episode, step). Draws come four at a time from one block.
class Rng {
 public:
  MYRIAD_HD Rng(uint64_t seed, uint32_t env, uint32_t episode, uint32_t step)
      : k0_(static_cast<uint32_t>(seed)),
        k1_(static_cast<uint32_t>(seed >> 32)),
        env_(env),
        episode_(episode),
        step_(step) {}

  MYRIAD_HD uint32_t next_u32() {
    if (used_ == 4) {
      block_ = Philox4x32::generate(env_, episode_, step_, draw_++, k0_, k1_);
      used_ = 0;
    }
    return block_.v[used_++];
  }

  // Uniform in [0, 1) with 24 random bits (exactly representable in float32).
  MYRIAD_HD float uniform() { return static_cast<float>(next_u32() >> 8) * (1.0f / 16777216.0f); }

  // Uniform in [lo, hi).
  MYRIAD_HD float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }

  // A standard normal draw (Box-Muller on two uniforms; u1 in (0, 1], so the log is finite).
  MYRIAD_HD float normal() {
    const float u1 = static_cast<float>((next_u32() >> 8) + 1) * (1.0f / 16777216.0f);
    const float u2 = uniform();
    return sqrtf(-2.0f * logf(u1)) * cosf(6.283185307179586f * u2);
  }

 private:
  uint32_t k0_, k1_, env_, episode_, step_;
  uint32_t draw_ = 0;
  uint32_t used_ = 4;
  Philox4x32 block_{};
};

}  // namespace myriad
