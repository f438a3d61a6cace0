// HalfCheetah-v5: Gymnasium's planar cheetah (half_cheetah_v5.py), on the project's model
// (envs/locomotion/models/half_cheetah.xml). Reward: forward velocity of qpos[0] - control cost;
// never terminates. Observation: qpos[1:] (or all of qpos), qvel. Reset: uniform qpos noise,
// Gaussian qvel noise.
#pragma once

#include <string>
#include <vector>

#include "envs/locomotion/env_support.h"

namespace myriad::envs::locomotion {

struct HalfCheetah {
  static constexpr const char* kId = "HalfCheetah-v5";
  static constexpr const char* kModel = "half_cheetah";
  static constexpr int kFrameSkip = 5;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr double kRewardThreshold = 4800.0;  // Gymnasium's registration
  static constexpr int kBeforeDim = 1;

  struct Params {
    double dt = 0;
    float forward_reward_weight = 1.0f;
    float ctrl_cost_weight = 0.1f;
    float reset_noise_scale = 0.1f;
    bool exclude_current_positions_from_observation = true;
  };

  // Gymnasium's keyword arguments (envs/locomotion/env_support.h, Option).
  static std::vector<Option<Params>> options() {
    return {finite("forward_reward_weight", &Params::forward_reward_weight),
            finite("ctrl_cost_weight", &Params::ctrl_cost_weight),
            nonnegative("reset_noise_scale", &Params::reset_noise_scale),
            flag("exclude_current_positions_from_observation",
                 &Params::exclude_current_positions_from_observation)};
  }
  static void prepare(Params&, const physics::Model<double>& m) { require_sizes(m, kId, 9, 9, 6); }
  static int obs_dim(const Params& p, const physics::Model<double>& m) {
    return m.nq + m.nv - (p.exclude_current_positions_from_observation ? 1 : 0);
  }
  static std::vector<InfoKey> info_keys(const Params&, const physics::Model<double>&) {
    return {{"x_position"}, {"x_velocity"}, {"reward_forward"}, {"reward_ctrl"}};
  }

  // For drawing (replays): qpos from an observation.
  static void qpos_from_observation(const Params& p, const physics::Model<double>& m,
                                    const float* obs, float* qpos) {
    qpos_from_prefix(m, p.exclude_current_positions_from_observation ? 1 : 0, obs, qpos);
  }

  template <class T, int B>
  MYRIAD_HD static void reset(const Params& p, const ModelView<T>& m, EnvData<T, B>& d, Rng& rng) {
    qpos_uniform_noise(m, d, rng, p.reset_noise_scale);
    qvel_normal_noise(m, d, rng, p.reset_noise_scale);
  }
  template <class T, int B>
  MYRIAD_HD static void before_step(const Params&, const ModelView<T>&, const EnvData<T, B>& d,
                                    T* before) {
    before[0] = d.qpos[0];
  }
  template <class T, int B>
  MYRIAD_HD static void after_step(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                   const float* action, const T* before, float& reward,
                                   bool& terminated, InfoRow info) {
    const T x_velocity = (d.qpos[0] - before[0]) / static_cast<T>(p.dt);
    const T forward = static_cast<T>(p.forward_reward_weight) * x_velocity;
    const T ctrl = static_cast<T>(p.ctrl_cost_weight) * squared_norm<T>(action, m.nu);
    reward = static_cast<float>(forward - ctrl);
    terminated = false;
    info.set(0, static_cast<float>(d.qpos[0]));
    info.set(1, static_cast<float>(x_velocity));
    info.set(2, static_cast<float>(forward));
    info.set(3, static_cast<float>(-ctrl));
  }
  template <class T, int B>
  MYRIAD_HD static void observe(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                float* obs) {
    const int skip = p.exclude_current_positions_from_observation ? 1 : 0;
    int o = 0;
    for (int k = skip; k < m.nq; ++k) obs[o++] = static_cast<float>(d.qpos[k]);
    for (int k = 0; k < m.nv; ++k) obs[o++] = static_cast<float>(d.qvel[k]);
  }
};

}  // namespace myriad::envs::locomotion
