// The engine with contacts, limits and friction loss against libmujoco (the pinned 3.11):
// - Gymnasium's published MuJoCo models (hopper, half_cheetah, walker2d_v5, ant, humanoid,
//   inverted_pendulum, inverted_double_pendulum, reacher) through check_against_mujoco: the
//   contact set, constraint rows, forces, qacc (1e-6 of the largest component in float64, 1e-3
//   in float32) and cfrc_ext at states from libmujoco's own trajectories; the same for
//   physics/models/rolling_friction.xml (condim 4 and 6);
// - each standing under zero control for 2 s with the torso height within 1 cm of libmujoco's;
// - float32 finite for 10,000 steps under random controls on every shipped and published model;
// - the reference values of MuJoCo's soft contacts (sphere rest depth, sliding box stopping
//   distance, a hinge resting on its limit);
// - the staged launch (one loop per named stage, as CUDA runs it) giving the fused step's bits.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "myriad/physics/check.h"
#include "myriad/physics/engine.h"
#include "myriad/physics/import.h"
#include "physics/collision/contact.h"
#include "physics/sensor.h"

namespace myriad::physics {
namespace {

const std::vector<std::string> kGymModels = {"hopper",
                                             "half_cheetah",
                                             "walker2d_v5",
                                             "ant",
                                             "humanoid",
                                             "inverted_pendulum",
                                             "inverted_double_pendulum",
                                             "reacher"};

std::string gym_model(const std::string& name) {
  return std::string(MYRIAD_GYM_ASSETS) + "/" + name + ".xml";
}

bool have_gym() {
  FILE* f = std::fopen(gym_model("hopper").c_str(), "r");
  if (f) std::fclose(f);
  return f != nullptr;
}

std::string shipped_model(const std::string& name) {
  const char* src = std::getenv("MYRIAD_SOURCE_DIR");
  return std::string(src ? src : MYRIAD_SOURCE_DIR_DEFAULT) + "/physics/models/" + name + ".xml";
}

class GymModel : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!have_gym())
      GTEST_SKIP() << "gymnasium's MuJoCo assets not found (" << MYRIAD_GYM_ASSETS << ")";
  }
};

void expect_ok(const std::vector<CheckRow>& rows, bool float32) {
  for (const auto& r : rows) {
    if (float32 && r.quantity.rfind("trajectory", 0) == 0) continue;
    EXPECT_TRUE(r.ok()) << r.quantity << ": " << r.max_error << " > " << r.tolerance;
    // Every float64 trajectory is judged: libmujoco agrees with itself at this length.
    if (r.quantity.rfind("trajectory", 0) == 0)
      EXPECT_TRUE(std::isfinite(r.tolerance)) << r.quantity << ": " << r.detail;
  }
}

TEST_P(GymModel, Float64ParityWithContactsAndLimits) {
  CheckOptions o;
  o.steps = 400;
  expect_ok(check_against_mujoco(gym_model(GetParam()), o), false);
}

TEST_P(GymModel, Float32ParityWithContactsAndLimits) {
  CheckOptions o;
  o.float32 = true;
  o.steps = 400;
  expect_ok(check_against_mujoco(gym_model(GetParam()), o), true);
}

// Torsional (condim 4) and rolling (condim 6) friction: every state of physics/models/
// rolling_friction.xml has contacts of both kinds, one of them between two moving bodies.
TEST(ShippedModels, TorsionalAndRollingFrictionParity) {
  for (bool float32 : {false, true}) {
    CheckOptions o;
    o.float32 = float32;
    o.steps = 400;
    const auto rows = check_against_mujoco(shipped_model("rolling_friction"), o);
    // Every state compared had contacts ("N states, N with contacts, ...").
    for (const auto& r : rows)
      if (r.quantity == "contact set differs") {
        const int states = std::stoi(r.detail);
        EXPECT_GT(states, 0);
        EXPECT_NE(r.detail.find(std::to_string(states) + " with contacts"), std::string::npos)
            << r.detail;
      }
    expect_ok(rows, float32);
  }
}

