// The velocity task's terms (envs/legged/velocity_terms.h) against mjlab 1.6.0's own functions:
// tests/envs/mjlab_velocity_reference.py runs mjlab's source (extracted from the installed
// package, float64) on hand-made states that straddle every threshold and gate, and this test
// evaluates the C++ terms (double) on the same states. Skipped where mjlab is not installed.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "envs/legged/velocity_terms.h"
#include "envs/root_push.h"
#include "tests/temp_dir.h"
#include "tests/test_python.h"

namespace myriad::envs::legged {
namespace {

using nlohmann::json;

struct Reference {
  std::map<std::string, json> cases;  // by term
  std::string skip_reason;
};

const Reference& reference() {
  static const Reference r = [] {
    Reference out;
    const char* python = testing_util::test_python();
    if (*python == '\0') {
      out.skip_reason = "no Python to run mjlab: set MYRIAD_VENV_PYTHON (CMake) or MYRIAD_PYTHON";
      return out;
    }
    const char* source_dir = std::getenv("MYRIAD_SOURCE_DIR");
    const std::string here = __FILE__;
    const std::string script =
        source_dir != nullptr && *source_dir != '\0'
            ? std::string(source_dir) + "/tests/envs/mjlab_velocity_reference.py"
            : here.substr(0, here.rfind('/')) + "/mjlab_velocity_reference.py";
    testing_util::TempDir dir("mjlab_reference");
    const std::string out_file = dir.file("ref.json"), err_file = dir.file("stderr.txt");
    const std::string command =
        std::string(python) + " '" + script + "' --out '" + out_file + "' 2> '" + err_file + "'";
    const int status = std::system(command.c_str());
    std::ifstream err_in(err_file);
    const std::string message((std::istreambuf_iterator<char>(err_in)), {});
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
      out.skip_reason = message;
    } else if (status != 0) {
      ADD_FAILURE() << command << " failed (" << status << "):\n" << message;
      out.skip_reason = "the reference script failed";
    } else {
      std::ifstream in(out_file);
      const json all = json::parse(in);
      for (const auto& c : all["cases"]) out.cases[c["term"].get<std::string>()] = c;
      std::printf("[ mjlab   ] reference: mjlab %s's own term functions\n",
                  all["mjlab_version"].get<std::string>().c_str());
    }
    return out;
  }();
  return r;
}

// The case of a term (skips the test where there is no reference).
#define CASE_OR_SKIP(term, var)                                     \
  const Reference& ref_ = reference();                              \
  if (!ref_.skip_reason.empty()) GTEST_SKIP() << ref_.skip_reason;  \
  ASSERT_TRUE(ref_.cases.count(term)) << "no reference case " term; \
  const json& var = ref_.cases.at(term)

std::vector<double> row(const json& j) { return j.get<std::vector<double>>(); }
// Row b of a [B, ...] array, flattened.
std::vector<double> flat(const json& j) {
  std::vector<double> out;
  if (j.is_array()) {
    for (const auto& x : j) {
      const std::vector<double> inner = flat(x);
      out.insert(out.end(), inner.begin(), inner.end());
    }
  } else if (j.is_boolean()) {
    out.push_back(j.get<bool>() ? 1.0 : 0.0);
  } else {
    out.push_back(j.get<double>());
  }
  return out;
}

// Relative 1e-13 (torch's vectorized exp, acos and log1p against glibc's: an ulp or two).
void expect_near(double ours, double theirs, const std::string& where) {
  EXPECT_NEAR(ours, theirs, 1e-13 * std::max(1.0, std::abs(theirs))) << where;
}

TEST(VelocityTerms, TrackingRewards) {
  {
    CASE_OR_SKIP("track_linear_velocity", c);
    const double std_ = c["params"]["std"];
    for (size_t b = 0; b < c["expected"].size(); ++b)
      expect_near(track_linear_velocity(row(c["inputs"]["command"][b]).data(),
                                        row(c["inputs"]["lin_vel_b"][b]).data(), std_),
                  c["expected"][b], "track_linear_velocity env " + std::to_string(b));
  }
  {
    CASE_OR_SKIP("track_angular_velocity", c);
    const double std_ = c["params"]["std"];
    for (size_t b = 0; b < c["expected"].size(); ++b)
      expect_near(track_angular_velocity(row(c["inputs"]["command"][b]).data(),
                                         row(c["inputs"]["ang_vel_b"][b]).data(), std_),
                  c["expected"][b], "track_angular_velocity env " + std::to_string(b));
  }
}

TEST(VelocityTerms, UprightAndProjectedGravity) {
  {
    CASE_OR_SKIP("upright", c);
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      double g[3];
      projected_gravity(row(c["inputs"]["body_quat_w"][b]).data(), g);
      expect_near(upright(g, c["params"]["std"].get<double>()), c["expected"][b],
                  "upright env " + std::to_string(b));
    }
  }
  {
    CASE_OR_SKIP("projected_gravity", c);
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      double g[3];
      projected_gravity(row(c["inputs"]["root_quat_w"][b]).data(), g);
      for (int k = 0; k < 3; ++k)
        expect_near(g[k], c["expected"][b][k], "projected_gravity env " + std::to_string(b));
    }
  }
}

