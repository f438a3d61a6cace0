// myriad physics-check MODEL.xml: Myriad's engine against libmujoco on one model; prints the
// largest error per quantity and exits non-zero when a tolerance is exceeded.
#include <cstdio>
#include <stdexcept>

#include "myriad/physics/check.h"
#include "tools/commands.h"

namespace myriad::tools {
namespace {

struct CheckArgs {
  std::string xml;
  physics::CheckOptions options;
};

void run_check(const CheckArgs& a) {
  const auto rows = physics::check_against_mujoco(a.xml, a.options);
  std::printf("%s: Myriad (%s) vs libmujoco %s, %d random states, %d trajectories of %d steps\n",
              a.xml.c_str(), a.options.float32 ? "float32" : "float64",
              physics::mujoco_version().c_str(), a.options.samples, a.options.trajectories,
              a.options.steps);
  std::printf("%-34s %12s %10s %10s  %s\n", "quantity", "max error", "kind", "tolerance", "result");
  for (const auto& r : rows) {
    const bool judged = r.tolerance < 1e300;
    char tol[32] = "-";
    if (judged) std::snprintf(tol, sizeof tol, "%.0e", r.tolerance);
    std::printf("%-34s %12.3e %10s %10s  %s%s%s\n", r.quantity.c_str(), r.max_error, r.kind.c_str(),
                tol,
                judged ? (r.ok()                      ? "ok"
                          : r.ok_or_within_rounding() ? "EXCEEDED, within float32 rounding"
                                                      : "EXCEEDED")
                       : "(reported)",
                r.detail.empty() ? "" : "  ", r.detail.c_str());
  }
  if (const physics::CheckRow* worst = physics::worst_failure(rows)) {
    if (worst->max_error <= worst->tolerance)  // it fails on a state left out as ill-conditioned
      throw std::runtime_error(
          "parity fails; worst: " + worst->quantity + " on an ill-conditioned state, ours " +
          std::to_string(worst->ill_conditioned_error) + " > twice libmujoco's own " +
          std::to_string(worst->ill_conditioned_self) + " (see the table above)");
    throw std::runtime_error("parity fails; worst: " + worst->quantity + " " +
                             std::to_string(worst->max_error) + " > " +
                             std::to_string(worst->tolerance) + " (see the table above)");
  }
}

}  // namespace

void add_physics_check_command(CLI::App& app) {
  auto a = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("physics-check",
                                     "Compare Myriad's engine with libmujoco on an MJCF model");
  cmd->add_option("xml", a->xml, "MJCF file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--steps", a->options.steps, "Trajectory length")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--samples", a->options.samples, "Random states for kinematics and qacc")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--trajectories", a->options.trajectories, "Trajectories")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", a->options.seed, "Seed of the random states")->capture_default_str();
  cmd->add_flag("--float32", a->options.float32, "Run the engine in float32 (default float64)");
  cmd->add_option("--trajectory-tolerance", a->options.trajectory_tolerance,
                  "Float64 trajectory tolerance, absolute (default: 10x libmujoco's own "
                  "divergence under one-ulp nudges per step, at least 1e-6)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--explain", a->options.explain,
                "Print the first contact set and trajectory step that differ, both sides (stderr)");
  cmd->callback([a] { run_check(*a); });
}

}  // namespace myriad::tools
