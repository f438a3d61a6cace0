// myriad physics-bench MODEL.xml: the raw engine (no env around it) stepping N copies of a model
// with zero controls from qpos0, on the CPU or a CUDA GPU; prints physics steps per second and
// the mean contacts and solver iterations per env at the end. --compare-mujoco also steps libmujoco
// itself on the same copies, threads and steps in the same run (CPU), and prints the ratio.
#include <chrono>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>

#include "myriad/device.h"
#include "myriad/physics/cuda_batch.h"
#include "myriad/physics/engine.h"
#include "myriad/physics/import.h"
#include "physics/mujoco_batch.h"
#include "tools/commands.h"

namespace myriad::tools {
namespace {

struct PhysicsBenchArgs {
  std::string xml, device = "cpu";
  int64_t num_envs = 4096, steps = 100, warmup = 5;
  int threads = 0;
  std::string launch;  // fused or staged; empty: fused on the CPU, staged on CUDA
  bool float64 = false, compare_mujoco = false;
};

struct Measured {
  double steps_per_second = 0, mean_contacts = 0;
  double mean_solver_iterations = 0;  // of the last step, over envs
};

using Clock = std::chrono::steady_clock;

// Mean over envs of a one-value-per-env field of Data (ncon, solver_niter).
template <class T>
double mean_over_envs(const physics::Model<T>& m, physics::Data<T>& d, const char* field) {
  const T* value = d.field(m, field);
  double total = 0;
  for (int64_t i = 0; i < d.num_envs(); ++i) total += static_cast<double>(value[i]);
  return total / static_cast<double>(d.num_envs());
}

template <class T>
Measured measure(const PhysicsBenchArgs& a, DeviceId device) {
  const physics::Model<T> m = physics::load_mjcf(a.xml).template cast<T>();
  physics::Data<T> d(m, a.num_envs);
  physics::reset_data(m, d);
  Measured out;
  if (device.is_cpu()) {
    const auto step = a.launch == "staged" ? physics::step_staged<T> : physics::step<T>;
    step(m, d, static_cast<int>(a.warmup));
    const auto start = Clock::now();
    step(m, d, static_cast<int>(a.steps));
    out.steps_per_second =
        a.num_envs * a.steps / std::chrono::duration<double>(Clock::now() - start).count();
    out.mean_contacts = mean_over_envs(m, d, "ncon");
    out.mean_solver_iterations = mean_over_envs(m, d, "solver_niter");
    return out;
  }
  physics::CudaBatch<T> batch(m, a.num_envs, device.index);
  batch.upload(d);
  const bool staged = a.launch != "fused";
  batch.step(static_cast<int>(a.warmup), staged);
  const auto start = Clock::now();
  batch.step(static_cast<int>(a.steps), staged);  // synchronizes at the end
  out.steps_per_second =
      a.num_envs * a.steps / std::chrono::duration<double>(Clock::now() - start).count();
  batch.download(d);
  out.mean_contacts = mean_over_envs(m, d, "ncon");
  out.mean_solver_iterations = mean_over_envs(m, d, "solver_niter");
  return out;
}

// libmujoco's mj_step on the same copies (OpenMP over envs, as MujocoBatch does).
Measured measure_mujoco(const PhysicsBenchArgs& a) {
  physics::MujocoBatch batch(a.xml, a.num_envs);
  batch.step(a.warmup);
  const auto start = Clock::now();
  batch.step(a.steps);
  Measured out;
  out.steps_per_second =
      a.num_envs * a.steps / std::chrono::duration<double>(Clock::now() - start).count();
  double contacts = 0, iterations = 0;
  for (int64_t i = 0; i < a.num_envs; ++i) {
    contacts += batch.data(i)->ncon;
    iterations += batch.data(i)->solver_iter;
  }
  out.mean_contacts = contacts / static_cast<double>(a.num_envs);
  out.mean_solver_iterations = iterations / static_cast<double>(a.num_envs);
  return out;
}

void run(const PhysicsBenchArgs& a) {
  set_cpu_threads(a.threads);
  const DeviceId device = resolve_device_id(a.device);
  if (a.compare_mujoco && !device.is_cpu())
    throw std::invalid_argument("--compare-mujoco runs on the CPU only (libmujoco has no GPU)");
  const Measured ours = a.float64 ? measure<double>(a, device) : measure<float>(a, device);
  nlohmann::json out = {{"model", a.xml},
                        {"num_envs", a.num_envs},
                        {"device", device_name(device)},
                        {"threads", device.is_cpu() ? cpu_threads() : 0},
                        {"precision", a.float64 ? 64 : 32},
                        {"launch", !a.launch.empty() ? a.launch
                                   : device.is_cpu() ? "fused"
                                                     : "staged"},
                        {"warmup_steps", a.warmup},
                        {"steps_per_second", ours.steps_per_second},
                        {"mean_contacts", ours.mean_contacts},
                        {"mean_solver_iterations", ours.mean_solver_iterations}};
  if (a.compare_mujoco) {
    const Measured ref = measure_mujoco(a);
    out["mujoco_steps_per_second"] = ref.steps_per_second;
    out["mujoco_mean_contacts"] = ref.mean_contacts;
    out["mujoco_mean_solver_iterations"] = ref.mean_solver_iterations;
    out["ratio_vs_mujoco"] = ours.steps_per_second / ref.steps_per_second;
  }
  std::cout << out.dump() << std::endl;
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
  cmd->add_option("--warmup", a->warmup, "Untimed steps first (e.g. to let a model land)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--launch", a->launch,
                  "fused (one pass per env through every stage; the CPU's default) or staged "
                  "(one launch per named stage; CUDA's default)")
      ->check(CLI::IsMember({"fused", "staged"}));
  cmd->add_flag("--compare-mujoco", a->compare_mujoco,
                "Also step libmujoco on the same copies and threads; print the ratio");
  cmd->callback([a] { run(*a); });
}

}  // namespace myriad::tools
