// Go1-Velocity-Flat-v0 (envs/legged/velocity_task.h) through the env framework
// (envs/physics_task_kernels.h, envs/physics_batch_env.h): the engine against libmujoco, thread
// counts, the [actor | critic] observation layout and its noise, the reward as the sum of its
// logged terms, the command kinds and ranges, the reset pose, the rollout state, standing still,
// the fell-over termination, play mode, and the options refused.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "envs/legged/terrain.h"
#include "envs/legged/terrain_sense.h"
#include "myriad/batch_env.h"
#include "myriad/device.h"
#include "myriad/registry.h"

namespace myriad::envs {
namespace {

constexpr const char* kId = "Go1-Velocity-Flat-v0";
constexpr int kJoints = 12;
constexpr int kActorDim = 48, kObsDim = 120;
// The columns of the actor's group; the critic's same terms lie kActorDim further on.
constexpr int kLinVel = 0, kAngVel = 3, kGravity = 6, kJointPos = 9, kJointVel = 21,
              kLastAction = 33, kCommand = 45;
// The critic's own terms.
constexpr int kFootHeight = 96, kAirTime = 100, kContact = 104, kForces = 108;
// get_state: time, qpos [19] (root x y z, quaternion w x y z, 12 joints), qvel [18].
constexpr int kNq = 19, kNv = 18, kStateWidth = 1 + kNq + kNv;
constexpr double kStepDt = 0.02;

const char* kTerms[] = {
    "track_linear_velocity", "track_angular_velocity", "upright",         "pose",
    "body_ang_vel",          "dof_pos_limits",         "action_rate_l2",  "air_time",
    "foot_clearance",        "foot_swing_height",      "foot_slip",       "soft_landing",
    "angular_momentum",      "self_collisions",        "shank_collision", "trunk_head_collision"};

std::unique_ptr<BatchEnv> go1(int64_t n, uint64_t seed, const EnvOptions& options = {},
                              const EnvTextOptions& text = {}) {
  return make(kId, n, Device::kCpu, seed, options, text);
}

at::Tensor cols(const at::Tensor& obs, int start, int width) { return obs.narrow(1, start, width); }
at::Tensor actor(const at::Tensor& obs, int start, int width) { return cols(obs, start, width); }
at::Tensor critic(const at::Tensor& obs, int start, int width) {
  return cols(obs, kActorDim + start, width);
}

// Uniform actions in [-scale, scale].
at::Tensor random_actions(at::Generator& gen, int64_t n, double scale) {
  return (at::rand({n, kJoints}, gen) * 2 - 1) * scale;
}

double max_abs(const at::Tensor& t) { return t.abs().max().item<double>(); }

// Restores the CPU thread count a test changed.
struct ThreadsGuard {
  int saved = cpu_threads();
  ~ThreadsGuard() { set_cpu_threads(saved); }
};

// Proves the task's hooks give the same observations, rewards and episode ends on the engine
// (float64) as on libmujoco, with the default randomization (per-env models and pushes).
TEST(VelocityTask, EngineAgreesWithLibmujoco) {
  const int64_t n = 4;
  auto ours = go1(n, 7, {{"precision", 64}});
  auto ref = go1(n, 7, {}, {{"physics", "mujoco"}});
  ASSERT_EQ(ours->spec().observation_space.flat_size(), kObsDim);
  ASSERT_EQ(ours->spec().actor_obs_dim, kActorDim);
  ASSERT_EQ(ref->spec().actor_obs_dim, kActorDim);
  EXPECT_LT(max_abs(ours->buffers().obs - ref->buffers().obs), 1e-4);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  double worst_obs = 0, worst_reward = 0, contacts = 0;
  for (int t = 0; t < 60; ++t) {
    const at::Tensor a = random_actions(gen, n, 0.3);
    ours->step(a);
    ref->step(a);
    const StepBuffers& b = ours->buffers();
    const StepBuffers& r = ref->buffers();
    worst_obs = std::max(worst_obs, max_abs(b.obs - r.obs));
    worst_reward = std::max(worst_reward, max_abs(b.reward - r.reward));
    EXPECT_TRUE(at::equal(b.terminated, r.terminated)) << "step " << t;
    EXPECT_TRUE(at::equal(b.truncated, r.truncated)) << "step " << t;
    for (const char* term : kTerms) {
      const std::string key = std::string("reward_") + term;
      EXPECT_LT(max_abs(b.info.at(key) - r.info.at(key)), 1e-5) << key << " step " << t;
    }
    contacts += critic(b.obs, kContact - kActorDim, 4).sum().item<double>();
  }
  EXPECT_LT(worst_obs, 1e-4);
  EXPECT_LT(worst_reward, 1e-5);
  // The physics under the task agree far closer (float64 on both).
  EXPECT_LT(max_abs(ours->get_state() - ref->get_state()), 1e-9);
  EXPECT_GT(contacts, 0) << "the feet never touched the ground: the comparison is vacuous";
}

// Proves the float32 engine's task rollout is bitwise independent of the CPU thread count, and
// that the seed matters.
TEST(VelocityTask, BitwiseTheSameOnOneAndTwoThreads) {
  ThreadsGuard guard;
  const int64_t n = 6;
  auto run = [&](int threads, uint64_t seed, at::Tensor& obs_log, at::Tensor& state) {
    set_cpu_threads(threads);
    auto env = go1(n, seed, {{"precision", 32}});
    auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
    std::vector<at::Tensor> log{env->buffers().obs.clone()};
    for (int t = 0; t < 60; ++t) {
      env->step(random_actions(gen, n, 0.3));
      log.push_back(env->buffers().obs.clone());
      log.push_back(env->buffers().reward.clone().unsqueeze(1));
    }
    obs_log = at::cat(log, 1);
    state = env->get_state();
  };
  at::Tensor obs1, state1, obs2, state2, obs3, state3;
  run(1, 21, obs1, state1);
  run(2, 21, obs2, state2);
  EXPECT_TRUE(at::equal(obs1, obs2));
  EXPECT_TRUE(at::equal(state1, state2));
  run(2, 22, obs3, state3);
  EXPECT_FALSE(at::equal(obs1, obs3));
  EXPECT_FALSE(at::equal(state1, state3));
}

// Proves the observation row's layout: the actor's joint positions carry the env's encoder bias
// (drawn once per seed and env), the critic's terms are the actor's without noise or bias, and
// corrupt_observations adds mjlab's noise only within its bounds.
TEST(VelocityTask, ObservationLayoutBiasAndNoise) {
  const int64_t n = 4;
  const uint64_t seed = 3;
  auto clean = go1(n, seed, {{"corrupt_observations", 0}});
  auto noisy = go1(n, seed, {{"corrupt_observations", 1}});
  const at::Tensor bias = (actor(clean->buffers().obs, kJointPos, kJoints) -
                           critic(clean->buffers().obs, kJointPos, kJoints))
                              .clone();
  EXPECT_LE(max_abs(bias), 0.015 + 1e-6);
  EXPECT_GT(max_abs(bias), 0.0) << "no encoder bias";
  EXPECT_GT(max_abs(bias[0] - bias[1]), 1e-4) << "envs 0 and 1 share their bias";
  const double tol = 2e-6;  // float32 rounding of q + bias - q0 against q - q0
  auto check_clean = [&](const at::Tensor& obs, const std::string& where) {
    EXPECT_LT(max_abs(actor(obs, kJointPos, kJoints) - critic(obs, kJointPos, kJoints) - bias), tol)
        << where;
    // Every other actor term is the critic's, to the bit.
    EXPECT_TRUE(at::equal(actor(obs, 0, kJointPos), critic(obs, 0, kJointPos))) << where;
    EXPECT_TRUE(at::equal(actor(obs, kJointVel, kActorDim - kJointVel),
                          critic(obs, kJointVel, kActorDim - kJointVel)))
        << where;
  };
  check_clean(clean->buffers().obs, "reset");
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  double lin = 0, ang = 0, grav = 0, jpos = 0, jvel = 0;
  for (int t = 0; t < 40; ++t) {
    const at::Tensor a = random_actions(gen, n, 0.3);
    clean->step(a);
    noisy->step(a);
    const at::Tensor obs = clean->buffers().obs;
    check_clean(obs, "step " + std::to_string(t));
    // The last action is the one just taken (where the episode goes on).
    const at::Tensor going =
        at::logical_not(at::logical_or(clean->buffers().terminated, clean->buffers().truncated));
    for (int64_t i = 0; i < n; ++i) {
      if (going[i].item<bool>()) {
        EXPECT_TRUE(at::equal(actor(obs, kLastAction, kJoints)[i], a[i])) << "step " << t;
      }
    }
    // The noisy actor against its own (noise-free) critic.
    const at::Tensor o = noisy->buffers().obs;
    const double dl = max_abs(actor(o, kLinVel, 3) - critic(o, kLinVel, 3));
    const double da = max_abs(actor(o, kAngVel, 3) - critic(o, kAngVel, 3));
    const double dg = max_abs(actor(o, kGravity, 3) - critic(o, kGravity, 3));
    const double dp = max_abs(actor(o, kJointPos, kJoints) - critic(o, kJointPos, kJoints) - bias);
    const double dv = max_abs(actor(o, kJointVel, kJoints) - critic(o, kJointVel, kJoints));
    EXPECT_LE(dl, 0.5 + 1e-5) << "step " << t;
    EXPECT_LE(da, 0.2 + 1e-5) << "step " << t;
    EXPECT_LE(dg, 0.05 + 1e-5) << "step " << t;
    EXPECT_LE(dp, 0.01 + 1e-5) << "step " << t;
    EXPECT_LE(dv, 1.5 + 1e-4) << "step " << t;
    // The last action and the command carry no noise.
    EXPECT_TRUE(at::equal(actor(o, kLastAction, 15), critic(o, kLastAction, 15))) << "step " << t;
    lin = std::max(lin, dl);
    ang = std::max(ang, da);
    grav = std::max(grav, dg);
    jpos = std::max(jpos, dp);
    jvel = std::max(jvel, dv);
  }
  // The noise is there, and of about its size (uniform over the whole range).
  EXPECT_GT(lin, 0.25);
  EXPECT_GT(ang, 0.1);
  EXPECT_GT(grav, 0.025);
  EXPECT_GT(jpos, 0.005);
  EXPECT_GT(jvel, 0.75);
  // The bias is the seed's: the same after reset with it, on both envs.
  clean->reset(seed);
  check_clean(clean->buffers().obs, "reset(seed)");
  noisy->reset(seed);
  EXPECT_LE(max_abs(actor(noisy->buffers().obs, kJointPos, kJoints) -
                    critic(noisy->buffers().obs, kJointPos, kJoints) - bias),
            0.01 + 1e-5);
  // Another seed draws other biases.
  clean->reset(seed + 1);
  const at::Tensor other = actor(clean->buffers().obs, kJointPos, kJoints) -
                           critic(clean->buffers().obs, kJointPos, kJoints);
  EXPECT_GT(max_abs(other - bias), 1e-4);
  EXPECT_LE(max_abs(other), 0.015 + 1e-6);
}

// Proves each term's noise is its own option: joint velocities without noise, the IMU's linear
// velocity with 4x mjlab's, the rest as mjlab's.
TEST(VelocityTask, NoisePerTermIsAnOption) {
  const int64_t n = 4;
  auto env = go1(n, 3, {{"noise_joint_vel", 0.0}, {"noise_base_lin_vel", 2.0}});
  auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
  double lin = 0;
  for (int t = 0; t < 30; ++t) {
    env->step(random_actions(gen, n, 0.3));
    const at::Tensor o = env->buffers().obs;
    EXPECT_TRUE(at::equal(actor(o, kJointVel, kJoints), critic(o, kJointVel, kJoints)));
    lin = std::max(lin, max_abs(actor(o, 0, 3) - critic(o, 0, 3)));
  }
  EXPECT_GT(lin, 1.0);
  EXPECT_LE(lin, 2.0 + 1e-4);
  EXPECT_THROW(go1(1, 3, {{"noise_joint_pos", -0.1}}), std::invalid_argument);
}

// Proves play mode (option play: mjlab's play_env_cfg, evaluation's default) is the training task
// without the actor's noise and without the push: bitwise the same as corrupt_observations=0
// with the robot's startup terms only, and not the same as the default, which pushes.
TEST(VelocityTask, PlayModeDropsNoiseAndPush) {
  const int64_t n = 8;
  const char* dir = std::getenv("MYRIAD_ROBOTS_DIR");  // else this source tree's
  std::ifstream in(std::string(dir ? dir : MYRIAD_ROBOTS_SOURCE_DIR) + "/go1_randomize.json");
  ASSERT_TRUE(in.good());
  std::stringstream startup_terms;
  startup_terms << in.rdbuf();
  auto play = go1(n, 5, {{"play", 1}});
  auto by_hand = go1(n, 5, {{"corrupt_observations", 0}}, {{"randomize", startup_terms.str()}});
  auto pushed = go1(n, 5, {{"corrupt_observations", 0}});
  auto gen = at::make_generator<at::CPUGeneratorImpl>(4);
  for (int t = 0; t < 150; ++t) {
    const at::Tensor a = random_actions(gen, n, 0.3);
    play->step(a);
    by_hand->step(a);
    pushed->step(a);
    ASSERT_TRUE(at::equal(play->buffers().obs, by_hand->buffers().obs)) << "step " << t;
    ASSERT_TRUE(at::equal(play->buffers().reward, by_hand->buffers().reward)) << "step " << t;
    // No noise: the actor's terms are the critic's (joint positions aside: the encoder bias).
    const at::Tensor o = play->buffers().obs;
    ASSERT_TRUE(at::equal(actor(o, 0, kJointPos), critic(o, 0, kJointPos)));
  }
  // Over 3 s some env was pushed (every U(1, 3) s) in the default, so its states differ.
  EXPECT_GT(max_abs(play->buffers().obs - pushed->buffers().obs), 0.1);
}

at::Tensor reward_sum(const StepBuffers& b) {
  at::Tensor sum = at::zeros_like(b.reward);
  for (const char* term : kTerms) sum = sum + b.info.at(std::string("reward_") + term);
  return sum;
}

// Proves the reward is the sum of the logged reward_* terms, and that a weight option reaches its
// term.
TEST(VelocityTask, RewardIsTheSumOfItsTermsAndWeightsApply) {
  const int64_t n = 8;
  auto env = go1(n, 13);
  const auto& info = env->buffers().info;
  for (const char* term : kTerms) EXPECT_TRUE(info.count(std::string("reward_") + term)) << term;
  for (const char* key : {"error_vel_xy", "error_vel_yaw", "command_vx", "command_vy", "command_wz",
                          "curriculum_lin_vel_x_max", "curriculum_ang_vel_z_max"})
    EXPECT_TRUE(info.count(key)) << key;
  EXPECT_EQ(info.size(), 23u);
  auto no_pose = go1(n, 13, {{"pose", 0}});
  auto gen = at::make_generator<at::CPUGeneratorImpl>(17);
  double pose = 0, upright = 0;
  for (int t = 0; t < 60; ++t) {
    const at::Tensor a = random_actions(gen, n, 0.3);
    env->step(a);
    no_pose->step(a);
    EXPECT_LT(max_abs(env->buffers().reward - reward_sum(env->buffers())), 1e-5) << "step " << t;
    EXPECT_LT(max_abs(no_pose->buffers().reward - reward_sum(no_pose->buffers())), 1e-5)
        << "step " << t;
    EXPECT_EQ(max_abs(no_pose->buffers().info.at("reward_pose")), 0.0) << "step " << t;
    pose = std::max(pose, max_abs(env->buffers().info.at("reward_pose")));
    upright = std::max(upright, max_abs(no_pose->buffers().info.at("reward_upright")));
  }
  EXPECT_GT(pose, 0.0) << "reward_pose is 0 at the default weight too";
  EXPECT_GT(upright, 0.0);
}

// Proves the command kinds at reset (standing envs all zero, forward envs vx = max(|vx|, 0.3)
// with no lateral or turning command, standing winning) and that commands stay in their ranges.
TEST(VelocityTask, CommandKindsAndRanges) {
  const int64_t n = 256;
  // Zero ranges: only forward envs that are not standing have a command, (0.3, 0, 0).
  {
    auto env = go1(
        n, 31, {},
        {{"lin_vel_x", "0,0"}, {"lin_vel_y", "0,0"}, {"ang_vel_z", "0,0"}, {"randomize", "{}"}});
    const at::Tensor c = actor(env->buffers().obs, kCommand, 3);
    int forward = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float vx = c[i][0].item<float>(), vy = c[i][1].item<float>(),
                  wz = c[i][2].item<float>();
      EXPECT_EQ(vy, 0.0f) << "env " << i;
      EXPECT_EQ(wz, 0.0f) << "env " << i;
      EXPECT_TRUE(vx == 0.0f || vx == 0.3f) << "env " << i << " vx " << vx;
      forward += vx == 0.3f;
    }
    const double share = forward / static_cast<double>(n);
    EXPECT_GE(share, 0.08) << forward << " forward envs";
    EXPECT_LE(share, 0.3) << forward << " forward envs";
  }
  // Ranges away from zero: only standing envs have an all-zero command.
  {
    auto env = go1(n, 32, {},
                   {{"lin_vel_x", "0.5,1"},
                    {"lin_vel_y", "0.2,0.4"},
                    {"ang_vel_z", "0.1,0.3"},
                    {"randomize", "{}"}});
    const at::Tensor c = actor(env->buffers().obs, kCommand, 3);
    int standing = 0, forward = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float vx = c[i][0].item<float>(), vy = c[i][1].item<float>(),
                  wz = c[i][2].item<float>();
      if (vx == 0.0f && vy == 0.0f && wz == 0.0f) {
        ++standing;
        continue;
      }
      EXPECT_TRUE(vx >= 0.5f && vx <= 1.0f) << "env " << i << " vx " << vx;
      EXPECT_TRUE(vy == 0.0f || (vy >= 0.2f && vy <= 0.4f)) << "env " << i << " vy " << vy;
      // wz: 0 only for a forward env that is no heading env; else in the range.
      EXPECT_TRUE((wz == 0.0f && vy == 0.0f) || (wz >= 0.1f && wz <= 0.3f))
          << "env " << i << " wz " << wz;
      forward += vy == 0.0f;
    }
    const double s = standing / static_cast<double>(n), f = forward / static_cast<double>(n);
    EXPECT_GE(s, 0.04) << standing << " standing envs";
    EXPECT_LE(s, 0.18) << standing << " standing envs";
    EXPECT_GE(f, 0.08) << forward << " forward envs";  // 0.2 * 0.9 expected
    EXPECT_LE(f, 0.3) << forward << " forward envs";
  }
  // A rollout (commands resampled every 3 to 8 s, heading envs steering every step): every
  // command in its range, in the info (the step's) and the observation (the next step's).
  {
    const int64_t m = 32;
    auto env =
        go1(m, 33, {},
            {{"lin_vel_x", "-0.6,0.8"}, {"lin_vel_y", "-0.4,0.3"}, {"ang_vel_z", "-0.3,0.7"}});
    auto gen = at::make_generator<at::CPUGeneratorImpl>(19);
    auto in = [](const at::Tensor& x, double lo, double hi) {
      return x.min().item<double>() >= lo - 1e-6 && x.max().item<double>() <= hi + 1e-6;
    };
    at::Tensor first = actor(env->buffers().obs, kCommand, 3).clone();
    bool changed = false;
    for (int t = 0; t < 200; ++t) {
      env->step(random_actions(gen, m, 0.3));
      const StepBuffers& b = env->buffers();
      const at::Tensor c = actor(b.obs, kCommand, 3);
      EXPECT_TRUE(in(c.select(1, 0), -0.6, 0.8)) << "vx, step " << t;
      EXPECT_TRUE(in(c.select(1, 1), -0.4, 0.3)) << "vy, step " << t;
      EXPECT_TRUE(in(c.select(1, 2), -0.3, 0.7)) << "wz, step " << t;
      EXPECT_TRUE(in(b.info.at("command_vx"), -0.6, 0.8)) << "step " << t;
      EXPECT_TRUE(in(b.info.at("command_vy"), -0.4, 0.3)) << "step " << t;
      EXPECT_TRUE(in(b.info.at("command_wz"), -0.3, 0.7)) << "step " << t;
      EXPECT_TRUE(at::equal(c, critic(b.obs, kCommand, 3)));
      changed = changed || !at::equal(c.narrow(1, 0, 2), first.narrow(1, 0, 2));
    }
    EXPECT_TRUE(changed) << "no command was resampled in 4 s";
  }
}

