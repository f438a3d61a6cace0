// Device names ("cpu", "cuda", "cuda:K", "auto"), their LibTorch devices, envs made on an
// indexed GPU and launched on LibTorch's current stream, and the CPU kernel copies (x86-64 and
// x86-64-v3) computing bitwise the same rollouts. The GPU cases are skipped where no GPU
// answers; scripts/gpu-check.sh runs them on a GPU host.
#include <ATen/ATen.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "envs/cpu_tables.h"
#include "myriad/device.h"
#include "myriad/registry.h"
#include "myriad/torch_device.h"

namespace myriad {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceNames, ParseWithoutAGpu) {
  // Built with CUDA, no GPU: cpu and auto work; any cuda name says there is no GPU.
  EXPECT_EQ(parse_device("cpu", true, 0, 0), (DeviceId{Device::kCpu, 0}));
  EXPECT_EQ(parse_device("auto", true, 0, 0), (DeviceId{Device::kCpu, 0}));
  EXPECT_NE(error_of([] { parse_device("cuda", true, 0, 0); }).find("no CUDA GPU"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_device("cuda:0", true, 0, 0); }).find("no CUDA GPU"),
            std::string::npos);
  // Without a CUDA build, the message says so.
  EXPECT_NE(error_of([] { parse_device("cuda:0", false, 0, 0); }).find("no CUDA backend"),
            std::string::npos);
  EXPECT_EQ(parse_device("auto", false, 0, 0), (DeviceId{Device::kCpu, 0}));
}

TEST(DeviceNames, ParseWithGpus) {
  // Four GPUs, the program made GPU 2 current: "cuda" and "auto" mean GPU 2.
  EXPECT_EQ(parse_device("cuda", true, 4, 2), (DeviceId{Device::kCuda, 2}));
  EXPECT_EQ(parse_device("auto", true, 4, 2), (DeviceId{Device::kCuda, 2}));
  EXPECT_EQ(parse_device("cuda:0", true, 4, 2), (DeviceId{Device::kCuda, 0}));
  EXPECT_EQ(parse_device("cuda:3", true, 4, 2), (DeviceId{Device::kCuda, 3}));
  const std::string out_of_range = error_of([] { parse_device("cuda:4", true, 4, 0); });
  EXPECT_NE(out_of_range.find("sees 4 CUDA GPUs"), std::string::npos) << out_of_range;
  EXPECT_NE(out_of_range.find("cpu, cuda, auto, cuda:0, cuda:1, cuda:2, cuda:3"), std::string::npos)
      << out_of_range;
}

TEST(DeviceNames, MalformedNamesListTheValidOnes) {
  for (const char* bad :
       {"gpu", "cuda:", "cuda:-1", "cuda:x", "cuda:1:2", "CUDA", "cuda:00000", " cpu", "cuda:+1"}) {
    const std::string e = error_of([&] { parse_device(bad, true, 2, 0); });
    EXPECT_NE(e.find("unknown device '" + std::string(bad) + "'"), std::string::npos) << e;
    EXPECT_NE(e.find("cpu, cuda, auto, cuda:0, cuda:1"), std::string::npos) << e;
  }
  // The listing on a machine without GPUs still names every form.
  const std::string e = error_of([] { parse_device("tpu", true, 0, 0); });
  EXPECT_NE(e.find("cpu, cuda, auto, cuda:K"), std::string::npos) << e;
}

TEST(DeviceNames, NamesAndTorchDevices) {
  EXPECT_EQ(device_name(DeviceId{Device::kCpu, 0}), "cpu");
  EXPECT_EQ(device_name(DeviceId{Device::kCuda, 3}), "cuda:3");
  EXPECT_EQ(device_name(Device::kCuda), "cuda");
  EXPECT_EQ(torch_device("cpu"), at::Device(at::kCPU));
  EXPECT_EQ(torch_device(DeviceId{Device::kCuda, 3}), at::Device(at::kCUDA, 3));
  EXPECT_EQ(device_id(at::Device("cuda:2")), (DeviceId{Device::kCuda, 2}));
  EXPECT_EQ(device_id(at::Device(at::kCPU)), (DeviceId{Device::kCpu, 0}));
  EXPECT_EQ(current_stream(DeviceId{Device::kCpu, 0}), nullptr);
}

