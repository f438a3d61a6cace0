// Subcommands of the `myriad` tool; each registers its options on a CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

namespace myriad::tools {

void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_ppo_bench_command(CLI::App& app);
void add_physics_check_command(CLI::App& app);
void add_physics_bench_command(CLI::App& app);
void add_view_command(CLI::App& app);
void add_launch_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_actor_command(CLI::App& app);
void add_envs_command(CLI::App& app);

// The exit status for a parse error `code`: 2 (as torchrun's) when it is `launch`'s arguments.
int launch_usage_exit_code(const CLI::App& app, int code);

}  // namespace myriad::tools
