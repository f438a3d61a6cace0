// Per-env model parameters and domain randomization (physics/env_params.h, physics/set_const.h,
// envs/randomization.h): mj_setConst's constants against libmujoco's; a randomized env against
// the same parameters set by hand in a model, to the bit; the draw the same on any thread count;
// the engine against libmujoco with randomized models; bad terms refused naming their key.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "envs/physics_kernels.h"
#include "envs/randomization.h"
#include "myriad/device.h"
#include "myriad/physics/data.h"
#include "myriad/physics/engine.h"
#include "myriad/physics/import.h"
#include "myriad/registry.h"
#include "physics/batch_view.h"
#include "physics/env_params.h"
#include "physics/env_step.h"
#include "physics/model_view.h"
#include "physics/set_const.h"

namespace myriad::envs {
namespace {

std::string robot(const std::string& name) {
  const char* src = std::getenv("MYRIAD_SOURCE_DIR");
  return std::string(src ? src : ".") + "/envs/robots/models/" + name + ".xml";
}

int index_of(const std::vector<std::string>& names, const std::string& name) {
  for (size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return static_cast<int>(k);
  ADD_FAILURE() << "no element " << name;
  return 0;
}

double max_rel(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t k = 0; k < a.size(); ++k)
    worst = std::max(worst, std::abs(a[k] - b[k]) / std::max(1e-12, std::abs(b[k])));
  return worst;
}

double plain_meaninertia(const physics::MjModelHandle& h) { return h.get()->stat.meaninertia; }

// mj_setConst on a model whose masses, centre of mass, inertia and armature were edited, against
// physics::set_const on the engine's import edited the same way.
class SetConst : public ::testing::TestWithParam<std::string> {};

TEST_P(SetConst, MatchesLibmujocoAfterEditingMassesInertiasAndArmature) {
  physics::MjModelHandle handle(robot(GetParam()));
  mjModel* edited = mj_copyModel(nullptr, handle.get());
  physics::Model<double> ours = physics::import_model(handle.get());
  // The root body of the robot (body 1 is the static terrain) and the last leg's last body.
  const int b = index_of(ours.body_names, GetParam() == "go1" ? "trunk" : "pelvis");
  const int leaf = edited->nbody - 1;
  auto edit = [&](mjtNum* theirs, std::vector<double>& mine, int k, double scale, double add) {
    theirs[k] = theirs[k] * scale + add;
    mine[k] = mine[k] * scale + add;
  };
  edit(edited->body_mass, ours.body_mass, b, 1.3, 0);
  edit(edited->body_mass, ours.body_mass, leaf, 0.7, 0);
  edit(edited->body_ipos, ours.body_ipos, 3 * b, 1, 0.02);
  edit(edited->body_ipos, ours.body_ipos, 3 * b + 2, 1, -0.03);
  edit(edited->body_inertia, ours.body_inertia, 3 * leaf + 1, 1.5, 0);
  for (int k = 6; k < edited->nv; k += 3) edit(edited->dof_armature, ours.dof_armature, k, 2, 1e-3);
  mjData* scratch = mj_makeData(edited);
  mj_setConst(edited, scratch);
  mj_deleteData(scratch);
  physics::set_const(ours);
  const physics::Model<double> expected = physics::import_model(edited);
  mj_deleteModel(edited);
  EXPECT_LT(max_rel(ours.body_subtreemass, expected.body_subtreemass), 1e-14);
  EXPECT_LT(max_rel(ours.dof_invweight0, expected.dof_invweight0), 1e-10);
  EXPECT_LT(max_rel(ours.body_invweight0, expected.body_invweight0), 1e-10);
  EXPECT_NEAR(ours.meaninertia, expected.meaninertia, 1e-12 * expected.meaninertia);
  EXPECT_NE(ours.meaninertia, plain_meaninertia(handle));
  // And the unedited model's constants are libmujoco's own.
  physics::Model<double> plain = physics::import_model(handle.get());
  const physics::Model<double> compiled = plain;
  physics::set_const(plain);
  EXPECT_LT(max_rel(plain.dof_invweight0, compiled.dof_invweight0), 1e-10);
  EXPECT_LT(max_rel(plain.body_invweight0, compiled.body_invweight0), 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Robots, SetConst, ::testing::Values("go1", "g1"));

// mjlab's Go1 startup events, as terms.
const char* kGo1Terms = R"({
  "foot_friction_slide": {"field": "geom_friction", "names": "[FR][LR]_foot_collision",
                          "axes": [0], "range": [0.3, 1.5], "shared": true},
  "foot_friction_spin": {"field": "geom_friction", "names": ".._foot_collision", "axes": [1],
                         "range": [1e-4, 2e-2], "distribution": "log_uniform", "shared": true},
  "base_com": {"field": "body_ipos", "names": ["trunk"], "operation": "add",
               "range": {"0": [-0.025, 0.025], "1": [-0.025, 0.025], "2": [-0.03, 0.03]}},
  "mass": {"field": "body_mass", "names": "trunk", "operation": "scale", "range": [0.8, 1.2]},
  "gains": {"field": "actuator_gainprm", "axes": [0], "operation": "scale", "range": [0.9, 1.1]},
  "damping": {"field": "dof_damping", "names": ".*_calf_joint", "range": [0.0, 0.5]},
  "gravity": {"field": "gravity", "axes": [2], "range": [-10.0, -9.6]}
})";

std::vector<ResolvedTerm> go1_terms(const physics::Model<double>& m) {
  return resolve_randomization(parse_randomization(kGo1Terms), m);
}

TEST(Randomization, DrawsAreOneEnvsOwnWhateverTheBatch) {
  const physics::Model<double> m = physics::load_mjcf(robot("go1"));
  const auto terms = go1_terms(m);
  const physics::EnvParams<double> small = draw_env_params(terms, m, 3, 11);
  const physics::EnvParams<double> large = draw_env_params(terms, m, 40, 11);
  const physics::EnvParams<double> other = draw_env_params(terms, m, 3, 12);
  // Env i's values depend on (seed, i) only, not on the batch size.
  for (size_t k = 0; k < small.geom_friction.size(); ++k)
    ASSERT_EQ(small.geom_friction[k], large.geom_friction[k]);
  for (size_t k = 0; k < small.dof_invweight0.size(); ++k)
    ASSERT_EQ(small.dof_invweight0[k], large.dof_invweight0[k]);
  EXPECT_NE(small.body_ipos, other.body_ipos);
  // Shared: every foot of an env has the same slide friction; envs differ.
  const int fr = index_of(m.geom_names, "FR_foot_collision");
  const int rl = index_of(m.geom_names, "RL_foot_collision");
  const size_t row = m.geom_friction.size();
  EXPECT_EQ(small.geom_friction[3 * fr], small.geom_friction[3 * rl]);
  EXPECT_NE(small.geom_friction[3 * fr], small.geom_friction[row + 3 * fr]);
  for (int64_t i = 0; i < 40; ++i) {
    const double slide = large.geom_friction[i * row + 3 * fr];
    const double spin = large.geom_friction[i * row + 3 * fr + 1];
    EXPECT_GE(slide, 0.3);
    EXPECT_LE(slide, 1.5);
    EXPECT_GE(spin, 1e-4);
    EXPECT_LE(spin, 2e-2);
    // The rolling axis and the other geoms keep the model's values.
    EXPECT_EQ(large.geom_friction[i * row + 3 * fr + 2], m.geom_friction[3 * fr + 2]);
    EXPECT_EQ(large.geom_friction[i * row], m.geom_friction[0]);
    const double g = large.gravity[3 * i + 2];
    EXPECT_TRUE(g >= -10.0 && g <= -9.6) << g;
    EXPECT_EQ(large.gravity[3 * i], m.gravity[0]);
  }
  // The trunk's centre of mass moved by at most the ranges (add), its mass scaled.
  const int trunk = index_of(m.body_names, "trunk");
  for (int64_t i = 0; i < 40; ++i) {
    const double* ipos = large.body_ipos.data() + i * m.body_ipos.size() + 3 * trunk;
    EXPECT_LE(std::abs(ipos[0] - m.body_ipos[3 * trunk]), 0.025 + 1e-15);
    EXPECT_LE(std::abs(ipos[2] - m.body_ipos[3 * trunk + 2]), 0.03 + 1e-15);
    const double mass = large.body_mass[i * m.nbody + trunk] / m.body_mass[trunk];
    EXPECT_TRUE(mass >= 0.8 - 1e-12 && mass <= 1.2 + 1e-12) << mass;
  }
}

// mjlab's pd_gains: a position actuator's kp moves gainprm[0] and -biasprm[1] together.
TEST(Randomization, PositionActuatorGainsStayConsistent) {
  const physics::Model<double> m = physics::load_mjcf(robot("go1"));
  const auto terms = resolve_randomization(
      parse_randomization(R"({"kp": {"field": "actuator_kp", "operation": "scale",
                                     "range": [0.8, 1.2]},
                              "kd": {"field": "actuator_kd", "names": ".*calf.*",
                                     "operation": "scale", "range": [0.5, 1.5]}})"),
      m);
  const physics::EnvParams<double> p = draw_env_params(terms, m, 16, 4);
  ASSERT_FALSE(p.actuator_gainprm.empty());
  const size_t row = m.actuator_gainprm.size();
  bool any_kd_changed = false;
  for (int64_t i = 0; i < 16; ++i)
    for (int u = 0; u < m.nu; ++u) {
      const double kp = p.actuator_gainprm[i * row + 3 * u];
      EXPECT_EQ(kp, -p.actuator_biasprm[i * row + 3 * u + 1]);
      const double scale = kp / m.actuator_gainprm[3 * u];
      EXPECT_TRUE(scale >= 0.8 - 1e-12 && scale <= 1.2 + 1e-12) << scale;
      const double kd = -p.actuator_biasprm[i * row + 3 * u + 2];
      const bool calf = m.actuator_names[u].find("calf") != std::string::npos;
      if (!calf) EXPECT_EQ(kd, -m.actuator_biasprm[3 * u + 2]);
      any_kd_changed = any_kd_changed || (calf && kd != -m.actuator_biasprm[3 * u + 2]);
    }
  EXPECT_TRUE(any_kd_changed);
  // A motor is not a position actuator.
  const physics::Model<double> hopper = physics::load_mjcf(
      std::string(std::getenv("MYRIAD_SOURCE_DIR") ? std::getenv("MYRIAD_SOURCE_DIR") : ".") +
      "/physics/models/hopper_chain.xml");
  EXPECT_THROW(
      resolve_randomization(
          parse_randomization(R"({"kp": {"field": "actuator_kp", "range": [1, 2]}})"), hopper),
      std::invalid_argument);
}