// Proves reset_base and reset_robot_joints: root x, y within +-0.5 m, z 0.01 to 0.05 m above the
// keyframe's 0.278, a pure yaw, the joints at the default pose, at rest.
TEST(VelocityTask, ResetPose) {
  const int64_t n = 16;
  auto env = go1(n, 41);
  const double q0[kJoints] = {0.1, 0.9, -1.8, -0.1, 0.9, -1.8, 0.1, 0.9, -1.8, -0.1, 0.9, -1.8};
  auto check = [&](const std::string& where) {
    const at::Tensor s = env->get_state();
    ASSERT_EQ(s.size(1), kStateWidth);
    std::vector<double> yaws;
    for (int64_t i = 0; i < n; ++i) {
      const double x = s[i][1].item<double>(), y = s[i][2].item<double>(),
                   z = s[i][3].item<double>();
      EXPECT_TRUE(x >= -0.5 && x <= 0.5) << where << " env " << i << " x " << x;
      EXPECT_TRUE(y >= -0.5 && y <= 0.5) << where << " env " << i << " y " << y;
      EXPECT_TRUE(z >= 0.278 + 0.01 - 1e-6 && z <= 0.278 + 0.05 + 1e-6)
          << where << " env " << i << " z " << z;
      const double qw = s[i][4].item<double>(), qx = s[i][5].item<double>(),
                   qy = s[i][6].item<double>(), qz = s[i][7].item<double>();
      EXPECT_NEAR(qx, 0.0, 1e-9) << where << " env " << i;
      EXPECT_NEAR(qy, 0.0, 1e-9) << where << " env " << i;
      EXPECT_NEAR(qw * qw + qz * qz, 1.0, 1e-6) << where << " env " << i;
      yaws.push_back(2 * std::atan2(qz, qw));
      for (int j = 0; j < kJoints; ++j)
        EXPECT_NEAR(s[i][8 + j].item<double>(), q0[j], 1e-6) << where << " env " << i;
      EXPECT_EQ(max_abs(s[i].narrow(0, 1 + kNq, kNv)), 0.0) << where << " env " << i;
    }
    // The offsets are drawn: the envs differ in x and yaw.
    EXPECT_GT(max_abs(s.select(1, 1) - s[0][1]), 0.05) << where;
    double spread = 0;
    for (double yaw : yaws) spread = std::max(spread, std::abs(yaw - yaws[0]));
    EXPECT_GT(spread, 0.5) << where;
  };
  check("make");
  env->reset(42);
  check("reset(42)");
  // And the first observation's joint terms: the critic's joint positions and velocities are 0.
  EXPECT_LT(max_abs(critic(env->buffers().obs, kJointPos, kJoints)), 1e-6);
  EXPECT_EQ(max_abs(critic(env->buffers().obs, kJointVel, kJoints)), 0.0);
  EXPECT_EQ(max_abs(critic(env->buffers().obs, kLastAction, kJoints)), 0.0);
}