// Position, velocity, motor and general actuators with forcerange, inheritrange and a joint's
// actuatorfrcrange, on joints with armature, damping and friction loss (physics/models/
// actuators.xml), float64 and float32.
TEST(ShippedModels, ActuatorTypesParity) {
  for (bool float32 : {false, true}) {
    CheckOptions o;
    o.float32 = float32;
    o.steps = 400;
    expect_ok(check_against_mujoco(shipped_model("actuators"), o), float32);
  }
}

// Elliptic cones (physics/models/elliptic.xml: condim 1, 3, 4, 6, impratio, a pair's friction, a
// sled pushed along the cone's surface; islands off, as the engine solves every body together):
// rows, forces and qacc at the model's tolerance and converged, and trajectories, float64 and
// float32.
TEST(ShippedModels, EllipticConeParity) {
  for (bool float32 : {false, true}) {
    CheckOptions o;
    o.float32 = float32;
    o.steps = 400;
    expect_ok(check_against_mujoco(shipped_model("elliptic"), o), float32);
  }
}

// The implicitfast integrator (physics/models/implicitfast.xml: damping, position, velocity,
// affine-gain and tendon actuators, a tendon across two trees, free bodies solved alone), float64
// and float32. In float32 its forces once stopped 5e-3 of the largest away: one improvement
// within the cost's rounding ended the solve with a full Newton step still to take (newton.h,
// converged).
TEST(ShippedModels, ImplicitFastParity) {
  for (bool float32 : {false, true}) {
    CheckOptions o;
    o.float32 = float32;
    o.steps = 400;
    SCOPED_TRACE(float32 ? "float32" : "float64");
    expect_ok(check_against_mujoco(shipped_model("implicitfast"), o), float32);
  }
}

// CheckRow's verdict: a row passes within its tolerance; states where libmujoco moves itself by
// more than the tolerance (float32 random states) are left out of max_error, and fail the row only
// where ours is more than twice libmujoco's own movement there.
TEST(CheckRowVerdict, IllConditionedStatesJudgedByLibmujocosOwnMovement) {
  CheckRow r{"qacc", 5e-5, "relative", 1e-4};
  EXPECT_TRUE(r.ok());
  r.ill_conditioned = 1;
  r.ill_conditioned_self = 1.5e-2;
  r.ill_conditioned_error = 1.6e-2;
  EXPECT_TRUE(r.ok());
  r.ill_conditioned_error = 3.1e-2;
  EXPECT_FALSE(r.ok());
  r.ill_conditioned_error = 1e-2;
  r.max_error = 2e-4;
  EXPECT_FALSE(r.ok());
  // Within twice libmujoco's own movement on the states that enter max_error, but not on the
  // ill-conditioned one: not within rounding either.
  r.self_error = 1.5e-4;
  EXPECT_TRUE(r.ok_or_within_rounding());
  r.ill_conditioned_error = 3.1e-2;
  EXPECT_FALSE(r.ok_or_within_rounding());
}

// Height fields (physics/models/hfield.xml: a sphere, a capsule with a margin and two boxes
// dropped on a tilted field): contacts from the height-field collider (hfield.h) bitwise, rows,
// forces and qacc, float64. Its loose bodies start from random poses deep in the field and
// tumble, so libmujoco diverges from itself within 20 steps: the trajectories are not judged
// (go1_rough's are, in RobotScenes). Not float32: a box lying flat on a prism has no one deepest
// point, and GJK/EPA's witness (so the contact's point and normal) jumps between a prism's faces
// under the float32 rounding of the pose, in libmujoco as here; the float32 run is checked for
// staying finite (Float32Finite10kStepsUnderRandomControls).
TEST(ShippedModels, HeightFieldParity) {
  CheckOptions o;
  o.steps = 100;
  for (const auto& r : check_against_mujoco(shipped_model("hfield"), o))
    if (r.quantity.rfind("trajectory", 0) != 0)
      EXPECT_TRUE(r.ok()) << r.quantity << ": " << r.max_error << " > " << r.tolerance;
}

