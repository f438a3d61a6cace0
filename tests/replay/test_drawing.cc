// Drawing: the classic envs' poses put the bodies where Gymnasium's renderers draw them, MJCF
// poses match libmujoco's kinematics, and the recorder's frames follow docs/replay-format.md.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "learner/record.h"
#include "myriad/physics/import.h"
#include "myriad/registry.h"

namespace myriad {
namespace {

std::string model_path(const std::string& name) {
  const char* src = std::getenv("MYRIAD_SOURCE_DIR");
  return std::string(src ? src : ".") + "/physics/models/" + name;
}

// The world point `local` of body b, given poses [nbody, 7].
std::array<double, 3> point_of(const float* poses, int b, std::array<double, 3> local) {
  const float* p = poses + 7 * b;
  const double w = p[3], x = p[4], y = p[5], z = p[6];
  const double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                       2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                       2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  std::array<double, 3> out;
  for (int r = 0; r < 3; ++r)
    out[r] = p[r] + R[3 * r] * local[0] + R[3 * r + 1] * local[1] + R[3 * r + 2] * local[2];
  return out;
}

TEST(Drawing, CartPolePoleTipFollowsXAndTheta) {
  auto env = envs::make("CartPole-v1", 1, Device::kCpu, 0);
  const float x = 1.3f, theta = 0.2f;
  const at::Tensor poses = env->body_poses(at::tensor({x, 0.f, theta, 0.f}).view({1, 4}));
  ASSERT_EQ(poses.sizes(), (at::IntArrayRef{1, 3, 7}));
  const auto tip = point_of(poses.data_ptr<float>(), 2, {0, 0, 1.0});  // pole length 2 * 0.5
  const auto pivot = point_of(poses.data_ptr<float>(), 2, {0, 0, 0});
  EXPECT_NEAR(tip[0] - pivot[0], std::sin(theta), 1e-6);  // leans toward +x as theta grows
  EXPECT_NEAR(tip[2] - pivot[2], std::cos(theta), 1e-6);
  EXPECT_NEAR(point_of(poses.data_ptr<float>(), 1, {0, 0, 0})[0], x, 1e-6);
  EXPECT_EQ(env->scene().bodies.size(), 3u);
}

TEST(Drawing, PendulumAndAcrobotAnglesMatchGymnasiumRenderers) {
  auto pend = envs::make("Pendulum-v1", 1, Device::kCpu, 0);
  const float th = 0.7f;
  at::Tensor poses = pend->body_poses(at::tensor({std::cos(th), std::sin(th), 0.f}).view({1, 3}));
  auto tip = point_of(poses.data_ptr<float>(), 1, {0, 0, 1});
  auto pivot = point_of(poses.data_ptr<float>(), 1, {0, 0, 0});
  // Gymnasium draws the rod end at (l cos(th + pi/2), l sin(th + pi/2)).
  EXPECT_NEAR(tip[0] - pivot[0], std::cos(th + M_PI / 2), 1e-6);
  EXPECT_NEAR(tip[2] - pivot[2], std::sin(th + M_PI / 2), 1e-6);

  auto acro = envs::make("Acrobot-v1", 1, Device::kCpu, 0);
  const float t1 = 0.4f, t2 = -1.1f;
  poses = acro->body_poses(
      at::tensor({std::cos(t1), std::sin(t1), std::cos(t2), std::sin(t2), 0.f, 0.f}).view({1, 6}));
  pivot = point_of(poses.data_ptr<float>(), 1, {0, 0, 0});
  tip = point_of(poses.data_ptr<float>(), 2, {0, 0, -1});
  // Acrobot's goal test: -cos(t1) - cos(t1 + t2) is the tip's height above the pivot.
  EXPECT_NEAR(tip[2] - pivot[2], -std::cos(t1) - std::cos(t1 + t2), 1e-5);
  EXPECT_NEAR(tip[0] - pivot[0], std::sin(t1) + std::sin(t1 + t2), 1e-5);
}

TEST(Drawing, MountainCarSitsOnItsHill) {
  for (const char* id : {"MountainCar-v0", "MountainCarContinuous-v0"}) {
    auto env = envs::make(id, 1, Device::kCpu, 0);
    const float x = -0.9f;
    const at::Tensor poses = env->body_poses(at::tensor({x, 0.f}).view({1, 2}));
    const float* p = poses.data_ptr<float>() + 7;
    EXPECT_NEAR(p[0], x, 1e-6) << id;
    EXPECT_NEAR(p[2], 0.45 * std::sin(3 * x) + 0.55, 1e-6) << id;
    ASSERT_EQ(env->scene().lines.size(), 1u) << id;
  }
}

TEST(Drawing, WrongObservationShapeIsAnError) {
  auto env = envs::make("CartPole-v1", 1, Device::kCpu, 0);
  try {
    env->body_poses(at::zeros({2, 3}));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[B, 4], got [2, 3]"), std::string::npos) << e.what();
  }
}

TEST(Drawing, MjcfPosesMatchLibmujocoKinematics) {
  const std::string xml = model_path("quadruped.xml");
  auto env =
      envs::make("MJCF-v0", 4, Device::kCpu, 3, {{"reset_noise_scale", 0.5}}, {{"xml", xml}});
  const at::Tensor obs = env->buffers().obs.clone();
  const at::Tensor poses = env->body_poses(obs);
  physics::MjModelHandle handle(xml);
  const mjModel* m = handle.get();
  mjData* d = mj_makeData(m);
  ASSERT_EQ(poses.size(1), m->nbody);
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < m->nq; ++k) d->qpos[k] = obs[i][k].item<float>();
    mj_kinematics(m, d);
    for (int b = 0; b < m->nbody; ++b) {
      const float* p = poses.data_ptr<float>() + (i * m->nbody + b) * 7;
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(p[k], d->xpos[3 * b + k], 1e-5) << b;
      // q and -q are the same rotation.
      const double sign = (p[3] * d->xquat[4 * b] + p[4] * d->xquat[4 * b + 1] +
                           p[5] * d->xquat[4 * b + 2] + p[6] * d->xquat[4 * b + 3]) < 0
                              ? -1
                              : 1;
      for (int k = 0; k < 4; ++k) EXPECT_NEAR(p[3 + k], sign * d->xquat[4 * b + k], 1e-5) << b;
    }
  }
  mj_deleteData(d);
  const Scene s = env->scene();
  EXPECT_EQ(static_cast<int>(s.geoms.size()), m->ngeom);
  EXPECT_NEAR(s.frame_dt, m->opt.timestep, 1e-12);
}

