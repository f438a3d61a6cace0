// The physics envs, declared once: the runners (runners_cpu.cc, runners_cuda.cuh) and the
// registry (envs/registry.cc) are generated from this list. Adding an env: write its header
// (see hopper.h), include it here, add one X line, and add its model to models/ and to
// envs/CMakeLists.txt's model list.
#pragma once

#include "envs/legged/velocity_task.h"
#include "envs/locomotion/ant.h"
#include "envs/locomotion/half_cheetah.h"
#include "envs/locomotion/hopper.h"
#include "envs/locomotion/humanoid.h"
#include "envs/locomotion/inverted_double_pendulum.h"
#include "envs/locomotion/inverted_pendulum.h"
#include "envs/locomotion/reacher.h"
#include "envs/locomotion/walker2d.h"
#include "envs/mjcf/mjcf_task.h"

// X(Env): a physics env on a model of its own (envs/locomotion/models/).
// clang-format off
#define MYRIAD_PHYSICS_ENVS(X)             \
  X(locomotion::Hopper)                    \
  X(locomotion::HalfCheetah)               \
  X(locomotion::Walker2d)                  \
  X(locomotion::Ant)                       \
  X(locomotion::Humanoid)                  \
  X(locomotion::InvertedPendulum)          \
  X(locomotion::InvertedDoublePendulum)    \
  X(locomotion::Reacher)
// clang-format on

// X(Env): a task env (envs/physics_task_kernels.h) on a robot of envs/robots/: the runners (CPU
// and CUDA) and the registry.
#define MYRIAD_TASK_ENVS(X)   \
  X(legged::Go1VelocityFlat)  \
  X(legged::Go1VelocityRough) \
  X(legged::G1VelocityFlat)   \
  X(legged::G1VelocityRough)

// Every physics env type the runners instantiate: those above and MJCF-v0 (the user's model,
// envs/mjcf/mjcf_task.h), which the registry offers with its own spec (envs/mjcf/mjcf_env.cc).
#define MYRIAD_PHYSICS_ENV_TYPES(X) \
  MYRIAD_PHYSICS_ENVS(X)            \
  X(MjcfTask)
