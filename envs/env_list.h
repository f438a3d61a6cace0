// Every env type (single- and multi-agent) whose kernels the backends instantiate
// (envs/backend_*.cc, *.cu) and the registry (envs/registry.cc) offers.
#pragma once

#include "envs/classic/acrobot.h"
#include "envs/classic/cartpole.h"
#include "envs/classic/mountain_car.h"
#include "envs/classic/pendulum.h"
#include "envs/mpe/registered.h"

namespace myriad::envs {}  // namespace myriad::envs