TEST(VelocityTerms, PostureLimitsAndActionRate) {
  {
    CASE_OR_SKIP("variable_posture", c);
    const json& p = c["params"];
    const std::vector<double> stand = row(p["std_standing"]), walk = row(p["std_walking"]),
                              run = row(p["std_running"]);
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      const std::vector<double> cmd = row(c["inputs"]["command"][b]);
      const std::vector<double> q = row(c["inputs"]["joint_pos"][b]);
      expect_near(
          variable_posture(q.data(), row(c["inputs"]["default_joint_pos"][b]).data(), stand.data(),
                           walk.data(), run.data(), static_cast<int>(q.size()),
                           command_speed(cmd.data()), p["walking_threshold"].get<double>(),
                           p["running_threshold"].get<double>()),
          c["expected"][b], "variable_posture env " + std::to_string(b));
    }
  }
  {
    CASE_OR_SKIP("joint_pos_limits", c);
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      const std::vector<double> q = row(c["inputs"]["joint_pos"][b]);
      expect_near(
          joint_pos_limits(q.data(), row(c["inputs"]["soft_lo"][b]).data(),
                           row(c["inputs"]["soft_hi"][b]).data(), static_cast<int>(q.size())),
          c["expected"][b], "joint_pos_limits env " + std::to_string(b));
    }
  }
  {
    CASE_OR_SKIP("action_rate_l2", c);
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      const std::vector<double> a = row(c["inputs"]["action"][b]);
      expect_near(action_rate_l2(a.data(), row(c["inputs"]["prev_action"][b]).data(),
                                 static_cast<int>(a.size())),
                  c["expected"][b], "action_rate_l2 env " + std::to_string(b));
    }
  }
}

TEST(VelocityTerms, FeetTerms) {
  {
    CASE_OR_SKIP("feet_air_time", c);
    const json& p = c["params"];
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      const std::vector<double> t = row(c["inputs"]["current_air_time"][b]);
      expect_near(feet_air_time(t.data(), static_cast<int>(t.size()),
                                p["threshold_min"].get<double>(), p["threshold_max"].get<double>(),
                                command_speed(row(c["inputs"]["command"][b]).data()),
                                p["command_threshold"].get<double>()),
                  c["expected"][b], "feet_air_time env " + std::to_string(b));
    }
  }
  {
    CASE_OR_SKIP("feet_clearance", c);
    const json& p = c["params"];
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      const std::vector<double> h = row(c["inputs"]["heights"][b]);
      std::vector<double> vxy;
      for (const auto& v : c["inputs"]["site_lin_vel_w"][b]) {
        vxy.push_back(v[0]);
        vxy.push_back(v[1]);
      }
      expect_near(feet_clearance(h.data(), vxy.data(), static_cast<int>(h.size()),
                                 p["target_height"].get<double>(),
                                 command_speed(row(c["inputs"]["command"][b]).data()),
                                 p["command_threshold"].get<double>()),
                  c["expected"][b], "feet_clearance env " + std::to_string(b));
    }
  }
  {
    CASE_OR_SKIP("feet_slip", c);
    const json& p = c["params"];
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      std::vector<double> vxy;
      for (const auto& v : c["inputs"]["site_lin_vel_w"][b]) {
        vxy.push_back(v[0]);
        vxy.push_back(v[1]);
      }
      const std::vector<double> found = row(c["inputs"]["found"][b]);
      bool contact[8];
      for (size_t f = 0; f < found.size(); ++f) contact[f] = found[f] > 0;
      expect_near(feet_slip(vxy.data(), contact, static_cast<int>(found.size()),
                            command_speed(row(c["inputs"]["command"][b]).data()),
                            p["command_threshold"].get<double>()),
                  c["expected"][b], "feet_slip env " + std::to_string(b));
    }
  }
  {
    CASE_OR_SKIP("soft_landing", c);
    const json& p = c["params"];
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      const std::vector<double> force = flat(c["inputs"]["force"][b]);
      const std::vector<double> t = row(c["inputs"]["current_contact_time"][b]);
      expect_near(soft_landing(force.data(), t.data(), static_cast<int>(t.size()),
                               p["step_dt"].get<double>(),
                               command_speed(row(c["inputs"]["command"][b]).data()),
                               p["command_threshold"].get<double>()),
                  c["expected"][b], "soft_landing env " + std::to_string(b));
    }
  }
}

