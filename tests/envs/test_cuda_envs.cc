// CPU and CUDA backends agree: the same states and actions give the same transitions, and the
// same seed gives the same rollouts. Skipped where no GPU answers (it runs in
// scripts/gpu-check.sh on a GPU host).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "myriad/registry.h"

namespace myriad::envs {
namespace {

class CudaAgreement : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  }
};

at::Tensor random_actions(const EnvSpec& spec, int64_t n, at::Generator& gen) {
  if (spec.action_space.is_discrete())
    return at::randint(0, spec.action_space.n, {n}, gen, at::TensorOptions().dtype(at::kInt));
  return at::rand({n, spec.action_space.flat_size()}, gen) * 2 - 1;
}

TEST_P(CudaAgreement, SameSeedSameRollout) {
  constexpr int64_t kN = 4096;
  auto cpu = make(GetParam(), kN, Device::kCpu, 42);
  auto gpu = make(GetParam(), kN, Device::kCuda, 42);
  EXPECT_TRUE(at::allclose(cpu->buffers().obs, gpu->buffers().obs.cpu(), 1e-5, 1e-5));
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  int64_t agree = 0, total = 0;
  for (int t = 0; t < 100; ++t) {
    const at::Tensor a = random_actions(cpu->spec(), kN, gen);
    cpu->step(a);
    gpu->step(a.cuda());
    const at::Tensor close = (cpu->buffers().obs - gpu->buffers().obs.cpu()).abs().amax(1).le(1e-3);
    agree += close.sum().item<int64_t>();
    total += kN;
  }
  // Chaotic envs drift apart by float rounding (FMA contraction differs); most rows agree.
  EXPECT_GT(static_cast<double>(agree) / total, 0.95) << agree << " of " << total;
}

TEST_P(CudaAgreement, SameStateSameTransition) {
  constexpr int64_t kN = 4096;
  auto cpu = make(GetParam(), kN, Device::kCpu, 3);
  auto gpu = make(GetParam(), kN, Device::kCuda, 3);
  gpu->set_state(cpu->get_state().cuda());
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  const at::Tensor a = random_actions(cpu->spec(), kN, gen);
  cpu->step(a);
  gpu->step(a.cuda());
  EXPECT_TRUE(at::allclose(cpu->buffers().obs, gpu->buffers().obs.cpu(), 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(cpu->buffers().reward, gpu->buffers().reward.cpu(), 1e-4, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Envs, CudaAgreement,
                         ::testing::Values("CartPole-v1", "Pendulum-v1", "Acrobot-v1",
                                           "MountainCar-v0", "MountainCarContinuous-v0"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace myriad::envs