// Proves reset_base's ranges are options: zero ranges start every env at the default pose.
TEST(VelocityTask, ResetRangesAreOptions) {
  auto env = go1(3, 5, {},
                 {{"reset_base_x", "0,0"},
                  {"reset_base_y", "0,0"},
                  {"reset_base_z", "0,0"},
                  {"reset_base_yaw", "0,0"}});
  const at::Tensor s = env->get_state();
  const double root[7] = {0, 0, 0.278, 1, 0, 0, 0};
  for (int64_t i = 0; i < 3; ++i)
    for (int k = 0; k < 7; ++k) EXPECT_NEAR(s[i][1 + k].item<double>(), root[k], 1e-6);
  EXPECT_THROW(go1(1, 5, {}, {{"reset_base_z", "0.05,0.01"}}), std::invalid_argument);
}

// Proves save_rollout_state / load_rollout_state continue the exact rollout (the task's state
// included) and that a saved state without the task's part is refused.
TEST(VelocityTask, RolloutStateContinuesBitwise) {
  const int64_t n = 4;
  auto env = go1(n, 51);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(23);
  for (int t = 0; t < 20; ++t) env->step(random_actions(gen, n, 0.3));
  const auto saved = env->save_rollout_state();
  ASSERT_TRUE(saved.count("task"));
  std::vector<at::Tensor> actions, obs, reward;
  for (int t = 0; t < 20; ++t) {
    actions.push_back(random_actions(gen, n, 0.3));
    env->step(actions.back());
    obs.push_back(env->buffers().obs.clone());
    reward.push_back(env->buffers().reward.clone());
  }
  env->load_rollout_state(saved);
  for (int t = 0; t < 20; ++t) {
    env->step(actions[t]);
    EXPECT_TRUE(at::equal(env->buffers().obs, obs[t])) << "step " << t;
    EXPECT_TRUE(at::equal(env->buffers().reward, reward[t])) << "step " << t;
  }
  // Into a fresh env of another seed, too.
  auto other = go1(n, 99);
  other->load_rollout_state(saved);
  for (int t = 0; t < 20; ++t) {
    other->step(actions[t]);
    EXPECT_TRUE(at::equal(other->buffers().obs, obs[t])) << "fresh env, step " << t;
    EXPECT_TRUE(at::equal(other->buffers().reward, reward[t])) << "fresh env, step " << t;
  }
  auto no_task = saved;
  no_task.erase("task");
  EXPECT_THROW(env->load_rollout_state(no_task), std::invalid_argument);
}

