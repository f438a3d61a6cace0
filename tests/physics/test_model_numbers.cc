// The model-number check (physics/model_numbers.h): a good model with every element kind passes;
// every row of the table, made non-finite or out of its bound in a copy of that model, is refused
// naming the element and the attribute; the issue's MJCF cases are refused when compiled; every
// model the project ships still passes.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <stdexcept>
#include <string>

#include "myriad/physics/import.h"
#include "physics/model_numbers.h"
#include "physics/mujoco_batch.h"

namespace myriad::physics {
namespace {

// One of each element kind the table names (option, body, joint, dof, qpos, geom, site, pair,
// equality, tendon, actuator).
const char* kGood = R"(
<mujoco model="numbers">
  <option timestep="0.01" gravity="0 0 -9.81"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="torso" pos="0 0 1">
      <freejoint name="root"/>
      <geom name="chest" type="sphere" size="0.1" mass="1"/>
      <site name="tip" pos="0 0 0.1" size="0.01"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="shoulder" type="hinge" axis="0 1 0" limited="true" range="-1 1"
               damping="0.1" armature="0.01" stiffness="1" frictionloss="0.01"/>
        <geom name="upper" type="capsule" fromto="0 0 0 0.3 0 0" size="0.05"/>
        <body name="hand" pos="0.3 0 0">
          <joint name="wrist" type="slide" axis="1 0 0"/>
          <geom type="box" size="0.05 0.05 0.05"/>
        </body>
      </body>
    </body>
  </worldbody>
  <contact><pair geom1="floor" geom2="chest"/></contact>
  <equality><connect name="hold" body1="torso" body2="hand" anchor="0 0 0" active="false"/></equality>
  <tendon>
    <fixed name="sum"><joint joint="shoulder" coef="1"/><joint joint="wrist" coef="1"/></fixed>
  </tendon>
  <actuator><motor name="m" joint="shoulder" gear="2" ctrllimited="true" ctrlrange="-1 1"/></actuator>
</mujoco>
)";

std::string with(const std::string& from, const std::string& to) {
  std::string s = kGood;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

// The refusal's message for MJCF text, or "" when it loads.
std::string refusal(const std::string& xml) {
  try {
    MjModelHandle handle("numbers.xml", xml);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

const char* element_word(NumberElement e) {
  switch (e) {
    case NumberElement::kOption:
      return "option: ";
    case NumberElement::kBody:
      return "body ";
    case NumberElement::kJoint:
    case NumberElement::kDof:
    case NumberElement::kQpos:
      return "joint ";
    case NumberElement::kGeom:
      return "geom ";
    case NumberElement::kSite:
      return "site ";
    case NumberElement::kPair:
      return "contact pair ";
    case NumberElement::kEquality:
      return "equality ";
    case NumberElement::kTendon:
      return "tendon ";
    case NumberElement::kActuator:
      return "actuator ";
  }
  return "?";
}

bool has_lower_bound(NumberRule r) {
  return r == NumberRule::kSize || r == NumberRule::kMass || r == NumberRule::kInertia ||
         r == NumberRule::kCoefficient || r == NumberRule::kTimestep;
}

TEST(ModelNumbers, AGoodModelWithEveryElementKindPasses) {
  MjModelHandle handle("numbers.xml", kGood);
  const mjModel* m = handle.get();
  EXPECT_NO_THROW(check_model_numbers(m));
  int count = 0;
  const NumberField* fields = number_fields(&count);
  for (int i = 0; i < count; ++i) EXPECT_GT(fields[i].rows(m), 0) << fields[i].array;
}

// Every row: its last element's first value made NaN, +inf, 1e300 and (where the rule has a
// lower bound of 0) -1, in a copy of the good model; each is refused naming element and attribute.
TEST(ModelNumbers, EveryTableRowIsCheckedAndNamed) {
  MjModelHandle handle("numbers.xml", kGood);
  int count = 0;
  const NumberField* fields = number_fields(&count);
  ASSERT_GT(count, 60);
  const double inf = std::numeric_limits<double>::infinity();
  for (int i = 0; i < count; ++i) {
    const NumberField& f = fields[i];
    std::vector<double> bad = {std::nan(""), inf, 1e300};
    if (has_lower_bound(f.rule)) bad.push_back(-1);
    for (double x : bad) {
      mjModel* m = mj_copyModel(nullptr, handle.get());
      const int row = f.rows(m) - 1;
      f.values(m)[row * f.width] = x;
      std::string what;
      try {
        check_model_numbers(m);
      } catch (const std::invalid_argument& e) {
        what = e.what();
      }
      mj_deleteModel(m);
      SCOPED_TRACE(std::string(f.array) + " = " + std::to_string(x));
      ASSERT_FALSE(what.empty()) << "accepted";
      EXPECT_EQ(what.rfind(element_word(f.element), 0), 0u) << what;
      EXPECT_NE(what.find(std::string(" ") + f.attribute + " = \""), std::string::npos) << what;
      EXPECT_NE(what.find(std::isfinite(x) ? "out of range (" : "is not finite"), std::string::npos)
          << what;
      if (std::isfinite(x))
        EXPECT_NE(what.find(number_rule_text(f.rule)), std::string::npos) << what;
    }
  }
}

// The cases of issue 34 and kin, each through libmujoco's compiler and the check. A NaN that
// libmujoco reads as absent (with a warning) is found in the text, with its line.
TEST(ModelNumbers, IssueCasesAreRefusedByElementAndAttribute) {
  struct Case {
    std::string from, to, element, attribute;
  };
  const Case cases[] = {
      {R"(name="torso" pos="0 0 1")", R"(name="torso" pos="nan 0 1")", "body 'torso' (line 6)",
       R"(: pos = "nan 0 1" is not finite)"},
      {R"(size="0.1" mass="1")", R"(size="0.1" mass="nan")", "geom 'chest' (line 8)",
       R"(: mass = "nan" is not finite)"},
      {R"(gravity="0 0 -9.81")", R"(gravity="0 0 nan")", "option (line 3)",
       R"(: gravity = "0 0 nan" is not finite)"},
      {R"(timestep="0.01")", R"(timestep="nan")", "option (line 3)",
       R"(: timestep = "nan" is not finite)"},
      {R"(timestep="0.01")", R"(timestep="-0.01")",
       "option: ", R"(timestep = "-0.01" is out of range (the timestep is 1e-6 to 1 s))"},
      {R"(timestep="0.01")", R"(timestep="5")", "option: ", "timestep = \"5\" is out of range"},
      {R"(type="sphere" size="0.1")", R"(type="sphere" size="1e308")",
       "geom 'chest' (sphere, body 'torso'): ", "size = \"1e+308 0 0\" is out of range (sizes"},
      {R"(armature="0.01")", R"(armature="1e308")",
       "joint 'shoulder' (hinge, body 'arm'): ", "armature = \"1e+308\" is out of range (inertias"},
      {R"(damping="0.1")", R"(damping="-3")",
       "joint 'shoulder' (hinge, body 'arm'): ", "damping = \"-3\" is out of range (coefficients"},
      {R"(stiffness="1")", R"(stiffness="inf")",
       "joint 'shoulder' (hinge, body 'arm'): ", "stiffness = \"inf\" is not finite"},
      {R"(gear="2")", R"(gear="1e10")", "actuator 'm': ", "gear = \"1e+10 0 0 0 0 0\""},
      {R"(ctrlrange="-1 1")", R"(ctrlrange="-1 inf")", "actuator 'm': ", "ctrlrange = \"-1 inf\""},
      {R"(<geom type="box")", R"(<geom type="box" margin="inf")",
       "geom 3 (box, body 'hand'): ", "margin = \"inf\""},
      {R"(<option timestep)", R"(<option wind="1e300 0 0" timestep)", "option: ", "wind = "},
      {R"(<option timestep)", R"(<option magnetic="0 -inf 0" timestep)", "option: ", "magnetic = "},
      {R"(range="-1 1")", R"(range="-1 nan")", "joint 'shoulder' (line 11)", ": range = "},
      {R"(<geom name="chest")", R"(<inertial pos="0 0 0" mass="1" diaginertia="nan 1 1"/>
      <geom name="chest")",
       "inertial (line 8)", R"(: diaginertia = "nan 1 1" is not finite (libmujoco: )"},
  };
  for (const Case& c : cases) {
    const std::string what = refusal(with(c.from, c.to));
    EXPECT_EQ(what.rfind("cannot load MJCF 'numbers.xml': " + c.element, 0), 0u)
        << c.to << "\n  got: " << what;
    EXPECT_NE(what.find(c.attribute), std::string::npos) << c.to << "\n  got: " << what;
  }
}

// The text scan for what libmujoco ignores: names, classes and comments are not numbers.
TEST(ModelNumbers, TheTextScanFindsOnlyNumbers) {
  EXPECT_EQ(first_nonfinite_attribute(R"(<mujoco><!-- pos="nan" --><body name="nan" pos="0 0 1"
    childclass="inf"/></mujoco>)"),
            "");
  EXPECT_EQ(first_nonfinite_attribute("<mujoco>\n<body name='b'\n  pos='1 NaN 2'/></mujoco>"),
            "body 'b' (line 2): pos = \"1 NaN 2\" is not finite");
  EXPECT_EQ(first_nonfinite_attribute(R"(<geom size="1e400"/>)"),
            "geom (line 1): size = \"1e400\" is not finite");
}

// The reference backend (physics=mujoco) runs the same check.
TEST(ModelNumbers, TheMujocoBackendRefusesToo) {
  const std::string path = ::testing::TempDir() + "/numbers_nan.xml";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    const std::string xml = with(R"(gravity="0 0 -9.81")", R"(gravity="0 0 nan")");
    std::fwrite(xml.data(), 1, xml.size(), f);
    std::fclose(f);
  }
  try {
    MujocoBatch batch(path, 2);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("option (line 3): gravity = \"0 0 nan\""),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(load_mjcf(path), std::invalid_argument);
}

// A NaN libmujoco ignores in an included file is found there, named with its file.
TEST(ModelNumbers, ANaNInAnIncludedFileIsFound) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/numbers_part.xml")
      << "<mujoco>\n<worldbody>\n<body name=\"b\" pos=\"0 NaN 0\">\n"
         "<joint type=\"hinge\"/><geom size=\"0.1\"/></body>\n</worldbody>\n</mujoco>\n";
  std::ofstream(dir + "/numbers_main.xml")
      << "<mujoco>\n<include file=\"numbers_part.xml\"/>\n</mujoco>\n";
  try {
    MjModelHandle handle(dir + "/numbers_main.xml");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "in 'numbers_part.xml': body 'b' (line 3): pos = \"0 NaN 0\" is not finite"),
              std::string::npos)
        << e.what();
  }
}

// Every MJCF file the project ships (engine test models, locomotion models) passes.
TEST(ModelNumbers, EveryShippedModelPasses) {
  const char* env = std::getenv("MYRIAD_SOURCE_DIR");
  const std::filesystem::path src = env ? env : MYRIAD_SOURCE_DIR_DEFAULT;
  int checked = 0;
  for (const char* dir : {"physics/models", "envs/locomotion/models", "tests/physics/models"}) {
    if (!std::filesystem::exists(src / dir)) continue;
    for (const auto& e : std::filesystem::recursive_directory_iterator(src / dir)) {
      if (e.path().extension() != ".xml") continue;
      char error[1000] = "";
      mjModel* m = mj_loadXML(e.path().c_str(), nullptr, error, sizeof error);
      if (!m) continue;  // an include fragment, not a model
      std::string what;
      try {
        check_model_numbers(m);
      } catch (const std::invalid_argument& x) {
        what = x.what();
      }
      mj_deleteModel(m);
      EXPECT_EQ(what, "") << e.path();
      ++checked;
    }
  }
  EXPECT_GE(checked, 9);
}

}  // namespace
}  // namespace myriad::physics