// Stateful: the peaks carry over 12 policy steps; the cost and the peaks after every step.
TEST(VelocityTerms, FeetSwingHeightOverASequence) {
  CASE_OR_SKIP("feet_swing_height", c);
  const json& p = c["params"];
  const json& in = c["inputs"];
  const size_t steps = in["found"].size(), envs = in["found"][0].size();
  const int feet = static_cast<int>(in["found"][0][0].size());
  std::vector<std::vector<double>> peak(envs, std::vector<double>(feet, 0.0));
  for (size_t t = 0; t < steps; ++t)
    for (size_t b = 0; b < envs; ++b) {
      const std::vector<double> found = row(in["found"][t][b]);
      bool contact[8];
      for (int f = 0; f < feet; ++f) contact[f] = found[f] > 0;
      const std::string where = "step " + std::to_string(t) + " env " + std::to_string(b);
      const double cost = feet_swing_height(
          peak[b].data(), row(in["heights"][t][b]).data(), contact,
          row(in["current_contact_time"][t][b]).data(), feet, p["target_height"].get<double>(),
          p["step_dt"].get<double>(), command_speed(row(in["command"][b]).data()),
          p["command_threshold"].get<double>());
      expect_near(cost, c["expected"]["cost"][t][b], "feet_swing_height cost " + where);
      for (int f = 0; f < feet; ++f)
        expect_near(peak[b][f], c["expected"]["peak_heights"][t][b][f],
                    "feet_swing_height peak " + where);
    }
}

TEST(VelocityTerms, CollisionsAndBodyPenalties) {
  {
    CASE_OR_SKIP("self_collision_cost", c);
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      const json& h = c["inputs"]["force_history"][b];
      const std::vector<double> history = flat(h);
      expect_near(self_collision_cost(history.data(), static_cast<int>(h.size()),
                                      static_cast<int>(h[0].size()),
                                      c["params"]["force_threshold"].get<double>()),
                  c["expected"][b], "self_collision_cost env " + std::to_string(b));
    }
  }
  {
    CASE_OR_SKIP("body_angular_velocity_penalty", c);
    for (size_t b = 0; b < c["expected"].size(); ++b)
      expect_near(body_angular_velocity_penalty(row(c["inputs"]["ang_vel_w"][b]).data()),
                  c["expected"][b], "body_angular_velocity_penalty env " + std::to_string(b));
  }
  {
    CASE_OR_SKIP("angular_momentum_penalty", c);
    for (size_t b = 0; b < c["expected"].size(); ++b)
      expect_near(angular_momentum_penalty(row(c["inputs"]["angmom"][b]).data()), c["expected"][b],
                  "angular_momentum_penalty env " + std::to_string(b));
  }
}