// Proves mjlab's command curriculum through the env: the ranges in force (logged as
// curriculum_lin_vel_x_max and curriculum_ang_vel_z_max) widen at the step counts of the stages
// (options, here 3 and 5 policy steps), a reset keeps the count and draws its commands from the
// widened ranges (the first one too, at count 0), a rollout state carries the count into a
// fresh env, and play mode and command_curriculum=0 keep the options' ranges.
TEST(VelocityTask, CommandCurriculumWidensTheRangesAtItsStages) {
  const int64_t n = 256;
  const EnvOptions stages = {{"command_stage1_step", 3}, {"command_stage2_step", 5}};
  auto env = go1(n, 61, stages);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(29);
  auto in_force = [](const BatchEnv& e, const char* key) {
    const at::Tensor v = e.buffers().info.at(key);
    EXPECT_TRUE(at::equal(v, v[0].expand_as(v))) << key << " differs between envs";
    return v[0].item<double>();
  };
  // mjlab's common_step_counter after the k-th step is k: stage 1 from step 3, stage 2 from 5.
  const double x_max[] = {1.0, 1.0, 2.0, 2.0, 3.0, 3.0};
  const double z_max[] = {0.5, 0.5, 0.7f, 0.7f, 0.7f, 0.7f};
  for (int k = 0; k < 6; ++k) {
    env->step(random_actions(gen, n, 0.3));
    EXPECT_EQ(in_force(*env, "curriculum_lin_vel_x_max"), x_max[k]) << "step " << k + 1;
    EXPECT_EQ(in_force(*env, "curriculum_ang_vel_z_max"), z_max[k]) << "step " << k + 1;
  }
  const auto saved = env->save_rollout_state();
  ASSERT_TRUE(saved.count("curriculum_step"));
  EXPECT_EQ(saved.at("curriculum_step").item<int64_t>(), 6);
  // A reset draws every command from the stage-2 ranges: vx in [-2, 3], wz in [-0.7, 0.7]
  // (about a fifth of the 256 envs above vx = 2 and below -1.2, 0.55 < |wz|).
  env->reset(61);
  env->step(random_actions(gen, n, 0.3));
  const at::Tensor vx = env->buffers().info.at("command_vx");
  const at::Tensor wz = env->buffers().info.at("command_wz");
  EXPECT_GT(vx.max().item<double>(), 2.0);
  EXPECT_LT(vx.min().item<double>(), -1.2);
  EXPECT_LE(vx.max().item<double>(), 3.0);
  EXPECT_GE(vx.min().item<double>(), -2.0);
  EXPECT_GT(wz.abs().max().item<double>(), 0.55);
  EXPECT_LE(wz.abs().max().item<double>(), 0.7f);
  // The first reset, at count 0, already applies a stage from step 0 (the commands the first
  // step reports were drawn by it).
  auto from_start = go1(n, 63, {{"command_stage1_step", 0}});
  from_start->step(random_actions(gen, n, 0.3));
  EXPECT_GT(from_start->buffers().info.at("command_vx").max().item<double>(), 1.2);
  // A fresh env (count 0) takes the count from a rollout state.
  auto fresh = go1(n, 62, stages);
  fresh->load_rollout_state(saved);
  fresh->step(random_actions(gen, n, 0.3));
  EXPECT_EQ(in_force(*fresh, "curriculum_lin_vel_x_max"), 3.0);
  // Off: play mode, and the option.
  for (const EnvOptions& off :
       {EnvOptions{{"command_stage1_step", 3}, {"play", 1}},
        EnvOptions{{"command_stage1_step", 3}, {"command_curriculum", 0}}}) {
    auto kept = go1(n, 61, off);
    for (int k = 0; k < 4; ++k) kept->step(random_actions(gen, n, 0.3));
    EXPECT_EQ(in_force(*kept, "curriculum_lin_vel_x_max"), 1.0);
    EXPECT_EQ(in_force(*kept, "curriculum_ang_vel_z_max"), 0.5);
  }
}