// Ellipsoids and cylinders (physics/models/convex.xml: free bodies of every convex type dropped on
// a floor, on one another and on a small height field): the GJK/EPA pairs (convex.h) and the
// analytic plane-cylinder and sphere-cylinder, float64 and float32 (GJK/EPA runs in double for
// both). Trajectories of tumbling bodies are judged only where libmujoco agrees with itself
// (check.cc's twin).
// In float32 the flat faces of cylinders and boxes make GJK/EPA's witness (so a contact's point,
// normal and forces) jump under the rounding of a pose, in libmujoco as here: there a row may
// exceed its tolerance by no more than twice what libmujoco itself moves when the state moves
// one float32 ulp (CheckRow::self_error; contact pos 0.3, frame 1.6e-2, efc_force 2.7e-2).
// Its bodies tumble over one another, so libmujoco's trajectories diverge from themselves
// (nudged one ulp a step: 0.38 in qpos over 200 steps): they are reported, not judged.
TEST(ShippedModels, ConvexParity) {
  for (bool float32 : {false, true}) {
    CheckOptions o;
    o.steps = 200;
    o.float32 = float32;
    SCOPED_TRACE(float32 ? "float32" : "float64");
    for (const auto& r : check_against_mujoco(shipped_model("convex"), o)) {
      if (r.quantity.rfind("trajectory", 0) == 0) continue;
      EXPECT_TRUE(float32 ? r.ok_or_within_rounding() : r.ok())
          << r.quantity << ": " << r.max_error << " > " << r.tolerance << "; " << r.detail;
    }
  }
}

// The robot scenes (envs/robots/models/: mjlab's Go1 and G1 with the actuators, armature and
// collision settings of its velocity tasks; Go1 on elliptic cones with condim 6 feet and
// impratio 10, both implicitfast; both on a height field too), a trajectory from the home
// keyframe among the others, float64 and float32. Go1 on a height field in float32 once failed
// efc_force by 0.7 of the largest: libmujoco's solve there had stopped short of the optimum (the
// model's 20 line-search evaluations ran out on two coincident contacts), so the check's tight
// solve now gives the line search 100 as well.
TEST(RobotScenes, Go1AndG1Parity) {
  const char* src = std::getenv("MYRIAD_SOURCE_DIR");
  for (const char* robot : {"go1", "g1", "go1_rough", "g1_rough"})
    for (bool float32 : {false, true}) {
      CheckOptions o;
      o.float32 = float32;
      o.steps = 200;
      const auto rows = check_against_mujoco(std::string(src ? src : MYRIAD_SOURCE_DIR_DEFAULT) +
                                                 "/envs/robots/models/" + robot + ".xml",
                                             o);
      SCOPED_TRACE(std::string(robot) + (float32 ? " float32" : " float64"));
      expect_ok(rows, float32);
      for (const auto& r : rows)
        if (r.quantity.rfind("trajectory", 0) == 0)
          EXPECT_NE(
              r.detail.find(std::string(robot) == "g1" ? "2 from keyframes" : "1 from keyframes"),
              std::string::npos)
              << r.detail;  // g1.xml: home and knees_bent
    }
}

