#include "learner/mlp_cpu.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "myriad/device.h"

// The loops below are compiled twice, for AVX2 and for baseline x86-64, and the loader picks
// one per CPU (GCC's target_clones). Neither uses FMA (not part of "avx2"), and this file is
// built with -ffp-contract=off, so both give the same bits.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define MYRIAD_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MYRIAD_CPU_CLONES
#endif

namespace myriad::learner {
namespace detail {

// Eight floats as one value (GCC's vector extension): one AVX2 register in the AVX2 build; the
// baseline build emulates it (correct, same bits, about 8x slower: for pre-2013 CPUs only).
// Loads and stores go through memcpy (no alignment assumed). The helpers never cross a library
// boundary, so GCC's note that such values change the ABI without AVX does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float Float8 __attribute__((vector_size(32)));

inline Float8 load8(const float* p) {
  Float8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store8(float* p, const Float8& v) { std::memcpy(p, &v, sizeof v); }

// c[i, j] += sum_t a[i * a_row + t * a_step] b[t * ldb + j] for i < M, j < N, each sum in the
// order t = 0, 1, ... (so blocking changes no bits). Blocks of 4 x 16 outputs stay in registers
// (eight Float8) while t runs; the edges take the plain loop.
MYRIAD_CPU_CLONES void gemm_accumulate(int64_t M, int64_t N, int64_t T, const float* __restrict a,
                                       int64_t a_row, int64_t a_step, const float* __restrict b,
                                       int64_t ldb, float* __restrict c, int64_t ldc) {
  int64_t i0 = 0;
  for (; i0 + 4 <= M; i0 += 4) {
    float* c0 = c + i0 * ldc;
    const float* a0 = a + i0 * a_row;
    int64_t j0 = 0;
    for (; j0 + 16 <= N; j0 += 16) {
      Float8 acc00 = load8(c0 + j0), acc01 = load8(c0 + j0 + 8);
      Float8 acc10 = load8(c0 + ldc + j0), acc11 = load8(c0 + ldc + j0 + 8);
      Float8 acc20 = load8(c0 + 2 * ldc + j0), acc21 = load8(c0 + 2 * ldc + j0 + 8);
      Float8 acc30 = load8(c0 + 3 * ldc + j0), acc31 = load8(c0 + 3 * ldc + j0 + 8);
      for (int64_t t = 0; t < T; ++t) {
        const Float8 b0 = load8(b + t * ldb + j0), b1 = load8(b + t * ldb + j0 + 8);
        const float* at = a0 + t * a_step;
        const float x0 = at[0], x1 = at[a_row], x2 = at[2 * a_row], x3 = at[3 * a_row];
        acc00 += x0 * b0;
        acc01 += x0 * b1;
        acc10 += x1 * b0;
        acc11 += x1 * b1;
        acc20 += x2 * b0;
        acc21 += x2 * b1;
        acc30 += x3 * b0;
        acc31 += x3 * b1;
      }
      store8(c0 + j0, acc00);
      store8(c0 + j0 + 8, acc01);
      store8(c0 + ldc + j0, acc10);
      store8(c0 + ldc + j0 + 8, acc11);
      store8(c0 + 2 * ldc + j0, acc20);
      store8(c0 + 2 * ldc + j0 + 8, acc21);
      store8(c0 + 3 * ldc + j0, acc30);
      store8(c0 + 3 * ldc + j0 + 8, acc31);
    }
    for (int64_t i = i0; i < i0 + 4; ++i)
      for (int64_t t = 0; t < T; ++t) {
        const float av = a[i * a_row + t * a_step];
        for (int64_t j = j0; j < N; ++j) c[i * ldc + j] += av * b[t * ldb + j];
      }
  }
  for (int64_t i = i0; i < M; ++i)
    for (int64_t t = 0; t < T; ++t) {
      const float av = a[i * a_row + t * a_step];
      for (int64_t j = 0; j < N; ++j) c[i * ldc + j] += av * b[t * ldb + j];
    }
}

// gemm_accumulate with the rows of c split among the run's CPU threads (myriad::cpu_threads, the
// threads that step the envs, idle while the learner works). A thread owns whole rows and every
// sum keeps its order, so the bits do not depend on the thread count. Small products stay on
// the calling thread (a thread team costs a few microseconds).
void gemm_accumulate_rows(int64_t M, int64_t N, int64_t T, const float* a, int64_t a_row,
                          int64_t a_step, const float* b, int64_t ldb, float* c, int64_t ldc) {
  constexpr int64_t kMinParallelWork = int64_t{1} << 20;  // multiply-adds
  const int threads = cpu_threads();
  const int64_t blocks = (M + 3) / 4;  // gemm_accumulate's row blocks
  if (threads <= 1 || blocks < 2 || M * N * T < kMinParallelWork) {
    gemm_accumulate(M, N, T, a, a_row, a_step, b, ldb, c, ldc);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t k = omp_get_thread_num(), n = omp_get_num_threads();
    const int64_t r0 = std::min(M, blocks * k / n * 4), r1 = std::min(M, blocks * (k + 1) / n * 4);
    if (r1 > r0)
      gemm_accumulate(r1 - r0, N, T, a + r0 * a_row, a_row, a_step, b, ldb, c + r0 * ldc, ldc);
  }
}

// y[r, :] = b + sum_k x[r, k] wt[k, :], k in order.
void dense_forward(const float* x, int64_t x_stride, const float* wt, const float* b, float* y,
                   int64_t rows, int64_t in, int64_t out) {
  for (int64_t r = 0; r < rows; ++r) std::copy(b, b + out, y + r * out);
  gemm_accumulate_rows(rows, out, in, x, x_stride, 1, wt, out, y, out);
}

// dwt[k, j] += sum_r x[r, k] dy[r, j] and db[j] += sum_r dy[r, j], r in order.
MYRIAD_CPU_CLONES void dense_backward_params(const float* __restrict x, int64_t x_stride,
                                             const float* __restrict dy, float* __restrict dwt,
                                             float* __restrict db, int64_t rows, int64_t in,
                                             int64_t out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < out; ++j) db[j] += dy[r * out + j];
  gemm_accumulate_rows(in, out, rows, x, 1, x_stride, dy, out, dwt, out);
}

// dx[r, :] = sum_j dy[r, j] w[j, :], j in order; then through the activation whose output was
// y: tanh (1 - y^2), relu (y > 0) or elu (1 where y > 0, else y + 1 = exp(x)).
MYRIAD_CPU_CLONES void dense_backward_input(const float* __restrict dy, const float* __restrict w,
                                            const float* __restrict y, float* __restrict dx,
                                            int64_t rows, int64_t in, int64_t out,
                                            Activation activation) {
  std::fill(dx, dx + rows * in, 0.0f);
  gemm_accumulate_rows(rows, in, out, dy, out, 1, w, in, dx, in);
  if (activation == Activation::kRelu) {
    for (int64_t i = 0; i < rows * in; ++i) dx[i] = y[i] > 0.0f ? dx[i] : 0.0f;
  } else if (activation == Activation::kElu) {
    for (int64_t i = 0; i < rows * in; ++i) dx[i] = y[i] > 0.0f ? dx[i] : dx[i] * (y[i] + 1.0f);
  } else {
    for (int64_t i = 0; i < rows * in; ++i) dx[i] *= 1.0f - y[i] * y[i];
  }
}

// e^t = 2^m e^r: m = round(t / ln 2), |r| <= ln 2 / 2 (tanh_loop and elu_loop, which take e^r
// by their own series; vectorizes). t must lie in [-87, 88]: the callers clamp, a NaN included,
// so that 2^m's bits stay defined.
inline void exp_reduce(float t, float& m, float& r) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;     // ln 2 split so that m * kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;  // ln 2 - kLn2Hi
  constexpr float kRound = 12582912.0f;      // 1.5 * 2^23: adding it rounds to an integer
  m = (t * kLog2e + kRound) - kRound;
  r = (t - m * kLn2Hi) - m * kLn2Lo;
}
inline float pow2(float m) {
  return __builtin_bit_cast(float, (static_cast<int32_t>(m) + 127) << 23);
}
// [lo, hi], a NaN to lo (the callers then return the NaN they were given).
inline float clamp_finite(float v, float lo, float hi) {
  const float a = v > lo ? v : lo;
  return a < hi ? a : hi;
}

MYRIAD_CPU_CLONES void tanh_loop(float* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    // tanh x = 1 - 2 / (e^(2x) + 1), e^r by its Taylor series to r^6.
    const float v = x[i];
    float m, r;
    exp_reduce(clamp_finite(v * 2.0f, -87.0f, 88.0f), m, r);
    float p = 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const float y = 1.0f - 2.0f / (p * pow2(m) + 1.0f);
    x[i] = v == v ? y : v;
  }
}