TEST(DeviceNames, ThisMachine) {
  EXPECT_EQ(resolve_device_id("cpu"), (DeviceId{Device::kCpu, 0}));
  const int gpus = cuda_device_count();
  EXPECT_EQ(resolve_device_id("auto").is_cuda(), gpus > 0);
  // One past the last GPU is an error naming the device, also through torch_device.
  const std::string past = "cuda:" + std::to_string(gpus);
  EXPECT_NE(error_of([&] { torch_device(past); }).find(past), std::string::npos);
  if (gpus > 0) {
    const DeviceId last = resolve_device_id("cuda:" + std::to_string(gpus - 1));
    EXPECT_EQ(last, (DeviceId{Device::kCuda, gpus - 1}));
    EXPECT_EQ(torch_device("cuda"), at::Device(at::kCUDA, cuda_current_device()));
  }
}

// The CPU thread setting is the calling thread's: a count holds until changed, 0 goes back to the
// default (a Python env made with threads=0 after one made with threads=1 uses every core),
// and a negative count is refused.
TEST(CpuThreads, ZeroGoesBackToTheDefault) {
  const int saved = cpu_threads();
  set_cpu_threads(0);
  const int fallback = cpu_threads();
  EXPECT_GE(fallback, 1);
  set_cpu_threads(fallback + 3);
  EXPECT_EQ(cpu_threads(), fallback + 3);
  set_cpu_threads(0);
  EXPECT_EQ(cpu_threads(), fallback);
  EXPECT_THROW(set_cpu_threads(-1), std::invalid_argument);
  EXPECT_EQ(cpu_threads(), fallback);
  set_cpu_threads(saved);
}

TEST(EnvDevice, CpuEnvReportsItsDevice) {
  auto env = envs::make("CartPole-v1", 8, DeviceId{Device::kCpu, 0}, 1);
  EXPECT_EQ(env->device_id(), (DeviceId{Device::kCpu, 0}));
  EXPECT_EQ(env->device(), Device::kCpu);
  EXPECT_EQ(env->buffers().obs.device(), torch_device(env->device_id()));
}

TEST(EnvDevice, MissingGpuIsAClearError) {
  // Past the last GPU (on a machine without one: any GPU), before anything is allocated.
  const DeviceId missing{Device::kCuda, cuda_device_count()};
  const std::string e = error_of([&] { envs::make("CartPole-v1", 8, missing, 1); });
  EXPECT_NE(e.find(device_name(missing)), std::string::npos) << e;
}

// Each GPU K: the env's buffers live on K, stepping leaves the caller's current device alone,
// and transitions agree with the CPU backend.
TEST(EnvDevice, EnvsOnEveryGpu) {
  const int gpus = cuda_device_count();
  if (gpus == 0) GTEST_SKIP() << "no CUDA GPU on this machine";
  constexpr int64_t kN = 1000;
  for (int k = 0; k < gpus; ++k) {
    const DeviceId d{Device::kCuda, k};
    const int before = cuda_current_device();
    auto gpu = envs::make("Pendulum-v1", kN, d, 5);
    auto cpu = envs::make("Pendulum-v1", kN, DeviceId{Device::kCpu, 0}, 5);
    EXPECT_EQ(gpu->device_id(), d);
    for (const at::Tensor& t : {gpu->buffers().obs, gpu->buffers().reward, gpu->buffers().final_obs,
                                gpu->buffers().terminated})
      EXPECT_EQ(t.device(), at::Device(at::kCUDA, k));
    gpu->set_state(cpu->get_state().to(torch_device(d)));
    const at::Tensor a = at::rand({kN, 1}) * 4 - 2;
    for (int t = 0; t < 5; ++t) {
      cpu->step(a);
      gpu->step(a.to(torch_device(d)));
    }
    EXPECT_TRUE(at::allclose(cpu->buffers().obs, gpu->buffers().obs.cpu(), 1e-4, 1e-4)) << k;
    EXPECT_EQ(cuda_current_device(), before) << "stepping on cuda:" << k;
    // Actions on another device are refused, naming both.
    if (gpus > 1) {
      const at::Device other(at::kCUDA, (k + 1) % gpus);
      const std::string e = error_of([&] { gpu->step(a.to(other)); });
      EXPECT_NE(e.find(other.str()), std::string::npos) << e;
    }
  }
}