// Proves the robot stands with zero actions and a zero command: no termination, the trunk at
// standing height, upright rewarded nearly fully.
TEST(VelocityTask, StandsStillWithZeroActions) {
  const int64_t n = 4;
  auto env =
      go1(n, 61, {{"corrupt_observations", 0}},
          {{"lin_vel_x", "0,0"}, {"lin_vel_y", "0,0"}, {"ang_vel_z", "0,0"}, {"randomize", "{}"}});
  const at::Tensor zero = at::zeros({n, kJoints});
  for (int t = 0; t < 150; ++t) {
    env->step(zero);
    const StepBuffers& b = env->buffers();
    EXPECT_FALSE(b.terminated.any().item<bool>()) << "step " << t;
    EXPECT_FALSE(b.truncated.any().item<bool>()) << "step " << t;
    const at::Tensor z = env->get_state().select(1, 3);
    EXPECT_GE(z.min().item<double>(), 0.2) << "step " << t;
    EXPECT_LE(z.max().item<double>(), 0.4) << "step " << t;
    if (t >= 50) {
      EXPECT_GT(b.info.at("reward_upright").min().item<double>(), 0.9 * 1.0 * kStepDt)
          << "step " << t;
    }
  }
  EXPECT_EQ(env->diverged_count(), 0);
  // Standing, every foot touches the ground and the critic's contact force (on the terrain,
  // sign(f) log1p|f|, MuJoCo's contact sensor from the foot) points down, carrying about a
  // quarter of the robot's weight, with little sideways.
  const at::Tensor obs = env->buffers().obs;
  for (int64_t i = 0; i < n; ++i)
    for (int f = 0; f < 4; ++f) {
      EXPECT_EQ(obs[i][kContact + f].item<float>(), 1.0f) << "env " << i;
      const float fz = obs[i][kForces + 3 * f + 2].item<float>();
      EXPECT_LT(fz, -std::log1p(5.0f)) << "env " << i << " foot " << f;
      EXPECT_GT(fz, -std::log1p(100.0f)) << "env " << i << " foot " << f;
    }
}

// Proves fell_over terminates a robot rolled onto its side (90 degrees > 70) and only it, and
// that the options fell_over=0 and fell_over_angle turn it off.
TEST(VelocityTask, FallingOverTerminates) {
  const int64_t n = 3;
  auto rolled_step = [&](const EnvOptions& options) {
    auto env = go1(n, 71, options, {{"randomize", "{}"}});
    at::Tensor s = env->get_state();
    const double h = std::sqrt(0.5);
    s[0][3] = 0.35;
    s[0][4] = h;  // (cos 45, sin 45, 0, 0): 90 degrees about x
    s[0][5] = h;
    s[0][6] = 0.0;
    s[0][7] = 0.0;
    env->set_state(s, at::Tensor());
    env->step(at::zeros({n, kJoints}));
    return env->buffers().terminated.clone();
  };
  const at::Tensor on = rolled_step({});
  EXPECT_TRUE(on[0].item<bool>());
  EXPECT_FALSE(on[1].item<bool>());
  EXPECT_FALSE(on[2].item<bool>());
  EXPECT_FALSE(rolled_step({{"fell_over", 0}}).any().item<bool>());
  EXPECT_FALSE(rolled_step({{"fell_over_angle", 100}}).any().item<bool>());
  EXPECT_TRUE(rolled_step({{"fell_over_angle", 60}})[0].item<bool>());
}

void expect_refused(const EnvOptions& options, const EnvTextOptions& text,
                    const std::string& needle) {
  try {
    go1(2, 1, options, text);
    ADD_FAILURE() << "accepted options expected to fail with: " << needle;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << needle;
  }
}

