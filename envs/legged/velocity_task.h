// mjlab's velocity-tracking task (mjlab 1.6.0, tasks/velocity/; the transcription is
// envs/legged/mjlab-velocity-reference.md) as a task env of the framework
// (envs/physics_task_kernels.h): a legged robot follows a twist command [vx, vy, wz] given in its
// own frame. One struct per robot and terrain (the Robot traits below) over one task:
//
//   action    joint position targets a * scale + q0 - encoder bias, held over 4 substeps of 5 ms
//   command   mjlab's UniformVelocityCommand: resampled every U(3, 8) s; standing, heading and
//             forward envs; heading control
//   reward    sum_k weight_k * term_k * step_dt (velocity_terms.h), each term logged on its own
//   ends      time out (1,000 steps, truncation); fell over (tilt above 70 degrees)
//   reset     base offset x, y in +-0.5 m, z in [0.01, 0.05] m, yaw in +-3.14; joints at the
//             default pose; the command resampled
//   events    the robot's startup randomization and push (option randomize, envs/robots/)
//   obs       [actor | critic] in one row: the actor's group (noisy, 48 for Go1) first, then the
//             critic's privileged group (72 for Go1); the spec's actor_obs_dim says where the
//             actor's ends (the learner's actor reads only those columns)
//
// Where it differs from mjlab: the random draws (Philox per (seed, env, episode, stream), not
// torch's); the terminal step's observation is kept as final_obs (mjlab's rsl_rl bootstraps a
// time-out from the value before the step); the command curriculum (command_vel: lin_vel_x and
// ang_vel_z widened at 120,000 policy steps, lin_vel_x again at 240,000) widens the ranges at the
// step the env's count reaches a stage (mjlab: at the first reset from then on, with hundreds of
// envs the same step or the next few), and its first stage is the options lin_vel_x, ang_vel_z
// (mjlab's stage at step 0 writes its own over the command's); play mode keeps the training
// ranges (mjlab's flat play configs widen them to the first stage's).
//
// Rough terrain (Robot::kRough: Go1-Velocity-Rough-v0, G1-Velocity-Rough-v0): the robot's scene
// has one height field (envs/robots/models/*_terrain.xml) whose elevations the task generates at
// construction from option terrain_seed (envs/legged/terrain.h: mjlab's ROUGH_TERRAINS_CFG, 10
// levels by 7 kinds), envs spawn at their tile's origin, mjlab's terrain_levels curriculum moves
// an env a level up or down at each reset by how far it walked (info curriculum_terrain_level),
// the actor and critic read a 187-ray height scan under the root, the feet's clearance is over
// the ground, and leaving the grid truncates (out_of_terrain_bounds). Go1 adds mjlab's Go1 rough
// terms: upright against the terrain's fitted normal, thigh-ground contact ends the episode
// (illegal_contact, no fell_over), the shank and trunk touching the ground cost. Differences
// from mjlab: the scan and the foot clearance read the field's surface under each ray in closed
// form (what a vertical ray from above meets); the normal the reward uses is the one fitted at
// the previous observation (one policy step old); a contact sensor's threshold is checked on
// every contact of its geoms (mjlab: the first contact per geom); the terrain's flat border is 5 m
// of the height field (mjlab: 20 m of boxes); an env's terrain kind is drawn by the kinds'
// proportions per env (mjlab: contiguous blocks of envs).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "envs/legged/terrain.h"
#include "envs/legged/terrain_sense.h"
#include "envs/legged/velocity_terms.h"
#include "envs/locomotion/env_support.h"
#include "envs/physics_task_kernels.h"
#include "physics/sensor.h"

namespace myriad::envs::legged {

using locomotion::InfoKey;
using locomotion::Option;
using physics::EnvData;
using physics::ModelView;

// A joint group's posture stds (variable_posture): joints whose name matches `regex` wholly.
struct PostureStd {
  const char* regex;
  float standing, walking, running;
};

// The robots' folder (envs/robots/): $MYRIAD_ROBOTS_DIR, else the source tree's.
inline std::string robots_dir() {
  if (const char* dir = std::getenv("MYRIAD_ROBOTS_DIR")) return dir;
#ifdef MYRIAD_ROBOTS_SOURCE_DIR
  return MYRIAD_ROBOTS_SOURCE_DIR;
#else
  return "envs/robots";
#endif
}

// Unitree Go1 on flat ground: mjlab's Mjlab-Velocity-Flat-Unitree-Go1.
struct Go1Flat {
  static constexpr const char* kId = "Go1-Velocity-Flat-v0";
  static constexpr const char* kModelFile = "models/go1.xml";
  static constexpr const char* kRandomizeFile = "go1_randomize.json";
  static constexpr const char* kKeyframe = "home";
  static constexpr const char* kUprightBody = "trunk";
  static constexpr const char* kImuSite = "imu";
  static constexpr const char* kTerrainBody = "terrain";
  static constexpr int kFeet = 4;
  static constexpr const char* kFootSites[kFeet] = {"FR", "FL", "RR", "RL"};
  // The geoms of each foot (feet_ground_contact's primaries), a regex matched whole.
  static constexpr const char* kFootGeoms[kFeet] = {"FR_foot_collision", "FL_foot_collision",
                                                    "RR_foot_collision", "RL_foot_collision"};
  static constexpr int kPostureGroups = 2;
  static constexpr PostureStd kPosture[kPostureGroups] = {
      {".*(FR|FL|RR|RL)_(hip|thigh)_joint.*", 0.05f, 0.3f, 0.3f},
      {".*(FR|FL|RR|RL)_calf_joint.*", 0.1f, 0.6f, 0.6f}};
  static constexpr float kBodyAngVelWeight = 0.0f;
  static constexpr float kAngularMomentumWeight = 0.0f;
  static constexpr float kSelfCollisionWeight = 0.0f;  // Go1's self-collision term: rough only
  static constexpr bool kRough = false;
  // On rough terrain (mjlab's Go1 rough config): no fell_over, upright against the terrain's
  // normal, and the ground-touch sensors of illegal_contact (thighs), shank_collision and
  // trunk_head_collision on these geoms.
  static constexpr bool kRoughFellOver = false;
  static constexpr bool kRoughUprightOnTerrain = true;
  static constexpr bool kRoughGroundTouch = true;
  // foot_height_scan's ring: radius (m) and rays on it (besides the centre).
  static constexpr float kFootRingRadius = 0.04f;
  static constexpr int kFootRingRays = 4;
  static constexpr const char* kThighGeoms = "[FR][LR]_thigh_collision\\d";
  static constexpr const char* kShankGeoms = "[FR][LR]_calf_collision\\d";
  static constexpr const char* kTrunkGeoms = "(trunk|head)_collision";
};

// Unitree Go1 on mjlab's rough terrain: Mjlab-Velocity-Rough-Unitree-Go1.
struct Go1Rough : Go1Flat {
  static constexpr const char* kId = "Go1-Velocity-Rough-v0";
  static constexpr const char* kModelFile = "models/go1_terrain.xml";
  static constexpr float kSelfCollisionWeight = -0.1f;
  static constexpr bool kRough = true;
};

// Unitree G1 (29 dof) on flat ground: mjlab's Mjlab-Velocity-Flat-Unitree-G1.
struct G1Flat {
  static constexpr const char* kId = "G1-Velocity-Flat-v0";
  static constexpr const char* kModelFile = "models/g1.xml";
  static constexpr const char* kRandomizeFile = "g1_randomize.json";
  static constexpr const char* kKeyframe = "knees_bent";
  static constexpr const char* kUprightBody = "torso_link";
  static constexpr const char* kImuSite = "imu_in_pelvis";
  static constexpr const char* kTerrainBody = "terrain";
  static constexpr int kFeet = 2;
  static constexpr const char* kFootSites[kFeet] = {"left_foot", "right_foot"};
  // feet_ground_contact's primaries are the ankle-roll links' subtrees: their 7 capsules.
  static constexpr const char* kFootGeoms[kFeet] = {"left_foot[1-7]_collision",
                                                    "right_foot[1-7]_collision"};
  static constexpr int kPostureGroups = 14;
  // std_standing 0.05 for every joint; walking and running per group.
  static constexpr PostureStd kPosture[kPostureGroups] = {
      {".*hip_pitch.*", 0.05f, 0.3f, 0.5f},      {".*hip_roll.*", 0.05f, 0.15f, 0.2f},
      {".*hip_yaw.*", 0.05f, 0.15f, 0.2f},       {".*knee.*", 0.05f, 0.35f, 0.6f},
      {".*ankle_pitch.*", 0.05f, 0.25f, 0.35f},  {".*ankle_roll.*", 0.05f, 0.1f, 0.15f},
      {".*waist_yaw.*", 0.05f, 0.2f, 0.3f},      {".*waist_roll.*", 0.05f, 0.08f, 0.08f},
      {".*waist_pitch.*", 0.05f, 0.1f, 0.2f},    {".*shoulder_pitch.*", 0.05f, 0.15f, 0.5f},
      {".*shoulder_roll.*", 0.05f, 0.15f, 0.2f}, {".*shoulder_yaw.*", 0.05f, 0.1f, 0.15f},
      {".*elbow.*", 0.05f, 0.15f, 0.35f},        {".*wrist.*", 0.05f, 0.3f, 0.3f}};
  static constexpr float kBodyAngVelWeight = -0.05f;
  static constexpr float kAngularMomentumWeight = -0.02f;
  static constexpr float kSelfCollisionWeight = -1.0f;
  static constexpr bool kRough = false;
  // On rough terrain: fell_over stays, upright against world up, no ground-touch sensors.
  static constexpr bool kRoughFellOver = true;
  static constexpr bool kRoughUprightOnTerrain = false;
  static constexpr bool kRoughGroundTouch = false;
  static constexpr float kFootRingRadius = 0.03f;
  static constexpr int kFootRingRays = 6;
  static constexpr const char* kThighGeoms = nullptr;
  static constexpr const char* kShankGeoms = nullptr;
  static constexpr const char* kTrunkGeoms = nullptr;
};

// Unitree G1 on mjlab's rough terrain: Mjlab-Velocity-Rough-Unitree-G1.
struct G1Rough : G1Flat {
  static constexpr const char* kId = "G1-Velocity-Rough-v0";
  static constexpr const char* kModelFile = "models/g1_terrain.xml";
  static constexpr bool kRough = true;
};

// The per-env task state, float offsets into the task row (J joints, F feet).
struct VelocityLayout {
  static constexpr int kCommand = 0;     // vx, vy, wz, heading, heading env, standing env,
  static constexpr int kCommandDim = 8;  // time to the next resample, resamples this episode
  static constexpr int kHistory = 4;     // substeps a contact sensor's force history keeps
  int last_action = 0, bias = 0, air_time = 0, contact_time = 0, peak = 0, self_hits = 0, dim = 0;
  // Rough terrain: the env's level + 1 (0: not placed yet) and kind, the root's xy and the
  // command's speed |c_xy| at the last reward (what the curriculum judges the episode by: the
  // last command the robot followed, before an ended episode's command is resampled), the
  // terrain normal of the last scan, and the ground-touch histories of the thighs, shanks and
  // trunk (1 above 10 N, newest first).
  int level = 0, kind = 0, root_xy = 0, speed = 0, normal = 0, thigh_hits = 0, shank_hits = 0,
      trunk_hits = 0;
  void set(int joints, int feet, bool rough) {
    last_action = kCommandDim;
    bias = last_action + joints;
    air_time = bias + joints;
    contact_time = air_time + feet;
    peak = contact_time + feet;
    self_hits = peak + feet;  // 1 where the self-collision sensor saw > 10 N, newest first
    dim = self_hits + kHistory;
    if (!rough) return;
    level = dim;
    kind = level + 1;
    root_xy = kind + 1;
    speed = root_xy + 2;
    normal = speed + 1;
    thigh_hits = normal + 3;
    shank_hits = thigh_hits + kHistory;
    trunk_hits = shank_hits + kHistory;
    dim = trunk_hits + kHistory;
  }
};

template <class Robot>
struct VelocityTask {
  static constexpr bool kTask = true;
  static constexpr const char* kId = Robot::kId;
  static constexpr const char* kModel = nullptr;  // model_path names the robot's file
  static constexpr int kFrameSkip = 4;            // mjlab's decimation
  static constexpr int kMaxEpisodeSteps = 1000;   // 20 s at 50 Hz
  static constexpr int kBeforeDim = 0;
  static constexpr int kMaxJoints = 32, kMaxFeet = 4, kMaxGeoms = 512;
  static constexpr int kMaxLevels = 20, kMaxKinds = 8;
  // The height scan (rough): mjlab's terrain_scan grid, 1.6 x 1.0 m at 0.1 m under the root,
  // 17 x 11 rays (x inner), yaw-aligned; a ray farther than 5 m reads 5 (a miss).
  static constexpr int kScanX = 17, kScanY = 11, kScanRays = kScanX * kScanY;
  static constexpr double kScanMax = 5.0;
  static constexpr int kNormalHits = 32;         // the scan hits the terrain normal is fitted to
  static constexpr double kTerrainBorder = 5.0;  // m of flat field around the grid
  static constexpr bool kRough = Robot::kRough;
  static constexpr bool kGroundTouch = kRough && Robot::kRoughGroundTouch;
  static constexpr bool kUprightOnTerrain = kRough && Robot::kRoughUprightOnTerrain;
  static constexpr int kFeet = Robot::kFeet;
  static_assert(kFeet <= kMaxFeet, "too many feet");
  // The task's random streams (TaskRow): the command's k-th resample of an episode, the
  // observation noise of step t, the encoder bias (drawn once per seed).
  static constexpr uint32_t kCommandStream = 0xB0000000u;
  static constexpr uint32_t kNoiseStream = 0xC0000000u;
  static constexpr uint32_t kBiasStream = 0xD0000000u;
  // Rough terrain: the env's kind (drawn once per seed) and its level at each reset.
  static constexpr uint32_t kTerrainStream = 0xE0000000u;