MYRIAD_CPU_CLONES void relu_loop(float* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

// ELU with alpha 1 (torch.nn.ELU's default): x, or exp(x) - 1 below 0 as 2^m (1 + q) - 1 with
// q = e^r - 1 by its Taylor series to r^7: exact to float rounding near 0, where m = 0 (libm's
// expm1f would be a call per element).
MYRIAD_CPU_CLONES void elu_loop(float* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    float m, r;
    exp_reduce(clamp_finite(v, -87.0f, 0.0f), m, r);
    float q = 1.0f / 5040.0f;
    q = q * r + 1.0f / 720.0f;
    q = q * r + 1.0f / 120.0f;
    q = q * r + 1.0f / 24.0f;
    q = q * r + 1.0f / 6.0f;
    q = q * r + 0.5f;
    q = q * r + 1.0f;
    q = q * r;
    const float scale = pow2(m);
    const float e = scale * q + (scale - 1.0f);
    x[i] = v > 0.0f || v != v ? v : e;
  }
}

}  // namespace detail

void tanh_inplace(float* x, int64_t n) { detail::tanh_loop(x, n); }
void elu_inplace(float* x, int64_t n) { detail::elu_loop(x, n); }

MlpCpu::MlpCpu(std::vector<DenseLayerRef> layers, Activation activation)
    : layers_(std::move(layers)), activation_(activation) {
  if (layers_.empty()) throw std::invalid_argument("MlpCpu: no layers");
  for (size_t l = 1; l < layers_.size(); ++l)
    if (layers_[l].in != layers_[l - 1].out)
      throw std::invalid_argument("MlpCpu: layer widths do not chain");
  y_.resize(layers_.size());
  wt_.resize(layers_.size());
}