// The randomized env i steps to the same bits as a model with env i's values set by hand (and
// its constants recomputed), in float32 and float64.
template <class T>
void expect_hand_set_model_steps_the_same() {
  const physics::Model<double> m = physics::load_mjcf(robot("go1"));
  const int64_t n = 4, env = 2;
  const physics::EnvParams<double> p = draw_env_params(go1_terms(m), m, n, 5);
  physics::Model<double> hand = m;
  auto take_row = [&](const std::vector<double>& field, std::vector<double>& out) {
    if (field.empty()) return;
    const size_t size = out.size();
    out.assign(field.begin() + env * size, field.begin() + (env + 1) * size);
  };
  take_row(p.geom_friction, hand.geom_friction);
  take_row(p.body_ipos, hand.body_ipos);
  take_row(p.body_mass, hand.body_mass);
  take_row(p.actuator_gainprm, hand.actuator_gainprm);
  take_row(p.dof_damping, hand.dof_damping);
  for (int k = 0; k < 3; ++k) hand.gravity[k] = p.gravity[3 * env + k];
  physics::set_const(hand);

  const physics::Model<T> mt = m.cast<T>(), ht = hand.cast<T>();
  const physics::EnvParams<T> pt = p.cast<T>();
  physics::Data<T> batch(mt, n), single(ht, 1);
  physics::EnvData<T> a = batch.env(mt, env), b = single.env(ht, 0);
  for (int k = 0; k < mt.nq; ++k) a.qpos[k] = b.qpos[k] = mt.qpos_init[k];
  a.qpos[2] = b.qpos[2] = T(0.4);  // dropped from above the floor, so the feet land
  for (int k = 0; k < mt.nu; ++k) a.ctrl[k] = b.ctrl[k] = T(0.3 * std::sin(k));
  physics::ModelView<T> va = physics::view_of(mt);
  physics::params_view(pt, mt).apply(va, env);
  const physics::ModelView<T> vb = physics::view_of(ht);
  for (int s = 0; s < 150; ++s) {
    physics::step_env(va, a);
    physics::step_env(vb, b);
  }
  EXPECT_EQ(0, std::memcmp(a.qpos, b.qpos, sizeof(T) * mt.nq));
  EXPECT_EQ(0, std::memcmp(a.qvel, b.qvel, sizeof(T) * mt.nv));
  EXPECT_EQ(0, std::memcmp(a.qacc, b.qacc, sizeof(T) * mt.nv));
  EXPECT_GT(a.ncon[0], T(0));  // the feet touch the floor: friction matters
}
TEST(Randomization, HandSetModelStepsToTheSameBitsFloat32) {
  expect_hand_set_model_steps_the_same<float>();
}
TEST(Randomization, HandSetModelStepsToTheSameBitsFloat64) {
  expect_hand_set_model_steps_the_same<double>();
}

