// CPU and CUDA backends agree: the same states and actions give the same transitions, and the
// same seed gives the same rollouts. Skipped where no GPU answers (it runs in
// scripts/gpu-check.sh on a GPU host).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "myriad/registry.h"

namespace myriad::envs {
namespace {

class CudaAgreement : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  }
};

// [N] or [N, K] actions, with the agent axis ([N, A] or [N, A, K]) for multi-agent envs.
at::Tensor random_actions(const EnvSpec& spec, int64_t n, at::Generator& gen) {
  std::vector<int64_t> shape = {n};
  if (spec.num_agents > 1) shape.push_back(spec.num_agents);
  if (spec.action_space.is_discrete())
    return at::randint(0, spec.action_space.n, shape, gen, at::TensorOptions().dtype(at::kInt));
  shape.push_back(spec.action_space.flat_size());
  const double low = spec.num_agents > 1 ? 0.0 : -1.0;  // MPE's Box(0, 1); classic: [-1, 1]
  return at::rand(shape, gen) * (1 - low) + low;
}

// "Tag-v0" or "Tag-v0:continuous" (the continuous=1 option).
std::unique_ptr<BatchEnv> make_param(const std::string& param, int64_t n, Device device,
                                     uint64_t seed) {
  const auto colon = param.find(':');
  if (colon == std::string::npos) return make(param, n, device, seed);
  return make(param.substr(0, colon), n, device, seed, {{"continuous", 1}});
}

TEST_P(CudaAgreement, SameSeedSameRollout) {
  constexpr int64_t kN = 4096;
  auto cpu = make_param(GetParam(), kN, Device::kCpu, 42);
  auto gpu = make_param(GetParam(), kN, Device::kCuda, 42);
  EXPECT_TRUE(at::allclose(cpu->buffers().obs, gpu->buffers().obs.cpu(), 1e-5, 1e-5));
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  int64_t agree = 0, total = 0;
  for (int t = 0; t < 100; ++t) {
    const at::Tensor a = random_actions(cpu->spec(), kN, gen);
    cpu->step(a);
    gpu->step(a.cuda());
    const at::Tensor close =
        (cpu->buffers().obs - gpu->buffers().obs.cpu()).abs().flatten(1).amax(1).le(1e-3);
    agree += close.sum().item<int64_t>();
    total += kN;
  }
  // Chaotic envs drift apart by float rounding (FMA contraction differs); most rows agree.
  EXPECT_GT(static_cast<double>(agree) / total, 0.95) << agree << " of " << total;
}

TEST_P(CudaAgreement, SameStateSameTransition) {
  constexpr int64_t kN = 4096;
  auto cpu = make_param(GetParam(), kN, Device::kCpu, 3);
  auto gpu = make_param(GetParam(), kN, Device::kCuda, 3);
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
                                           "MountainCar-v0", "MountainCarContinuous-v0",
                                           "Spread-v0", "Spread-v0:continuous", "Tag-v0",
                                           "Tag-v0:continuous", "Sumo-v0", "Sumo-v0:continuous"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '-' || c == ':') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace myriad::envs