// Every sensor type the engine computes (physics/sensor.h),
// on physics/models/sensors.xml: the model has each type at least once, and sensordata agrees with
// libmujoco's at random states and at states from its trajectories (with contacts), float64 and
// float32.
TEST(ShippedModels, SensorParity) {
  const std::string path = shipped_model("sensors");
  char error[1000] = "";
  mjModel* mm = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  ASSERT_NE(mm, nullptr) << error;
  std::set<int> types(mm->sensor_type, mm->sensor_type + mm->nsensor);
  mj_deleteModel(mm);
  for (int type :
       {kSensAccelerometer, kSensVelocimeter, kSensGyro,        kSensForce,      kSensTorque,
        kSensMagnetometer,  kSensJointPos,    kSensJointVel,    kSensTendonPos,  kSensTendonVel,
        kSensActuatorFrc,   kSensJointActFrc, kSensBallQuat,    kSensBallAngVel, kSensFramePos,
        kSensFrameQuat,     kSensFrameXAxis,  kSensFrameYAxis,  kSensFrameZAxis, kSensFrameLinVel,
        kSensFrameAngVel,   kSensFrameLinAcc, kSensFrameAngAcc, kSensSubtreeCom, kSensSubtreeLinVel,
        kSensSubtreeAngMom, kSensClock,       kSensRangefinder, kSensTouch})
    EXPECT_EQ(types.count(type), 1u) << "sensors.xml lacks sensor type " << type;
  for (bool float32 : {false, true}) {
    CheckOptions o;
    o.float32 = float32;
    o.steps = 400;
    const auto rows = check_against_mujoco(path, o);
    bool compared = false;
    for (const auto& r : rows) compared = compared || r.quantity == "sensordata";
    EXPECT_TRUE(compared);
    if (!float32) {
      expect_ok(rows, false);
      continue;
    }
    // In float32 only the sensors are judged here: the limb's small inertias on a free torso
    // put this model's float32 qacc with contacts up to ~3e-3 of the largest from libmujoco's
    // (over the 1e-3 the Gymnasium models hold), which the sensors then read within 1e-3.
    for (const auto& r : rows)
      if (r.quantity.rfind("sensordata", 0) == 0)
        EXPECT_TRUE(r.ok()) << r.quantity << ": " << r.max_error << " > " << r.tolerance;
  }
}

// Zero control from qpos0 for 2 s: body 1's height against libmujoco's, float64 and float32.
TEST_P(GymModel, StandsUnderZeroControlLikeLibmujoco) {
  MjModelHandle handle(gym_model(GetParam()));
  // The reference solves with Newton too (Humanoid asks for PGS).
  mjModel* mm = mj_copyModel(nullptr, handle.get());
  mm->opt.solver = mjSOL_NEWTON;
  mjData* ref = mj_makeData(mm);
  const Model<double> m64 = import_model(mm);
  const Model<float> m32 = m64.cast<float>();
  Data<double> d64(m64, 1);
  Data<float> d32(m32, 1);
  reset_data(m64, d64);
  reset_data(m32, d32);
  const int steps = static_cast<int>(std::lround(2.0 / mm->opt.timestep));
  double worst64 = 0, worst32 = 0;
  for (int s = 0; s < steps; ++s) {
    mj_step(mm, ref);
    step(m64, d64, 1);
    step(m32, d32, 1);
    worst64 = std::max(worst64, std::abs(d64.env(m64, 0).xpos[5] - ref->xpos[5]));
    worst32 = std::max(worst32, std::abs(double(d32.env(m32, 0).xpos[5]) - ref->xpos[5]));
  }
  forward(m64, d64);
  forward(m32, d32);
  mj_forward(mm, ref);
  // A falling hopper is chaotic: solver iterations that differ by one (the stopping test on
  // rounding-level differences) grow to a fraction of a millimetre over 2 s.
  EXPECT_LT(worst64, 1e-2) << "float64 torso height";
  EXPECT_LT(worst32, 1e-2) << "float32 torso height";
  std::printf("%s: torso z after 2 s %.5f (libmujoco %.5f); worst |dz| f64 %.2e, f32 %.2e\n",
              GetParam().c_str(), d64.env(m64, 0).xpos[5], ref->xpos[5], worst64, worst32);
  mj_deleteData(ref);
  mj_deleteModel(mm);
}

INSTANTIATE_TEST_SUITE_P(Published, GymModel, ::testing::ValuesIn(kGymModels));