// Proves bad options are refused with a message naming what is wrong.
TEST(VelocityTask, BadOptionsAreRefused) {
  expect_refused({}, {{"launch", "tiled"}}, "launch=tiled");
  expect_refused({}, {{"launch", "sideways"}}, "launch");
  expect_refused({{"no_such_option", 1}}, {}, "no_such_option");
  expect_refused({}, {{"no_such_range", "0,1"}}, "no_such_range");
  expect_refused({{"lin_vel_x", 1}}, {}, "lin_vel_x");
  expect_refused({}, {{"lin_vel_x", "1,-1"}}, "lin_vel_x");
  expect_refused({{"corrupt_observations", 2}}, {}, "corrupt_observations");
  expect_refused({{"fell_over_angle", -1}}, {}, "fell_over_angle");
  expect_refused({{"command_stage1_step", 2.5}}, {}, "command_stage1_step");
  expect_refused({{"command_stage2_step", -1}}, {}, "command_stage2_step");
  expect_refused({{"command_stage1_step", 10}, {"command_stage2_step", 5}}, {},
                 "command_stage2_step");
  expect_refused({}, {{"command_stage1_lin_vel_x", "2,-1"}}, "command_stage1_lin_vel_x");
  expect_refused({}, {{"physics", "bullet"}}, "physics");
  expect_refused({}, {{"randomize", R"({"f": {"field": "geom_friction", "range": [1.5, 0.3]}})"}},
                 "randomize.f.range");
  // launch=fused, staged and auto are taken.
  EXPECT_NO_THROW(go1(2, 1, {}, {{"launch", "fused"}}));
  EXPECT_NO_THROW(go1(2, 1, {}, {{"launch", "staged"}}));
  EXPECT_NO_THROW(go1(2, 1, {}, {{"launch", "auto"}}));
}

// G1-Velocity-Flat-v0: mjlab's G1 layout (29 joints, 2 feet: actor 99, critic 111), its knees-bent
// start, its extra terms live (the torso's angular velocity, the root's angular momentum), and
// the engine (float64) within 1e-3 of libmujoco after 40 steps of random actions. (G1's feet are
// 7 capsules each on pyramidal cones, which leave the two solvers' last iterates apart by about
// 1e-4 where Go1's agree to 1e-13; the states do not drift further apart.)
TEST(VelocityTask, G1FlatLayoutStartAndLibmujoco) {
  auto ours = make("G1-Velocity-Flat-v0", 4, Device::kCpu, 3, {{"precision", 64}}, {});
  auto ref = make("G1-Velocity-Flat-v0", 4, Device::kCpu, 3, {}, {{"physics", "mujoco"}});
  EXPECT_EQ(ours->spec().actor_obs_dim, 99);
  EXPECT_EQ(ours->spec().observation_space.flat_size(), 210);
  ASSERT_EQ(ours->spec().action_space.flat_size(), 29);
  const at::Tensor start = ours->get_state();
  const double knees_bent[14] = {-0.312, 0, 0,     0.669,  -0.363, 0, -0.312,
                                 0,      0, 0.669, -0.363, 0,      0, 0};
  for (int64_t i = 0; i < 4; ++i)
    for (int j = 0; j < 14; ++j)
      EXPECT_NEAR(start[i][1 + 7 + j].item<double>(), knees_bent[j], 1e-9) << "env " << i;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  double angmom = 0, torso = 0;
  for (int t = 0; t < 40; ++t) {
    const at::Tensor a = (at::rand({4, 29}, gen) * 2 - 1) * 0.3;
    ours->step(a);
    ref->step(a);
    angmom += max_abs(ours->buffers().info.at("reward_angular_momentum"));
    torso += max_abs(ours->buffers().info.at("reward_body_ang_vel"));
  }
  EXPECT_GT(angmom, 0);
  EXPECT_GT(torso, 0);
  EXPECT_LT(max_abs(ours->get_state() - ref->get_state()), 1e-3);
}

// ---- Go1-Velocity-Rough-v0 ---------------------------------------------------------------------

constexpr const char* kRoughId = "Go1-Velocity-Rough-v0";
constexpr int kScan = 187, kRoughActor = kActorDim + kScan;

std::unique_ptr<BatchEnv> go1_rough(int64_t n, uint64_t seed, const EnvOptions& options = {},
                                    const EnvTextOptions& text = {}) {
  return make(kRoughId, n, Device::kCpu, seed, options, text);
}

// The terrain the task builds (option terrain_seed 0, a 5 m border).
const legged::Terrain& rough_terrain() {
  static const legged::Terrain t = [] {
    legged::TerrainConfig c;
    c.border = 5;
    return legged::generate_terrain(c);
  }();
  return t;
}

// The tile whose origin is nearest (x, y): {level, kind}.
std::pair<int, int> nearest_tile(double x, double y) {
  const auto& t = rough_terrain();
  std::pair<int, int> best{-1, -1};
  double best_d = 1e9;
  for (int level = 0; level < t.levels; ++level)
    for (int k = 0; k < t.kinds; ++k) {
      const double* o = t.tile_origin(level, k);
      const double d = std::hypot(x - o[0], y - o[1]);
      if (d < best_d) best_d = d, best = {level, k};
    }
  return best;
}

// Proves the rough task's layout and start: [actor 235 | critic 259], envs on their tiles (within
// the reset's offsets of the origin, at its height), first levels 0 ... 5, the kinds spread by
// their shares; on the flat kind the height scan reads the trunk's height (/ 5) on every ray, the
// critic's scan the actor's in play mode.
TEST(VelocityTaskRough, StartsOnItsTilesAndScans) {
  const int64_t n = 64;
  auto env = go1_rough(n, 5, {{"play", 0}, {"corrupt_observations", 0}});
  ASSERT_EQ(env->spec().actor_obs_dim, kRoughActor);
  ASSERT_EQ(env->spec().observation_space.flat_size(), 2 * kRoughActor + 24);
  const at::Tensor s = env->get_state();
  const at::Tensor obs = env->buffers().obs;
  const auto& t = rough_terrain();
  std::vector<int> kinds(t.kinds, 0);
  int flat = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = s[i][1].item<double>(), y = s[i][2].item<double>(), z = s[i][3].item<double>();
    const auto [level, kind] = nearest_tile(x, y);
    const double* o = t.tile_origin(level, kind);
    EXPECT_LE(std::fabs(x - o[0]), 0.5 + 1e-9);
    EXPECT_LE(std::fabs(y - o[1]), 0.5 + 1e-9);
    EXPECT_GE(z - o[2], 0.278 + 0.01 - 1e-6);
    EXPECT_LE(z - o[2], 0.278 + 0.05 + 1e-6);
    EXPECT_LE(level, 5);
    ++kinds[kind];
    if (kind != 0) continue;  // the flat kind: the surface is 0 under every ray
    ++flat;
    for (int k = 0; k < kScan; ++k) {
      EXPECT_NEAR(obs[i][kActorDim + k].item<float>(), z / 5.0, 1e-6)
          << "env " << i << " ray " << k;
      EXPECT_EQ(obs[i][kActorDim + k].item<float>(),
                obs[i][kRoughActor + kActorDim + k].item<float>());
    }
  }
  EXPECT_GT(flat, 0);
  for (int k = 0; k < t.kinds; ++k) EXPECT_GT(kinds[k], 0) << "kind " << k;
}

