// The engine on CUDA agrees with the engine on CPU (same source, one thread per env). Skipped
// where no GPU answers; scripts/gpu-check.sh runs it on a GPU host.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "myriad/device.h"
#include "myriad/physics/cuda_batch.h"
#include "myriad/physics/engine.h"
#include "myriad/physics/import.h"

namespace myriad::physics {
namespace {

std::string model_path(const std::string& name) {
  const char* src = std::getenv("MYRIAD_SOURCE_DIR");
  return std::string(src ? src : MYRIAD_SOURCE_DIR_DEFAULT) + "/physics/models/" + name + ".xml";
}

template <class T>
double max_diff(Data<T>& a, Data<T>& b, const Model<T>& m, const char* field) {
  int64_t size = 0;
  const T* x = a.field(m, field, &size);
  const T* y = b.field(m, field);
  double e = 0;
  for (int64_t k = 0; k < size * a.num_envs(); ++k)
    e = std::max(e, std::abs(static_cast<double>(x[k]) - static_cast<double>(y[k])));
  return e;
}

template <class T>
void compare(const std::string& name, double qacc_tol, double traj_tol) {
  const Model<T> m = load_mjcf(model_path(name)).template cast<T>();
  constexpr int64_t kN = 256;
  Data<T> cpu(m, kN), gpu(m, kN);
  reset_data(m, cpu);
  std::mt19937 gen(5);
  std::normal_distribution<double> n01;
  for (int64_t i = 0; i < kN; ++i) {
    EnvData<T> e = cpu.env(m, i);
    for (int k = 0; k < m.nv; ++k) e.qvel[k] = static_cast<T>(0.3 * n01(gen));
    for (int k = 0; k < m.nu; ++k) e.ctrl[k] = static_cast<T>(0.5 * n01(gen));
  }
  CudaBatch<T> batch(m, kN);
  batch.upload(cpu);
  forward(m, cpu);
  batch.forward();
  batch.download(gpu);
  EXPECT_LT(max_diff(cpu, gpu, m, "qacc"), qacc_tol) << name;
  step(m, cpu, 100);
  batch.step(100);
  batch.download(gpu);
  EXPECT_LT(max_diff(cpu, gpu, m, "qpos"), traj_tol) << name;
}

class CudaPhysics : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  }
};

TEST_P(CudaPhysics, Float64MatchesCpu) { compare<double>(GetParam(), 1e-9, 1e-8); }
TEST_P(CudaPhysics, Float32MatchesCpu) { compare<float>(GetParam(), 1e-2, 1e-2); }

INSTANTIATE_TEST_SUITE_P(Models, CudaPhysics,
                         ::testing::Values("pendulum", "double_pendulum", "cartpole",
                                           "hopper_chain", "free_body", "quadruped"));

}  // namespace
}  // namespace myriad::physics