// float32 under random controls (re-drawn every step) for 10,000 steps stays finite.
void expect_finite_10k(const std::string& path) {
  const Model<float> m = load_mjcf(path).cast<float>();
  Data<float> d(m, 4);
  reset_data(m, d);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int s = 0; s < 10000; ++s) {
    for (int i = 0; i < 4; ++i) {
      EnvData<float> e = d.env(m, i);
      for (int k = 0; k < m.nu; ++k) {
        const float lo = m.actuator_ctrllimited[k] ? m.actuator_ctrlrange[2 * k] : -1.f;
        const float hi = m.actuator_ctrllimited[k] ? m.actuator_ctrlrange[2 * k + 1] : 1.f;
        e.ctrl[k] = lo + (hi - lo) * 0.5f * (u(rng) + 1);
      }
    }
    step(m, d, 1);
  }
  for (int i = 0; i < 4; ++i) {
    EnvData<float> e = d.env(m, i);
    for (int k = 0; k < m.nq; ++k) ASSERT_TRUE(std::isfinite(e.qpos[k])) << path;
    for (int k = 0; k < m.nv; ++k) ASSERT_TRUE(std::isfinite(e.qvel[k])) << path;
  }
}

TEST_P(GymModel, Float32Finite10kStepsUnderRandomControls) {
  expect_finite_10k(gym_model(GetParam()));
}

// How much of env i's `name` field a staged step must leave as the fused one does: none of the
// solver's scratch (the staged step's group solve keeps other intermediates there,
// physics/constraint/solve_group.h) or of the staged collision's per-pair counts, and of the
// contact list the ncon contacts (past them the pairs' slots: physics/launch.h).
template <class T>
int64_t outputs_of(const char* name, int64_t size, Data<T>& d, const Model<T>& m, int i) {
  if (std::strcmp(name, "solver_scratch") == 0 || std::strcmp(name, "pair_ncon") == 0) return 0;
  if (std::strcmp(name, "contact") == 0)
    return static_cast<int64_t>(d.field(m, "ncon")[i]) *
           static_cast<int64_t>(sizeof(collision::Contact<T>) / sizeof(T));
  return size;
}

// The staged step (physics/launch.h, CUDA's shape) against the fused one on the CPU: every field
// of every env, state and internals, bitwise equal after 60 steps from noisy states under random
// controls (RK4 for Humanoid, Euler with implicit damping for the others).
template <class T>
void expect_staged_equals_fused(const std::string& path) {
  const Model<T> m = load_mjcf(path).template cast<T>();
  constexpr int kEnvs = 5;
  Data<T> fused(m, kEnvs), staged(m, kEnvs);
  reset_data(m, fused);
  reset_data(m, staged);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  auto perturb = [&](bool state) {
    for (int i = 0; i < kEnvs; ++i) {
      EnvData<T> a = fused.env(m, i), b = staged.env(m, i);
      if (state) {
        for (int k = 0; k < m.nq; ++k) a.qpos[k] = b.qpos[k] = a.qpos[k] + T(0.1 * u(rng));
        for (int k = 0; k < m.nv; ++k) a.qvel[k] = b.qvel[k] = T(0.5 * u(rng));
      }
      for (int k = 0; k < m.nu; ++k) a.ctrl[k] = b.ctrl[k] = T(u(rng));
    }
  };
  perturb(true);
  for (int s = 0; s < 60; ++s) {
    if (s % 10 == 0) perturb(false);
    step(m, fused, 1);
    step_staged(m, staged, 1);
  }
  EnvData<T> probe{};
  for_each_field(probe, m, [&](const char* name, T*&, int64_t size) {
    for (int i = 0; i < kEnvs; ++i) {
      const T* a = fused.field(m, name) + i * size;
      const T* b = staged.field(m, name) + i * size;
      const size_t bytes = static_cast<size_t>(outputs_of(name, size, fused, m, i)) * sizeof(T);
      EXPECT_EQ(std::memcmp(a, b, bytes), 0) << path << ": env " << i << ", field " << name;
    }
  });
  EXPECT_GT(fused.field(m, "time")[0], T(0));
}

TEST_P(GymModel, StagedStepGivesTheFusedBits) {
  expect_staged_equals_fused<double>(gym_model(GetParam()));
  expect_staged_equals_fused<float>(gym_model(GetParam()));
}