  struct Params {
    double dt = 0;  // the policy step (timestep * frame_skip)
    // Reward weights by mjlab's term names (options).
    float track_linear_velocity = 2.0f;
    float track_angular_velocity = 2.0f;
    float upright = 1.0f;
    float pose = 1.0f;
    float body_ang_vel = Robot::kBodyAngVelWeight;
    float dof_pos_limits = -1.0f;
    float action_rate_l2 = -0.1f;
    float air_time = 0.0f;
    float foot_clearance = -2.0f;
    float foot_swing_height = -0.25f;
    float foot_slip = -0.1f;
    float soft_landing = -1e-5f;
    float angular_momentum = Robot::kAngularMomentumWeight;
    float self_collisions = Robot::kSelfCollisionWeight;
    bool corrupt_observations = true;  // the actor's noise (mjlab's play mode: off)
    // mjlab's play mode (its play_env_cfg; evaluation's default): no actor noise, no push.
    bool play = false;
    // The actor's noise per term: U(-n, n) added to each value (mjlab's UniformNoiseCfg).
    float noise_base_lin_vel = 0.5f;
    float noise_base_ang_vel = 0.2f;
    float noise_projected_gravity = 0.05f;
    float noise_joint_pos = 0.01f;
    float noise_joint_vel = 1.5f;
    // Terminate above fell_over_angle of tilt (Go1: on flat ground only).
    bool fell_over = !kRough || Robot::kRoughFellOver;
    float fell_over_angle = 70.0f;  // degrees
    float encoder_bias[2] = {-0.015f, 0.015f};
    float lin_vel_x[2] = {-1.0f, 1.0f};
    float lin_vel_y[2] = {-1.0f, 1.0f};
    float ang_vel_z[2] = {-0.5f, 0.5f};
    // reset_base: the root's offset from the default pose at every reset (m, m, m, rad).
    float reset_base_x[2] = {-0.5f, 0.5f};
    float reset_base_y[2] = {-0.5f, 0.5f};
    float reset_base_z[2] = {0.01f, 0.05f};
    float reset_base_yaw[2] = {-3.14f, 3.14f};
    float reset_base_roll[2] = {0.0f, 0.0f};  // mjlab's reset_base leaves roll and pitch at 0
    float reset_base_pitch[2] = {0.0f, 0.0f};
    // mjlab's command_vel curriculum: from policy step command_stage1_step (the env's steps since
    // it was made; 5,000 PPO iterations of 24 steps) the stage-1 ranges, from command_stage2_step
    // stage 2's (ang_vel_z kept). Off in play mode.
    bool command_curriculum = true;
    float command_stage1_step = static_cast<float>(kCommandStage1Step);
    float command_stage2_step = static_cast<float>(kCommandStage2Step);
    float command_stage1_lin_vel_x[2] = {static_cast<float>(kCommandStage1LinVelX[0]),
                                         static_cast<float>(kCommandStage1LinVelX[1])};
    float command_stage1_ang_vel_z[2] = {static_cast<float>(kCommandStage1AngVelZ[0]),
                                         static_cast<float>(kCommandStage1AngVelZ[1])};
    float command_stage2_lin_vel_x[2] = {static_cast<float>(kCommandStage2LinVelX[0]),
                                         static_cast<float>(kCommandStage2LinVelX[1])};
    // Rough terrain (options of the rough tasks only).
    float shank_collision = kGroundTouch ? -0.1f : 0.0f;       // weights, by mjlab's names
    float trunk_head_collision = kGroundTouch ? -0.1f : 0.0f;  // (ground touches above 10 N)
    bool illegal_contact = kGroundTouch;  // thigh-ground contact above 10 N ends the episode
    bool out_of_terrain_bounds = kRough;  // leaving the grid (less 0.3 m) truncates it
    bool terrain_curriculum = kRough;     // terrain_levels: a level up or down at each reset
    float max_init_terrain_level = 5;     // the first level is drawn from 0 ... this
    float terrain_seed = 0;  // random_rough's draws (the same terrain for every run by default)
    // Resolved from the model (prepare). twist: the ranges in force (curriculum() sets them
    // before each step from twist_base, the options', and the stages).
    TwistRanges twist, twist_base;
    TwistStage stages[2];
    VelocityLayout layout;
    double physics_dt = 0;
    int joints = 0;
    int root_body = 1, upright_body = 1, imu_body = 1, terrain_body = 0;
    int imu_lin_adr = -1, imu_ang_adr = -1;  // sensordata of the IMU's velocimeter and gyro
    int angmom_adr = -1;                     // the root's subtreeangmom sensor
    int qadr[kMaxJoints] = {}, dadr[kMaxJoints] = {};
    float q0[kMaxJoints] = {}, scale[kMaxJoints] = {};
    float soft_lo[kMaxJoints] = {}, soft_hi[kMaxJoints] = {};
    float std_standing[kMaxJoints] = {}, std_walking[kMaxJoints] = {}, std_running[kMaxJoints] = {};
    int foot_site[kMaxFeet] = {}, foot_body[kMaxFeet] = {};
    float foot_site_pos[kMaxFeet][3] = {};
    int8_t geom_foot[kMaxGeoms] = {};  // the foot a geom belongs to, -1 none
    // Rough terrain (build_scene and prepare): the height field's geom, the grid, the tiles'
    // origins, the kinds' cumulative shares, the bounds, each geom's part (1 thigh, 2 shank, 3
    // trunk or head, 0 none).
    int terrain_geom = -1;
    int levels = 0, kinds = 0;
    float tile_size = 0;
    float bound_x = 0, bound_y = 0;
    float kind_cdf[kMaxKinds] = {};
    float origin[kMaxLevels * kMaxKinds * 3] = {};
    int8_t geom_part[kMaxGeoms] = {};
    int scan_rays = 0;  // kScanRays on rough terrain, else 0
  };