std::unique_ptr<BatchEnv> go1_env(const std::string& physics, int64_t n, int precision,
                                  const std::string& terms = kGo1Terms) {
  return make("MJCF-v0", n, Device::kCpu, 9, {{"precision", precision}, {"frame_skip", 4}},
              {{"xml", robot("go1")}, {"physics", physics}, {"randomize", terms}});
}

at::Tensor rollout(BatchEnv& env, int steps) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(21);
  const int64_t nu = env.spec().action_space.flat_size();
  for (int t = 0; t < steps; ++t) env.step(at::rand({env.num_envs(), nu}, gen) * 0.6 - 0.3);
  return env.get_state();
}

TEST(Randomization, BatchEnvIsBitwiseTheSameOnOneAndTwoThreads) {
  set_cpu_threads(1);
  auto one = go1_env("myriad", 6, 32);
  const at::Tensor s1 = rollout(*one, 40);
  set_cpu_threads(2);
  auto two = go1_env("myriad", 6, 32);
  const at::Tensor s2 = rollout(*two, 40);
  EXPECT_TRUE(at::equal(s1, s2));
  // And the envs did differ: the same actions on differently randomized models diverge.
  auto plain = make("MJCF-v0", 6, Device::kCpu, 9, {{"precision", 32}, {"frame_skip", 4}},
                    {{"xml", robot("go1")}, {"physics", "myriad"}});
  EXPECT_FALSE(at::equal(rollout(*plain, 40), s1));
}

