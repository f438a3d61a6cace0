// Every batch env type (classic and multi-agent), declared once. The CPU kernel tables
// (envs/cpu_tables.h, envs/backend_cpu*.cc), the CUDA instantiations (envs/backend_cuda.cu and
// its stub) and the registry (envs/registry.cc) are generated from these two lists. Adding a
// classic env: write its struct (see envs/classic/cartpole.h), include it here and add one X
// line. The physics envs have their own list (envs/locomotion/env_list.h).
#pragma once

#include "envs/classic/acrobot.h"
#include "envs/classic/cartpole.h"
#include "envs/classic/mountain_car.h"
#include "envs/classic/pendulum.h"
#include "envs/mpe/registered.h"

// X(Env): a single-agent classic env.
// clang-format off
#define MYRIAD_CLASSIC_ENVS(X) \
  X(CartPole)                  \
  X(Pendulum)                  \
  X(Acrobot)                   \
  X(MountainCar)               \
  X(MountainCarContinuous)

// Y(Discrete, Continuous, ...): a multi-agent scenario in its two action variants (envs/mpe/);
// the rest of the arguments is passed on to Y.
#define MYRIAD_MULTI_AGENT_ENVS(Y, ...)              \
  Y(SpreadDiscrete, SpreadContinuous, __VA_ARGS__) \
  Y(TagDiscrete, TagContinuous, __VA_ARGS__)       \
  Y(SumoDiscrete, SumoContinuous, __VA_ARGS__)
// clang-format on

// Every kernel type, X(Env) once each: the classic envs, then both variants of each scenario.
#define MYRIAD_BATCH_ENV_VARIANTS_(Discrete, Continuous, X) X(Discrete) X(Continuous)
#define MYRIAD_BATCH_ENVS(X) \
  MYRIAD_CLASSIC_ENVS(X)     \
  MYRIAD_MULTI_AGENT_ENVS(MYRIAD_BATCH_ENV_VARIANTS_, X)
