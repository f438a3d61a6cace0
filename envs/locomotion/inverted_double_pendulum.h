// InvertedDoublePendulum-v5: Gymnasium's cart with two poles (inverted_double_pendulum_v5.py),
// on the project's model (envs/locomotion/models/inverted_double_pendulum.xml). Reward: 10 while
// the tip site is above z = 1, minus a distance penalty (0.01 x^2 + (z - 2)^2 of the tip) and a
// velocity penalty (1e-3 v1^2 + 5e-3 v2^2 of the poles); terminates when z <= 1. Observation:
// cart x, sin and cos of the pole angles, qvel and qfrc_constraint[0] clipped to +-10. Reset:
// uniform qpos noise, Gaussian qvel noise.
//
// The tip is the model's site "tip": its world position is computed here from its body's pose
// (as mj_kinematics does); the engine's data has no site poses.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "envs/locomotion/env_support.h"

namespace myriad::envs::locomotion {

struct InvertedDoublePendulum {
  static constexpr const char* kId = "InvertedDoublePendulum-v5";
  static constexpr const char* kModel = "inverted_double_pendulum";
  static constexpr int kFrameSkip = 5;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr double kRewardThreshold = 9100.0;  // Gymnasium's registration
  static constexpr int kBeforeDim = 0;

  struct Params {
    double dt = 0;
    float healthy_reward = 10.0f;
    float reset_noise_scale = 0.1f;
    int tip_body = 0;        // the body of site "tip" (prepare)
    double tip_pos[3] = {};  // its position in that body's frame
  };

  // Gymnasium's keyword arguments (envs/locomotion/env_support.h, Option).
  static std::vector<Option<Params>> options() {
    return {finite("healthy_reward", &Params::healthy_reward),
            nonnegative("reset_noise_scale", &Params::reset_noise_scale)};
  }
  static void prepare(Params& p, const physics::Model<double>& m) {
    require_sizes(m, kId, 3, 3, 1);
    int tip = -1;
    for (size_t s = 0; s < m.site_names.size(); ++s)
      if (m.site_names[s] == "tip") tip = static_cast<int>(s);
    if (tip < 0) throw std::invalid_argument(std::string(kId) + ": the model has no site 'tip'");
    p.tip_body = m.site_bodyid[tip];
    for (int k = 0; k < 3; ++k) p.tip_pos[k] = m.site_pos[3 * tip + k];
  }
  static int obs_dim(const Params&, const physics::Model<double>&) { return 9; }
  static std::vector<InfoKey> info_keys(const Params&, const physics::Model<double>&) {
    return {{"reward_survive"}, {"distance_penalty"}, {"velocity_penalty"}};
  }

  // For drawing (replays): qpos from an observation (the angles from their sine and cosine).
  static void qpos_from_observation(const Params&, const physics::Model<double>&, const float* obs,
                                    float* qpos) {
    qpos[0] = obs[0];
    qpos[1] = std::atan2(obs[1], obs[3]);
    qpos[2] = std::atan2(obs[2], obs[4]);
  }

  template <class T, int B>
  MYRIAD_HD static void reset(const Params& p, const ModelView<T>& m, EnvData<T, B>& d, Rng& rng) {
    qpos_uniform_noise(m, d, rng, p.reset_noise_scale);
    qvel_normal_noise(m, d, rng, p.reset_noise_scale);
  }
  template <class T, int B>
  MYRIAD_HD static void before_step(const Params&, const ModelView<T>&, const EnvData<T, B>&, T*) {}
  template <class T, int B>
  MYRIAD_HD static void after_step(const Params& p, const ModelView<T>&, const EnvData<T, B>& d,
                                   const float*, const T*, float& reward, bool& terminated,
                                   InfoRow info) {
    // site_xpos = xpos + xmat * pos, from the poses mj_step's last forward pass computed.
    const auto R = d.xmat + 9 * p.tip_body;
    const auto x0 = d.xpos + 3 * p.tip_body;
    const T px = static_cast<T>(p.tip_pos[0]), py = static_cast<T>(p.tip_pos[1]),
            pz = static_cast<T>(p.tip_pos[2]);
    const T x = x0[0] + (R[0] * px + R[1] * py + R[2] * pz);
    const T y = x0[2] + (R[6] * px + R[7] * py + R[8] * pz);
    terminated = y <= T(1);
    const T v1 = d.qvel[1], v2 = d.qvel[2];
    const T dist_penalty = T(0.01) * x * x + (y - T(2)) * (y - T(2));
    const T vel_penalty = T(1e-3) * v1 * v1 + T(5e-3) * v2 * v2;
    const T alive = terminated ? T(0) : static_cast<T>(p.healthy_reward);
    reward = static_cast<float>(alive - dist_penalty - vel_penalty);
    info.set(0, static_cast<float>(alive));
    info.set(1, static_cast<float>(-dist_penalty));
    info.set(2, static_cast<float>(-vel_penalty));
  }
  template <class T, int B>
  MYRIAD_HD static void observe(const Params&, const ModelView<T>&, const EnvData<T, B>& d,
                                float* obs) {
    obs[0] = static_cast<float>(d.qpos[0]);
    obs[1] = static_cast<float>(sin(d.qpos[1]));
    obs[2] = static_cast<float>(sin(d.qpos[2]));
    obs[3] = static_cast<float>(cos(d.qpos[1]));
    obs[4] = static_cast<float>(cos(d.qpos[2]));
    for (int k = 0; k < 3; ++k) obs[5 + k] = static_cast<float>(clip(d.qvel[k], T(-10), T(10)));
    obs[8] = static_cast<float>(clip(d.qfrc_constraint[0], T(-10), T(10)));
  }
};

}  // namespace myriad::envs::locomotion
