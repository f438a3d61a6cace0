// myriad bench: steps an env with random actions and reports env steps per second.
#include <ATen/ATen.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>

#include "myriad/physics/cuda_batch.h"
#include "myriad/registry.h"
#include "myriad/stage_times.h"
#include "myriad/torch_device.h"
#include "tools/commands.h"

namespace myriad::tools {
namespace {

struct BenchOptions {
  std::string env = "CartPole-v1";
  int64_t num_envs = 4096;
  int64_t steps = 1000;
  std::string device = "cpu";
  int threads = 0;
  uint64_t seed = 0;
  bool json = false;
  std::string xml, physics = "myriad";
  int frame_skip = 0;  // 0: the env's own (MJCF-v0: 1)
  bool float64 = false;
  std::string launch = "auto";  // physics envs on the engine: auto, fused, staged, tiled, blocked
  bool stage_times = false;     // CUDA: a second timed run with events around every launch
  bool no_cuda_graph = false;   // physics envs on CUDA: plain launches instead of the graph
  std::string randomize;        // physics envs: domain randomization terms (JSON)
};

// A ring of pre-sampled random action batches, so the timed loop measures the env alone.
std::vector<at::Tensor> random_actions(const EnvSpec& spec, int64_t n, const at::Device& dev,
                                       int count) {
  std::vector<at::Tensor> ring;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(12345);
  // Multi-agent envs take one action per agent: [N, A] or [N, A, K].
  std::vector<int64_t> rows = {n};
  if (spec.multi_agent()) rows.push_back(spec.num_agents);
  for (int k = 0; k < count; ++k) {
    const Space& a = spec.action_space;
    at::Tensor t;
    if (a.is_discrete()) {
      t = at::randint(0, a.n, rows, gen, at::TensorOptions().dtype(at::kInt));
    } else {
      std::vector<int64_t> shape = rows;
      shape.push_back(a.flat_size());
      // Unbounded controls (ctrllimited false) are sampled in [-1, 1].
      const at::Tensor low = at::tensor(a.low).clamp(-1, 1), high = at::tensor(a.high).clamp(-1, 1);
      t = low + (high - low) * at::rand(shape, gen, at::TensorOptions().dtype(at::kFloat));
    }
    ring.push_back(t.to(dev));
  }
  return ring;
}

void run_bench(const BenchOptions& o) {
  set_cpu_threads(o.threads);
  const DeviceId device = resolve_device_id(o.device);
  EnvOptions options;
  EnvTextOptions text;
  const bool physics_env = envs::spec_of(o.env).physics_env;
  if (physics_env) {  // MJCF-v0 and the locomotion envs
    text = {{"physics", o.physics}};
    if (!o.xml.empty()) text["xml"] = o.xml;
    if (o.launch != "auto") text["launch"] = o.launch;
    options = {{"precision", o.float64 ? 64 : 32}};
    if (o.frame_skip > 0) options["frame_skip"] = o.frame_skip;
    if (o.no_cuda_graph) options["cuda_graph"] = 0;
    if (!o.randomize.empty()) text["randomize"] = o.randomize;
  } else if (!o.xml.empty() || o.physics != "myriad" || o.frame_skip > 0 || o.float64 ||
             o.launch != "auto" || o.no_cuda_graph || !o.randomize.empty()) {
    throw std::invalid_argument(
        "--xml, --physics, --frame-skip, --float64, --launch, --no-cuda-graph and --randomize "
        "apply to physics envs (MJCF-v0, Ant-v5, ...), not to '" +
        o.env + "'");
  }
  auto env = envs::make(o.env, o.num_envs, device, o.seed, options, text);
  const at::Device dev = torch_device(device);
  const auto ring = random_actions(env->spec(), o.num_envs, dev, 16);
  auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize(device.index);
  };
  const int64_t warmup = std::min<int64_t>(o.steps / 10 + 1, 50);
  for (int64_t t = 0; t < warmup; ++t) env->step(ring[t % ring.size()]);
  sync();
  const auto start = std::chrono::steady_clock::now();
  for (int64_t t = 0; t < o.steps; ++t) env->step(ring[t % ring.size()]);
  sync();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double sps = static_cast<double>(o.num_envs) * o.steps / seconds;
  // Per-stage GPU time, from a second run of the same steps (the events are not free, so the
  // throughput above is measured without them): milliseconds per env step, by launch name.
  nlohmann::json stages = nlohmann::json::object();
  if (o.stage_times && device.is_cuda()) {
    stage_times_start();
    for (int64_t t = 0; t < o.steps; ++t) env->step(ring[t % ring.size()]);
    sync();
    for (const StageTime& s : stage_times_stop())
      stages[s.name] = {{"ms_per_step", s.ms / o.steps},
                        {"launches_per_step", static_cast<double>(s.launches) / o.steps}};
  }
  // libmujoco computes in float64 only; classic envs step in float32.
  const int precision = physics_env && (o.float64 || o.physics == "mujoco") ? 64 : 32;
  nlohmann::json out = {
      {"env", o.env},
      {"num_envs", o.num_envs},
      {"device", device_name(device)},
      {"threads", device.is_cpu() ? cpu_threads() : 0},
      {"cpu_kernels", device.is_cpu() && !physics_env ? envs::cpu_kernel_level() : ""},
      {"physics", physics_env ? o.physics : ""},
      {"precision", precision},
      {"launch", physics_env ? o.launch : ""},
      {"cuda_graph", physics_env && device.is_cuda() && !o.no_cuda_graph},
      {"steps", o.steps},
      {"seconds", seconds},
      {"steps_per_second", sps}};
  if (o.stage_times) out["stages"] = stages;
  // The constraint solve's shared memory a block on this GPU (the default or
  // MYRIAD_SOLVE_STORAGE_KIB's), for the layout the env's step used.
  if (physics_env && device.is_cuda() && o.physics == "myriad") {
    const int block = o.launch == "blocked" ? physics::kCudaBlock : 1;
    out["solve_storage_bytes"] =
        o.float64 ? physics::cuda_solve_storage_bytes<double>(device.index, block)
                  : physics::cuda_solve_storage_bytes<float>(device.index, block);
  }
  if (o.json) {
    std::cout << out.dump() << std::endl;
  } else {
    std::cout << o.env << " x" << o.num_envs << " on " << device_name(device) << ": " << sps / 1e6
              << " M env steps/s (" << o.steps << " steps in " << seconds << " s)\n";
    for (const auto& [name, t] : stages.items())
      std::cout << "  " << name << ": " << t["ms_per_step"].get<double>() << " ms per step ("
                << t["launches_per_step"].get<double>() << " launches)\n";
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "Step an env with random actions; print steps/s");
  cmd->add_option("--env", opts->env, "Env id")->capture_default_str();
  cmd->add_option("--num-envs", opts->num_envs, "Batch size N")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--steps", opts->steps, "Batched steps S (timed)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--device", opts->device, "cpu, cuda, cuda:K or auto")->capture_default_str();
  cmd->add_option("--threads", opts->threads, "OpenMP threads (0: default)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", opts->seed, "Seed")->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print one JSON line");
  cmd->add_flag("--no-cuda-graph", opts->no_cuda_graph,
                "Physics envs on CUDA: plain launches, not the env step's CUDA graph");
  cmd->add_flag("--stage-times", opts->stage_times,
                "CUDA: GPU time per launch name (CUDA events), from a second run of the steps");
  cmd->add_option("--xml", opts->xml, "MJCF file (with --env MJCF-v0)");
  cmd->add_option("--physics", opts->physics,
                  "Physics envs (MJCF-v0, Ant-v5, ...): myriad or mujoco")
      ->capture_default_str()
      ->check(CLI::IsMember({"myriad", "mujoco"}));
  cmd->add_option("--frame-skip", opts->frame_skip,
                  "Physics envs: physics steps per env step (default: the env's; MJCF-v0: 1)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--float64", opts->float64, "Physics envs on myriad physics: float64 engine");
  cmd->add_option(
         "--launch", opts->launch,
         "Physics envs on myriad physics: fused (CPU: one pass per env), staged (one "
         "launch per physics stage on env-major rows), tiled (CPU: the smooth stages 8 "
         "envs at a time in SIMD lanes), blocked (staged on a batch in blocks of 32 envs: "
         "coalesced loads on CUDA, an option until a GPU measures it; on the CPU its check) or "
         "auto (staged on CUDA, tiled on the CPU; fused with per-env model parameters)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "fused", "staged", "tiled", "blocked"}));
  cmd->add_option("--randomize", opts->randomize,
                  "Physics envs: domain randomization terms as JSON, as env.randomize takes them "
                  "(per-env model parameters; the CPU's fused launch)");
  cmd->callback([opts] { run_bench(*opts); });
}

}  // namespace myriad::tools
