// The staged launch (CUDA's shape: a launch per stage over the batch) with what it newly carries:
// per-env model parameters (domain randomization) and the task envs (the legged velocity tasks,
// whose env reads the contacts after every substep and pushes the root between steps). On the
// CPU it must give the fused launch's bits; on a GPU (skipped here; scripts/gpu-check.sh runs it)
// the CUDA runner must agree with the CPU to rounding.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>

#include "myriad/batch_env.h"
#include "myriad/device.h"
#include "myriad/registry.h"

namespace myriad::envs {
namespace {

// mjlab's push_robot, every 0.1-0.3 s (5-15 policy steps) instead of 1-3 s, so that the short
// episodes below are pushed.
constexpr const char* kPush = R"("push": {"field": "root_velocity", "mode": "interval",
    "interval": [0.1, 0.3], "operation": "add",
    "range": {"0": [-0.5, 0.5], "1": [-0.5, 0.5], "2": [-0.4, 0.4],
              "3": [-0.52, 0.52], "4": [-0.52, 0.52], "5": [-0.78, 0.78]}})";

// The robot's own startup terms (envs/robots/<robot>_randomize.json) and the frequent push.
std::string randomize_with_push(const std::string& robot) {
  // $MYRIAD_ROBOTS_DIR (a binary run from another tree, as gpu-check's prebuilt pack), else this
  // source tree's.
  const char* dir = std::getenv("MYRIAD_ROBOTS_DIR");
  const std::string path =
      std::string(dir ? dir : MYRIAD_ROBOTS_SOURCE_DIR) + "/" + robot + "_randomize.json";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  const size_t close = json.rfind('}');
  return json.substr(0, close) + ", " + kPush + "}";
}

at::Tensor random_actions(const EnvSpec& spec, int64_t n, at::Generator& gen, double scale) {
  return (at::rand({n, spec.action_space.flat_size()}, gen) * 2 - 1) * scale;
}

// Two batches of `id` from the same seed stepped with the same actions: `ref` and `dut`. Counts
// the (step, env) rows whose observation (and final_obs where the episode ended), reward and
// flags agree within tol (absolute plus relative; 0: equal), and the episodes that ended. Either
// may be on a GPU (compared on the CPU).
struct Agreement {
  int64_t rows = 0, close_rows = 0, ended = 0;
  bool state_close = false;
};
Agreement agree(BatchEnv& ref, BatchEnv& dut, int steps, double tol, double action_scale) {
  const int64_t n = ref.buffers().obs.size(0);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(17);
  const auto close = [tol](const at::Tensor& a, const at::Tensor& b) {
    const at::Tensor x = a.cpu().to(at::kDouble), y = b.cpu().to(at::kDouble);
    at::Tensor near = (x - y).abs() <= tol * (1 + x.abs());
    near = near.logical_or(x.isnan().logical_and(y.isnan()));  // a diverged row's NaN pose
    return near.dim() > 1 ? near.flatten(1).all(1) : near;
  };
  Agreement r;
  at::Tensor ok = close(ref.buffers().obs, dut.buffers().obs);
  r.close_rows += ok.sum().item<int64_t>();
  r.rows += n;
  const at::Device device = dut.buffers().obs.device(), ref_device = ref.buffers().obs.device();
  for (int t = 0; t < steps; ++t) {
    if (t == steps / 2) {  // set_state on some envs: the rows written, a forward pass, obs
      const at::Tensor ids = at::arange(0, n, 5, at::TensorOptions().dtype(at::kLong));
      const at::Tensor rows = ref.get_state().cpu().index_select(0, ids).roll(1, 0);
      ref.set_state(rows.to(ref_device), ids.to(ref_device));
      dut.set_state(rows.to(device), ids.to(device));
    }
    const at::Tensor a = random_actions(ref.spec(), n, gen, action_scale);
    ref.step(a.to(ref_device));
    dut.step(a.to(device));
    const auto& rb = ref.buffers();
    const auto& db = dut.buffers();
    const at::Tensor ended = rb.terminated.logical_or(rb.truncated).cpu();
    ok = close(rb.obs, db.obs)
             .logical_and(close(rb.reward, db.reward))
             .logical_and(rb.terminated.cpu().eq(db.terminated.cpu()))
             .logical_and(rb.truncated.cpu().eq(db.truncated.cpu()))
             .logical_and(close(rb.final_obs, db.final_obs).logical_or(ended.logical_not()));
    for (const auto& [name, value] : rb.info)  // each reward term, the tracking errors, ...
      ok = ok.logical_and(close(value, db.info.at(name)));
    r.close_rows += ok.sum().item<int64_t>();
    r.rows += n;
    r.ended += ended.sum().item<int64_t>();
  }
  r.state_close = close(ref.get_state(), dut.get_state()).all().item<bool>();
  return r;
}

