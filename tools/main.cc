// myriad: train, evaluate and benchmark batched RL environments.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "learner/cpu_math.h"
#include "myriad/version.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  // Before any LibTorch op: the same seed gives the same run on Intel and AMD CPUs.
  myriad::learner::pin_cpu_math();
  myriad::learner::keep_freed_memory();
  CLI::App app{"Myriad: batched reinforcement learning at the speed of the hardware"};
  app.set_version_flag("--version", "myriad " MYRIAD_VERSION);
  app.require_subcommand(1);
  myriad::tools::add_train_command(app);
  myriad::tools::add_eval_command(app);
  myriad::tools::add_bench_command(app);
  myriad::tools::add_ppo_bench_command(app);
  myriad::tools::add_physics_check_command(app);
  myriad::tools::add_physics_bench_command(app);
  myriad::tools::add_view_command(app);
  myriad::tools::add_launch_command(app);
  myriad::tools::add_serve_command(app);
  myriad::tools::add_actor_command(app);
  myriad::tools::add_envs_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return myriad::tools::launch_usage_exit_code(app, app.exit(e));
  } catch (const std::exception& e) {
    std::cerr << "myriad: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
