// myriad physics-bench MODEL.xml: the raw engine (no env around it) stepping N copies of a model
// from qpos0, with zero controls or (--random-controls) controls redrawn every step, on the CPU or
// a CUDA GPU; prints physics steps per second and the mean contacts and solver iterations per env
// at the end. --compare-mujoco also steps libmujoco itself on the same copies, threads and steps
// in the same run (CPU), with the same controls, and prints the ratio. --lockstep W,... reports how
// much of a batch's per-env variable work (contacts, constraint rows, solver iterations) would be
// padding if tiles of W envs ran in lockstep (a SIMD register of W lanes, a warp of 32 threads).
#include <chrono>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "myriad/device.h"
#include "myriad/physics/cuda_batch.h"
#include "myriad/physics/engine.h"
#include "myriad/physics/import.h"
#include "physics/mujoco_batch.h"
#include "physics/mujoco_compat.h"
#include "tools/commands.h"
#include "tools/lockstep_report.h"

namespace myriad::tools {
namespace {

struct PhysicsBenchArgs {
  std::string xml, device = "cpu";
  int64_t num_envs = 4096, steps = 100, warmup = 5;
  int threads = 0;
  std::string launch;  // tiled, fused or staged; empty: tiled on the CPU, staged on CUDA
  std::string layout;  // CUDA's data: env-major (the default) or blocked
  bool float64 = false, compare_mujoco = false, random_controls = false;
  uint64_t seed = 1;
  std::vector<int> lockstep;  // tile widths to report (CPU only)
};

struct Measured {
  double steps_per_second = 0, mean_contacts = 0;
  double mean_solver_iterations = 0;  // of the last step, over envs
};

// The CUDA batch's layout: as asked, else env-major (the envs' runner's).
std::string cuda_layout(const PhysicsBenchArgs& a) {
  return a.layout.empty() ? "env-major" : a.layout;
}

using Clock = std::chrono::steady_clock;

// Mean over envs of a one-value-per-env field of Data (ncon, solver_niter).
template <class T>
double mean_over_envs(const physics::Model<T>& m, physics::Data<T>& d, const char* field) {
  const T* value = d.field(m, field);
  double total = 0;
  for (int64_t i = 0; i < d.num_envs(); ++i) total += static_cast<double>(value[i]);
  return total / static_cast<double>(d.num_envs());
}

// Controls drawn uniformly in each actuator's ctrlrange ([-1, 1] where unlimited), a row per
// env; the same seed gives both engines the same draws, step after step (the same controls up to
// a float32 model's rounding of the ranges).
struct ControlDraws {
  std::vector<double> lo, hi;  // per actuator
  std::mt19937_64 rng;
  std::vector<double> ctrl;  // [N, nu], the last draw