// The shipped models with what the Gymnasium ones lack: implicitfast (the staged step's own
// integrator kernel), elliptic cones, rolling friction, frictionloss, every sensor type.
// Between them they have every kernel the staged launch can run: each collision group, each
// sensor part, implicitfast's free bodies.
TEST(ShippedModels, StagedStepGivesTheFusedBits) {
  int primitive = 0, box_box = 0, ccd = 0, hfield = 0, acc = 0, rangefinder = 0, touch = 0,
      free_bodies = 0;
  for (const char* name : {"implicitfast", "elliptic", "rolling_friction", "actuators", "sensors",
                           "hfield", "convex"}) {
    expect_staged_equals_fused<double>(shipped_model(name));
    expect_staged_equals_fused<float>(shipped_model(name));
    const Model<double> m = load_mjcf(shipped_model(name));
    primitive += m.ncandidate_primitive;
    box_box += m.ncandidate_box_box;
    ccd += m.nccd_pairs - m.ncandidate_hfield;
    hfield += m.ncandidate_hfield;
    acc += m.nsensor_acc;
    rangefinder += m.nsensor_rangefinder;
    touch += m.nsensor_touch;
    free_bodies += m.integrator == kImplicitFast ? m.nbody_implicit_free : 0;
  }
  for (int count : {primitive, box_box, ccd, hfield, acc, rangefinder, touch, free_bodies})
    EXPECT_GT(count, 0);
}

// The staged collision's layout (physics/import.cc): each candidate's slot starts where the
// earlier candidates' raw contacts end, the slots fill the contact list exactly, and the grouped
// list holds every candidate once, group by group (primitive, box-box, GJK/EPA between geoms, the
// height field's, then the pairs without contacts), each group in candidate order.
TEST(ShippedModels, StagedCollisionSlotsAndGroups) {
  for (const char* name : {"implicitfast", "elliptic", "rolling_friction", "hfield", "convex",
                           "ant_contacts", "quadruped"}) {
    SCOPED_TRACE(name);
    const Model<double> m = load_mjcf(shipped_model(name));
    auto type_of = [&](int i, int k) { return m.geom_type[m.candidate_pairs[3 * i + k]]; };
    int at = 0;
    for (int i = 0; i < m.ncandidate; ++i) {
      EXPECT_EQ(m.candidate_slot[i], at) << "candidate " << i;
      at += collision::max_pair_raw_contacts(type_of(i, 0), type_of(i, 1));
    }
    EXPECT_EQ(at, m.ncon_max + m.ncon_scratch);
    const int ends[] = {
        m.ncandidate_primitive, m.ncandidate_primitive + m.ncandidate_box_box,
        m.ncandidate_primitive + m.ncandidate_box_box + m.nccd_pairs - m.ncandidate_hfield,
        m.ncandidate_primitive + m.ncandidate_box_box + m.nccd_pairs};
    const int groups[] = {collision::kPairsPrimitive, collision::kPairsBoxBox, collision::kPairsCcd,
                          collision::kPairsHfield};
    std::vector<int> seen(m.ncandidate, 0);
    ASSERT_EQ(static_cast<int>(m.candidate_grouped.size()), m.ncandidate);
    for (int k = 0; k < m.ncandidate; ++k) {
      const int i = m.candidate_grouped[k];
      ASSERT_TRUE(i >= 0 && i < m.ncandidate);
      ++seen[i];
      int g = 0;
      while (g < 4 && k >= ends[g]) ++g;
      EXPECT_EQ(collision::pair_group(type_of(i, 0), type_of(i, 1)), g < 4 ? groups[g] : -1)
          << "grouped entry " << k;
      const bool group_start = k == 0 || (g > 0 && k == ends[g - 1]);
      if (g < 4 && !group_start) EXPECT_LT(m.candidate_grouped[k - 1], i) << "grouped entry " << k;
    }
    for (int i = 0; i < m.ncandidate; ++i) EXPECT_EQ(seen[i], 1) << "candidate " << i;
  }
}