TEST(VelocityTerms, Observations) {
  {
    CASE_OR_SKIP("joint_pos_rel", c);
    for (size_t b = 0; b < c["expected"]["biased"].size(); ++b) {
      const std::vector<double> q = row(c["inputs"]["joint_pos"][b]),
                                q0 = row(c["inputs"]["default_joint_pos"][b]),
                                bias = row(c["inputs"]["encoder_bias"][b]);
      const int n = static_cast<int>(q.size());
      std::vector<double> biased(n), unbiased(n);
      joint_pos_rel(q.data(), q0.data(), bias.data(), n, biased.data());
      joint_pos_rel(q.data(), q0.data(), static_cast<const double*>(nullptr), n, unbiased.data());
      for (int j = 0; j < n; ++j) {
        expect_near(biased[j], c["expected"]["biased"][b][j], "joint_pos_rel biased");
        expect_near(unbiased[j], c["expected"]["unbiased"][b][j], "joint_pos_rel unbiased");
      }
    }
  }
  {
    CASE_OR_SKIP("foot_contact_forces", c);
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      const std::vector<double> f = flat(c["inputs"]["force"][b]);
      for (size_t k = 0; k < f.size(); ++k)
        expect_near(signed_log1p(f[k]), c["expected"][b][k],
                    "foot_contact_forces env " + std::to_string(b));
    }
  }
  {
    CASE_OR_SKIP("foot_contact", c);
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      const std::vector<double> found = row(c["inputs"]["found"][b]);
      for (size_t f = 0; f < found.size(); ++f)
        EXPECT_EQ(found[f] > 0 ? 1.0 : 0.0, c["expected"][b][f].get<double>());
    }
  }
  {
    CASE_OR_SKIP("height_scan", c);
    const json& p = c["params"];
    for (size_t b = 0; b < c["expected"].size(); ++b) {
      const std::vector<double> hit = row(c["inputs"]["hit_z"][b]),
                                dist = row(c["inputs"]["distances"][b]);
      for (size_t r = 0; r < hit.size(); ++r)
        expect_near(height_scan_ray(c["inputs"]["frame_z"][b][0].get<double>(), hit[r], dist[r],
                                    p["offset"].get<double>(), p["max_distance"].get<double>()),
                    c["expected"][b][r], "height_scan env " + std::to_string(b));
    }
  }
}

TEST(VelocityTerms, BadOrientationAndWrap) {
  {
    CASE_OR_SKIP("bad_orientation", c);
    for (size_t b = 0; b < c["expected"].size(); ++b)
      EXPECT_EQ(bad_orientation(row(c["inputs"]["projected_gravity"][b]).data(),
                                c["params"]["limit_angle"].get<double>()),
                c["expected"][b].get<int>() != 0)
          << "bad_orientation env " << b;
  }
  {
    CASE_OR_SKIP("wrap_to_pi", c);
    for (size_t k = 0; k < c["expected"].size(); ++k)
      expect_near(wrap_to_pi(c["inputs"]["angles"][k].get<double>()), c["expected"][k],
                  "wrap_to_pi of " + c["inputs"]["angles"][k].dump());
  }
}

TwistRanges ranges_of(const json& p) {
  TwistRanges r;
  auto pair = [](const json& j, double out[2]) {
    out[0] = j[0];
    out[1] = j[1];
  };
  pair(p["lin_vel_x"], r.lin_vel_x);
  pair(p["lin_vel_y"], r.lin_vel_y);
  pair(p["ang_vel_z"], r.ang_vel_z);
  pair(p["heading"], r.heading);
  pair(p["resampling_time_range"], r.resampling_time);
  r.heading_command = p["heading_command"];
  r.heading_control_stiffness = p["heading_control_stiffness"];
  r.rel_standing_envs = p["rel_standing_envs"];
  r.rel_heading_envs = p["rel_heading_envs"];
  r.rel_forward_envs = p["rel_forward_envs"];
  return r;
}

