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
  const std::string bumps =
      "<asset><hfield name='bumps' nrow='3' ncol='3' size='1 1 0.1 0.1'/></asset>";
  const std::string tet =
      "<asset><mesh name='tet' vertex='0 0 0  0.1 0 0  0 0.1 0  0 0 0.1'/></asset>";
  struct Case {
    std::string xml, expect1, expect2;
  };
  const Case cases[] = {
      {"<mujoco><worldbody><body><joint name='shoulder' type='ball' limited='true' range='0 1'/>"
       "<geom size='0.1' contype='0' conaffinity='0'/></body></worldbody></mujoco>",
       "ball joint limits", "shoulder"},
      {"<mujoco><option integrator='implicit'/><worldbody>" + floor +
           "<body><freejoint/><geom size='0.1'/></body></worldbody></mujoco>",
       "implicit integrator", "implicitfast"},
      {"<mujoco><option cone='elliptic'/><worldbody>" + floor +
           "<body name='b'><freejoint/><geom name='ball' size='0.1'/></body></worldbody>"
           "<contact><pair geom1='floor' geom2='ball' solreffriction='0.02 1'/></contact>"
           "</mujoco>",
       "solreffriction on an elliptic cone", "pair 0"},
      {"<mujoco><worldbody><body><joint name='hip' type='hinge' damping='0.1 0.2 0'/>"
       "<geom size='0.1'/></body></worldbody></mujoco>",
       "polynomial joint damping", "hip"},
      {"<mujoco><worldbody><body><joint name='j' type='hinge'/><geom size='0.1'/></body>"
       "</worldbody><actuator><motor name='m' joint='j' damping='0.5'/></actuator></mujoco>",
       "actuator damping", "m"},
      {"<mujoco><worldbody><body><joint name='j' type='hinge'/><geom size='0.1'/></body>"
       "</worldbody><actuator><motor name='m' joint='j' armature='0.5'/></actuator></mujoco>",
       "actuator armature", "m"},
      {"<mujoco><worldbody>" + floor +
           "<body name='lifted' gravcomp='1'><freejoint/><geom size='0.1'/></body></worldbody>"
           "</mujoco>",
       "gravity compensation", "gravcomp"},
      {"<mujoco><worldbody><body><joint name='j' type='hinge'/><geom size='0.1'/></body>"
       "</worldbody><tendon><fixed name='sum' actuatorfrclimited='true' actuatorfrcrange='-1 1'>"
       "<joint joint='j' "
       "coef='1'/></fixed></tendon></mujoco>",
       "tendon actuatorfrcrange", "sum"},

      {"<mujoco>" + tet + "<worldbody>" + floor +
           "<body><freejoint/><geom name='rock' type='mesh' mesh='tet'/></body>"
           "</worldbody></mujoco>",
       "mesh collisions", "rock"},
      {"<mujoco>" + bumps + tet +
           "<worldbody><geom name='ground' type='hfield' hfield='bumps'/><body><freejoint/>"
           "<geom name='rock' type='mesh' mesh='tet'/></body></worldbody></mujoco>",
       "mesh collisions", "with height field 'ground'"},
      {"<mujoco><option ccd_iterations='80'/>" + bumps +
           "<worldbody><geom type='hfield' hfield='bumps'/><body><freejoint/>"
           "<geom size='0.1'/></body></worldbody></mujoco>",
       "ccd_iterations 80", "GJK/EPA"},
      {"<mujoco><option ccd_iterations='80'/><worldbody>" + floor +
           "<body><freejoint/><geom name='can' type='cylinder' size='0.1 0.2'/></body>"
           "<body pos='0 0 1'><freejoint/><geom name='egg' type='ellipsoid' size='.1 .1 .2'/>"
           "</body></worldbody></mujoco>",
       "ccd_iterations 80", "GJK/EPA collisions (geoms"},
      {"<mujoco><option><flag nativeccd='disable'/></option>" + bumps +
           "<worldbody><geom type='hfield' hfield='bumps'/><body><freejoint/>"
           "<geom size='0.1'/></body></worldbody></mujoco>",
       "nativeccd", "MPR"},
      {"<mujoco><worldbody>" + floor +
           "<body><freejoint/><geom name='ball' size='0.1'/></body></worldbody>"
           "<sensor><distance name='gap' geom1='ball' geom2='floor'/></sensor></mujoco>",
       "distance sensors", "gap"},
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
  // A height field with a sphere, capsule and box loads.
  EXPECT_EQ(import_error("<mujoco>" + bumps +
                         "<worldbody><geom type='hfield' hfield='bumps'/><body><freejoint/>"
                         "<geom size='0.1'/><geom type='capsule' size='0.1 0.2'/><geom "
                         "type='box' size='0.1 0.1 0.1'/></body></worldbody></mujoco>"),
            "");
  // Limits, friction loss and supported contacts (condim 1, 3, 4, 6) load; a cylinder that cannot
  // collide loads too.
  EXPECT_EQ(import_error("<mujoco><worldbody>" + floor +
                         "<body><joint name='knee' type='hinge' limited='true' range='-1 1' "
                         "frictionloss='0.1'/><geom size='0.1'/><geom type='cylinder' "
                         "size='0.1 0.1' contype='0' conaffinity='0'/></body></worldbody>"
                         "</mujoco>"),
            "");
  for (const char* cone : {"pyramidal", "elliptic"})
    for (const char* condim : {"1", "3", "4", "6"})
      EXPECT_EQ(import_error(std::string("<mujoco><option cone='") + cone +
                             "' integrator='implicitfast'/><worldbody>" + floor +
                             "<body pos='0 0 0.1'><freejoint/><geom size='0.1' condim='" + condim +
                             "'/></body></worldbody></mujoco>"),
                "")
          << "condim " << condim << " " << cone;
  EXPECT_THROW(load_mjcf(::testing::TempDir() + "/does_not_exist.xml"), std::invalid_argument);
}

