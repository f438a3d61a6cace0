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

// The physics envs through the env framework, auto-resets included: two batches from the same
// seed stepped with the same actions, one on the CPU's fused engine and one as `other` says.
// Each step's rows count as agreeing when every observation is within `tol` (absolute plus
// relative) and the terminated flags match; the episodes that ended must be there too, so the
// resets' first observations (keyed by seed, env and episode) are compared as well.
struct PhysicsAgreement {
  double rows_close = 0, flags_equal = 0;  // fractions of (step, env) rows
  int64_t rows = 0, close_rows = 0, episodes_ended = 0;
};
PhysicsAgreement physics_agreement(const std::string& id, int precision, DeviceId other,
                                   const std::string& launch, double tol) {
  constexpr int64_t kN = 128;
  constexpr int kSteps = 60;  // with 25-step episodes: every env resets at least twice
  const EnvOptions options = {{"precision", precision}, {"max_episode_steps", 25}};
  auto ref = make(id, kN, DeviceId{Device::kCpu, 0}, 5, options, {{"launch", "fused"}});
  auto dut = make(id, kN, other, 5, options, {{"launch", launch}});
  auto gen = at::make_generator<at::CPUGeneratorImpl>(13);
  PhysicsAgreement r;
  for (int t = 0; t < kSteps; ++t) {
    if (t == 30) {  // set_state on some envs: the state written, its forward pass, its obs
      const at::Tensor ids = at::arange(0, kN, 7, at::TensorOptions().dtype(at::kLong));
      const at::Tensor rows = ref->get_state().index_select(0, ids).roll(1, 0);
      ref->set_state(rows, ids);
      dut->set_state(rows.to(dut->buffers().obs.device()), ids.to(dut->buffers().obs.device()));
    }
    const at::Tensor a = random_actions(ref->spec(), kN, gen).clamp(-0.4, 0.4);
    ref->step(a);
    dut->step(a.to(dut->buffers().obs.device()));
    const at::Tensor obs = ref->buffers().obs, dobs = dut->buffers().obs.cpu().to(obs.dtype());
    const at::Tensor close = ((obs - dobs).abs() <= tol * (1 + obs.abs())).all(1);
    const at::Tensor same = ref->buffers().terminated.eq(dut->buffers().terminated.cpu());
    r.close_rows += close.logical_and(same).sum().item<int64_t>();
    r.flags_equal += same.sum().item<double>() / (kN * kSteps);
    r.rows += kN;
    r.episodes_ended +=
        ref->buffers().terminated.logical_or(ref->buffers().truncated).sum().item<int64_t>();
  }
  r.rows_close = static_cast<double>(r.close_rows) / static_cast<double>(r.rows);
  return r;
}

class PhysicsEnvAgreement : public ::testing::TestWithParam<std::string> {};

// On this machine: the staged launch (the CUDA path's stages, one launch per stage over the
// batch) against the fused one on the CPU, in both precisions: the same bits.
TEST_P(PhysicsEnvAgreement, StagedAgreesWithFusedOnTheCpu) {
  for (int precision : {32, 64}) {
    const PhysicsAgreement r =
        physics_agreement(GetParam(), precision, DeviceId{Device::kCpu, 0}, "staged", 0.0);
    EXPECT_EQ(r.close_rows, r.rows) << "precision " << precision;
    EXPECT_GE(r.episodes_ended, 2 * 128) << "precision " << precision;
  }
}

// On a GPU: CUDA (staged on env-major rows, the default, and on the blocked layout) against the
// CPU's fused engine. Float64 agrees to rounding (FMA contraction differs between the
// compilers); float32 rows drift apart where the motion is chaotic (contacts), so most, not all,
// agree.
TEST_P(PhysicsEnvAgreement, CudaAgreesWithCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  for (const char* launch : {"auto", "blocked"})
    for (int precision : {32, 64}) {
      SCOPED_TRACE(std::string("launch=") + launch + ", precision " + std::to_string(precision));
      const double tol = precision == 64 ? 1e-6 : 1e-3;
      const PhysicsAgreement r =
          physics_agreement(GetParam(), precision, DeviceId{Device::kCuda, 0}, launch, tol);
      EXPECT_GT(r.rows_close, precision == 64 ? 0.99 : 0.95);
      EXPECT_GT(r.flags_equal, 0.99);
      EXPECT_GE(r.episodes_ended, 2 * 128);
    }
}

INSTANTIATE_TEST_SUITE_P(Locomotion, PhysicsEnvAgreement,
                         ::testing::Values("Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Ant-v5",
                                           "Humanoid-v5", "InvertedPendulum-v5",
                                           "InvertedDoublePendulum-v5", "Reacher-v5"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace myriad::envs
