// myriad physics-bench MODEL.xml: the raw engine (no env around it) stepping N copies of a model
// with zero controls from qpos0, on the CPU or a CUDA GPU; prints physics steps per second.
#include <chrono>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>

#include "myriad/device.h"
#include "myriad/physics/cuda_batch.h"
#include "myriad/physics/engine.h"
#include "myriad/physics/import.h"
#include "tools/commands.h"

namespace myriad::tools {
namespace {

struct PhysicsBenchArgs {
  std::string xml, device = "cpu";
  int64_t num_envs = 4096, steps = 100;
  int threads = 0;
  bool float64 = false;
};

template <class T>
double steps_per_second(const PhysicsBenchArgs& a, DeviceId device) {
  const physics::Model<T> m = physics::load_mjcf(a.xml).template cast<T>();
  physics::Data<T> d(m, a.num_envs);
  physics::reset_data(m, d);
  using clock = std::chrono::steady_clock;
  if (device.is_cpu()) {
    physics::step(m, d, 5);
    const auto start = clock::now();
    physics::step(m, d, static_cast<int>(a.steps));
    return a.num_envs * a.steps / std::chrono::duration<double>(clock::now() - start).count();
  }
  physics::CudaBatch<T> batch(m, a.num_envs, device.index);
  batch.upload(d);
  batch.step(5);
  const auto start = clock::now();
  batch.step(static_cast<int>(a.steps));  // synchronizes at the end
  return a.num_envs * a.steps / std::chrono::duration<double>(clock::now() - start).count();
}

void run(const PhysicsBenchArgs& a) {
  set_cpu_threads(a.threads);
  const DeviceId device = resolve_device_id(a.device);
  const double sps =
      a.float64 ? steps_per_second<double>(a, device) : steps_per_second<float>(a, device);
  std::cout << nlohmann::json({{"model", a.xml},
                               {"num_envs", a.num_envs},
                               {"device", device_name(device)},
                               {"threads", device.is_cpu() ? cpu_threads() : 0},
                               {"precision", a.float64 ? 64 : 32},
                               {"steps_per_second", sps}})
                   .dump()
            << std::endl;
}

}  // namespace

void add_physics_bench_command(CLI::App& app) {
  auto a = std::make_shared<PhysicsBenchArgs>();
  CLI::App* cmd = app.add_subcommand("physics-bench", "Step the raw engine on N copies of a model");
  cmd->add_option("xml", a->xml, "MJCF file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--num-envs", a->num_envs, "Copies")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--steps", a->steps, "Physics steps (timed)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--device", a->device, "cpu, cuda, cuda:K or auto")->capture_default_str();
  cmd->add_option("--threads", a->threads, "OpenMP threads (0: default)")->capture_default_str();
  cmd->add_flag("--float64", a->float64, "float64 engine (default float32)");
  cmd->callback([a] { run(*a); });
}

}  // namespace myriad::tools