// Scene files (physics/scene_edits.h): "mjlab:" paths resolve in the mjlab package, custom
// numerics named "myriad:<joint|geom> <attribute> <pattern>" edit the included or attached
// robot; a malformed edit, a pattern that matches nothing, a missing package file, an unknown
// keyframe are errors naming what was wrong.
TEST(Import, SceneEditsPackagePathsAndKeyframes) {
  const std::string robot = ::testing::TempDir() + "/edit_robot.xml";
  FILE* f = fopen(robot.c_str(), "w");
  fputs(
      "<mujoco><worldbody><body name='base'><joint name='hip_joint' type='hinge'/>"
      "<geom name='foot_collision' size='0.1'/></body></worldbody></mujoco>",
      f);
  fclose(f);
  const auto scene = [&](const std::string& custom) {
    return "<mujoco><asset><model name='r' file='" + robot +
           "'/></asset><worldbody><attach model='r' body='base' prefix=''/></worldbody>"
           "<custom>" +
           custom +
           "</custom><keyframe><key name='home' qpos='0.5'/><key qpos='-0.5'/></keyframe>"
           "</mujoco>";
  };
  const std::string path = ::testing::TempDir() + "/edit_scene.xml";
  const auto load = [&](const std::string& xml) {
    FILE* g = fopen(path.c_str(), "w");
    fputs(xml.c_str(), g);
    fclose(g);
    return load_mjcf(path);
  };
  const Model<double> m =
      load(scene("<numeric name='myriad:joint armature .*_joint' data='0.25'/>"
                 "<numeric name='myriad:geom condim foot_.*' data='6'/>"
                 "<numeric name='myriad:geom friction foot_collision' data='0.6 0.01'/>"));
  EXPECT_EQ(m.dof_armature[0], 0.25);
  EXPECT_EQ(m.geom_condim[0], 6);
  EXPECT_EQ(m.geom_friction[0], 0.6);
  EXPECT_EQ(m.geom_friction[1], 0.01);
  EXPECT_EQ(m.geom_friction[2], 0.0001);  // MuJoCo's default, untouched
  // Keyframes: the named one, an unnamed one by index, and an unknown name listing the valid.
  Model<double> k = m;
  use_keyframe(k, "home");
  EXPECT_EQ(k.qpos_init[0], 0.5);
  use_keyframe(k, "#1");
  EXPECT_EQ(k.qpos_init[0], -0.5);
  try {
    use_keyframe(k, "crouch");
    ADD_FAILURE() << "no error for an unknown keyframe";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("valid: home, #1"), std::string::npos) << e.what();
  }
  const struct {
    std::string custom, expect;
  } bad[] = {
      {"<numeric name='myriad:joint stiffnes .*' data='1'/>", "(valid: armature, damping"},
      {"<numeric name='myriad:body mass base' data='1'/>", "element 'body'"},
      {"<numeric name='myriad:geom condim nothing_.*' data='3'/>", "no geom name matches"},
      {"<numeric name='myriad:geom solref foot_collision' data='0.02'/>", "1 values, expected 2"},
      {"<numeric name='myriad:geom condim foot_collision' data='3.5'/>", "not an integer"},
      {"<numeric name='myriad:geom condim' data='3'/>", "expected \"myriad:<joint|geom>"},
  };
  for (const auto& c : bad) {
    try {
      load(scene(c.custom));
      ADD_FAILURE() << "no error for " << c.custom;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("edit_scene.xml"), std::string::npos) << e.what();
    }
  }
  // "mjlab:" paths: a file the package lacks is named; without the package, how to get it.
  try {
    load(
        "<mujoco><asset><model name='r' file='mjlab:asset_zoo/no_such_robot.xml'/></asset>"
        "</mujoco>");
    ADD_FAILURE() << "no error for a missing package file";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_robot.xml"), std::string::npos) << e.what();
  }
  setenv("MYRIAD_MJLAB_DIR", "/nonexistent/mjlab", 1);
  try {
    load("<mujoco><asset><model name='r' file='mjlab:asset_zoo/robot.xml'/></asset></mujoco>");
    ADD_FAILURE() << "no error without the package";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("pip install mjlab"), std::string::npos) << e.what();
  }
  unsetenv("MYRIAD_MJLAB_DIR");
}

}  // namespace
}  // namespace myriad::physics
