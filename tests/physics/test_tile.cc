// The tiled CPU step (physics/tile.h: the smooth stages 8 envs at a time in SIMD lanes, each
// tile a blocked batch) gives the fused step's bits in every data field, on the project's models
// and the locomotion suite's, in float32 and float64, for a batch that is not a multiple of the
// tile (a partial tile), with envs in different states and one env whose control is NaN
// (actuation's per-env guard). So does the fused step itself run per env on a blocked copy of
// the batch (EnvData<T, W>: 8 envs a block in float64, a CUDA warp's 32 in float32), and the
// staged launch on a blocked batch of 32 (CUDA's layout, physics/batch_layout.h), both precisions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "myriad/physics/data.h"
#include "myriad/physics/engine.h"
#include "myriad/physics/import.h"
#include "physics/batch_layout.h"
#include "physics/batch_view.h"
#include "physics/constraint/solve.h"
#include "physics/launch.h"
#include "physics/model_view.h"
#include "physics/pipeline.h"

namespace myriad::physics {
namespace {

std::string source_dir() {
  const char* src = std::getenv("MYRIAD_SOURCE_DIR");
  return src ? src : MYRIAD_SOURCE_DIR_DEFAULT;
}

// Env i's controls at step t: a different sweep per env and actuator; env 4's first control is
// NaN at every fifth step (the engine zeroes that env's controls then).
template <class T>
void drive(const Model<T>& m, Data<T>& d, int t) {
  for (int64_t i = 0; i < d.num_envs(); ++i) {
    EnvData<T> e = d.env(m, i);
    for (int u = 0; u < m.nu; ++u) {
      const double lo = m.actuator_ctrllimited[u] ? double(m.actuator_ctrlrange[2 * u]) : -1.0;
      const double hi = m.actuator_ctrllimited[u] ? double(m.actuator_ctrlrange[2 * u + 1]) : 1.0;
      // Up to 20% past the range, so that the clamps are exercised.
      const double s = 1.2 * std::sin(0.37 * t + 1.3 * double(i) + 0.7 * u);
      e.ctrl[u] = T(0.5 * (lo + hi) + 0.5 * (hi - lo) * s);
    }
    if (i == 4 && m.nu > 0 && t % 5 == 0) e.ctrl[0] = std::numeric_limits<T>::quiet_NaN();
  }
}

// The first field whose bits differ between a and b, with env and element; empty if none.
// outputs_only: as a staged step must match the fused one, none of the solver's scratch (the
// staged step's group solve keeps other intermediates there) or of the per-pair contact counts,
// and of the contact list the ncon contacts (past them the pairs' slots: physics/launch.h).
template <class T>
std::string first_difference(const Model<T>& m, Data<T>& a, Data<T>& b, bool outputs_only = false) {
  std::string found;
  EnvData<T> ea = a.env(m, 0);
  const T* ncon = a.field(m, "ncon");
  for_each_field(ea, m, [&](const char* name, T*& p, int64_t size) {
    if (!found.empty()) return;
    const std::string field = name;
    if (outputs_only && (field == "solver_scratch" || field == "pair_ncon")) return;
    const T* q = b.field(m, name);
    for (int64_t k = 0; k < size * a.num_envs(); ++k) {
      if (outputs_only && field == "contact" &&
          k % size >= static_cast<int64_t>(ncon[k / size]) *
                          static_cast<int64_t>(sizeof(collision::Contact<T>) / sizeof(T)))
        continue;
      if (std::memcmp(p + k, q + k, sizeof(T)) != 0) {
        found = field + " env " + std::to_string(k / size) + " element " +
                std::to_string(k % size) + ": " + std::to_string(double(p[k])) + " vs " +
                std::to_string(double(q[k]));
        return;
      }
    }
  });
  return found;
}

// Different states per env: qpos0 plus a small per-env offset on every coordinate.
template <class T>
void spread_states(const Model<T>& m, Data<T>& d) {
  reset_data(m, d);
  for (int64_t i = 0; i < d.num_envs(); ++i) {
    EnvData<T> e = d.env(m, i);
    for (int k = 0; k < m.nq; ++k) e.qpos[k] += T(0.01 * std::sin(1.7 * double(i) + k));
    for (int k = 0; k < m.nv; ++k) e.qvel[k] = T(0.1 * std::cos(0.9 * double(i) + k));
  }
}

// Two copies of a batch in different states, stepped under the same controls: `fused` with the
// fused step, `other` with step_other(m, other, substeps); every field's bits are compared after
// each step.
template <class T, class StepOther>
void expect_same_bits_as_fused(const std::string& xml, int64_t n, int steps, int substeps,
                               const std::string& what, StepOther step_other,
                               bool outputs_only = false) {
  const Model<T> m = load_mjcf(xml).template cast<T>();
  Data<T> fused(m, n), other(m, n);
  spread_states(m, fused);
  spread_states(m, other);
  for (int t = 0; t < steps; ++t) {
    drive(m, fused, t);
    drive(m, other, t);
    step(m, fused, substeps);
    step_other(m, other, substeps);
    const std::string diff = first_difference(m, fused, other, outputs_only);
    ASSERT_TRUE(diff.empty()) << xml << " (" << sizeof(T) * 8 << "-bit), step " << t
                              << ": fused and " << what << " differ in " << diff;
  }
}

template <class T>
void expect_same_bits(const std::string& xml, int64_t n, int steps, int substeps) {
  expect_same_bits_as_fused<T>(xml, n, steps, substeps, "tiled",
                               [](const Model<T>& m, Data<T>& d, int s) { step_tiled(m, d, s); });
}

// Each env's fused step on a blocked copy of the batch (physics/batch_layout.h, W envs a block)
// gives the env-major batch's bits.
template <class T, int W>
void expect_blocked_same_bits(const std::string& xml, int64_t n, int steps, int substeps) {
  expect_same_bits_as_fused<T>(xml, n, steps, substeps,
                               "blocked (" + std::to_string(W) + " envs a block)",
                               [](const Model<T>& m, Data<T>& d, int substeps) {
                                 const ModelView<T> view = view_of(m);
                                 BlockedData<T> blocked(m, d.num_envs(), W);
                                 blocked.pack(m, d);
                                 const BatchView<T, W> b = blocked.template view<W>();
                                 for (int64_t i = 0; i < d.num_envs(); ++i) {
                                   EnvData<T, W> e = b.env(i);
                                   for (int s = 0; s < substeps; ++s) physics::step(view, e);
                                 }
                                 blocked.unpack(m, d);
                               });
}

// The staged launch (physics/launch.h, every stage a launch over the batch, as on CUDA) on a
// blocked batch gives the fused step's bits in every output (first_difference's outputs_only).
template <class T, int W>
void expect_staged_blocked_same_bits(const std::string& xml, int64_t n, int steps, int substeps) {
  expect_same_bits_as_fused<T>(
      xml, n, steps, substeps, "staged on a blocked batch (" + std::to_string(W) + " envs a block)",
      [](const Model<T>& m, Data<T>& d, int substeps) {
        BlockedData<T> blocked(m, d.num_envs(), W);
        blocked.pack(m, d);
        launch_step_staged<Device::kCpu>(view_of(m), blocked.template view<W>(), d.num_envs(),
                                         substeps, DeviceId{Device::kCpu, 0});
        blocked.unpack(m, d);
      },
      /*outputs_only=*/true);
}

class Tiled : public ::testing::TestWithParam<std::string> {};

TEST_P(Tiled, Float32SameBitsAsFused) {
  expect_same_bits<float>(source_dir() + "/" + GetParam(), 11, 60, 2);
}

TEST_P(Tiled, Float64SameBitsAsFused) {
  expect_same_bits<double>(source_dir() + "/" + GetParam(), 11, 60, 2);
}

TEST_P(Tiled, BlockedBatchFloat32SameBits) {
  expect_blocked_same_bits<float, 32>(source_dir() + "/" + GetParam(), 37, 12, 2);
}

TEST_P(Tiled, BlockedBatchFloat64SameBits) {
  expect_blocked_same_bits<double, 8>(source_dir() + "/" + GetParam(), 11, 12, 2);
}

TEST_P(Tiled, StagedOnBlockedBatchFloat32SameBits) {
  expect_staged_blocked_same_bits<float, 32>(source_dir() + "/" + GetParam(), 37, 12, 2);
}

TEST_P(Tiled, StagedOnBlockedBatchFloat64SameBits) {
  expect_staged_blocked_same_bits<double, 32>(source_dir() + "/" + GetParam(), 11, 12, 2);
}

INSTANTIATE_TEST_SUITE_P(
    Models, Tiled,
    ::testing::Values("envs/locomotion/models/ant.xml", "envs/locomotion/models/humanoid.xml",
                      "envs/locomotion/models/hopper.xml", "envs/locomotion/models/walker2d.xml",
                      "envs/locomotion/models/half_cheetah.xml",
                      "envs/locomotion/models/inverted_pendulum.xml",
                      "envs/locomotion/models/inverted_double_pendulum.xml",
                      "envs/locomotion/models/reacher.xml", "physics/models/quadruped.xml",
                      "physics/models/cartpole.xml", "physics/models/free_body.xml",
                      "physics/models/hopper_chain.xml", "physics/models/double_pendulum.xml",
                      // implicitfast with force-limited actuators (the integrator reads the
                      // actuator forces and the free body's poses after every substep's forward)
                      "physics/models/implicitfast.xml", "envs/robots/models/go1.xml",
                      // every sensor, after Euler and after RK4's first stage
                      "physics/models/sensors.xml", "physics/models/sensors_rk4.xml"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      std::string name = info.param.substr(info.param.rfind('/') + 1);
      name = name.substr(0, name.find('.'));
      for (char& c : name)
        if (c == '_') c = 'X';
      return name;
    });

// A batch smaller than one tile, and one of exactly one tile.
TEST(Tiled, BatchesOfOneAndOfATile) {
  const std::string ant = source_dir() + "/envs/locomotion/models/ant.xml";
  expect_same_bits<float>(ant, 1, 20, 1);
  expect_same_bits<float>(ant, 8, 20, 1);
}

}  // namespace
}  // namespace myriad::physics