// Proves the height scan reads the ground under each ray of the root's yaw-aligned grid (x inner,
// 17 x 11 at 0.1 m), over every kind and level (play mode: random tiles, no noise), against the
// generated terrain's surface as terrain_sense.h reads it; and that play mode's tiles reach the
// levels above the first placement's 5.
TEST(VelocityTaskRough, ScanReadsTheGroundUnderTheRoot) {
  const int64_t n = 48;
  auto env = go1_rough(n, 6, {{"play", 1}, {"precision", 64}});
  const auto& t = rough_terrain();
  // The field as the env stores it: elevations of its own height, rounded to float.
  const double range = t.z_max - t.z_min;
  std::vector<double> data(t.height.size());
  for (size_t k = 0; k < data.size(); ++k)
    data[k] = static_cast<float>((t.height[k] - t.z_min) / range);
  const double size[4] = {t.half_x, t.half_y, range, 0.1}, pos[3] = {0, 0, t.z_min};
  const legged::FieldView<double> field{size, data.data(), t.nrow, t.ncol, pos};
  const at::Tensor s = env->get_state().to(at::kDouble);
  const at::Tensor obs = env->buffers().obs;
  int high = 0, uneven = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = s[i][1].item<double>(), y = s[i][2].item<double>(), z = s[i][3].item<double>();
    const double qw = s[i][4].item<double>(), qx = s[i][5].item<double>(),
                 qy = s[i][6].item<double>(), qz = s[i][7].item<double>();
    const double yaw = std::atan2(2 * (qw * qz + qx * qy), 1 - 2 * (qy * qy + qz * qz));
    const double c = std::cos(yaw), sn = std::sin(yaw);
    high += nearest_tile(x, y).first > 5;
    double lo = 1e9, hi = -1e9;
    for (int k = 0; k < kScan; ++k) {
      const double lx = -0.8 + 0.1 * (k % 17), ly = -0.5 + 0.1 * (k / 17);
      double ground = 0;
      ASSERT_TRUE(
          legged::surface_height(field, x + c * lx - sn * ly, y + sn * lx + c * ly, ground));
      const double value = z - ground >= 0 && z - ground <= 5 ? z - ground : 5.0;
      EXPECT_NEAR(obs[i][kActorDim + k].item<float>(), value / 5.0, 1e-5)
          << "env " << i << " ray " << k;
      lo = std::min(lo, value), hi = std::max(hi, value);
    }
    uneven += hi - lo > 0.05;
  }
  EXPECT_GT(high, 0);
  EXPECT_GT(uneven, 0);
}

// Proves mjlab's terrain_levels curriculum: an env that walked more than half a tile (moved 5 m
// by set_state) goes a level up at its reset and starts on that tile; one that stood while
// commanded to walk goes a level down (not below 0); the level is in the info.
TEST(VelocityTaskRough, CurriculumMovesLevels) {
  const int64_t n = 16;
  auto env = go1_rough(n, 8, {{"max_episode_steps", 3}, {"play", 0}});
  const at::Tensor zero = at::zeros({n, kJoints});
  env->step(zero);
  const at::Tensor before = env->buffers().info.at("curriculum_terrain_level").clone();
  at::Tensor s = env->get_state();
  for (int64_t i = 0; i < n / 2; ++i) {  // carried 5 m along x, dropped from 2.5 m higher
    s[i][1] += 5.0;
    s[i][3] += 2.5;
  }
  env->set_state(s, at::Tensor());
  env->step(zero);
  env->step(zero);  // the third step: the time limit, the reset
  ASSERT_TRUE(env->buffers().truncated.all().item<bool>());
  const at::Tensor cx = env->buffers().info.at("command_vx"),
                   cy = env->buffers().info.at("command_vy");
  const at::Tensor start = env->get_state();
  env->step(zero);
  const at::Tensor after = env->buffers().info.at("curriculum_terrain_level");
  int down = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int old_level = static_cast<int>(before[i].item<float>());
    const int level = static_cast<int>(after[i].item<float>());
    EXPECT_EQ(nearest_tile(start[i][1].item<double>(), start[i][2].item<double>()).first, level)
        << "env " << i;
    if (i < n / 2) {
      EXPECT_EQ(level, old_level + 1) << "env " << i;
    } else if (std::hypot(cx[i].item<float>(), cy[i].item<float>()) * 10.0 > 1.0) {
      EXPECT_EQ(level, std::max(old_level - 1, 0)) << "env " << i;
      down += old_level > 0;
    }
  }
  EXPECT_GT(down, 0);
}

// Proves leaving the grid truncates (out_of_terrain_bounds, mjlab's time-out) and does not
// terminate.
TEST(VelocityTaskRough, LeavingTheGridTruncates) {
  const int64_t n = 2;
  auto env = go1_rough(n, 3);
  at::Tensor s = env->get_state();
  s[0][1] = 44.9;  // beyond 45 - 0.3 m
  s[0][2] = 0.0;
  s[0][3] = 1.0;
  env->set_state(s.narrow(0, 0, 1), at::tensor({int64_t{0}}));
  env->step(at::zeros({n, kJoints}));
  EXPECT_TRUE(env->buffers().truncated[0].item<bool>());
  EXPECT_FALSE(env->buffers().terminated[0].item<bool>());
  EXPECT_FALSE(env->buffers().truncated[1].item<bool>());
}

