// Reacher-v5: Gymnasium's two-link arm reaching a target (reacher_v5.py), on the project's
// model (envs/locomotion/models/reacher.xml). Reward: - distance from fingertip to target (body
// xpos, as mj_step's last forward pass left them) - control cost; never terminates; 50 steps.
// Observation: cos and sin of the two arm angles, the target's qpos, the arm's qvel, and the
// fingertip-target offset (x, y). Reset: arm angles U(-0.1, 0.1), a target drawn uniformly in
// the disk of radius 0.2, arm velocities U(-0.005, 0.005), the target at rest.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "envs/locomotion/env_support.h"

namespace myriad::envs::locomotion {

struct Reacher {
  static constexpr const char* kId = "Reacher-v5";
  static constexpr const char* kModel = "reacher";
  static constexpr int kFrameSkip = 2;
  static constexpr int kMaxEpisodeSteps = 50;
  static constexpr double kRewardThreshold = -3.75;  // Gymnasium's registration
  static constexpr int kBeforeDim = 0;

  struct Params {
    double dt = 0;
    float reward_dist_weight = 1.0f;
    float reward_control_weight = 1.0f;
    int fingertip = 0, target = 0;  // body ids (prepare)
  };

  // Gymnasium's keyword arguments (envs/locomotion/env_support.h, Option).
  static std::vector<Option<Params>> options() {
    return {finite("reward_dist_weight", &Params::reward_dist_weight),
            finite("reward_control_weight", &Params::reward_control_weight)};
  }
  static void prepare(Params& p, const physics::Model<double>& m) {
    require_sizes(m, kId, 4, 4, 2);
    p.fingertip = body_id(m, kId, "fingertip");
    p.target = body_id(m, kId, "target");
  }
  static int obs_dim(const Params&, const physics::Model<double>&) { return 10; }
  static std::vector<InfoKey> info_keys(const Params&, const physics::Model<double>&) {
    return {{"reward_dist"}, {"reward_ctrl"}};
  }

  // For drawing (replays): qpos from an observation (the angles from their sine and cosine).
  static void qpos_from_observation(const Params&, const physics::Model<double>&, const float* obs,
                                    float* qpos) {
    qpos[0] = std::atan2(obs[2], obs[0]);
    qpos[1] = std::atan2(obs[3], obs[1]);
    qpos[2] = obs[4];
    qpos[3] = obs[5];
  }

  template <class T, int B>
  MYRIAD_HD static void reset(const Params&, const ModelView<T>& m, EnvData<T, B>& d, Rng& rng) {
    for (int k = 0; k < m.nq; ++k)
      d.qpos[k] = static_cast<T>(rng.uniform(-0.1f, 0.1f)) + m.qpos0[k];
    // Rejection sampling, as Gymnasium: the first draw inside the disk (almost surely within a
    // few; capped so a kernel cannot loop forever).
    float gx = 0.0f, gy = 0.0f;
    for (int attempt = 0; attempt < 1000; ++attempt) {
      gx = rng.uniform(-0.2f, 0.2f);
      gy = rng.uniform(-0.2f, 0.2f);
      if (sqrtf(gx * gx + gy * gy) < 0.2f) break;
      gx = gy = 0.0f;
    }
    d.qpos[m.nq - 2] = static_cast<T>(gx);
    d.qpos[m.nq - 1] = static_cast<T>(gy);
    for (int k = 0; k < m.nv; ++k) d.qvel[k] = static_cast<T>(rng.uniform(-0.005f, 0.005f));
    d.qvel[m.nv - 2] = 0;
    d.qvel[m.nv - 1] = 0;
  }
  template <class T, int B>
  MYRIAD_HD static void before_step(const Params&, const ModelView<T>&, const EnvData<T, B>&, T*) {}
  template <class T, int B>
  MYRIAD_HD static void after_step(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                   const float* action, const T*, float& reward, bool& terminated,
                                   InfoRow info) {
    T sq = 0;
    for (int k = 0; k < 3; ++k) {
      const T v = d.xpos[3 * p.fingertip + k] - d.xpos[3 * p.target + k];
      sq += v * v;
    }
    const T dist = -sqrt(sq) * static_cast<T>(p.reward_dist_weight);
    const T ctrl = -squared_norm<T>(action, m.nu) * static_cast<T>(p.reward_control_weight);
    reward = static_cast<float>(dist + ctrl);
    terminated = false;
    info.set(0, static_cast<float>(dist));
    info.set(1, static_cast<float>(ctrl));
  }
  template <class T, int B>
  MYRIAD_HD static void observe(const Params& p, const ModelView<T>&, const EnvData<T, B>& d,
                                float* obs) {
    obs[0] = static_cast<float>(cos(d.qpos[0]));
    obs[1] = static_cast<float>(cos(d.qpos[1]));
    obs[2] = static_cast<float>(sin(d.qpos[0]));
    obs[3] = static_cast<float>(sin(d.qpos[1]));
    obs[4] = static_cast<float>(d.qpos[2]);
    obs[5] = static_cast<float>(d.qpos[3]);
    obs[6] = static_cast<float>(d.qvel[0]);
    obs[7] = static_cast<float>(d.qvel[1]);
    obs[8] = static_cast<float>(d.xpos[3 * p.fingertip] - d.xpos[3 * p.target]);
    obs[9] = static_cast<float>(d.xpos[3 * p.fingertip + 1] - d.xpos[3 * p.target + 1]);
  }
};

}  // namespace myriad::envs::locomotion