  static std::vector<Option<Params>> options() {
    using P = Params;
    using locomotion::finite;
    using locomotion::flag;
    using locomotion::range;
    std::vector<Option<Params>> options = {
        finite("track_linear_velocity", &P::track_linear_velocity),
        finite("track_angular_velocity", &P::track_angular_velocity),
        finite("upright", &P::upright),
        finite("pose", &P::pose),
        finite("body_ang_vel", &P::body_ang_vel),
        finite("dof_pos_limits", &P::dof_pos_limits),
        finite("action_rate_l2", &P::action_rate_l2),
        finite("air_time", &P::air_time),
        finite("foot_clearance", &P::foot_clearance),
        finite("foot_swing_height", &P::foot_swing_height),
        finite("foot_slip", &P::foot_slip),
        finite("soft_landing", &P::soft_landing),
        finite("angular_momentum", &P::angular_momentum),
        finite("self_collisions", &P::self_collisions),
        flag("corrupt_observations", &P::corrupt_observations),
        flag("play", &P::play),
        locomotion::nonnegative("noise_base_lin_vel", &P::noise_base_lin_vel),
        locomotion::nonnegative("noise_base_ang_vel", &P::noise_base_ang_vel),
        locomotion::nonnegative("noise_projected_gravity", &P::noise_projected_gravity),
        locomotion::nonnegative("noise_joint_pos", &P::noise_joint_pos),
        locomotion::nonnegative("noise_joint_vel", &P::noise_joint_vel),
        flag("fell_over", &P::fell_over),
        locomotion::nonnegative("fell_over_angle", &P::fell_over_angle),
        range("encoder_bias", &P::encoder_bias),
        range("lin_vel_x", &P::lin_vel_x),
        range("lin_vel_y", &P::lin_vel_y),
        range("ang_vel_z", &P::ang_vel_z),
        range("reset_base_x", &P::reset_base_x),
        range("reset_base_y", &P::reset_base_y),
        range("reset_base_z", &P::reset_base_z),
        range("reset_base_yaw", &P::reset_base_yaw),
        range("reset_base_roll", &P::reset_base_roll),
        range("reset_base_pitch", &P::reset_base_pitch),
        flag("command_curriculum", &P::command_curriculum),
        locomotion::nonnegative("command_stage1_step", &P::command_stage1_step),
        locomotion::nonnegative("command_stage2_step", &P::command_stage2_step),
        range("command_stage1_lin_vel_x", &P::command_stage1_lin_vel_x),
        range("command_stage1_ang_vel_z", &P::command_stage1_ang_vel_z),
        range("command_stage2_lin_vel_x", &P::command_stage2_lin_vel_x)};
    if constexpr (kGroundTouch) {
      for (auto o : {finite("shank_collision", &P::shank_collision),
                     finite("trunk_head_collision", &P::trunk_head_collision),
                     flag("illegal_contact", &P::illegal_contact)})
        options.push_back(o);
    }
    if constexpr (kRough) {
      for (auto o : {flag("out_of_terrain_bounds", &P::out_of_terrain_bounds),
                     flag("terrain_curriculum", &P::terrain_curriculum),
                     locomotion::nonnegative("max_init_terrain_level", &P::max_init_terrain_level),
                     locomotion::nonnegative("terrain_seed", &P::terrain_seed)})
        options.push_back(o);
    }
    return options;
  }

  // Play mode drops the interval events (the push) from the randomization.
  static bool plays(const Params& p) { return p.play; }

  // mjlab's command_vel curriculum at the env's step count (its common_step_counter: the env's
  // step() calls since it was made): the command ranges of the resamples from here on. Play
  // mode and command_curriculum=0 keep the options' ranges. (p.twist_base, p.stages, step) =>
  // p.twist
  static void curriculum(Params& p, int64_t step) {
    p.twist = p.twist_base;
    if (p.command_curriculum && !p.play) apply_twist_stages(p.twist, p.stages, 2, step);
  }

  static std::string model_path(const std::map<std::string, std::string>&) {
    return robots_dir() + "/" + Robot::kModelFile;
  }
  static const char* keyframe() { return Robot::kKeyframe; }
  // The robot's startup randomization (mjlab's events) and mjlab's push_robot, as the option
  // randomize's JSON: what the task runs unless the option says otherwise.
  static std::string default_randomize();

  static void prepare(Params& p, const physics::Model<double>& m);

  // Rough terrain: the terrain generated from option terrain_seed written into the scene's height
  // field (elevations rounded to float, as libmujoco stores them; the env copies them into
  // libmujoco's model) and the grid into p; refused naming what does not fit. Flat: nothing.
  static void build_scene(Params& p, physics::Model<double>& m);

  static int task_dim(const Params& p, const physics::Model<double>&) { return p.layout.dim; }
  // The actor's group: 9 base terms, joint_pos, joint_vel, the last action, the command and the
  // height scan; the critic's starts here.
  MYRIAD_HD static int actor_width(const Params& p) { return 9 + 3 * p.joints + 3 + p.scan_rays; }
  static int actor_obs_dim(const Params& p, const physics::Model<double>&) {
    return actor_width(p);
  }
  static int obs_dim(const Params& p, const physics::Model<double>& m) {
    return 2 * actor_obs_dim(p, m) + 6 * kFeet;
  }
  static std::vector<InfoKey> info_keys(const Params&, const physics::Model<double>&) {
    std::vector<InfoKey> keys;
    for (const char* term : kTerms) keys.push_back({std::string("reward_") + term});
    for (const char* k :
         {"error_vel_xy", "error_vel_yaw", "command_vx", "command_vy", "command_wz"})
      keys.push_back({k});
    if (kRough) keys.push_back({"curriculum_terrain_level"});
    for (const char* k : {"curriculum_lin_vel_x_max", "curriculum_ang_vel_z_max"})
      keys.push_back({k});
    return keys;
  }
  // For drawing (replays): the observation holds no root pose; the default pose.
  static void qpos_from_observation(const Params& p, const physics::Model<double>& m,
                                    const float* obs, float* qpos) {
    for (int k = 0; k < m.nq; ++k) qpos[k] = static_cast<float>(m.qpos_init[k]);
    for (int j = 0; j < p.joints; ++j) qpos[p.qadr[j]] = obs[9 + j] + p.q0[j];
  }

  // Replays plot the command against the velocity the tracking terms compare it with: the
  // critic's noise-free base_lin_vel x, y and base_ang_vel z (the IMU's, in the base's frame).
  static std::vector<std::string> series_names() {
    return {"lin_vel_x",         "lin_vel_x_command", "lin_vel_y",
            "lin_vel_y_command", "yaw_rate",          "yaw_rate_command"};
  }
  static void series(const Params& p, const float* obs, float* out) {
    const float* critic = obs + actor_width(p);
    const float* command = critic + 9 + 3 * p.joints;
    const float values[6] = {critic[0], command[0], critic[1], command[1], critic[5], command[2]};
    std::copy(values, values + 6, out);
  }