const float* MlpCpu::forward(const float* x, int64_t x_stride, int64_t rows) {
  x_ = x;
  x_stride_ = x_stride;
  rows_ = rows;
  const float* input = x;
  int64_t stride = x_stride;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const DenseLayerRef& L = layers_[l];
    // W^T, so that the forward loop runs along contiguous output columns.
    std::vector<float>& wt = wt_[l];
    wt.resize(static_cast<size_t>(L.in * L.out));
    for (int64_t j = 0; j < L.out; ++j)
      for (int64_t k = 0; k < L.in; ++k) wt[k * L.out + j] = L.weight[j * L.in + k];
    std::vector<float>& y = y_[l];
    y.resize(static_cast<size_t>(rows * L.out));
    detail::dense_forward(input, stride, wt.data(), L.bias, y.data(), rows, L.in, L.out);
    if (l + 1 < layers_.size()) {
      if (activation_ == Activation::kTanh) {
        detail::tanh_loop(y.data(), rows * L.out);
      } else if (activation_ == Activation::kElu) {
        detail::elu_loop(y.data(), rows * L.out);
      } else {
        detail::relu_loop(y.data(), rows * L.out);
      }
    }
    input = y.data();
    stride = L.out;
  }
  return y_.back().data();
}

void MlpCpu::backward(const float* d_y) {
  const float* d = d_y;
  for (size_t l = layers_.size(); l-- > 0;) {
    const DenseLayerRef& L = layers_[l];
    const float* input = l == 0 ? x_ : y_[l - 1].data();
    const int64_t stride = l == 0 ? x_stride_ : L.in;
    dwt_.assign(static_cast<size_t>(L.in * L.out), 0.0f);
    detail::dense_backward_params(input, stride, d, dwt_.data(), L.grad_bias, rows_, L.in, L.out);
    for (int64_t j = 0; j < L.out; ++j)
      for (int64_t k = 0; k < L.in; ++k) L.grad_weight[j * L.in + k] += dwt_[k * L.out + j];
    if (l == 0) break;
    d_next_.resize(static_cast<size_t>(rows_ * L.in));
    detail::dense_backward_input(d, L.weight, y_[l - 1].data(), d_next_.data(), rows_, L.in, L.out,
                                 activation_);
    std::swap(d_, d_next_);
    d = d_.data();
  }
}

}  // namespace myriad::learner