  // limited [nu], range [nu, 2]: Myriad's Model<T> vectors or mjModel's arrays.
  template <class Limited, class Range>
  ControlDraws(const Limited& limited, const Range& range, int nu, uint64_t seed) : rng(seed) {
    for (int u = 0; u < nu; ++u) {
      lo.push_back(limited[u] ? static_cast<double>(range[2 * u]) : -1.0);
      hi.push_back(limited[u] ? static_cast<double>(range[2 * u + 1]) : 1.0);
    }
  }
  const std::vector<double>& draw(int64_t num_envs) {
    const size_t nu = lo.size();
    ctrl.resize(static_cast<size_t>(num_envs) * nu);
    for (int64_t i = 0; i < num_envs; ++i)
      for (size_t u = 0; u < nu; ++u)
        ctrl[i * nu + u] = std::uniform_real_distribution<double>(lo[u], hi[u])(rng);
    return ctrl;
  }
};

template <class T>
Measured measure(const PhysicsBenchArgs& a, DeviceId device, nlohmann::json* lockstep) {
  const physics::Model<T> m = physics::load_mjcf(a.xml).template cast<T>();
  physics::Data<T> d(m, a.num_envs);
  physics::reset_data(m, d);
  Measured out;
  if (device.is_cpu()) {
    using StepFn = void (*)(const physics::Model<T>&, physics::Data<T>&, int);
    const StepFn staged = [](const physics::Model<T>& mm, physics::Data<T>& dd, int k) {
      physics::step_staged(mm, dd, k);
    };
    const StepFn step = a.launch == "staged"  ? staged
                        : a.launch == "fused" ? StepFn(physics::step<T>)
                                              : StepFn(physics::step_tiled<T>);
    if (!a.random_controls && a.lockstep.empty()) {
      step(m, d, static_cast<int>(a.warmup));
      const auto start = Clock::now();
      step(m, d, static_cast<int>(a.steps));
      out.steps_per_second =
          a.num_envs * a.steps / std::chrono::duration<double>(Clock::now() - start).count();
    } else {
      // One step at a time: new controls before each, the lockstep tally after (neither timed).
      ControlDraws draws(m.actuator_ctrllimited, m.actuator_ctrlrange, m.nu, a.seed);
      LockstepReport report(a.lockstep);
      double seconds = 0;
      T* ctrl = d.field(m, "ctrl");
      for (int64_t s = 0; s < a.warmup + a.steps; ++s) {
        if (a.random_controls) {
          const std::vector<double>& drawn = draws.draw(a.num_envs);
          for (size_t k = 0; k < drawn.size(); ++k) ctrl[k] = static_cast<T>(drawn[k]);
        }
        const auto start = Clock::now();
        step(m, d, 1);
        if (s >= a.warmup) {
          seconds += std::chrono::duration<double>(Clock::now() - start).count();
          if (!a.lockstep.empty()) report.add(m, d);
        }
      }
      out.steps_per_second = a.num_envs * a.steps / seconds;
      if (lockstep && !a.lockstep.empty()) *lockstep = report.report(a.num_envs);
    }
    out.mean_contacts = mean_over_envs(m, d, "ncon");
    out.mean_solver_iterations = mean_over_envs(m, d, "solver_niter");
    return out;
  }
  const bool staged = a.launch != "fused";
  physics::CudaBatch<T> batch(m, a.num_envs, device.index, nullptr,
                              cuda_layout(a) == "blocked" ? physics::kCudaBlock : 1);
  batch.upload(d);
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

// libmujoco's mj_step on the same copies (OpenMP over envs, as MujocoBatch does), with the
// controls Myriad's engine got.
Measured measure_mujoco(const PhysicsBenchArgs& a) {
  physics::MujocoBatch batch(a.xml, a.num_envs);
  const mjModel* mm = batch.model();
  Measured out;
  if (!a.random_controls) {
    batch.step(a.warmup);
    const auto start = Clock::now();
    batch.step(a.steps);
    out.steps_per_second =
        a.num_envs * a.steps / std::chrono::duration<double>(Clock::now() - start).count();
  } else {
    ControlDraws draws(mm->actuator_ctrllimited, mm->actuator_ctrlrange, mm->nu, a.seed);
    double seconds = 0;
    for (int64_t s = 0; s < a.warmup + a.steps; ++s) {
      batch.set_ctrl(draws.draw(a.num_envs).data());
      const auto start = Clock::now();
      batch.step(1);
      if (s >= a.warmup) seconds += std::chrono::duration<double>(Clock::now() - start).count();
    }
    out.steps_per_second = a.num_envs * a.steps / seconds;
  }
  double contacts = 0, iterations = 0;
  for (int64_t i = 0; i < a.num_envs; ++i) {
    contacts += batch.data(i)->ncon;
    iterations += myriad::physics::solver_iterations(batch.data(i));
  }
  out.mean_contacts = contacts / static_cast<double>(a.num_envs);
  out.mean_solver_iterations = iterations / static_cast<double>(a.num_envs);
  return out;
}

void run(const PhysicsBenchArgs& a) {
  set_cpu_threads(a.threads);
  const DeviceId device = resolve_device_id(a.device);
  if (!a.layout.empty() && device.is_cpu())
    throw std::invalid_argument(
        "--layout is CUDA's (the CPU keeps env-major rows: docs/architecture.md, Batch layout)");
  if (a.layout == "blocked" && a.launch == "fused")
    throw std::invalid_argument(
        "--layout blocked runs the staged launch (--launch fused: env-major)");
  if (a.compare_mujoco && !device.is_cpu())
    throw std::invalid_argument("--compare-mujoco runs on the CPU only (libmujoco has no GPU)");
  if (a.launch == "tiled" && !device.is_cpu())
    throw std::invalid_argument("--launch tiled runs on the CPU only (CUDA: fused or staged)");
  if ((a.random_controls || !a.lockstep.empty()) && !device.is_cpu())
    throw std::invalid_argument(
        "--random-controls and --lockstep run on the CPU only (they read every env between steps)");
  nlohmann::json lockstep;
  const Measured ours =
      a.float64 ? measure<double>(a, device, &lockstep) : measure<float>(a, device, &lockstep);
  nlohmann::json out = {{"model", a.xml},
                        {"num_envs", a.num_envs},
                        {"device", device_name(device)},
                        {"threads", device.is_cpu() ? cpu_threads() : 0},
                        {"precision", a.float64 ? 64 : 32},
                        {"launch", !a.launch.empty() ? a.launch
                                   : device.is_cpu() ? "tiled"
                                                     : "staged"},
                        {"layout", device.is_cpu() ? "env-major" : cuda_layout(a)},
                        {"warmup_steps", a.warmup},
                        {"controls", a.random_controls ? "random" : "zero"},
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
  if (!a.lockstep.empty()) out["lockstep"] = lockstep;
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
                  "tiled (CPU: the smooth stages 8 envs at a time in SIMD lanes, the rest per "
                  "env; the CPU's default), fused (one pass per env through every stage) or "
                  "staged (one launch per named stage; CUDA's default)")
      ->check(CLI::IsMember({"fused", "staged", "tiled"}));
  cmd->add_option("--layout", a->layout,
                  "CUDA: the batch's data as each env's rows (env-major, the default) or in "
                  "blocks of 32 envs, element-major within a block (blocked: a warp's loads "
                  "coalesce; the staged launch only; the physics envs' launch=blocked)")
      ->check(CLI::IsMember({"blocked", "env-major"}));
  cmd->add_flag("--compare-mujoco", a->compare_mujoco,
                "Also step libmujoco on the same copies and threads; print the ratio");
  cmd->add_flag("--random-controls", a->random_controls,
                "Redraw every env's controls uniformly in their ctrlrange before each step (CPU)");
  cmd->add_option("--seed", a->seed, "Seed of --random-controls")->capture_default_str();
  cmd->add_option("--lockstep", a->lockstep,
                  "Tile widths W (e.g. 8,32): the share of contacts, constraint rows and solver "
                  "iterations that tiles of W envs in lockstep would spend on padding (CPU)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20));
  cmd->callback([a] { run(*a); });
}

}  // namespace myriad::tools