// The staged forward pass masked to some envs (the staged auto-reset's): those envs get
// forward()'s bits, the others keep every field as it was.
template <class T>
void expect_masked_forward(const std::string& path) {
  const Model<T> m = load_mjcf(path).template cast<T>();
  constexpr int kEnvs = 6;
  Data<T> full(m, kEnvs), masked(m, kEnvs), before(m, kEnvs);
  for (Data<T>* d : {&full, &masked}) reset_data(m, *d);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < kEnvs; ++i) {
    EnvData<T> a = full.env(m, i), b = masked.env(m, i);
    for (int k = 0; k < m.nq; ++k) a.qpos[k] = b.qpos[k] = a.qpos[k] + T(0.1 * u(rng));
    for (int k = 0; k < m.nv; ++k) a.qvel[k] = b.qvel[k] = T(0.5 * u(rng));
  }
  step(m, full, 2);  // internals that are not zero, for "untouched" to mean something
  step(m, masked, 2);
  before = masked;
  const uint8_t terminated[kEnvs] = {0, 1, 0, 0, 0, 1}, truncated[kEnvs] = {0, 0, 0, 1, 0, 0};
  forward(m, full);
  forward_staged(m, masked, terminated, truncated);
  EnvData<T> probe{};
  for_each_field(probe, m, [&](const char* name, T*&, int64_t size) {
    for (int i = 0; i < kEnvs; ++i) {
      const bool kept = terminated[i] || truncated[i];
      Data<T>& want_data = kept ? full : before;
      const T* want = want_data.field(m, name) + i * size;
      const T* got = masked.field(m, name) + i * size;
      // A masked-out env keeps every field as it was, scratch included.
      const int64_t n = kept ? outputs_of(name, size, want_data, m, i) : size;
      EXPECT_EQ(std::memcmp(want, got, static_cast<size_t>(n) * sizeof(T)), 0)
          << path << ": env " << i << (kept ? " (masked in)" : " (masked out)") << ", field "
          << name;
    }
  });
}

TEST_P(GymModel, MaskedStagedForwardTouchesOnlyItsEnvs) {
  expect_masked_forward<double>(gym_model(GetParam()));
  expect_masked_forward<float>(gym_model(GetParam()));
}

TEST(ShippedModels, Float32Finite10kStepsUnderRandomControls) {
  for (const char* name : {"pendulum", "cartpole", "double_pendulum", "hopper_chain", "free_body",
                           "quadruped", "ant_smooth", "ant_contacts", "rolling_friction",
                           "actuators", "sensors", "hfield", "convex"})
    expect_finite_10k(shipped_model(name));
}

// The documented rule: a NaN, infinite or huge control zeroes that env's controls for the step,
// so the step equals a zero-control step and stays finite; other envs are untouched.
TEST_P(GymModel, NonFiniteControlIsZeroedForThatEnv) {
  const Model<double> m = load_mjcf(gym_model(GetParam()));
  if (m.nu == 0) GTEST_SKIP() << "no actuators";
  Data<double> d(m, 3);
  reset_data(m, d);
  step(m, d, 50);
  const double bad[3] = {std::nan(""), INFINITY, 0.0};
  for (int i = 0; i < 3; ++i) {
    EnvData<double> e = d.env(m, i);
    for (int k = 0; k < m.nu; ++k) e.ctrl[k] = k == 0 ? bad[i] : 0.3;
    if (i == 2)
      for (int k = 0; k < m.nu; ++k) e.ctrl[k] = 0;
  }
  step(m, d, 20);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < m.nq; ++k) {
      ASSERT_TRUE(std::isfinite(d.env(m, i).qpos[k]));
      EXPECT_EQ(d.env(m, i).qpos[k], d.env(m, 2).qpos[k]) << "env " << i << " qpos " << k;
    }
}

// The file a test's MJCF string goes to: one per test, since ctest runs tests side by side.
std::string case_path() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "/reference_" + info->test_suite_name() + "_" + info->name() +
         ".xml";
}

// An MJCF string through a temporary file.
Model<double> from_string(const std::string& xml) {
  const std::string path = case_path();
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(xml.c_str(), f);
  std::fclose(f);
  return load_mjcf(path);
}