// Kernels launch on LibTorch's current stream of the env's GPU: with a side stream current,
// the launch is ordered with the tensor work on it (no sync in between is needed).
TEST(EnvDevice, LaunchesOnTheCurrentStream) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA GPU on this machine";
  const DeviceId d = resolve_device_id("cuda");
  const at::Device td = torch_device(d);
  const c10::impl::VirtualGuardImpl cuda(c10::DeviceType::CUDA);
  const c10::Stream side = cuda.getStreamFromGlobalPool(td);
  ASSERT_NE(side.native_handle(), cuda.getStream(td).native_handle());
  constexpr int64_t kN = 1 << 16;
  auto cpu = envs::make("CartPole-v1", kN, DeviceId{Device::kCpu, 0}, 9);
  auto gpu = envs::make("CartPole-v1", kN, d, 9);
  const at::Tensor a = at::randint(0, 2, {kN}, at::TensorOptions().dtype(at::kInt));
  at::Tensor obs_on_side;
  {
    const c10::StreamGuard on_side(side);
    EXPECT_EQ(current_stream(d), side.native_handle());
    const at::Tensor a_gpu = a.to(td);
    for (int t = 0; t < 20; ++t) gpu->step(a_gpu);
    obs_on_side = gpu->buffers().obs.clone();  // ordered after the steps on the same stream
  }
  for (int t = 0; t < 20; ++t) cpu->step(a);
  cuda.synchronizeStream(side);
  EXPECT_TRUE(at::allclose(cpu->buffers().obs, obs_on_side.cpu(), 1e-3, 1e-3));
  EXPECT_EQ(current_stream(d), cuda.getStream(td).native_handle());
}

// The x86-64 and x86-64-v3 copies of the CPU kernels give bitwise the same rollouts, so a run
// reproduces on any x86-64 CPU whichever copy it picks.
TEST(CpuKernels, CopiesAgreeBitwise) {
  EXPECT_FALSE(envs::cpu_kernel_level().empty());
  if (envs::cpu_kernel_level() == "native") GTEST_SKIP() << "MYRIAD_NATIVE build: one copy";
  EXPECT_THROW(envs::select_cpu_kernels("x86-64-v5"), std::invalid_argument);
  try {
    envs::select_cpu_kernels("x86-64-v3");
  } catch (const std::invalid_argument& e) {
    envs::select_cpu_kernels("");
    GTEST_SKIP() << e.what();
  }
  constexpr int64_t kN = 1031;  // not a multiple of the SIMD width or the chunk
  const DeviceId cpu{Device::kCpu, 0};
  for (const std::string id :
       {"CartPole-v1", "Pendulum-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0"}) {
    envs::select_cpu_kernels("x86-64-v3");
    auto v3 = envs::make(id, kN, cpu, 17);
    envs::select_cpu_kernels("x86-64");
    auto base = envs::make(id, kN, cpu, 17);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
    const Space& space = v3->spec().action_space;
    for (int t = 0; t < 250; ++t) {
      const at::Tensor a = space.is_discrete() ? at::randint(0, space.n, {kN}, gen,
                                                             at::TensorOptions().dtype(at::kInt))
                                               : at::rand({kN, space.flat_size()}, gen) * 4 - 2;
      v3->step(a);
      base->step(a);
      ASSERT_TRUE(at::equal(v3->buffers().obs, base->buffers().obs)) << id << " step " << t;
      ASSERT_TRUE(at::equal(v3->buffers().reward, base->buffers().reward)) << id;
      ASSERT_TRUE(at::equal(v3->buffers().terminated, base->buffers().terminated)) << id;
      ASSERT_TRUE(at::equal(v3->buffers().final_obs, base->buffers().final_obs)) << id;
    }
  }
  envs::select_cpu_kernels("");
}

}  // namespace
}  // namespace myriad
