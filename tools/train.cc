#include "tools/commands.h"
namespace myriad::tools {
void add_train_command(CLI::App&) {}
void add_eval_command(CLI::App&) {}
}  // namespace myriad::tools