const collision::Contact<double>& first_contact(EnvData<double>& e) {
  return *reinterpret_cast<const collision::Contact<double>*>(e.contact);
}

double resting_sphere_dist(const char* friction) {
  const Model<double> m = from_string(
      std::string("<mujoco><worldbody><geom type='plane' size='5 5 .1' friction='") + friction +
      "'/><body pos='0 0 0.1'><freejoint/><geom type='sphere' size='0.1' mass='1' friction='" +
      friction + "'/></body></worldbody></mujoco>");
  Data<double> d(m, 1);
  reset_data(m, d);
  step(m, d, 2000);
  forward(m, d);
  EnvData<double> e = d.env(m, 0);
  EXPECT_EQ(e.ncon[0], 1);
  return first_contact(e).dist;
}

// Notes' reference values (libmujoco 2.2.2, default options): a sphere of radius 0.1 and mass 1
// rests at dist -3.672e-4 with mu = 1, and at -6.79e-5 with mu = 0.5 (pyramidal: the normal
// stiffness depends on mu).
TEST(ReferenceValues, SphereRestDistance) {
  EXPECT_NEAR(resting_sphere_dist("1 0.005 0.0001"), -3.672e-4, 2e-7);
  EXPECT_NEAR(resting_sphere_dist("0.5 0.005 0.0001"), -6.79e-5, 2e-7);
}

// A box of half-size 0.1 on a plane (mu = 0.5) sliding from 2 m/s stops after 0.40605 m.
TEST(ReferenceValues, SlidingBoxStoppingDistance) {
  const Model<double> m = from_string(
      "<mujoco><worldbody><geom type='plane' size='5 5 .1' friction='0.5'/><body pos='0 0 0.1'>"
      "<freejoint/><geom type='box' size='0.1 0.1 0.1' mass='1' friction='0.5'/></body>"
      "</worldbody></mujoco>");
  Data<double> d(m, 1);
  reset_data(m, d);
  step(m, d, 500);  // settle
  EnvData<double> e = d.env(m, 0);
  const double x0 = e.qpos[0];
  e.qvel[0] = 2;
  step(m, d, 1500);
  EXPECT_NEAR(e.qpos[0] - x0, 0.40605, 5e-5);
  EXPECT_LT(std::abs(e.qvel[0]), 1e-6);
}

// A pendulum resting on its hinge limit (range +-30 deg, margin 0.01): the limit row is active
// with J = -1 and its force holds the pendulum, as in libmujoco.
TEST(ReferenceValues, HingeRestingOnItsLimit) {
  const std::string xml =
      "<mujoco><worldbody><body><joint name='hinge' type='hinge' axis='0 1 0' limited='true' "
      "range='-30 30' margin='0.01'/><geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.05' "
      "mass='1' contype='0' conaffinity='0'/></body></worldbody></mujoco>";
  const Model<double> m = from_string(xml);
  Data<double> d(m, 1);
  reset_data(m, d);
  step(m, d, 2000);
  forward(m, d);
  EnvData<double> e = d.env(m, 0);
  ASSERT_EQ(e.nefc[0], 1);
  EXPECT_EQ(e.efc_J[0], -1);  // the upper limit: gravity turns +y rotations down
  MjModelHandle handle(case_path());
  mjData* ref = mj_makeData(handle.get());
  for (int s = 0; s < 2000; ++s) mj_step(handle.get(), ref);
  mj_forward(handle.get(), ref);
  ASSERT_EQ(ref->nefc, 1);
  EXPECT_NEAR(e.efc_pos[0], ref->efc_pos[0], 1e-9);
  EXPECT_NEAR(e.efc_force[0], ref->efc_force[0], 1e-9);
  EXPECT_GT(e.efc_force[0], 0);
  EXPECT_LT(e.efc_pos[0], 0.01);
  std::printf("hinge limit at rest: dist %.5f, force %.4f\n", e.efc_pos[0], e.efc_force[0]);
  mj_deleteData(ref);
}

}  // namespace
}  // namespace myriad::physics