// Proves Go1's ground-touch terms (mjlab's Go1 rough config) on hand-made states over the flat
// border, one step of zero actions from rest: the shanks touching the ground (above 10 N) cost
// weight * (substeps touched, 4 of 4) * step_dt in shank_collision; the thighs touching end the
// episode (illegal_contact, unless switched off); the trunk on the ground costs in
// trunk_head_collision; a robot held above the ground touches nothing.
TEST(VelocityTaskRough, GroundTouchCostsAndIllegalContact) {
  struct Case {
    const char* name;
    double z;  // the root's height over the ground
    double quat[4];
  };
  const Case cases[] = {{"above the ground", 0.32, {1, 0, 0, 0}},
                        {"shanks down", 0.20, {1, 0, 0, 0}},
                        {"thighs down", 0.09, {1, 0, 0, 0}},
                        {"on its back", 0.04, {0, 1, 0, 0}}};
  const int64_t n = 4;
  const auto step_from = [&](const EnvOptions& extra) {
    EnvOptions options = {{"play", 0}};
    for (const auto& [k, v] : extra) options[k] = v;
    auto env = go1_rough(n, 3, options, {{"randomize", "{}"}});
    at::Tensor s = env->get_state();
    s.narrow(1, 1 + kNq, kNv).zero_();
    for (int64_t i = 0; i < n; ++i) {
      const double x = 42.0, y = -15.0 + 10.0 * i;  // the 5 m border, inside the bounds
      s[i][1] = x;
      s[i][2] = y;
      s[i][3] = rough_terrain().height_at(x, y) + cases[i].z;
      for (int k = 0; k < 4; ++k) s[i][4 + k] = cases[i].quat[k];
    }
    env->set_state(s, at::Tensor());
    env->step(at::zeros({n, kJoints}));
    std::map<std::string, at::Tensor> out;
    for (const char* key : {"reward_shank_collision", "reward_trunk_head_collision"})
      out[key] = env->buffers().info.at(key).clone();
    out["terminated"] = env->buffers().terminated.clone();
    out["truncated"] = env->buffers().truncated.clone();
    return out;
  };
  const float unit = static_cast<float>(-0.1 * kStepDt);  // one substep of one sensor
  auto on = step_from({});
  for (int64_t i = 0; i < n; ++i) EXPECT_FALSE(on["truncated"][i].item<bool>()) << cases[i].name;
  const auto shank = [](std::map<std::string, at::Tensor>& r, int64_t i) {
    return r["reward_shank_collision"][i].item<float>();
  };
  const auto trunk = [](std::map<std::string, at::Tensor>& r, int64_t i) {
    return r["reward_trunk_head_collision"][i].item<float>();
  };
  const auto ended = [](std::map<std::string, at::Tensor>& r, int64_t i) {
    return r["terminated"][i].item<bool>();
  };
  EXPECT_EQ(shank(on, 0), 0.0f);
  EXPECT_EQ(trunk(on, 0), 0.0f);
  EXPECT_FALSE(ended(on, 0));
  EXPECT_FLOAT_EQ(shank(on, 1), 4 * unit);
  EXPECT_EQ(trunk(on, 1), 0.0f);
  EXPECT_FALSE(ended(on, 1)) << "shanks on the ground do not end the episode";
  EXPECT_TRUE(ended(on, 2)) << "illegal_contact: a thigh on the ground";
  EXPECT_EQ(shank(on, 3), 0.0f);
  EXPECT_FALSE(ended(on, 3)) << "no fell_over on rough ground; the thighs are up";
  const float touched = trunk(on, 3) / unit;  // substeps with the trunk on the ground
  EXPECT_GE(touched, 1.0f);
  EXPECT_LE(touched, 4.0f);
  EXPECT_FLOAT_EQ(touched, std::round(touched));
  // The options: illegal_contact off, the costs' weights.
  auto off =
      step_from({{"illegal_contact", 0}, {"shank_collision", -0.5}, {"trunk_head_collision", 0}});
  EXPECT_FALSE(off["terminated"].any().item<bool>());
  EXPECT_FLOAT_EQ(shank(off, 1), 4 * 5 * unit);
  EXPECT_EQ(trunk(off, 3), 0.0f);
}

// Proves the rough task's reward is the sum of its logged terms (the ground-touch costs with
// them), on random actions over the terrain.
TEST(VelocityTaskRough, RewardIsTheSumOfItsTerms) {
  const int64_t n = 16;
  auto env = go1_rough(n, 21);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  for (int t = 0; t < 60; ++t) {
    env->step(random_actions(gen, n, 1.0));
    EXPECT_LT(max_abs(env->buffers().reward - reward_sum(env->buffers())), 1e-5) << "step " << t;
  }
}

// Proves the engine agrees with libmujoco through the rough task (height-field contacts, the
// scan, the curriculum's placement), float64, random actions.
TEST(VelocityTaskRough, EngineAgreesWithLibmujoco) {
  const int64_t n = 4;
  auto ours = go1_rough(n, 7, {{"precision", 64}});
  auto ref = go1_rough(n, 7, {}, {{"physics", "mujoco"}});
  EXPECT_LT(max_abs(ours->buffers().obs - ref->buffers().obs), 1e-4);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(13);
  double worst = 0;
  for (int t = 0; t < 40; ++t) {
    const at::Tensor a = random_actions(gen, n, 0.3);
    ours->step(a);
    ref->step(a);
    worst = std::max(worst, max_abs(ours->buffers().obs - ref->buffers().obs));
    ASSERT_TRUE(at::equal(ours->buffers().terminated, ref->buffers().terminated)) << t;
  }
  EXPECT_LT(worst, 1e-3);
  EXPECT_LT(max_abs(ours->get_state() - ref->get_state()), 1e-6);
}

// Proves G1-Velocity-Rough-v0: mjlab's G1 rough layout (actor 99 + 187 = 286, critic 298), the
// G1's rough variant's terms (fell_over kept, no ground-touch sensors), envs on their tiles, and
// the engine against libmujoco through the task (pyramidal feet on the height field).
TEST(VelocityTaskRough, G1LayoutStartAndLibmujoco) {
  const int64_t n = 4;
  auto ours = make("G1-Velocity-Rough-v0", n, Device::kCpu, 3, {{"precision", 64}}, {});
  auto ref = make("G1-Velocity-Rough-v0", n, Device::kCpu, 3, {}, {{"physics", "mujoco"}});
  EXPECT_EQ(ours->spec().actor_obs_dim, 286);
  EXPECT_EQ(ours->spec().observation_space.flat_size(), 286 + 298);
  const auto& names = ours->spec().option_names;
  EXPECT_NE(std::find(names.begin(), names.end(), "fell_over"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "terrain_curriculum"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "illegal_contact"), names.end());
  const at::Tensor s = ours->get_state();
  for (int64_t i = 0; i < n; ++i) {
    const auto [level, kind] = nearest_tile(s[i][1].item<double>(), s[i][2].item<double>());
    const double* o = rough_terrain().tile_origin(level, kind);
    EXPECT_LE(std::hypot(s[i][1].item<double>() - o[0], s[i][2].item<double>() - o[1]), 0.71);
  }
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  for (int t = 0; t < 30; ++t) {
    const at::Tensor a = (at::rand({n, 29}, gen) * 2 - 1) * 0.3;
    ours->step(a);
    ref->step(a);
  }
  EXPECT_LT(max_abs(ours->get_state() - ref->get_state()), 1e-3);
}

// Proves the rough task's own options are refused when out of range, naming the option.
TEST(VelocityTaskRough, BadTerrainOptionsAreRefused) {
  const auto refused = [](const EnvOptions& o, const std::string& what) {
    try {
      go1_rough(1, 1, o);
      ADD_FAILURE() << "accepted; expected a refusal naming " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused({{"max_init_terrain_level", 10}}, "max_init_terrain_level");
  refused({{"max_init_terrain_level", 2.5}}, "max_init_terrain_level");
  refused({{"terrain_seed", 0.5}}, "terrain_seed");
  refused({{"terrain_curriculum", 2}}, "terrain_curriculum");
  EXPECT_THROW(go1(1, 1, {{"terrain_curriculum", 0}}), std::invalid_argument);  // flat: none
}

}  // namespace
}  // namespace myriad::envs