struct Case {
  const char* id;
  const char* robot;  // "": no robot randomization (an untasked env, terms of its own)
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.id; }

class StagedRandomized : public ::testing::TestWithParam<Case> {
 protected:
  // The case's env with its randomization (startup model terms and, for task envs, the push).
  std::unique_ptr<BatchEnv> make_env(int64_t n, DeviceId device, int precision,
                                     const std::string& launch) const {
    const Case c = GetParam();
    EnvTextOptions text = {{"launch", launch}};
    if (c.robot[0] != '\0') {
      text["randomize"] = randomize_with_push(c.robot);
    } else {
      // Every body's mass scaled and every geom's sliding friction drawn, per env.
      text["randomize"] = R"({"mass": {"field": "body_mass", "operation": "scale",
                                       "range": [0.7, 1.3]},
                              "slide": {"field": "geom_friction", "axes": [0],
                                        "range": [0.4, 1.6]}})";
    }
    return make(c.id, n, device, 11, {{"precision", precision}, {"max_episode_steps", 15}}, text);
  }
};

// On this machine: the staged launch gives the fused launch's bits, per-env models, pushes,
// resets and set_state included, in both precisions; so does it on a batch in CUDA's blocked
// layout (launch=blocked: CUDA's shape and layout; 48 envs, one block and a partial one).
TEST_P(StagedRandomized, StagedGivesTheFusedBitsOnTheCpu) {
  constexpr int64_t kN = 48;
  constexpr int kSteps = 40;
  for (const char* launch : {"staged", "blocked"})
    for (int precision : {32, 64}) {
      SCOPED_TRACE(std::string(launch) + ", precision " + std::to_string(precision));
      auto ref = make_env(kN, DeviceId{Device::kCpu, 0}, precision, "fused");
      auto dut = make_env(kN, DeviceId{Device::kCpu, 0}, precision, launch);
      const Agreement r = agree(*ref, *dut, kSteps, 0.0, 0.5);
      EXPECT_EQ(r.close_rows, r.rows);
      EXPECT_TRUE(r.state_close);
      // 15-step episodes over 40 steps: every env ended at least twice.
      EXPECT_GE(r.ended, 2 * kN);
    }
}

// On a GPU: CUDA (staged; one CUDA graph per step unless MYRIAD_CUDA_CHECK=1, as gpu-check runs
// it: GraphGivesThePlainLaunchesBits checks the graph) against the CPU's fused launch. Float64
// agrees to rounding (FMA contraction differs between the compilers); float32 rows drift apart
// where contacts make the motion chaotic, so most, not all, agree.
// The same on the blocked layout (launch=blocked).
TEST_P(StagedRandomized, CudaAgreesWithTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  constexpr int64_t kN = 128;
  for (const char* launch : {"auto", "blocked"})
    for (int precision : {32, 64}) {
      SCOPED_TRACE(std::string("launch=") + launch + ", precision " + std::to_string(precision));
      auto ref = make_env(kN, DeviceId{Device::kCpu, 0}, precision, "fused");
      auto dut = make_env(kN, DeviceId{Device::kCuda, 0}, precision, launch);
      const Agreement r = agree(*ref, *dut, 40, precision == 64 ? 1e-6 : 1e-3, 0.5);
      const double fraction = static_cast<double>(r.close_rows) / static_cast<double>(r.rows);
      EXPECT_GT(fraction, precision == 64 ? 0.99 : 0.9);
      EXPECT_GE(r.ended, 2 * kN);
    }
}