  // The reward terms, in the info keys' order.
  static constexpr int kTermCount = 16;
  static constexpr const char* kTerms[kTermCount] = {
      "track_linear_velocity", "track_angular_velocity", "upright",         "pose",
      "body_ang_vel",          "dof_pos_limits",         "action_rate_l2",  "air_time",
      "foot_clearance",        "foot_swing_height",      "foot_slip",       "soft_landing",
      "angular_momentum",      "self_collisions",        "shank_collision", "trunk_head_collision"};
  MYRIAD_HD static void weights(const Params& p, float w[kTermCount]) {
    const float v[kTermCount] = {p.track_linear_velocity,
                                 p.track_angular_velocity,
                                 p.upright,
                                 p.pose,
                                 p.body_ang_vel,
                                 p.dof_pos_limits,
                                 p.action_rate_l2,
                                 p.air_time,
                                 p.foot_clearance,
                                 p.foot_swing_height,
                                 p.foot_slip,
                                 p.soft_landing,
                                 p.angular_momentum,
                                 p.self_collisions,
                                 p.shank_collision,
                                 p.trunk_head_collision};
    for (int k = 0; k < kTermCount; ++k) w[k] = v[k];
  }

  // ---- Kinematics the terms read -------------------------------------------------------------

  // R^T v for a body's rotation matrix R (row-major, world = R local).
  template <class PR, class PV, class T>
  MYRIAD_HD static void to_local(PR R, PV v, T* out) {
    for (int k = 0; k < 3; ++k) out[k] = R[k] * v[0] + R[3 + k] * v[1] + R[6 + k] * v[2];
  }
  // A point's world velocity on body b (mjlab's compute_velocity_from_cvel): the body's cvel is
  // (angular, linear at the subtree com of its tree's root).
  template <class T, int B, class P>
  MYRIAD_HD static void point_velocity(const ModelView<T>& m, const EnvData<T, B>& d, int b,
                                       P point, T* out) {
    const auto cv = d.cvel + 6 * b;
    const auto com = d.subtree_com + 3 * m.body_rootid[b];
    const T r[3] = {point[0] - com[0], point[1] - com[1], point[2] - com[2]};
    out[0] = cv[3] + (cv[1] * r[2] - cv[2] * r[1]);
    out[1] = cv[4] + (cv[2] * r[0] - cv[0] * r[2]);
    out[2] = cv[5] + (cv[0] * r[1] - cv[1] * r[0]);
  }
  // Foot f's site in the world.
  template <class T, int B>
  MYRIAD_HD static void foot_position(const Params& p, const EnvData<T, B>& d, int f, T* out) {
    const int b = p.foot_body[f];
    const auto R = d.xmat + 9 * b;
    const float* s = p.foot_site_pos[f];
    for (int k = 0; k < 3; ++k)
      out[k] =
          d.xpos[3 * b + k] + R[3 * k] * T(s[0]) + R[3 * k + 1] * T(s[1]) + R[3 * k + 2] * T(s[2]);
  }
  // The foot's clearance as mjlab's TerrainHeightSensor reads it over flat ground at z = 0: the
  // site's height, 0 below the ground (every ray starts inside it) and at most max_distance 1.
  template <class T>
  MYRIAD_HD static T flat_clearance(T z) {
    return z < T(0) ? T(0) : (z > T(1) ? T(1) : z);
  }
  // The rough terrain's height field as terrain_sense.h reads it.
  // (geom_xpos is per env in every batch layout: a pointer.)
  template <class T, int B>
  MYRIAD_HD static FieldView<T> field_of(const Params& p, const ModelView<T>& m,
                                         const EnvData<T, B>& d) {
    const int h = m.geom_dataid[p.terrain_geom];
    return {m.hfield_size + 4 * h, m.hfield_data + m.hfield_adr[h], m.hfield_nrow[h],
            m.hfield_ncol[h], d.geom_xpos + 3 * p.terrain_geom};
  }
  // foot_height_scan for foot f at its site pos: flat ground's clearance, or on rough terrain
  // mjlab's TerrainHeightSensor: the robot's ring of rays (Go1 4 at 4 cm, G1 6 at 3 cm) and one
  // at the centre, yaw-aligned, each
  // reading the site's height over the surface (0 under it, 1 beyond max_distance), the least.
  template <class T, int B>
  MYRIAD_HD static T foot_clearance(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                    int f, const T* pos) {
    if constexpr (!kRough) {
      return flat_clearance(pos[2]);
    } else {
      const FieldView<T> field = field_of(p, m, d);
      const T yaw = heading_of(d.xquat + 4 * p.foot_body[f]);
      const T r = T(Robot::kFootRingRadius);
      T best = T(1);
      bool any = false;
      MYRIAD_NO_UNROLL
      for (int k = 0; k <= Robot::kFootRingRays; ++k) {  // the centre, then the ring
        const T angle = yaw + T(6.283185307179586) * T(k - 1) / T(Robot::kFootRingRays);
        const T ox = k == 0 ? T(0) : r * cos(angle), oy = k == 0 ? T(0) : r * sin(angle);
        T z;
        if (!surface_height(field, pos[0] + ox, pos[1] + oy, z)) continue;
        const T h = pos[2] - z;
        if (h > T(1)) continue;  // beyond max_distance: a miss
        any = true;
        const T clear = h < T(0) ? T(0) : h;
        best = clear < best ? clear : best;
      }
      return any ? best : flat_clearance(pos[2]);
    }
  }
  // terrain_scan: the root's height over the surface at each ray of the yaw-aligned grid (5, a
  // miss, beyond kScanMax or off the field) into value [kScanRays] (as float, what the
  // observation reads: it is written straight into the observation row, not staged on the
  // stack); the terrain normal fitted to up to kNormalHits of the hits (mjlab's linspace
  // subsample) into normal.
  template <class T, int B>
  MYRIAD_HD static void height_scan(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                    float* value, T* normal) {
    const FieldView<T> field = field_of(p, m, d);
    const auto frame = d.xpos + 3 * p.root_body;
    const T yaw = root_heading(p, d);
    const T c = cos(yaw), s = sin(yaw);
    T hits[3 * kNormalHits];
    int count = 0, next = 0;
    for (int k = 0; k < kScanRays; ++k) {
      const T lx = T(-0.8) + T(0.1) * T(k % kScanX), ly = T(-0.5) + T(0.1) * T(k / kScanX);
      const T x = frame[0] + c * lx - s * ly, y = frame[1] + s * lx + c * ly;
      T z;
      const bool hit =
          surface_height(field, x, y, z) && frame[2] - z >= T(0) && frame[2] - z <= T(kScanMax);
      value[k] = static_cast<float>(hit ? frame[2] - z : T(kScanMax));
      // Rays 0, 6, 12, ..., 186 (torch.linspace(0, 186, 32).long()).
      if (next < kNormalHits && k == (next * (kScanRays - 1)) / (kNormalHits - 1)) {
        ++next;
        if (hit) {
          hits[3 * count] = x;
          hits[3 * count + 1] = y;
          hits[3 * count + 2] = z;
          ++count;
        }
      }
    }
    terrain_normal(hits, count, normal);
  }
  // feet_ground_contact: per foot, the contacts with the terrain (found) and their net force on
  // the terrain in the world frame, as MuJoCo's contact sensor with the normal turned from the
  // foot (primary) to the terrain (secondary).
  template <class Sim, class T, int B>
  MYRIAD_HD static void foot_contacts(const Params& p, const Sim& sim, int64_t i,
                                      const ModelView<T>& m, const EnvData<T, B>& d, int* found,
                                      T* force) {
    for (int f = 0; f < kFeet; ++f) {
      found[f] = 0;
      force[3 * f] = force[3 * f + 1] = force[3 * f + 2] = 0;
    }
    sim.for_each_contact(d, i, [&](int g1, int g2, const T* frame, const T* local) {
      int foot = -1;
      T sign = 1;
      if (m.geom_bodyid[g2] == p.terrain_body && g1 < kMaxGeoms && p.geom_foot[g1] >= 0) {
        foot = p.geom_foot[g1];
      } else if (m.geom_bodyid[g1] == p.terrain_body && g2 < kMaxGeoms && p.geom_foot[g2] >= 0) {
        foot = p.geom_foot[g2];
        sign = -1;
      }
      if (foot < 0) return;
      found[foot] += 1;
      for (int k = 0; k < 3; ++k)
        force[3 * foot + k] +=
            sign * (frame[k] * local[0] + frame[3 + k] * local[1] + frame[6 + k] * local[2]);
    });
  }
  // The root's linear and angular velocity in its own frame, from the derived quantities (xpos,
  // xmat, cvel, subtree_com) as mjlab's root_link_lin_vel_b and root_link_ang_vel_b.
  template <class T, int B>
  MYRIAD_HD static void root_velocity(const Params& p, const ModelView<T>& m,
                                      const EnvData<T, B>& d, T* v_b, T* w_b) {
    const int b = p.root_body;
    T v_w[3];
    point_velocity(m, d, b, d.xpos + 3 * b, v_w);
    to_local(d.xmat + 9 * b, v_w, v_b);
    to_local(d.xmat + 9 * b, d.cvel + 6 * b, w_b);
  }
  // R^T (0, 0, -1) for body b.
  template <class T, int B>
  MYRIAD_HD static void gravity_in(const EnvData<T, B>& d, int b, T* g) {
    const auto R = d.xmat + 9 * b;
    g[0] = -R[6];
    g[1] = -R[7];
    g[2] = -R[8];
  }

