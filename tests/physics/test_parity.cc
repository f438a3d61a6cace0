// Myriad's engine against libmujoco 2.2.2 on the shipped models (contacts and limits off):
// kinematics and qacc from random states (float64 and float32), trajectories in float64.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <string>

#include "myriad/physics/check.h"
#include "myriad/physics/import.h"
#include "physics/collision/filter.h"
#include "physics/model_view.h"
#include "physics/mujoco_compat.h"

namespace myriad::physics {
namespace {

std::string model_path(const std::string& name) {
  const char* src = std::getenv("MYRIAD_SOURCE_DIR");
  return std::string(src ? src : MYRIAD_SOURCE_DIR_DEFAULT) + "/physics/models/" + name + ".xml";
}

void expect_all_ok(const std::vector<CheckRow>& rows) {
  for (const auto& r : rows) {
    EXPECT_TRUE(r.ok()) << r.quantity << ": " << r.max_error << " > " << r.tolerance;
    // Every float64 trajectory is judged: libmujoco agrees with itself at this length.
    if (r.quantity.rfind("trajectory", 0) == 0)
      EXPECT_TRUE(std::isfinite(r.tolerance)) << r.quantity << ": " << r.detail;
  }
}

class Parity : public ::testing::TestWithParam<std::string> {};

TEST_P(Parity, Float64KinematicsQaccAnd200Steps) {
  CheckOptions o;
  o.steps = 200;
  expect_all_ok(check_against_mujoco(model_path(GetParam()), o));
}

TEST_P(Parity, Float32Qacc) {
  CheckOptions o;
  o.float32 = true;
  o.steps = 20;
  const auto rows = check_against_mujoco(model_path(GetParam()), o);
  for (const auto& r : rows)
    if (r.quantity == "qacc" || r.quantity == "xpos")
      EXPECT_TRUE(r.ok()) << r.quantity << " " << r.max_error;
}

// Every array of the imported model (and of its float cast) has its listed shape, and the
// collision view built from ModelView holds mjModel's collision fields unchanged.
TEST_P(Parity, ImportFollowsTheFieldLists) {
  MjModelHandle handle(model_path(GetParam()));
  const mjModel* mj = handle.get();
  const Model<double> m = import_model(mj);
  const Model<float> mf = m.cast<float>();
  for_each_array_shape(m, [](const char* name, const auto& array, int64_t size) {
    EXPECT_EQ(static_cast<int64_t>(array.size()), size) << name;
  });
  for_each_array_shape(mf, [](const char* name, const auto& array, int64_t size) {
    EXPECT_EQ(static_cast<int64_t>(array.size()), size) << name;
  });
  const auto c = collision::collision_model<double>(view_of(m));
#define MYRIAD_FROM_copy(name) mj->name
#define MYRIAD_FROM_opt(name) mj->opt.name
#define MYRIAD_FROM_custom(name) custom_##name
  constexpr int custom_collision = 0;  // MuJoCo 3 merges explicit and dynamic pairs
#define MYRIAD_X(name, init, from) EXPECT_EQ(c.name, MYRIAD_FROM_##from(name)) << #name;
  MYRIAD_COLLISION_INT_SCALARS(MYRIAD_X)
  MYRIAD_COLLISION_REAL_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, length, from) \
  for (int k = 0; k < (length); ++k) EXPECT_EQ(c.name[k], MYRIAD_FROM_##from(name)[k]) << #name;
  MYRIAD_COLLISION_REAL_VECTORS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from)                 \
  for (int64_t k = 0; k < int64_t{c.rows} * (cols); ++k) \
    EXPECT_EQ(c.name[k], MYRIAD_FROM_##from(name)[k]) << #name << "[" << k << "]";
  MYRIAD_COLLISION_INT_ARRAYS(MYRIAD_X)
  MYRIAD_COLLISION_REAL_ARRAYS(MYRIAD_X)
  MYRIAD_COLLISION_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#undef MYRIAD_FROM_copy
#undef MYRIAD_FROM_opt
}

INSTANTIATE_TEST_SUITE_P(Models, Parity,
                         ::testing::Values("pendulum", "double_pendulum", "cartpole",
                                           "hopper_chain", "free_body", "quadruped",
                                           "ant_contacts"));

// 1,000 steps on the models whose libmujoco trajectories stay within 1e-3 of themselves under
// one-ulp nudges that long (hopper_chain and ant_contacts do not: libmujoco diverges from itself
// by 6e2 and 1e-1, so their trajectories cannot be judged there; they are held to 200 steps).
class LongParity : public ::testing::TestWithParam<std::string> {};

TEST_P(LongParity, Float64Trajectories1000Steps) {
  CheckOptions o;
  o.steps = 1000;
  o.samples = 2;
  expect_all_ok(check_against_mujoco(model_path(GetParam()), o));
}

INSTANTIATE_TEST_SUITE_P(Models, LongParity,
                         ::testing::Values("pendulum", "cartpole", "free_body", "quadruped"));

// Loads an MJCF string through a temporary file; returns the import error ("" when it loads).
std::string import_error(const std::string& xml) {
  const std::string path = ::testing::TempDir() + "/import_case.xml";
  FILE* f = fopen(path.c_str(), "w");
  fputs(xml.c_str(), f);
  fclose(f);
  try {
    load_mjcf(path);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

TEST(Import, UnsupportedFeaturesAreRefusedByName) {
  const std::string floor = "<geom name='floor' type='plane' size='1 1 .1'/>";
  struct Case {
    std::string xml, expect1, expect2;
  };
  const Case cases[] = {
      {"<mujoco><worldbody><body><joint name='shoulder' type='ball' limited='true' range='0 1'/>"
       "<geom size='0.1' contype='0' conaffinity='0'/></body></worldbody></mujoco>",
       "ball joint limits", "shoulder"},
      {"<mujoco><option cone='elliptic'/><worldbody>" + floor +
           "<body><freejoint/><geom size='0.1'/></body></worldbody></mujoco>",
       "elliptic", "pyramidal"},
      {"<mujoco><option integrator='implicitfast'/><worldbody>" + floor +
           "<body><freejoint/><geom size='0.1'/></body></worldbody></mujoco>",
       "implicitfast", "Euler or RK4"},
      {"<mujoco><worldbody>" + floor +
           "<body name='lifted' gravcomp='1'><freejoint/><geom size='0.1'/></body></worldbody>"
           "</mujoco>",
       "gravity compensation", "gravcomp"},
      {"<mujoco><worldbody><body><joint name='j' type='hinge'/><geom size='0.1'/></body>"
       "</worldbody><tendon><fixed name='sum' actuatorfrclimited='true' actuatorfrcrange='-1 1'>"
       "<joint joint='j' "
       "coef='1'/></fixed></tendon></mujoco>",
       "tendon actuatorfrcrange", "sum"},

      {"<mujoco><worldbody>" + floor +
           "<body><freejoint/><geom name='can' type='cylinder' size='0.1 0.2'/></body>"
           "</worldbody></mujoco>",
       "cylinder collisions", "can"},
      {"<mujoco><worldbody>" + floor +
           "<body><freejoint/><geom size='0.1'/><site name='pad' size='0.1'/></body></worldbody>"
           "<sensor><touch name='feel' site='pad'/></sensor></mujoco>",
       "touch sensors", "feel"},
      {"<mujoco><worldbody>" + floor +
           "<body><freejoint/><geom size='0.1'/><site name='imu'/></body></worldbody>"
           "<sensor><gyro name='late' site='imu' delay='0.01' nsample='4'/></sensor></mujoco>",
       "delayed", "late"},
      {"<mujoco><worldbody>" + floor +
           "<body><freejoint/><geom size='0.1'/><camera name='eye'/></body></worldbody>"
           "<sensor><framepos name='where' objtype='camera' objname='eye'/></sensor></mujoco>",
       "camera", "where"},
  };
  for (const Case& c : cases) {
    const std::string error = import_error(c.xml);
    EXPECT_NE(error.find(c.expect1), std::string::npos) << error << "\n" << c.xml;
    EXPECT_NE(error.find(c.expect2), std::string::npos) << error << "\n" << c.xml;
  }
  // Limits, friction loss and supported contacts (condim 1, 3, 4, 6) load; a cylinder that cannot
  // collide loads too.
  EXPECT_EQ(import_error("<mujoco><worldbody>" + floor +
                         "<body><joint name='knee' type='hinge' limited='true' range='-1 1' "
                         "frictionloss='0.1'/><geom size='0.1'/><geom type='cylinder' "
                         "size='0.1 0.1' contype='0' conaffinity='0'/></body></worldbody>"
                         "</mujoco>"),
            "");
  for (const char* condim : {"1", "3", "4", "6"})
    EXPECT_EQ(import_error("<mujoco><worldbody>" + floor +
                           "<body pos='0 0 0.1'><freejoint/><geom size='0.1' condim='" + condim +
                           "'/></body></worldbody></mujoco>"),
              "")
        << "condim " << condim;
  EXPECT_THROW(load_mjcf(::testing::TempDir() + "/does_not_exist.xml"), std::invalid_argument);
}

}  // namespace
}  // namespace myriad::physics