// On a GPU, float64: the blocked layout against the env-major batch on the same device, the same
// bits. The engine's float64 kernels and the env's (envs/locomotion/runners_cuda_f64.cu) are
// compiled without FMA contraction, so each layout's inlined code rounds as the source says
// (CudaPhysics.BlockedFloat64GivesEnvMajorBits checks the engine's alone).
TEST_P(StagedRandomized, CudaBlockedGivesEnvMajorBits) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  constexpr int64_t kN = 80;  // two blocks of 32 and a partial one
  auto ref = make_env(kN, DeviceId{Device::kCuda, 0}, 64, "staged");
  auto dut = make_env(kN, DeviceId{Device::kCuda, 0}, 64, "blocked");
  const Agreement r = agree(*ref, *dut, 40, 0.0, 0.5);
  EXPECT_EQ(r.close_rows, r.rows);
  EXPECT_TRUE(r.state_close);
  EXPECT_GE(r.ended, 2 * kN);
}

INSTANTIATE_TEST_SUITE_P(Envs, StagedRandomized,
                         ::testing::Values(Case{"Go1-Velocity-Flat-v0", "go1"},
                                           Case{"Go1-Velocity-Rough-v0", "go1"},
                                           Case{"G1-Velocity-Flat-v0", "g1"}, Case{"Ant-v5", ""}),
                         [](const auto& info) {
                           std::string s = info.param.id;
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

// On a GPU: the env step replayed as one CUDA graph gives the plain launches' bits, across the
// task's Params changing (the command curriculum's stages at 3 and 6 policy steps: the graph is
// captured anew). MYRIAD_CUDA_CHECK=1 turns graphs off, so the comparison would be vacuous.
TEST(StagedRandomizedCuda, GraphGivesThePlainLaunchesBits) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  const char* check = std::getenv("MYRIAD_CUDA_CHECK");
  if (check != nullptr && check[0] == '1') GTEST_SKIP() << "MYRIAD_CUDA_CHECK=1: no graphs";
  const DeviceId gpu{Device::kCuda, 0};
  for (int precision : {32, 64}) {
    EnvOptions options = {{"precision", precision},
                          {"max_episode_steps", 15},
                          {"command_stage1_step", 3},
                          {"command_stage2_step", 6}};
    const EnvTextOptions text = {{"randomize", randomize_with_push("go1")}};
    options["cuda_graph"] = 0;
    auto plain = make("Go1-Velocity-Flat-v0", 64, gpu, 11, options, text);
    options["cuda_graph"] = 1;
    auto graph = make("Go1-Velocity-Flat-v0", 64, gpu, 11, options, text);
    const Agreement r = agree(*plain, *graph, 20, 0.0, 0.5);
    EXPECT_EQ(r.close_rows, r.rows) << "precision " << precision;
    EXPECT_TRUE(r.state_close) << "precision " << precision;
  }
}

// The refusals that remain: a task env on the tiled launch, and a push on an untasked env's
// staged launch (its post-step has no forward pass for it).
TEST(StagedRandomizedOptions, WhatTheStagedLaunchStillRefuses) {
  const DeviceId cpu{Device::kCpu, 0};
  try {
    make("Go1-Velocity-Flat-v0", 2, cpu, 1, {}, {{"launch", "tiled"}});
    ADD_FAILURE() << "launch=tiled was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("launch=tiled"), std::string::npos) << e.what();
  }
  const std::string push = std::string("{") + kPush + "}";
  try {
    make("Ant-v5", 2, cpu, 1, {}, {{"launch", "staged"}, {"randomize", push}});
    ADD_FAILURE() << "a push on Ant-v5's staged launch was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("push"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad::envs
