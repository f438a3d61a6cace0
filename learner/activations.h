// Activations for the policy's MLPs.
#pragma once

#include <torch/torch.h>

namespace myriad::learner {

// tanh(x) computed as 2 sigmoid(2x) - 1 on the CPU, with tanh's own backward (1 - y^2) g.
// LibTorch's CPU tanh goes through MKL's high-accuracy vector tanh, which profiled at 16% of a
// CartPole training run and 3x the cost of this form; the two agree to ~1e-7 absolute. Other
// devices use torch::tanh.
torch::Tensor fast_tanh(const torch::Tensor& x);

class FastTanhImpl : public torch::nn::Module {
 public:
  torch::Tensor forward(const torch::Tensor& x) { return fast_tanh(x); }
};
TORCH_MODULE(FastTanh);

}  // namespace myriad::learner