  // ---- The task's hooks ----------------------------------------------------------------------

  template <class T>
  MYRIAD_HD static TwistCommand<T> command_of(const float* s) {
    TwistCommand<T> c;
    for (int k = 0; k < 3; ++k) c.vel[k] = T(s[k]);
    c.heading = T(s[3]);
    c.heading_env = s[4] != 0.0f;
    c.standing_env = s[5] != 0.0f;
    c.time_left = T(s[6]);
    return c;
  }
  template <class T>
  MYRIAD_HD static void store_command(const TwistCommand<T>& c, float* s) {
    for (int k = 0; k < 3; ++k) s[k] = static_cast<float>(c.vel[k]);
    s[3] = static_cast<float>(c.heading);
    s[4] = c.heading_env ? 1.0f : 0.0f;
    s[5] = c.standing_env ? 1.0f : 0.0f;
    s[6] = static_cast<float>(c.time_left);
  }
  // The command's next resample (the episode's k-th, from its own stream), then its update.
  template <class T>
  MYRIAD_HD static void resample(const Params& p, const TaskRow& task, TwistCommand<T>& c) {
    float* s = task.state;
    const uint32_t k = static_cast<uint32_t>(s[7]);
    Rng rng = task.rng(kCommandStream + k);
    const float u_time = rng.uniform();
    float u[kTwistDraws];
    for (int n = 0; n < kTwistDraws; ++n) u[n] = rng.uniform();
    resample_twist(c, p.twist, u, u_time);
    s[7] = static_cast<float>(k + 1);
  }
  template <class T, int B>
  MYRIAD_HD static T root_heading(const Params& p, const EnvData<T, B>& d) {
    return heading_of(d.xquat + 4 * p.root_body);
  }

  // The tile a new episode starts on, from the task state before the reset (the last episode's
  // level, kind, command and final root position): mjlab's terrain_levels curriculum (a level up
  // after walking more than half a tile, down after walking less than half the commanded
  // distance; beyond the top level a random one), the first placement (the kind by the kinds'
  // shares, once per seed; the level from 0 ... max_init_terrain_level), or in play mode a random
  // tile (randomize_terrain). The root moves onto the tile's origin.
  MYRIAD_HD static int kind_of(const Params& p, float u) {
    for (int k = 0; k < p.kinds; ++k)
      if (u < p.kind_cdf[k]) return k;
    return p.kinds - 1;
  }
  MYRIAD_HD static const float* tile_origin(const Params& p, int level, int kind) {
    return p.origin + 3 * (level * p.kinds + kind);
  }
  template <class T, int B>
  MYRIAD_HD static void place_on_terrain(const Params& p, EnvData<T, B>& d, const TaskRow& task) {
    float* st = task.state;
    const VelocityLayout& L = p.layout;
    Rng rng = task.rng(kTerrainStream);
    const auto draw_level = [&](int count) {
      const int k = static_cast<int>(rng.uniform() * static_cast<float>(count));
      return k < count - 1 ? k : count - 1;
    };
    int level = static_cast<int>(st[L.level]) - 1;
    int kind = static_cast<int>(st[L.kind]);
    if (p.play) {
      level = draw_level(p.levels);
      kind = kind_of(p, rng.uniform());
    } else if (level < 0) {
      Rng startup = task.startup_rng(kTerrainStream);
      kind = kind_of(p, startup.uniform());
      const int top = static_cast<int>(p.max_init_terrain_level);
      level = draw_level((top < p.levels - 1 ? top : p.levels - 1) + 1);
    } else if (p.terrain_curriculum) {
      const float* o = tile_origin(p, level, kind);
      const float dx = st[L.root_xy] - o[0], dy = st[L.root_xy + 1] - o[1];
      const float walked = sqrtf(dx * dx + dy * dy);
      const float asked = st[L.speed] * static_cast<float>(kMaxEpisodeSteps * p.dt) * 0.5f;
      const bool up = walked > 0.5f * p.tile_size;
      const bool down = !up && walked < asked;
      level += (up ? 1 : 0) - (down ? 1 : 0);
      level = level >= p.levels ? draw_level(p.levels) : (level < 0 ? 0 : level);
    }
    st[L.level] = static_cast<float>(level + 1);
    st[L.kind] = static_cast<float>(kind);
    const float* o = tile_origin(p, level, kind);
    for (int k = 0; k < 3; ++k) d.qpos[k] += T(o[k]);
    st[L.root_xy] = static_cast<float>(d.qpos[0]);
    st[L.root_xy + 1] = static_cast<float>(d.qpos[1]);
    st[L.speed] = 0.0f;
  }

  // reset_base, reset_robot_joints, and the task's state of a new episode.
  template <class Sim, class T, int B>
  MYRIAD_HD static void start(const Params& p, const Sim&, int64_t, const ModelView<T>& m,
                              EnvData<T, B>& d, const TaskRow& task) {
    Rng rng = task.rng(0);
    const T dx = T(rng.uniform(p.reset_base_x[0], p.reset_base_x[1]));
    const T dy = T(rng.uniform(p.reset_base_y[0], p.reset_base_y[1]));
    const T dz = T(rng.uniform(p.reset_base_z[0], p.reset_base_z[1]));
    const T yaw = T(rng.uniform(p.reset_base_yaw[0], p.reset_base_yaw[1]));
    const T roll = T(rng.uniform(p.reset_base_roll[0], p.reset_base_roll[1]));     // drawn after
    const T pitch = T(rng.uniform(p.reset_base_pitch[0], p.reset_base_pitch[1]));  // the rest
    for (int k = 0; k < m.nq; ++k) d.qpos[k] = m.qpos_init[k];
    for (int k = 0; k < m.nv; ++k) d.qvel[k] = 0;
    const T sample[6] = {dx, dy, dz, roll, pitch, yaw}, origin[3] = {0, 0, 0};  // (tiles: below)
    T root[7];
    reset_root_pose(m.qpos_init, origin, sample, root);
    for (int k = 0; k < 7; ++k) d.qpos[k] = root[k];
    for (int j = 0; j < p.joints; ++j) {  // the default pose, clamped to the soft limits
      const T q = d.qpos[p.qadr[j]];
      d.qpos[p.qadr[j]] =
          q < T(p.soft_lo[j]) ? T(p.soft_lo[j]) : (q > T(p.soft_hi[j]) ? T(p.soft_hi[j]) : q);
    }
    float* st = task.state;
    const VelocityLayout& L = p.layout;
    if constexpr (kRough) place_on_terrain(p, d, task);
    Rng bias = task.startup_rng(kBiasStream);
    for (int j = 0; j < p.joints; ++j) {
      st[L.last_action + j] = 0.0f;
      st[L.bias + j] = bias.uniform(p.encoder_bias[0], p.encoder_bias[1]);
    }
    for (int f = 0; f < kFeet; ++f) st[L.air_time + f] = st[L.contact_time + f] = 0.0f;
    for (int h = 0; h < VelocityLayout::kHistory; ++h) st[L.self_hits + h] = 0.0f;
    if constexpr (kRough)
      for (int h = 0; h < VelocityLayout::kHistory; ++h)
        st[L.thigh_hits + h] = st[L.shank_hits + h] = st[L.trunk_hits + h] = 0.0f;
    // The command: resampled at the reset, then updated with the new heading (dt 0).
    st[7] = 0.0f;
    TwistCommand<T> cmd = command_of<T>(st);
    resample(p, task, cmd);
    update_twist(cmd, p.twist, heading_of(d.qpos + 3));  // the root quat written above
    store_command(cmd, st);
  }

  // processed = a * scale + q0; the target is processed less the encoder bias.
  // ctrl: the env's row, or its lane of a blocked batch.
  template <class T, class P>
  MYRIAD_HD static void control(const Params& p, const ModelView<T>&, const TaskRow& task,
                                const float* action, P ctrl) {
    const float* bias = task.state + p.layout.bias;
    for (int j = 0; j < p.joints; ++j)
      ctrl[j] = T(action[j]) * T(p.scale[j]) + T(p.q0[j]) - T(bias[j]);
  }

  // A contact sensor's force history (kHistory substeps, newest first) moved one substep on.
  MYRIAD_HD static void push_history(float* history) {
    for (int h = VelocityLayout::kHistory - 1; h > 0; --h) history[h] = history[h - 1];
  }