TEST(Drawing, MjcfMeshesAndMaterialColoursReachTheReplay) {
  auto env =
      envs::make("MJCF-v0", 1, Device::kCpu, 0, {}, {{"xml", model_path("mesh_pendulum.xml")}});
  const Scene s = env->scene();
  ASSERT_EQ(s.geoms.size(), 2u);
  const SceneGeom& bob = s.geoms[1];
  EXPECT_EQ(bob.name, "bob");
  EXPECT_EQ(bob.type, "mesh");
  ASSERT_EQ(bob.mesh, 0);
  EXPECT_FLOAT_EQ(bob.rgba[0], 0.85f);  // the material's colour: the geom sets none
  ASSERT_EQ(s.meshes.size(), 1u);
  EXPECT_EQ(s.meshes[0].vertices.size(), 6u * 3);  // the octahedron's hull
  EXPECT_EQ(s.meshes[0].faces.size(), 8u * 3);
  replay::Replay r;
  replay::add_scene(r, s);
  EXPECT_EQ(r.arrays.at("mesh_vertex").shape, (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(r.arrays.at("mesh_face").shape, (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(r.header.at("scene").at("meshes")[0].at("face_count"), 8);
  EXPECT_EQ(r.header.at("scene").at("geoms")[1].at("mesh"), 0);
}

learner::LoadedPolicy untrained(const std::string& id) {
  learner::TrainConfig c = learner::parse_config(
      "env: {id: " + id + ", num_envs: 4, device: cpu}\nrun: {eval_episodes: 0}\n", {});
  return learner::Trainer(c, "").snapshot();
}

TEST(Recorder, FramesFollowTheFormat) {
  learner::LoadedPolicy p = untrained("CartPole-v1");
  learner::RecordOptions o;
  o.envs = 3, o.episodes = 2, o.seed = 5;
  const learner::Recording rec = learner::record_episodes(p, o);
  const replay::Replay& r = rec.replay;
  const int64_t F = r.header.at("num_frames").get<int64_t>();
  const auto& flags = r.arrays.at("flags");
  const auto& reward = r.arrays.at("reward");
  const auto& episode = r.arrays.at("episode");
  const auto& nframes = r.arrays.at("num_frames");
  const auto& pose = r.arrays.at("body_pose");
  const auto& action = r.arrays.at("action");
  EXPECT_EQ(pose.shape, (std::vector<int64_t>{3, F, 3, 7}));
  EXPECT_EQ(rec.eval.episodes, 6);
  double total = 0;
  for (int i = 0; i < 3; ++i) {
    const int n = nframes.data<int32_t>()[i];
    const auto returns = r.header.at("episode_returns")[i].get<std::vector<float>>();
    ASSERT_EQ(returns.size(), 2u);
    int ep = -1;
    double ret = 0;
    for (int f = 0; f < n; ++f) {
      const uint8_t fl = flags.data<uint8_t>()[i * F + f];
      const float rw = reward.data<float>()[i * F + f];
      if (fl & 1) {
        ++ep, ret = 0;
        EXPECT_EQ(rw, 0) << "an episode's first frame has no reward";
      }
      EXPECT_EQ(episode.data<int32_t>()[i * F + f], ep);
      ret += rw;
      const bool last = fl & 6;
      EXPECT_EQ(std::isnan(action.data<float>()[i * F + f]), last) << "env " << i << " f " << f;
      if (last) EXPECT_FLOAT_EQ(ret, returns[ep]) << "env " << i << " episode " << ep;
    }
    EXPECT_EQ(ep, 1);
    EXPECT_TRUE(flags.data<uint8_t>()[i * F + n - 1] & 6) << "ends on an episode's last frame";
    for (int f = n; f < F; ++f) EXPECT_EQ(episode.data<int32_t>()[i * F + f], -1);
    total += returns[0] + returns[1];
  }
  EXPECT_NEAR(rec.eval.return_mean, total / 6, 1e-4);
  // The terminal frame of a failed CartPole episode shows the pole past 12 degrees or the cart
  // past 2.4, drawn from final_obs (the env had already reset).
  const int n0 = nframes.data<int32_t>()[0];
  const float* last_pose = pose.data<float>() + (int64_t{0} * F + n0 - 1) * 21;
  const double theta = 2 * std::atan2(last_pose[14 + 5], last_pose[14 + 3]);
  const bool failed = std::abs(theta) > 0.2094 || std::abs(last_pose[7]) > 2.4;
  const bool truncated = flags.data<uint8_t>()[n0 - 1] & 4;
  EXPECT_TRUE(failed || truncated) << "theta " << theta << " x " << last_pose[7];
}

TEST(Recorder, SameSeedSameBytes) {
  learner::LoadedPolicy p = untrained("Acrobot-v1");
  learner::RecordOptions o;
  o.envs = 2, o.seed = 9;
  EXPECT_EQ(replay::encode(learner::record_episodes(p, o).replay),
            replay::encode(learner::record_episodes(p, o).replay));
}

// What the recorder writes, every env's scene included (bodies, lines, meshes), passes the
// reader's checks (docs/replay-format.md, "What a reader refuses").
TEST(Recorder, EveryEnvsRecordingPassesTheReader) {
  learner::RecordOptions o;
  o.envs = 2, o.seed = 3;
  for (const std::string& id : envs::registered_ids()) {
    if (id == "MJCF-v0") continue;  // below, with a model that has a mesh
    // The learner's recorder takes no multi-agent env yet; myriad.record writes their replays
    // (tests/python/test_record_multi_agent.py checks them with this reader too).
    if (envs::spec_of(id).multi_agent()) continue;
    learner::LoadedPolicy p = untrained(id);
    EXPECT_NO_THROW(replay::decode(replay::encode(learner::record_episodes(p, o).replay), id))
        << id;
  }
  auto env = envs::make("MJCF-v0", 2, Device::kCpu, 0, {{"max_episode_steps", 20}},
                        {{"xml", model_path("mesh_pendulum.xml")}});
  const int64_t A = env->spec().action_space.flat_size();
  learner::Driver zeros;
  zeros.act = [&](const torch::Tensor& obs) { return torch::zeros({obs.size(0), A}); };
  const replay::Replay r = learner::record_episodes(*env, zeros, o).replay;
  ASSERT_TRUE(r.header.at("scene").contains("meshes"));
  EXPECT_NO_THROW(replay::decode(replay::encode(r), "mesh_pendulum"));
}

// A legged task on rough ground: the terrain is drawn (one height field on the world, no ground
// grid), the robot moves through the world (its poses from the state, the root's position
// included, and the terminal frame from the state the episode ended in; a diverged one holds the
// last sane pose), and the commanded and actual velocity are plotted from the critic's
// noise-free columns (training conditions: the actor's are noisy).
TEST(Recorder, RoughTaskDrawsTerrainMotionAndVelocities) {
  const int64_t M = 3, T = 30, kDiverge = 10;  // env 2 diverges in the step after frame 10
  auto env = envs::make("Go1-Velocity-Rough-v0", M, Device::kCpu, 0,
                        {{"max_episode_steps", T}, {"play", 0}}, {});
  const Scene scene = env->scene();
  EXPECT_FALSE(scene.ground_z.has_value());
  ASSERT_EQ(scene.hfields.size(), 1u);
  const SceneHeightField& field = scene.hfields[0];
  EXPECT_EQ(field.nrow, 661);
  EXPECT_EQ(field.ncol, 901);
  EXPECT_FLOAT_EQ(field.size[0], 45);
  EXPECT_FLOAT_EQ(field.size[2], 4.13f);
  ASSERT_EQ(field.elevation.size(), size_t{661} * 901);
  const auto [lo, hi] = std::minmax_element(field.elevation.begin(), field.elevation.end());
  EXPECT_GE(*lo, 0.0f);
  EXPECT_LE(*hi, 1.0f);
  EXPECT_GT(*hi - *lo, 0.1f) << "the generated terrain, not a flat field";
  int terrain_geoms = 0;
  for (const SceneGeom& g : scene.geoms) {
    if (g.type != "hfield") continue;
    ++terrain_geoms;
    EXPECT_EQ(g.body, 0) << "the terrain's body is welded to the world";
    EXPECT_EQ(g.hfield, 0);
    EXPECT_FLOAT_EQ(g.pos[2], -2.065f);
  }
  EXPECT_EQ(terrain_geoms, 1);
  // The camera starts on the robot, not on the terrain's body.
  EXPECT_LT(scene.camera_distance, 10);

  // Zero actions; each call sees the state the frame is drawn from, its observation and the
  // info of the step into it. At frame kDiverge env 2's velocity is set beyond any sane value.
  const int64_t A = env->spec().action_space.flat_size();
  const int64_t critic = env->spec().actor_obs_dim;
  std::vector<torch::Tensor> qpos, obs_seen, command_vx, command_vy;
  learner::Driver zeros;
  zeros.act = [&](const torch::Tensor& obs) {
    if (static_cast<int64_t>(qpos.size()) == kDiverge) {
      torch::Tensor s = env->get_state();
      s[2].narrow(0, 1 + 19, 18).fill_(1e12);
      env->set_state(s);
    }
    qpos.push_back(env->get_state().narrow(1, 1, 7).to(torch::kFloat));
    obs_seen.push_back(obs.clone());
    command_vx.push_back(env->buffers().info.at("command_vx").clone());
    command_vy.push_back(env->buffers().info.at("command_vy").clone());
    return torch::zeros({obs.size(0), A});
  };
  learner::RecordOptions o;
  o.seed = 4;
  const replay::Replay r = learner::record_episodes(*env, zeros, o).replay;
  EXPECT_NO_THROW(replay::decode(replay::encode(r), "rough"));
  const int64_t F = r.header.at("num_frames").get<int64_t>();
  ASSERT_EQ(F, T + 1);
  const int32_t* frames = r.arrays.at("num_frames").data<int32_t>();
  EXPECT_EQ(frames[0], T + 1);
  EXPECT_EQ(frames[2], kDiverge + 2) << "the diverged episode ends after frame kDiverge";
  const int64_t B = static_cast<int64_t>(scene.bodies.size());
  int trunk = -1;
  for (int64_t b = 0; b < B; ++b)
    if (scene.bodies[b] == "trunk") trunk = static_cast<int>(b);
  ASSERT_GT(trunk, 0);
  const float* pose = r.arrays.at("body_pose").data<float>();
  const uint8_t* flags = r.arrays.at("flags").data<uint8_t>();
  const auto root = [&](int64_t i, int64_t f) { return pose + ((i * F + f) * B + trunk) * 7; };
  const std::vector<std::string> names = r.header.at("series");
  ASSERT_EQ(names, (std::vector<std::string>{"lin_vel_x", "lin_vel_x_command", "lin_vel_y",
                                             "lin_vel_y_command", "yaw_rate", "yaw_rate_command"}));
  const float* series = r.arrays.at("series").data<float>();
  for (int64_t i = 0; i < M; ++i) {
    const int64_t last = frames[i] - 1;  // the terminal frame
    // Frames before it are the states the policy acted on: the root where the state has it,
    // the velocities the critic's columns hold (base_lin_vel x, y; base_ang_vel z).
    for (int64_t f = 0; f < last; ++f) {
      const std::string where = "env " + std::to_string(i) + " frame " + std::to_string(f);
      const float* q = qpos[f].data_ptr<float>() + i * 7;
      const float* p = root(i, f);
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(p[k], q[k], 1e-5) << where;
      EXPECT_NEAR(std::abs(p[3] * q[3] + p[4] * q[4] + p[5] * q[5] + p[6] * q[6]), 1, 1e-5);
      const float* row = series + (i * F + f) * 6;
      const torch::Tensor seen = obs_seen[f][i];
      EXPECT_EQ(row[0], seen[critic + 0].item<float>()) << where;
      EXPECT_EQ(row[2], seen[critic + 1].item<float>()) << where;
      EXPECT_EQ(row[4], seen[critic + 5].item<float>()) << where;
      // The plotted command is the one the step into this frame followed.
      if (f > 0) {
        EXPECT_EQ(row[1], command_vx[f][i].item<float>()) << where;
        EXPECT_EQ(row[3], command_vy[f][i].item<float>()) << where;
      }
      for (int s = 0; s < 6; ++s) EXPECT_TRUE(std::isfinite(row[s])) << where;
    }
    EXPECT_GT(std::hypot(root(i, 0)[0], root(i, 0)[1]), 1.0f) << "on its tile, not the origin";
    EXPECT_TRUE(flags[i * F + last] & 4) << "env " << i << ": truncated";
    if (i < 2) {
      // The time limit: the terminal frame continues the episode, not the next one's start.
      EXPECT_EQ(last, T);
      EXPECT_LT(std::abs(root(i, T)[0] - root(i, T - 1)[0]), 0.05f);
      EXPECT_LT(std::abs(root(i, T)[2] - root(i, T - 1)[2]), 0.05f);
    } else {
      // Diverged: the last sane pose held.
      for (int k = 0; k < 7; ++k) EXPECT_EQ(root(i, last)[k], root(i, last - 1)[k]) << k;
    }
  }
  EXPECT_EQ(env->diverged_count(), 1);
}

}  // namespace
}  // namespace myriad
