// A small MLP's forward and backward pass on one CPU core over raw float32 rows, for the PPO
// update of the actor-critic (learner/ppo_cpu.h). At PPO's sizes (64-wide layers, minibatches
// of a few hundred rows) LibTorch spends most of a minibatch in per-op dispatch, allocation and
// autograd bookkeeping rather than arithmetic; these loops do the same arithmetic with none of
// it.
//
// Reproducible by construction: every sum runs in a fixed order, the hot loops vectorize only
// across independent outputs (never reassociating a sum), no FMA contraction, and tanh is built
// from + - * / alone. So the AVX2 build chosen at run time (ifunc) and the baseline x86-64 build
// give the same bits, on any CPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace myriad::learner {

// One torch::nn::Linear, by pointer: y = x W^T + b.
struct DenseLayerRef {
  const float* weight = nullptr;  // [out, in] row-major (torch::nn::Linear's layout)
  const float* bias = nullptr;    // [out]
  float* grad_weight = nullptr;   // [out, in], accumulated into
  float* grad_bias = nullptr;     // [out], accumulated into
  int64_t in = 0, out = 0;
};

enum class Activation { kTanh, kRelu, kElu };
// The activation a config names ("tanh", "relu" or "elu").
inline Activation activation_of(const std::string& name) {
  return name == "relu" ? Activation::kRelu : name == "elu" ? Activation::kElu : Activation::kTanh;
}

// tanh(x) for n floats in place: 1 - 2 / (exp(2x) + 1), with exp from a degree-6 polynomial
// after range reduction; within 2e-7 of tanh absolutely.
void tanh_inplace(float* x, int64_t n);
// ELU (alpha 1) of x [n] in place, as the fused MLP's hidden layers compute it.
void elu_inplace(float* x, int64_t n);

// Hidden layers followed by the activation; the last layer is linear.
class MlpCpu {
 public:
  MlpCpu() = default;
  MlpCpu(std::vector<DenseLayerRef> layers, Activation activation);

  // (x [rows, in] with row stride x_stride) => y [rows, out], owned here, valid until the next
  // forward. Keeps what backward needs.
  const float* forward(const float* x, int64_t x_stride, int64_t rows);
  // (d loss / d y [rows, out]) => d loss / d parameters, added to the layers' grad_* (the input's
  // gradient is not formed).
  void backward(const float* d_y);

  int64_t in() const { return layers_.front().in; }
  int64_t out() const { return layers_.back().out; }

 private:
  std::vector<DenseLayerRef> layers_;
  Activation activation_ = Activation::kTanh;
  const float* x_ = nullptr;
  int64_t x_stride_ = 0, rows_ = 0;
  std::vector<std::vector<float>> y_;   // y_[l]: layer l's output (after its activation)
  std::vector<std::vector<float>> wt_;  // wt_[l]: W_l transposed, [in, out]
  std::vector<float> dwt_, d_, d_next_;
};

}  // namespace myriad::learner