  // feet_ground_contact's air and contact times, after every physics substep.
  template <class Sim, class T, int B>
  MYRIAD_HD static void substep(const Params& p, const Sim& sim, int64_t i, const ModelView<T>& m,
                                const EnvData<T, B>& d, const TaskRow& task) {
    int found[kMaxFeet];
    T force[3 * kMaxFeet];
    foot_contacts(p, sim, i, m, d, found, force);
    float* air = task.state + p.layout.air_time;
    float* contact = task.state + p.layout.contact_time;
    const float dt = static_cast<float>(p.physics_dt);
    for (int f = 0; f < kFeet; ++f) {
      const bool on = found[f] > 0;
      air[f] = on ? 0.0f : air[f] + dt;
      contact[f] = on ? contact[f] + dt : 0.0f;
    }
    // The self-collision sensor (the root's subtree against itself, one slot, no reduction): the
    // first contact between two of the robot's geoms, above 10 N or not, newest first.
    if (p.self_collisions != 0.0f) {
      float* hits = task.state + p.layout.self_hits;
      push_history(hits);
      bool first = true, hit = false;
      sim.for_each_contact(d, i, [&](int g1, int g2, const T*, const T* local) {
        const int b1 = m.geom_bodyid[g1], b2 = m.geom_bodyid[g2];
        if (!first || m.body_rootid[b1] != p.root_body || m.body_rootid[b2] != p.root_body) return;
        first = false;
        hit = sqrt(local[0] * local[0] + local[1] * local[1] + local[2] * local[2]) > T(10);
      });
      hits[0] = hit ? 1.0f : 0.0f;
    }
    // Rough terrain (Go1): the thigh, shank and trunk ground-touch sensors (their geoms against
    // the terrain, above 10 N), newest first.
    if constexpr (kGroundTouch) {
      float* parts[4] = {nullptr, task.state + p.layout.thigh_hits,
                         task.state + p.layout.shank_hits, task.state + p.layout.trunk_hits};
      for (int k = 1; k < 4; ++k) push_history(parts[k]);
      bool touched[4] = {false, false, false, false};
      sim.for_each_contact(d, i, [&](int g1, int g2, const T*, const T* local) {
        int part = 0;
        if (m.geom_bodyid[g2] == p.terrain_body && g1 < kMaxGeoms) part = p.geom_part[g1];
        if (m.geom_bodyid[g1] == p.terrain_body && g2 < kMaxGeoms) part = p.geom_part[g2];
        if (part > 0 &&
            sqrt(local[0] * local[0] + local[1] * local[1] + local[2] * local[2]) > T(10))
          touched[part] = true;
      });
      for (int k = 1; k < 4; ++k) parts[k][0] = touched[k] ? 1.0f : 0.0f;
    }
  }

  template <class Sim, class T, int B>
  MYRIAD_HD static void after_step(const Params& p, const Sim& sim, int64_t i,
                                   const ModelView<T>& m, const EnvData<T, B>& d,
                                   const float* action, const TaskRow& task, float& reward,
                                   bool& terminated, bool& truncated, InfoRow info) {
    float* st = task.state;
    const VelocityLayout& L = p.layout;
    const T c[3] = {T(st[0]), T(st[1]), T(st[2])};
    const T speed = command_speed(c);
    // The feet first (contacts, terrain clearance), while little else is live: after the root's
    // and the joints' terms the float64 kernel took 121 registers (142 on the blocked layout),
    // 84 so (108).
    int found[kMaxFeet];
    T force[3 * kMaxFeet], height[kMaxFeet], vel_xy[2 * kMaxFeet], contact_time[kMaxFeet],
        air_time[kMaxFeet], peak[kMaxFeet];
    bool in_contact[kMaxFeet];
    foot_contacts(p, sim, i, m, d, found, force);
    MYRIAD_NO_UNROLL
    for (int f = 0; f < kFeet; ++f) {
      T pos[3], vel[3];
      foot_position(p, d, f, pos);
      point_velocity(m, d, p.foot_body[f], pos, vel);
      height[f] = foot_clearance(p, m, d, f, pos);
      vel_xy[2 * f] = vel[0];
      vel_xy[2 * f + 1] = vel[1];
      in_contact[f] = found[f] > 0;
      contact_time[f] = T(st[L.contact_time + f]);
      air_time[f] = T(st[L.air_time + f]);
      peak[f] = T(st[L.peak + f]);
    }
    T v_b[3], w_b[3];
    root_velocity(p, m, d, v_b, w_b);
    T g_up[3], g_root[3];
    gravity_in(d, p.upright_body, g_up);
    gravity_in(d, p.root_body, g_root);
    if constexpr (kUprightOnTerrain) {  // upright against the terrain's normal (the last scan's)
      const T n[3] = {T(st[L.normal]), T(st[L.normal + 1]), T(st[L.normal + 2])};
      to_local(d.xmat + 9 * p.upright_body, n, g_up);
    }
    // The joint terms' parts summed over the joints where their values lie (no [joints] copies
    // on a GPU thread's stack; velocity_terms.h's functions sum the same parts in the same order).
    const int gait = posture_gait(speed, T(0.05), T(1.5));
    T posture = 0, limits = 0, rate = 0;
    for (int j = 0; j < p.joints; ++j) {
      const T q = d.qpos[p.qadr[j]];
      const float std = gait == 0   ? p.std_standing[j]
                        : gait == 1 ? p.std_walking[j]
                                    : p.std_running[j];
      posture += posture_part(q, T(p.q0[j]), T(std));
      limits += limits_part(q, T(p.soft_lo[j]), T(p.soft_hi[j]));
      rate += rate_part(T(action[j]), T(st[L.last_action + j]));
    }
    const T step_dt = T(p.dt);
    const T gate = T(0.05);
    T term[kTermCount];
    term[0] = track_linear_velocity(c, v_b, T(0.5));
    term[1] = track_angular_velocity(c, w_b, sqrt(T(0.5)));
    term[2] = upright(g_up, sqrt(T(0.2)));
    term[3] = posture_of(posture, p.joints);
    term[4] = body_angular_velocity_penalty(d.cvel + 6 * p.upright_body);  // world frame
    term[5] = limits;
    term[6] = rate;
    term[7] = feet_air_time(air_time, kFeet, T(0.05), T(0.5), speed, T(0.5));
    term[8] = feet_clearance(height, vel_xy, kFeet, T(0.1), speed, gate);
    term[9] = feet_swing_height(peak, height, in_contact, contact_time, kFeet, T(0.1), step_dt,
                                speed, gate);
    term[10] = feet_slip(vel_xy, in_contact, kFeet, speed, gate);
    term[11] = soft_landing(force, contact_time, kFeet, step_dt, speed, gate);
    // angular_momentum_penalty: the root's subtreeangmom sensor, as the last substep left it.
    term[12] = p.angmom_adr >= 0 ? angular_momentum_penalty(d.sensordata + p.angmom_adr) : T(0);
    // self_collision_cost over the step's substeps (the sensor's 4-substep history).
    term[13] = 0;
    for (int h = 0; h < VelocityLayout::kHistory; ++h) term[13] += T(st[L.self_hits + h]);
    // shank_collision and trunk_head_collision (rough): the same cost of the ground touches.
    term[14] = term[15] = 0;
    if constexpr (kGroundTouch)
      for (int h = 0; h < VelocityLayout::kHistory; ++h) {
        term[14] += T(st[L.shank_hits + h]);
        term[15] += T(st[L.trunk_hits + h]);
      }
    float w[kTermCount];
    weights(p, w);
    T total = 0;
    for (int k = 0; k < kTermCount; ++k) {
      // mjlab skips a zero weight's term and replaces a non-finite value with 0.
      T value = w[k] != 0.0f ? T(w[k]) * term[k] * step_dt : T(0);
      value = is_finite(value) ? value : T(0);
      info.set(k, static_cast<float>(value));
      total += value;
    }
    reward = static_cast<float>(total);
    for (int f = 0; f < kFeet; ++f) st[L.peak + f] = static_cast<float>(peak[f]);
    for (int j = 0; j < p.joints; ++j) st[L.last_action + j] = action[j];
    // The tracking errors (mjlab's error_vel_xy and error_vel_yaw, at the reward's state); 0 on a
    // diverged step, which the framework cuts, so that no NaN reaches the logged means.
    const T ex = c[0] - v_b[0], ey = c[1] - v_b[1];
    const T e_xy = sqrt(ex * ex + ey * ey), e_yaw = fabs(c[2] - w_b[2]);
    info.set(kTermCount, is_finite(e_xy) ? static_cast<float>(e_xy) : 0.0f);
    info.set(kTermCount + 1, is_finite(e_yaw) ? static_cast<float>(e_yaw) : 0.0f);
    info.set(kTermCount + 2, st[0]);
    info.set(kTermCount + 3, st[1]);
    info.set(kTermCount + 4, st[2]);
    terminated =
        p.fell_over && bad_orientation(g_root, T(p.fell_over_angle) * T(3.141592653589793 / 180.0));
    if constexpr (kRough) {
      bool thigh = false;
      for (int h = 0; h < VelocityLayout::kHistory; ++h) thigh = thigh || st[L.thigh_hits + h] > 0;
      terminated = terminated || (kGroundTouch && p.illegal_contact && thigh);
      const auto root = d.xpos + 3 * p.root_body;
      // Not in play mode (mjlab's play config drops the term).
      truncated = p.out_of_terrain_bounds && !p.play &&
                  (fabs(root[0]) > T(p.bound_x) || fabs(root[1]) > T(p.bound_y));
      st[L.root_xy] = static_cast<float>(root[0]);
      st[L.root_xy + 1] = static_cast<float>(root[1]);
      st[L.speed] = sqrtf(st[0] * st[0] + st[1] * st[1]);
      info.set(kTermCount + 5, st[L.level] - 1.0f);
    }
    // The command curriculum's upper bounds in force (the same in every env).
    constexpr int kCurriculumInfo = kTermCount + (kRough ? 6 : 5);
    info.set(kCurriculumInfo, static_cast<float>(p.twist.lin_vel_x[1]));
    info.set(kCurriculumInfo + 1, static_cast<float>(p.twist.ang_vel_z[1]));
  }