TEST(VelocityTerms, TwistCommandUpdate) {
  CASE_OR_SKIP("update_command", c);
  const TwistRanges r = ranges_of(c["params"]);
  const json& in = c["inputs"];
  for (size_t b = 0; b < in["heading_target"].size(); ++b) {
    const std::string where = "update_command env " + std::to_string(b);
    TwistCommand<double> cmd{};
    for (int k = 0; k < 3; ++k) cmd.vel[k] = in["vel_command_b"][b][k];
    cmd.heading = in["heading_target"][b];
    cmd.heading_env = in["is_heading_env"][b];
    cmd.standing_env = in["is_standing_env"][b];
    ASSERT_FALSE(in["is_world_env"][b].get<bool>());  // mjlab's rel_world_envs is 0
    const double heading = heading_of(row(in["root_quat_w"][b]).data());
    expect_near(heading, c["expected"]["heading_w"][b], where + " heading_w");
    update_twist(cmd, r, heading);
    for (int k = 0; k < 3; ++k)
      expect_near(cmd.vel[k], c["expected"]["vel_command_b"][b][k], where);
  }
}

TEST(VelocityTerms, TwistCommandResample) {
  CASE_OR_SKIP("resample_command", c);
  const TwistRanges r = ranges_of(c["params"]);
  const std::vector<std::string> order = c["params"]["draw_order"];
  const std::vector<std::string> ours = {"lin_vel_x",  "lin_vel_y",   "ang_vel_z", "heading",
                                         "is_heading", "is_standing", "is_world",  "is_forward"};
  ASSERT_EQ(order, ours) << "mjlab draws in another order than TwistDraw";
  const json& e = c["expected"];
  for (size_t b = 0; b < c["inputs"]["uniforms"].size(); ++b) {
    const std::string where = "resample_command env " + std::to_string(b);
    float u[kTwistDraws];
    for (int k = 0; k < kTwistDraws; ++k)
      u[k] = static_cast<float>(c["inputs"]["uniforms"][b][k].get<double>());
    TwistCommand<double> cmd{};
    resample_twist(cmd, r, u, 0.5f);
    for (int k = 0; k < 3; ++k) expect_near(cmd.vel[k], e["vel_command_b"][b][k], where);
    expect_near(cmd.heading, e["heading_target"][b], where + " heading");
    EXPECT_EQ(cmd.heading_env, e["is_heading_env"][b].get<bool>()) << where;
    EXPECT_EQ(cmd.standing_env, e["is_standing_env"][b].get<bool>()) << where;
    expect_near(cmd.time_left, 5.5, where + " time_left");
  }
}

// _sample_se3_range's draw from scripted uniforms: lo + (hi - lo) * u per (x, y, z, roll, pitch,
// yaw), a key missing from the range giving 0.
std::vector<double> se3_sample(const json& range, const json& u) {
  static const char* const kKeys[6] = {"x", "y", "z", "roll", "pitch", "yaw"};
  std::vector<double> s(6, 0.0);
  for (int k = 0; k < 6; ++k) {
    if (!range.contains(kKeys[k])) continue;
    const double lo = range[kKeys[k]][0], hi = range[kKeys[k]][1];
    s[k] = lo + (hi - lo) * u[k].get<double>();
  }
  return s;
}

TEST(VelocityTerms, ResetRootStateUniform) {
  CASE_OR_SKIP("reset_root_state_uniform", c);
  const json& in = c["inputs"];
  for (size_t b = 0; b < in["uniforms"].size(); ++b) {
    const std::string where = "reset_root_state_uniform env " + std::to_string(b);
    const std::vector<double> q0 = row(in["default_root_pose"][b]), o = row(in["env_origins"][b]);
    const std::vector<double> s = se3_sample(c["params"]["pose_range"], in["uniforms"][b]);
    double q[7];
    reset_root_pose(q0.data(), o.data(), s.data(), q);
    for (int k = 0; k < 7; ++k)
      expect_near(q[k], c["expected"]["qpos"][b][k], where + " qpos " + std::to_string(k));
    // The velocity range is empty (mjlab's reset_base): the task starts every episode at rest.
    for (int k = 0; k < 6; ++k) EXPECT_EQ(c["expected"]["qvel"][b][k].get<double>(), 0.0) << where;
  }
}

