// The physics envs, declared once: the runners (runners_cpu.cc, runners_cuda.cu) and the
// registry (envs/registry.cc) are generated from this list. Adding an env: write its header
// (see hopper.h), include it here, add one X line, and add its model to models/ and to
// envs/CMakeLists.txt's model list.
#pragma once

#include "envs/locomotion/ant.h"
#include "envs/locomotion/half_cheetah.h"
#include "envs/locomotion/hopper.h"
#include "envs/locomotion/humanoid.h"
#include "envs/locomotion/inverted_double_pendulum.h"
#include "envs/locomotion/inverted_pendulum.h"
#include "envs/locomotion/reacher.h"
#include "envs/locomotion/walker2d.h"

// clang-format off
#define MYRIAD_PHYSICS_ENVS(X) \
  X(Hopper)                    \
  X(HalfCheetah)               \
  X(Walker2d)                  \
  X(Ant)                       \
  X(Humanoid)                  \
  X(InvertedPendulum)          \
  X(InvertedDoublePendulum)    \
  X(Reacher)
// clang-format on
