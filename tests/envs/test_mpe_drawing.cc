// Replays of the particle-world envs (envs/mpe/drawing.h through
// envs/multi_agent_batch_env.h): body_poses recovers every entity's position from the
// observations alone, for obs and for final_obs after the auto-reset, and the scene has one body
// per entity coloured by team.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/mpe/registered.h"
#include "myriad/device.h"
#include "myriad/registry.h"

namespace myriad {
namespace {

// Agents' positions are copied from their own rows; landmarks' carry two roundings.
constexpr float kLandmarkTolerance = 1e-5f;

template <class Env>
std::unique_ptr<BatchEnv> make_env(int64_t n, uint64_t seed) {
  return envs::make(Env::spec().id, n, Device::kCpu, seed,
                    {{"continuous", Env::ActionDecoder::kContinuous ? 1.0 : 0.0}});
}

// Random valid actions in the scenario's own dtype: [N, A] int32 or [N, A, K] float32.
template <class Env>
at::Tensor random_actions(int64_t n, std::mt19937& gen) {
  if constexpr (Env::ActionDecoder::kContinuous) {
    at::Tensor t = at::empty({n, Env::kAgents, Env::kActionDim}, at::kFloat);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (int64_t i = 0; i < t.numel(); ++i) t.data_ptr<float>()[i] = u(gen);
    return t;
  } else {
    at::Tensor t = at::empty({n, Env::kAgents}, at::kInt);
    for (int64_t i = 0; i < t.numel(); ++i) t.data_ptr<int32_t>()[i] = gen() % 5;
    return t;
  }
}

// Poses [B, 1 + E, 7] of row `row` against the entity positions of state row s (world.h: pos
// [E, 2] first): every body on z = 0, unrotated; agents exact.
template <class Env>
void expect_poses_at(const at::Tensor& poses, int64_t row, const float* s, const char* what) {
  ASSERT_EQ(poses.dtype(), at::kFloat);
  ASSERT_EQ(poses.size(1), Env::kEntities + 1);
  const float* p = poses.data_ptr<float>() + row * (Env::kEntities + 1) * 7;
  const float world[7] = {0, 0, 0, 1, 0, 0, 0};
  for (int k = 0; k < 7; ++k) EXPECT_EQ(p[k], world[k]) << what << " world, row " << row;
  for (int e = 0; e < Env::kEntities; ++e) {
    const float* b = p + 7 * (e + 1);
    const float tol = e < Env::kAgents ? 0.0f : kLandmarkTolerance;
    EXPECT_NEAR(b[0], s[2 * e], tol) << what << " entity " << e << " x, row " << row;
    EXPECT_NEAR(b[1], s[2 * e + 1], tol) << what << " entity " << e << " y, row " << row;
    const float rest[5] = {0, 1, 0, 0, 0};
    for (int k = 0; k < 5; ++k) EXPECT_EQ(b[2 + k], rest[k]) << what << " entity " << e;
  }
}

// Steps random actions; each step, body_poses(obs) matches get_state(), and for every env that
// ended, body_poses(final_obs) matches the terminal state, which the scenario's own step from
// the state before gives (the env's state has moved on to the next episode).
template <class Env>
void check_poses_follow_the_state(int steps, int64_t* terminated_rows) {
  const int64_t n = 16;
  auto env = make_env<Env>(n, 7);
  std::mt19937 gen(3);
  const typename Env::Params params{};
  int64_t done_rows = 0;
  *terminated_rows = 0;
  for (int t = 0; t < steps; ++t) {
    const at::Tensor before = env->get_state();
    const at::Tensor actions = random_actions<Env>(n, gen);
    env->step(actions);
    const at::Tensor state = env->get_state();
    const at::Tensor poses = env->body_poses(env->buffers().obs);
    ASSERT_EQ(poses.sizes(), at::IntArrayRef({n, Env::kEntities + 1, 7}));
    for (int64_t i = 0; i < n; ++i)
      expect_poses_at<Env>(poses, i, state.data_ptr<float>() + i * Env::kStateDim, "obs");
    const at::Tensor term = env->buffers().terminated, trunc = env->buffers().truncated;
    if (!at::logical_or(term, trunc).any().item<bool>()) continue;
    const at::Tensor final_poses = env->body_poses(env->buffers().final_obs);
    for (int64_t i = 0; i < n; ++i) {
      if (!term[i].item<bool>() && !trunc[i].item<bool>()) continue;
      std::vector<float> s(before.data_ptr<float>() + i * Env::kStateDim,
                           before.data_ptr<float>() + (i + 1) * Env::kStateDim);
      float reward[Env::kAgents];
      bool terminated = false;
      Env::step(params, s.data(),
                actions.data_ptr<typename Env::Action>() +
                    i * Env::kAgents * Env::ActionDecoder::kActionDim,
                reward, terminated);
      EXPECT_EQ(terminated, term[i].item<bool>()) << "row " << i << " at step " << t;
      expect_poses_at<Env>(final_poses, i, s.data(), "final_obs");
      ++done_rows;
      *terminated_rows += terminated;
    }
  }
  EXPECT_GE(done_rows, n) << "every env should have ended an episode";
}

TEST(MpeDrawing, SpreadPosesFollowTheState) {
  int64_t terminated = 0;
  check_poses_follow_the_state<envs::SpreadDiscrete>(60, &terminated);
  check_poses_follow_the_state<envs::SpreadContinuous>(30, &terminated);
}

TEST(MpeDrawing, TagPosesFollowTheState) {
  int64_t terminated = 0;
  check_poses_follow_the_state<envs::TagDiscrete>(60, &terminated);
  check_poses_follow_the_state<envs::TagContinuous>(30, &terminated);
}

// Sumo's episodes end both ways: an agent out of the ring (terminated) and the time limit.
TEST(MpeDrawing, SumoPosesFollowTheState) {
  int64_t terminated = 0;
  check_poses_follow_the_state<envs::SumoDiscrete>(250, &terminated);
  EXPECT_GT(terminated, 0) << "no Sumo episode ended with an agent out of the ring";
  check_poses_follow_the_state<envs::SumoContinuous>(120, &terminated);
}

// A Tag good agent's padding and Spread's (silent) communication are never read.
TEST(MpeDrawing, PaddingAndCommunicationAreIgnored) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  {
    auto env = make_env<envs::TagDiscrete>(4, 1);
    at::Tensor obs = env->buffers().obs.clone();
    const int good = envs::TagDiscrete::kAgents - 1;
    obs.select(1, good).slice(1, envs::TagDiscrete::obs_size(good)).fill_(nan);
    EXPECT_TRUE(at::equal(env->body_poses(obs), env->body_poses(env->buffers().obs)));
  }
  {
    using S = envs::SpreadDiscrete;
    auto env = make_env<S>(4, 1);
    at::Tensor obs = env->buffers().obs.clone();
    obs.slice(2, S::kObsDim - 2 * (S::kAgents - 1)).fill_(nan);
    EXPECT_TRUE(at::equal(env->body_poses(obs), env->body_poses(env->buffers().obs)));
  }
}

template <class Env>
void check_scene(const std::set<int>& teams, const char* landmark) {
  auto env = make_env<Env>(2, 0);
  const Scene s = env->scene();
  const EnvSpec& spec = env->spec();
  ASSERT_EQ(s.bodies.size(), size_t(Env::kEntities + 1));
  EXPECT_EQ(s.bodies[0], "world");
  // One geom per entity, on its own body, named as the state names name it.
  ASSERT_EQ(s.geoms.size(), size_t(Env::kEntities));
  for (int e = 0; e < Env::kEntities; ++e) {
    const SceneGeom& g = s.geoms[e];
    EXPECT_EQ(g.body, e + 1);
    EXPECT_EQ(s.bodies[e + 1] + "_x", spec.state_names[2 * e]);
    EXPECT_EQ(g.name, s.bodies[e + 1]);
    EXPECT_FLOAT_EQ(g.size[0], Env::props(e).size) << g.name;
    EXPECT_EQ(g.type, e < Env::kAgents ? "sphere" : "cylinder") << g.name;
    if (e >= Env::kAgents) EXPECT_EQ(g.name.rfind(landmark, 0), 0u) << g.name;
  }
  // Team colours: equal within a team, different between teams and from the landmarks.
  std::set<int> seen;
  for (int i = 0; i < Env::kAgents; ++i) {
    seen.insert(Env::team(i));
    for (int j = 0; j < Env::kEntities; ++j) {
      const bool same = j < Env::kAgents && Env::team(i) == Env::team(j);
      EXPECT_EQ(s.geoms[i].rgba == s.geoms[j].rgba, same)
          << s.geoms[i].name << " / " << s.geoms[j].name;
    }
  }
  EXPECT_EQ(seen, teams);
  // Seen from above, every step a frame of kDt seconds.
  ASSERT_TRUE(s.ground_z.has_value());
  EXPECT_EQ(*s.ground_z, 0.0f);
  ASSERT_TRUE(s.camera_direction.has_value());
  EXPECT_GT((*s.camera_direction)[2], 5 * std::fabs((*s.camera_direction)[1]));
  EXPECT_DOUBLE_EQ(s.frame_dt, 0.1);
}

TEST(MpeDrawing, SceneHasOneBodyPerEntityColouredByTeam) {
  check_scene<envs::SpreadDiscrete>({0}, "landmark_");
  check_scene<envs::TagDiscrete>({0, 1}, "obstacle_");
  check_scene<envs::SumoContinuous>({0, 1}, "");
}

TEST(MpeDrawing, SumoDrawsItsRing) {
  const Scene s = make_env<envs::SumoDiscrete>(1, 0)->scene();
  ASSERT_EQ(s.lines.size(), 1u);
  const SceneLine& ring = s.lines[0];
  EXPECT_EQ(ring.body, 0);
  ASSERT_GT(ring.points.size(), 32u);
  EXPECT_EQ(ring.points.front(), ring.points.back());  // closed
  for (const auto& p : ring.points)
    EXPECT_NEAR(std::hypot(p[0], p[1]), envs::SumoDiscrete::kRingRadius, 1e-5);
}

TEST(MpeDrawing, WrongObservationShapeIsRefused) {
  auto env = make_env<envs::TagDiscrete>(2, 0);
  for (const at::Tensor& bad :
       {at::zeros({2, 4 * 16}), at::zeros({2, 3, 16}), at::zeros({2, 4}), at::zeros({2, 4, 14})}) {
    try {
      env->body_poses(bad);
      ADD_FAILURE() << "accepted " << bad.sizes();
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("Tag-v0 body_poses"), std::string::npos) << msg;
      EXPECT_NE(msg.find("[B, 4, 16]"), std::string::npos) << msg;
    }
  }
  // Any batch size, any float dtype; an empty batch gives no poses.
  EXPECT_EQ(env->body_poses(at::zeros({0, 4, 16})).sizes(), at::IntArrayRef({0, 7, 7}));
  EXPECT_EQ(env->body_poses(at::zeros({3, 4, 16}, at::kDouble)).sizes(),
            at::IntArrayRef({3, 7, 7}));
}

}  // namespace
}  // namespace myriad
