// Myriad's engine against libmujoco 2.2.2 on the shipped models (contacts and limits off):
// kinematics and qacc from random states (float64 and float32), trajectories in float64.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <string>

#include "myriad/physics/check.h"
#include "myriad/physics/import.h"
#include "physics/collision/filter.h"
#include "physics/model_view.h"

namespace myriad::physics {
namespace {

std::string model_path(const std::string& name) {
  const char* src = std::getenv("MYRIAD_SOURCE_DIR");
  return std::string(src ? src : MYRIAD_SOURCE_DIR_DEFAULT) + "/physics/models/" + name + ".xml";
}

void expect_all_ok(const std::vector<CheckRow>& rows) {
  for (const auto& r : rows)
    EXPECT_TRUE(r.ok()) << r.quantity << ": " << r.max_error << " > " << r.tolerance;
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
                                           "hopper_chain", "free_body", "quadruped"));

// The non-chaotic models hold 1e-6 for 1,000 steps (the quadruped's tumbling amplifies
// last-bit differences exponentially; it is held to the 200 steps above).
class LongParity : public ::testing::TestWithParam<std::string> {};

TEST_P(LongParity, Float64Trajectories1000Steps) {
  CheckOptions o;
  o.steps = 1000;
  o.samples = 2;
  expect_all_ok(check_against_mujoco(model_path(GetParam()), o));
}

INSTANTIATE_TEST_SUITE_P(Models, LongParity,
                         ::testing::Values("pendulum", "cartpole", "hopper_chain", "free_body"));

TEST(Import, UnsupportedFeaturesAreRefusedByName) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/limited.xml";
  FILE* f = fopen(path.c_str(), "w");
  fputs(
      "<mujoco><worldbody><body><joint name='knee' type='hinge' limited='true' range='-1 1'/>"
      "<geom size='0.1' contype='0' conaffinity='0'/></body></worldbody></mujoco>",
      f);
  fclose(f);
  try {
    load_mjcf(path);
    FAIL() << "a limited joint must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("joint limits"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("knee"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_mjcf(dir + "/does_not_exist.xml"), std::invalid_argument);
}

}  // namespace
}  // namespace myriad::physics
