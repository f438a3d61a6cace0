// InvertedPendulum-v5: Gymnasium's cart-pole on MuJoCo (inverted_pendulum_v5.py), on the
// project's model (envs/locomotion/models/inverted_pendulum.xml). Reward 1 per step while the
// pole stays within 0.2 rad; terminates when it leaves that (or the observation is not finite).
// Observation: qpos, qvel.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "envs/locomotion/env_support.h"

namespace myriad::envs::locomotion {

struct InvertedPendulum {
  static constexpr const char* kId = "InvertedPendulum-v5";
  static constexpr const char* kModel = "inverted_pendulum";
  static constexpr int kFrameSkip = 2;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr double kRewardThreshold = 950.0;  // Gymnasium's registration
  static constexpr int kBeforeDim = 0;

  struct Params {
    double dt = 0;
    float reset_noise_scale = 0.01f;
  };

  // Gymnasium's keyword arguments (envs/locomotion/env_support.h, Option).
  static std::vector<Option<Params>> options() {
    return {nonnegative("reset_noise_scale", &Params::reset_noise_scale)};
  }
  static void prepare(Params&, const physics::Model<double>& m) { require_sizes(m, kId, 2, 2, 1); }
  static int obs_dim(const Params&, const physics::Model<double>& m) { return m.nq + m.nv; }
  static std::vector<InfoKey> info_keys(const Params&, const physics::Model<double>&) {
    return {{"reward_survive"}};
  }

  // For drawing (replays): qpos from an observation.
  static void qpos_from_observation(const Params&, const physics::Model<double>& m,
                                    const float* obs, float* qpos) {
    qpos_from_prefix(m, 0, obs, qpos);
  }

  template <class T, int B>
  MYRIAD_HD static void reset(const Params& p, const ModelView<T>& m, EnvData<T, B>& d, Rng& rng) {
    qpos_uniform_noise(m, d, rng, p.reset_noise_scale);
    qvel_uniform_noise(m, d, rng, p.reset_noise_scale);
  }
  template <class T, int B>
  MYRIAD_HD static void before_step(const Params&, const ModelView<T>&, const EnvData<T, B>&, T*) {}
  template <class T, int B>
  MYRIAD_HD static void after_step(const Params&, const ModelView<T>& m, const EnvData<T, B>& d,
                                   const float*, const T*, float& reward, bool& terminated,
                                   InfoRow info) {
    // Gymnasium tests the float64 observation; the pole angle is qpos[1].
    bool finite = true;
    for (int k = 0; k < m.nq; ++k) finite = finite && is_finite(d.qpos[k]);
    for (int k = 0; k < m.nv; ++k) finite = finite && is_finite(d.qvel[k]);
    const T angle = d.qpos[1];
    terminated = !finite || angle > T(0.2) || angle < T(-0.2);
    reward = terminated ? 0.0f : 1.0f;
    info.set(0, reward);
  }
  template <class T, int B>
  MYRIAD_HD static void observe(const Params&, const ModelView<T>& m, const EnvData<T, B>& d,
                                float* obs) {
    int o = 0;
    for (int k = 0; k < m.nq; ++k) obs[o++] = static_cast<float>(d.qpos[k]);
    for (int k = 0; k < m.nv; ++k) obs[o++] = static_cast<float>(d.qvel[k]);
  }
};

}  // namespace myriad::envs::locomotion