  // The command's timer, its resample when it runs out, and the heading control.
  template <class T, int B>
  MYRIAD_HD static void advance(const Params& p, const ModelView<T>&, const EnvData<T, B>& d,
                                const TaskRow& task) {
    float* st = task.state;
    TwistCommand<T> cmd = command_of<T>(st);
    cmd.time_left -= T(p.dt);
    if (cmd.time_left <= T(0)) resample(p, task, cmd);
    update_twist(cmd, p.twist, root_heading(p, d));
    store_command(cmd, st);
  }

  // [actor | critic]: base_lin_vel, base_ang_vel (the IMU's velocimeter and gyro), projected
  // gravity, joint_pos (biased for the actor), joint_vel, the last action, the command; the
  // actor's with mjlab's uniform noise; then the critic's foot height, air time, contact and
  // contact forces (sign(f) log1p|f|).
  template <class Sim, class T, int B>
  MYRIAD_HD static void observe(const Params& p, const Sim& sim, int64_t i, const ModelView<T>& m,
                                const EnvData<T, B>& d, const TaskRow& task, float* obs) {
    const float* st = task.state;
    const VelocityLayout& L = p.layout;
    // The critic's foot columns (its last, after the actor's terms), first, while little else is
    // live (no noise: the critic's terms carry none).
    {
      float* o = obs + 2 * actor_width(p);
      int found[kMaxFeet];
      T force[3 * kMaxFeet];
      foot_contacts(p, sim, i, m, d, found, force);
      for (int f = 0; f < kFeet; ++f) {
        T pos[3];
        foot_position(p, d, f, pos);
        *o++ = static_cast<float>(foot_clearance(p, m, d, f, pos));
      }
      for (int f = 0; f < kFeet; ++f) *o++ = st[L.air_time + f];
      for (int f = 0; f < kFeet; ++f) *o++ = found[f] > 0 ? 1.0f : 0.0f;
      for (int k = 0; k < 3 * kFeet; ++k) *o++ = static_cast<float>(signed_log1p(force[k]));
    }
    T g[3];
    gravity_in(d, p.root_body, g);
    Rng noise = task.rng(kNoiseStream + static_cast<uint32_t>(task.t));
    const bool corrupt = p.corrupt_observations && !p.play;
    auto put = [&](float*& o, T value, float n) {
      *o++ = static_cast<float>(value) + (corrupt ? noise.uniform(-n, n) : 0.0f);
    };
    // The scan's raw heights go into the critic's scan columns first; the actor's group reads
    // them there (adding its noise), then the critic's scales them in place.
    float* scan = obs + 2 * actor_width(p) - p.scan_rays;
    if constexpr (kRough) {
      T normal[3];
      height_scan(p, m, d, scan, normal);
      for (int k = 0; k < 3; ++k) task.state[L.normal + k] = static_cast<float>(normal[k]);
    }
    for (int group = 0; group < 2; ++group) {
      const bool actor = group == 0;
      float* o = obs + (actor ? 0 : actor_width(p));
      const float scale = actor ? 1.0f : 0.0f;  // the critic's terms carry no noise
      for (int k = 0; k < 3; ++k)
        put(o, d.sensordata[p.imu_lin_adr + k], p.noise_base_lin_vel * scale);
      for (int k = 0; k < 3; ++k)
        put(o, d.sensordata[p.imu_ang_adr + k], p.noise_base_ang_vel * scale);
      for (int k = 0; k < 3; ++k) put(o, g[k], p.noise_projected_gravity * scale);
      for (int j = 0; j < p.joints; ++j) {
        const T bias = actor ? T(st[L.bias + j]) : T(0);
        put(o, d.qpos[p.qadr[j]] + bias - T(p.q0[j]), p.noise_joint_pos * scale);
      }
      for (int j = 0; j < p.joints; ++j) put(o, d.qvel[p.dadr[j]], p.noise_joint_vel * scale);
      for (int j = 0; j < p.joints; ++j) *o++ = st[L.last_action + j];
      for (int k = 0; k < 3; ++k) *o++ = st[k];
      // height_scan: noise (actor) before the scale 1 / 5.
      if constexpr (kRough)
        for (int k = 0; k < kScanRays; ++k) {
          const float n = actor && corrupt ? noise.uniform(-0.1f, 0.1f) : 0.0f;
          *o++ = (scan[k] + n) * (1.0f / static_cast<float>(kScanMax));
        }
    }
  }
};

template <class Robot>
void VelocityTask<Robot>::prepare(Params& p, const physics::Model<double>& m) {
  const std::string id = kId;
  auto fail = [&](const std::string& what) { throw std::invalid_argument(id + ": " + what); };
  auto index_of = [&](const std::vector<std::string>& names, const std::string& name,
                      const char* kind) {
    for (size_t k = 0; k < names.size(); ++k)
      if (names[k] == name) return static_cast<int>(k);
    fail(std::string("the model has no ") + kind + " '" + name + "'");
    return -1;
  };
  if (m.njnt < 1 || m.jnt_type[0] != 0 || m.jnt_qposadr[0] != 0)
    fail("the robot's root must be a free joint first in the model");
  if (m.nu > kMaxJoints) fail("more than " + std::to_string(kMaxJoints) + " actuators");
  if (m.ngeom > kMaxGeoms) fail("more than " + std::to_string(kMaxGeoms) + " geoms");
  p.physics_dt = m.timestep;
  p.root_body = m.jnt_bodyid[0];
  p.upright_body = locomotion::body_id(m, id, Robot::kUprightBody);
  p.terrain_body = locomotion::body_id(m, id, Robot::kTerrainBody);
  p.joints = m.nu;
  for (int u = 0; u < m.nu; ++u) {
    if (m.actuator_trntype[u] != 0) fail("actuator " + m.actuator_names[u] + " is not a joint's");
    const int j = m.actuator_trnid[u];
    p.qadr[u] = m.jnt_qposadr[j];
    p.dadr[u] = m.jnt_dofadr[j];
    p.q0[u] = static_cast<float>(m.qpos_init[p.qadr[u]]);
    const double kp = m.actuator_gainprm[u * 3 + 0];
    const double effort = m.actuator_forcerange[2 * u + 1];
    if (!(kp > 0) || !(effort > 0))
      fail("actuator " + m.actuator_names[u] + " is not a position actuator with a force range");
    p.scale[u] = static_cast<float>(0.25 * effort / kp);  // mjlab's 0.25 * effort / stiffness
    const double lo = m.jnt_range[2 * j], hi = m.jnt_range[2 * j + 1];
    const double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo) * 0.9;
    p.soft_lo[u] = static_cast<float>(mid - half);
    p.soft_hi[u] = static_cast<float>(mid + half);
    bool matched = false;
    for (const PostureStd& s : Robot::kPosture) {
      if (!std::regex_match(m.joint_names[j], std::regex(s.regex))) continue;
      p.std_standing[u] = s.standing;
      p.std_walking[u] = s.walking;
      p.std_running[u] = s.running;
      matched = true;
      break;
    }
    if (!matched) fail("joint " + m.joint_names[j] + " has no posture std");
  }
  const int imu = index_of(m.site_names, Robot::kImuSite, "site");
  for (int s = 0; s < m.nsensor; ++s) {
    if (m.sensor_objid[s] != imu) continue;
    if (m.sensor_type[s] == physics::kSensVelocimeter) p.imu_lin_adr = m.sensor_adr[s];
    if (m.sensor_type[s] == physics::kSensGyro) p.imu_ang_adr = m.sensor_adr[s];
  }
  for (int s = 0; s < m.nsensor; ++s)
    if (m.sensor_type[s] == physics::kSensSubtreeAngMom && m.sensor_objid[s] == p.root_body)
      p.angmom_adr = m.sensor_adr[s];
  if (p.angular_momentum != 0.0f && p.angmom_adr < 0)
    fail("option angular_momentum needs a subtreeangmom sensor on the root body");
  if (p.imu_lin_adr < 0 || p.imu_ang_adr < 0)
    fail(std::string("the model has no velocimeter and gyro at site '") + Robot::kImuSite + "'");
  for (int g = 0; g < kMaxGeoms; ++g) p.geom_foot[g] = -1;
  for (int f = 0; f < kFeet; ++f) {
    const int s = index_of(m.site_names, Robot::kFootSites[f], "site");
    p.foot_site[f] = s;
    p.foot_body[f] = m.site_bodyid[s];
    for (int k = 0; k < 3; ++k) p.foot_site_pos[f][k] = static_cast<float>(m.site_pos[3 * s + k]);
    bool any = false;
    const std::regex geoms(Robot::kFootGeoms[f]);
    for (int g = 0; g < m.ngeom; ++g)
      if (std::regex_match(m.geom_names[g], geoms)) {
        p.geom_foot[g] = static_cast<int8_t>(f);
        any = true;
      }
    if (!any) fail(std::string("no geom matches foot ") + Robot::kFootGeoms[f]);
  }
  p.layout.set(p.joints, kFeet, kRough);
  if constexpr (kRough) {
    if (p.terrain_geom < 0) fail("its terrain was not built (build_scene)");
    p.scan_rays = kScanRays;
    const char* parts[4] = {nullptr, Robot::kThighGeoms, Robot::kShankGeoms, Robot::kTrunkGeoms};
    for (int k = 1; k < 4 && kGroundTouch; ++k) {
      const std::regex names(parts[k]);
      bool any = false;
      for (int g = 0; g < m.ngeom; ++g)
        if (std::regex_match(m.geom_names[g], names)) {
          p.geom_part[g] = static_cast<int8_t>(k);
          any = true;
        }
      if (!any) fail(std::string("no geom matches ") + parts[k]);
    }
  }
  for (int k = 0; k < 2; ++k) {
    p.twist.lin_vel_x[k] = p.lin_vel_x[k];
    p.twist.lin_vel_y[k] = p.lin_vel_y[k];
    p.twist.ang_vel_z[k] = p.ang_vel_z[k];
  }
  p.twist_base = p.twist;
  // The curriculum's stages after the first (the options' ranges): whole policy steps, in order
  // (a float holds every whole number to 2^24 exactly).
  const std::pair<const char*, float> stage_steps[] = {
      {"command_stage1_step", p.command_stage1_step},
      {"command_stage2_step", p.command_stage2_step}};
  for (const auto& [key, value] : stage_steps)
    if (value != std::floor(value) || value > 16777216.0f)
      fail(std::string("option ") + key + " must be a whole number of policy steps in 0 ... " +
           "16777216, got " + std::to_string(value));
  if (p.command_stage2_step < p.command_stage1_step)
    fail("option command_stage2_step (" + std::to_string(p.command_stage2_step) +
         ") must not come before command_stage1_step (" + std::to_string(p.command_stage1_step) +
         ")");
  const double x1[2] = {p.command_stage1_lin_vel_x[0], p.command_stage1_lin_vel_x[1]},
               z1[2] = {p.command_stage1_ang_vel_z[0], p.command_stage1_ang_vel_z[1]},
               x2[2] = {p.command_stage2_lin_vel_x[0], p.command_stage2_lin_vel_x[1]};
  twist_stages(p.command_stage1_step, x1, z1, p.command_stage2_step, x2, p.stages);
}