// The engine (float64) and libmujoco (each env its own mjModel, mj_setConst by libmujoco) on
// the same randomized models agree; a seed given to reset redraws the models on both.
TEST(Randomization, EngineAgreesWithLibmujocoOnRandomizedModels) {
  auto ours = go1_env("myriad", 4, 64);
  auto ref = go1_env("mujoco", 4, 64);
  const double err = (rollout(*ours, 30) - rollout(*ref, 30)).abs().max().item<double>();
  EXPECT_LT(err, 1e-7);
  ours->reset(123);
  ref->reset(123);
  const double err2 = (rollout(*ours, 30) - rollout(*ref, 30)).abs().max().item<double>();
  EXPECT_LT(err2, 1e-7);
}

// mjlab's push_robot: an interval event adding a world-frame velocity change to the root. The
// pushed batch and an unpushed one step to the same bits until mjlab's timer (drawn per push,
// decremented by dt each step, firing below 1e-6 s) fires; then the linear velocity differs by
// the drawn change and the angular velocity by the change rotated into the body frame.
TEST(Randomization, IntervalPushesFollowMjlabsTimer) {
  const char* push = R"({"push": {"field": "root_velocity", "mode": "interval",
      "interval": [0.1, 0.3], "operation": "add",
      "range": {"0": [-0.5, 0.5], "1": [-0.5, 0.5], "2": [-0.4, 0.4],
                "3": [-0.52, 0.52], "4": [-0.52, 0.52], "5": [-0.78, 0.78]}}})";
  const int64_t n = 3;
  const uint64_t seed = 9;
  // The tiled launch (a push alone keeps it) on both.
  auto pushed = make("MJCF-v0", n, Device::kCpu, seed, {{"precision", 64}, {"frame_skip", 4}},
                     {{"xml", robot("go1")}, {"launch", "tiled"}, {"randomize", push}});
  auto plain = make("MJCF-v0", n, Device::kCpu, seed, {{"precision", 64}, {"frame_skip", 4}},
                    {{"xml", robot("go1")}, {"launch", "tiled"}});
  // A root turned well away from the world's axes (yaw 1.1, roll 0.5), so that the angular
  // change's rotation into the body frame shows.
  {
    at::Tensor s = plain->get_state();
    const double cy = std::cos(0.55), sy = std::sin(0.55), cr = std::cos(0.25), sr = std::sin(0.25);
    const double q[4] = {cy * cr, cy * sr, sy * sr, sy * cr};
    for (int64_t i = 0; i < n; ++i)
      for (int c = 0; c < 4; ++c) s[i][4 + c] = q[c];
    plain->set_state(s, at::Tensor());
  }
  const double dt = 0.02;
  // mjlab's timer, independently: time_left from the interval, minus dt per step.
  PhysicsFrame f;
  f.seed = seed;
  std::vector<int> pushes(n, 0);
  std::vector<double> time_left(n);
  std::vector<uint32_t> k(n, 0);
  auto draw_interval = [&](int64_t i) {
    Rng rng(seed, static_cast<uint32_t>(i), 0u, kPushStream + 2 * k[i]);
    return static_cast<double>(rng.uniform(0.1f, 0.3f));
  };
  for (int64_t i = 0; i < n; ++i) time_left[i] = draw_interval(i);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  for (int t = 1; t <= 60; ++t) {
    const at::Tensor before = plain->get_state();
    const at::Tensor a = at::rand({n, 12}, gen) * 0.4 - 0.2;
    // Both start each step from the same state (and no warm start): pushes are undone here.
    pushed->set_state(before, at::Tensor());
    plain->set_state(before, at::Tensor());
    pushed->step(a);
    plain->step(a);
    const at::Tensor sp = pushed->get_state(), sq = plain->get_state();
    for (int64_t i = 0; i < n; ++i) {
      time_left[i] -= dt;
      const bool fires = time_left[i] < 1e-6;
      const at::Tensor diff = (sp[i] - sq[i]).abs().max();
      if (!fires) {
        EXPECT_EQ(diff.item<double>(), 0.0) << "env " << i << " step " << t << " (no push due)";
        continue;
      }
      // The change drawn for this push, against the velocity difference.
      Rng rng(seed, static_cast<uint32_t>(i), 0u, kPushStream + 2 * k[i] + 1);
      double dv[6];
      const float lo[6] = {-0.5f, -0.5f, -0.4f, -0.52f, -0.52f, -0.78f};
      for (int c = 0; c < 6; ++c) dv[c] = rng.uniform(lo[c], -lo[c]);
      const int qv = 1 + 19;  // state: time, qpos [19], qvel
      for (int c = 0; c < 3; ++c)
        EXPECT_NEAR((sp[i][qv + c] - sq[i][qv + c]).item<double>(), dv[c], 1e-6)
            << "env " << i << " step " << t;
      // Angular: R (qvel_pushed - qvel_plain) is the world-frame change.
      const double w = sq[i][4].item<double>(), x = sq[i][5].item<double>(),
                   y = sq[i][6].item<double>(), z = sq[i][7].item<double>();
      const double R[9] = {
          1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
          2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
          2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
      for (int r = 0; r < 3; ++r) {
        double world = 0;
        for (int c = 0; c < 3; ++c)
          world += R[3 * r + c] * (sp[i][qv + 3 + c] - sq[i][qv + 3 + c]).item<double>();
        EXPECT_NEAR(world, dv[3 + r], 1e-6) << "env " << i << " step " << t;
      }
      ++pushes[i];
      ++k[i];
      time_left[i] = draw_interval(i);
    }
  }
  for (int64_t i = 0; i < n; ++i) EXPECT_GE(pushes[i], 4) << "env " << i;
}