TEST(VelocityTerms, PushBySettingVelocity) {
  CASE_OR_SKIP("push_by_setting_velocity", c);
  const json& in = c["inputs"];
  for (size_t b = 0; b < in["uniforms"].size(); ++b) {
    const std::string where = "push_by_setting_velocity env " + std::to_string(b);
    const std::vector<double> dv = se3_sample(c["params"]["velocity_range"], in["uniforms"][b]);
    const std::vector<double> quat = row(in["root_quat"][b]);
    std::vector<double> qvel = row(in["qvel"][b]);
    push_root_velocity(dv.data(), quat.data(), qvel.data());
    for (int k = 0; k < 6; ++k)
      expect_near(qvel[k], c["expected"]["qvel"][b][k], where + " qvel " + std::to_string(k));
  }
}

// A reference stage list ([{step, lin_vel_x, lin_vel_y, ang_vel_z}], a range absent or null
// where the stage leaves it) as TwistStages.
std::vector<TwistStage> stages_of(const json& list) {
  std::vector<TwistStage> out;
  for (const json& s : list) {
    TwistStage t;
    t.step = s["step"].get<double>();
    auto take = [&](const char* key, bool& has, double range[2]) {
      has = s.contains(key) && !s[key].is_null();
      if (!has) return;
      range[0] = s[key][0];
      range[1] = s[key][1];
    };
    take("lin_vel_x", t.has_lin_vel_x, t.lin_vel_x);
    take("lin_vel_y", t.has_lin_vel_y, t.lin_vel_y);
    take("ang_vel_z", t.has_ang_vel_z, t.ang_vel_z);
    out.push_back(t);
  }
  return out;
}

// The ranges apply_twist_stages gives at each of the case's steps, from its base ranges, against
// mjlab's commands_vel run at the same steps (exact: both copy the numbers).
void expect_curriculum(const json& c, const std::vector<TwistStage>& stages) {
  const TwistRanges base = ranges_of(c["params"]["base"]);
  const std::vector<int64_t> steps = c["params"]["steps"];
  ASSERT_EQ(steps.size(), c["expected"].size());
  for (size_t k = 0; k < steps.size(); ++k) {
    TwistRanges r = base;
    apply_twist_stages(r, stages.data(), static_cast<int>(stages.size()), steps[k]);
    const json& e = c["expected"][k];
    const std::string where = c["term"].get<std::string>() + " at step " + std::to_string(steps[k]);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(r.lin_vel_x[i], e["lin_vel_x"][i].get<double>()) << where << " lin_vel_x";
      EXPECT_EQ(r.lin_vel_y[i], e["lin_vel_y"][i].get<double>()) << where << " lin_vel_y";
      EXPECT_EQ(r.ang_vel_z[i], e["ang_vel_z"][i].get<double>()) << where << " ang_vel_z";
    }
  }
}

TEST(VelocityTerms, CommandCurriculumStages) {
  CASE_OR_SKIP("commands_vel_stages", c);
  expect_curriculum(c, stages_of(c["params"]["stages"]));
}

// The tasks' default stages (the constants their options default to) against mjlab's own list,
// read from its config: mjlab's first stage, at step 0, writes the command's own ranges again,
// which is why the tasks start from their lin_vel_x and ang_vel_z options instead.
TEST(VelocityTerms, CommandCurriculumDefaultsAreMjlabs) {
  CASE_OR_SKIP("commands_vel", c);
  const std::vector<TwistStage> mjlab = stages_of(c["params"]["stages"]);
  ASSERT_EQ(mjlab.size(), 3u);
  EXPECT_EQ(mjlab[0].step, 0.0);
  const TwistRanges base = ranges_of(c["params"]["base"]), ours{};
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(mjlab[0].lin_vel_x[i], base.lin_vel_x[i]);
    EXPECT_EQ(mjlab[0].ang_vel_z[i], base.ang_vel_z[i]);
    EXPECT_EQ(ours.lin_vel_x[i], base.lin_vel_x[i]);
    EXPECT_EQ(ours.lin_vel_y[i], base.lin_vel_y[i]);
    EXPECT_EQ(ours.ang_vel_z[i], base.ang_vel_z[i]);
  }
  TwistStage defaults[2];
  twist_stages(kCommandStage1Step, kCommandStage1LinVelX, kCommandStage1AngVelZ, kCommandStage2Step,
               kCommandStage2LinVelX, defaults);
  expect_curriculum(c, {defaults[0], defaults[1]});
}

}  // namespace
}  // namespace myriad::envs::legged