template <class Robot>
void VelocityTask<Robot>::build_scene(Params& p, physics::Model<double>& m) {
  if constexpr (!kRough) return;  // flat ground: the scene as it is
  const std::string id = kId;
  auto fail = [&](const std::string& what) { throw std::invalid_argument(id + ": " + what); };
  TerrainConfig config;
  config.border = kTerrainBorder;
  if (p.terrain_seed != std::floor(p.terrain_seed) || p.terrain_seed > 16777216.0f)
    fail("option terrain_seed must be a whole number in 0 ... 16777216, got " +
         std::to_string(p.terrain_seed));
  config.seed = static_cast<uint64_t>(p.terrain_seed);
  const Terrain t = generate_terrain(config);
  if (t.levels > kMaxLevels || t.kinds > kMaxKinds)
    fail("a terrain of more than " + std::to_string(kMaxLevels) + " levels or " +
         std::to_string(kMaxKinds) + " kinds");
  const int top = static_cast<int>(p.max_init_terrain_level);
  if (p.max_init_terrain_level != static_cast<float>(top) || top > t.levels - 1)
    fail("option max_init_terrain_level must be a whole level in 0 ... " +
         std::to_string(t.levels - 1) + " (the terrain's levels), got " +
         std::to_string(p.max_init_terrain_level));
  const int body = locomotion::body_id(m, id, Robot::kTerrainBody);
  int g = -1;
  for (int k = 0; k < m.ngeom; ++k)
    if (m.geom_bodyid[k] == body && m.geom_type[k] == physics::collision::kHField) g = k;
  if (g < 0)
    fail(std::string("its scene has no height field on body '") + Robot::kTerrainBody + "'");
  const int h = m.geom_dataid[g];
  const double* size = m.hfield_size.data() + 4 * h;
  const double* pos = m.geom_pos.data() + 3 * g;
  const double* quat = m.geom_quat.data() + 4 * g;
  const double* body_pos = m.body_pos.data() + 3 * body;
  const double* body_quat = m.body_quat.data() + 4 * body;
  const double range = t.z_max - t.z_min;
  const bool fits = m.hfield_nrow[h] == t.nrow && m.hfield_ncol[h] == t.ncol &&
                    std::fabs(size[0] - t.half_x) < 1e-9 && std::fabs(size[1] - t.half_y) < 1e-9 &&
                    std::fabs(size[2] - range) < 1e-6 && std::fabs(pos[2] - t.z_min) < 1e-6 &&
                    pos[0] == 0 && pos[1] == 0 && quat[0] == 1 && quat[1] == 0 && quat[2] == 0 &&
                    quat[3] == 0 && body_pos[0] == 0 && body_pos[1] == 0 && body_pos[2] == 0 &&
                    body_quat[0] == 1 && body_quat[1] == 0 && body_quat[2] == 0 &&
                    body_quat[3] == 0;
  if (!fits) {
    std::ostringstream what;
    what << "the generated terrain (" << t.nrow << " x " << t.ncol << " samples, half extents "
         << t.half_x << " x " << t.half_y << " m, heights " << t.z_min << " ... " << t.z_max
         << " m) does not fit the scene's height field (" << m.hfield_nrow[h] << " x "
         << m.hfield_ncol[h] << ", " << size[0] << " x " << size[1] << " m, its geom at z "
         << pos[2] << " m, " << size[2]
         << " m high, unrotated at x = y = 0 on an unmoved body expected)";
    fail(what.str());
  }
  // Elevations in [0, 1] of the field's own height, rounded to float as libmujoco stores them.
  const int adr = m.hfield_adr[h];
  for (size_t k = 0; k < t.height.size(); ++k) {
    double e = (t.height[k] - pos[2]) / size[2];
    e = e < 0 ? 0 : (e > 1 ? 1 : e);
    m.hfield_data[adr + k] = static_cast<float>(e);
  }
  p.terrain_geom = g;
  p.levels = t.levels;
  p.kinds = t.kinds;
  p.tile_size = static_cast<float>(config.tile_size);
  p.bound_x = static_cast<float>(t.half_x - 0.3);
  p.bound_y = static_cast<float>(t.half_y - 0.3);
  for (size_t k = 0; k < t.origin.size(); ++k) p.origin[k] = static_cast<float>(t.origin[k]);
  const std::vector<double> cdf = kind_cdf(config.kinds);
  for (int k = 0; k < t.kinds; ++k) p.kind_cdf[k] = static_cast<float>(cdf[k]);
}

template <class Robot>
std::string VelocityTask<Robot>::default_randomize() {
  const std::string path = robots_dir() + "/" + Robot::kRandomizeFile;
  std::ifstream in(path);
  if (!in)
    throw std::invalid_argument(std::string(kId) + ": cannot read its randomization '" + path +
                                "' (set MYRIAD_ROBOTS_DIR to the folder holding envs/robots)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  // The robot's startup terms, and mjlab's push_robot.
  const size_t close = text.rfind('}');
  if (close == std::string::npos)
    throw std::invalid_argument(std::string(kId) + ": " + path + " is not a JSON object");
  text.insert(close,
              ", \"push_robot\": {\"field\": \"root_velocity\", \"mode\": \"interval\", "
              "\"interval\": [1.0, 3.0], \"operation\": \"add\", \"range\": {\"0\": [-0.5, 0.5], "
              "\"1\": [-0.5, 0.5], \"2\": [-0.4, 0.4], \"3\": [-0.52, 0.52], \"4\": [-0.52, "
              "0.52], \"5\": [-0.78, 0.78]}}");
  return text;
}

using Go1VelocityFlat = VelocityTask<Go1Flat>;
using Go1VelocityRough = VelocityTask<Go1Rough>;
using G1VelocityFlat = VelocityTask<G1Flat>;
using G1VelocityRough = VelocityTask<G1Rough>;

}  // namespace myriad::envs::legged