void expect_refused(const std::string& terms, const std::string& needle) {
  try {
    go1_env("myriad", 2, 32, terms);
    ADD_FAILURE() << "accepted: " << terms;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << needle;
  }
}

TEST(Randomization, BadTermsAreRefusedNamingTheirKey) {
  expect_refused(R"({"f": {"field": "geom_friction", "range": [1.5, 0.3]}})",
                 "randomize.f.range: the range is inverted");
  expect_refused(R"({"f": {"field": "geom_friction", "range": []}})",
                 "randomize.f.range: the range is empty");
  expect_refused(R"({"f": {"field": "geom_friction", "range": {}}})",
                 "randomize.f.range: the range is empty");
  expect_refused(R"({"f": {"field": "geom_friction", "range": [0, "x"]}})", "randomize.f.range");
  expect_refused(R"({"f": {"field": "geom_fiction", "range": [0, 1]}})",
                 "randomize.f.field: unknown field 'geom_fiction' (valid: geom_friction");
  expect_refused(R"({"f": {"field": "geom_friction", "range": [0, 1], "nmaes": "x"}})",
                 "randomize.f.nmaes: unknown key");
  expect_refused(R"({"f": {"field": "geom_friction", "names": "toe", "range": [0, 1]}})",
                 "randomize.f.names: 'toe' matches no geom of the model (names: ");
  expect_refused(R"({"f": {"field": "geom_friction", "axes": [3], "range": [0, 1]}})",
                 "randomize.f.axes: axis 3 is not a column of the field (0..2)");
  expect_refused(R"({"f": {"field": "body_mass", "operation": "add", "range": [-50, 0]}})",
                 "randomize.f.range: body_mass could become");
  expect_refused(
      R"({"f": {"field": "geom_friction", "distribution": "log_uniform", "range": [0, 1]}})",
      "randomize.f.range: log_uniform needs low > 0");
  expect_refused(R"({"f": {"field": "geom_friction", "mode": "reset", "range": [0, 1]}})",
                 "randomize.f.mode");
  expect_refused(R"({"f": {"field": "gravity", "names": "x", "range": [0, 1]}})",
                 "randomize.f.names: field gravity has no elements");
  expect_refused("{not json", "randomize: not a valid JSON mapping");
  expect_refused(R"({"f": {"field": "dof_frictionloss", "range": [0, 0.3]}})",
                 "has no friction loss in the model");
  expect_refused(R"({"f": {"field": "body_mass", "names": "trunk", "range": [0, 5]}})",
                 "randomize.f.range: body_mass of 'trunk' could become 0");
  expect_refused(R"({"p": {"field": "root_velocity", "operation": "add", "range": [0, 1]}})",
                 "randomize.p.mode: root_velocity is state");
  expect_refused(
      R"({"p": {"field": "root_velocity", "mode": "interval", "operation": "add", "range": [0, 1]}})",
      "randomize.p.interval: required");
  expect_refused(R"({"p": {"field": "root_velocity", "mode": "interval", "interval": [0, 1],
                           "operation": "add", "range": [0, 1]}})",
                 "randomize.p.interval: seconds between events must be > 0");
  expect_refused(R"({"p": {"field": "root_velocity", "mode": "interval", "interval": [1, 2],
                           "range": [0, 1]}})",
                 "randomize.p.operation: root_velocity pushes add");
  expect_refused(R"({"p": {"field": "geom_friction", "mode": "interval", "interval": [1, 2],
                           "range": [0, 1]}})",
                 "randomize.p.mode: interval events change root_velocity only");
  // On the tiled launch the model is one for the whole batch (the staged launch takes per-env
  // models: tests/envs/test_staged_randomized.cc).
  try {
    make("MJCF-v0", 2, Device::kCpu, 9, {},
         {{"xml", robot("go1")}, {"launch", "tiled"}, {"randomize", kGo1Terms}});
    ADD_FAILURE() << "tiled launch accepted per-env parameters";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("launch=fused"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad::envs
