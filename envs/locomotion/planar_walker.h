// Gymnasium's planar walkers, Hopper-v5 and Walker2d-v5 (hopper_v5.py, walker2d_v5.py): one
// definition for both, since they differ only in their model, defaults and one health check.
// Reward: forward velocity of qpos[0] + healthy reward - control cost; terminates when
// unhealthy (torso height or angle out of range; Hopper also any state coordinate after the
// first two). Observation: qpos[1:] (or all of qpos), qvel clipped to +-10.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "envs/locomotion/env_support.h"

namespace myriad::envs::locomotion {

// V: the variant (see hopper.h): kId, kModel, sizes, the healthy ranges' defaults and whether
// the healthy_state_range check applies.
template <class V>
struct PlanarWalker {
  static constexpr const char* kId = V::kId;
  static constexpr const char* kModel = V::kModel;
  static constexpr int kFrameSkip = 4;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr int kBeforeDim = 1;  // qpos[0] before the step

  struct Params {
    double dt = 0;  // timestep * frame_skip (set by the framework)
    float forward_reward_weight = 1.0f;
    float ctrl_cost_weight = 1e-3f;
    float healthy_reward = 1.0f;
    bool terminate_when_unhealthy = true;
    float healthy_state_range[2] = {-100.0f, 100.0f};  // used where V::kStateRange
    float healthy_z_range[2] = {V::kZRange[0], V::kZRange[1]};
    float healthy_angle_range[2] = {V::kAngleRange[0], V::kAngleRange[1]};
    float reset_noise_scale = 5e-3f;
    bool exclude_current_positions_from_observation = true;
  };

  // Gymnasium's keyword arguments (envs/locomotion/env_support.h, Option).
  static std::vector<Option<Params>> options() {
    std::vector<Option<Params>> o = {
        finite("forward_reward_weight", &Params::forward_reward_weight),
        finite("ctrl_cost_weight", &Params::ctrl_cost_weight),
        finite("healthy_reward", &Params::healthy_reward),
        flag("terminate_when_unhealthy", &Params::terminate_when_unhealthy)};
    if (V::kStateRange) o.push_back(range("healthy_state_range", &Params::healthy_state_range));
    o.push_back(range("healthy_z_range", &Params::healthy_z_range));
    o.push_back(range("healthy_angle_range", &Params::healthy_angle_range));
    o.push_back(nonnegative("reset_noise_scale", &Params::reset_noise_scale));
    o.push_back(flag("exclude_current_positions_from_observation",
                     &Params::exclude_current_positions_from_observation));
    return o;
  }
  static void prepare(Params&, const physics::Model<double>& m) {
    require_sizes(m, kId, V::kNq, V::kNq, V::kNu);
  }
  static int obs_dim(const Params& p, const physics::Model<double>& m) {
    return m.nq + m.nv - (p.exclude_current_positions_from_observation ? 1 : 0);
  }
  static std::vector<InfoKey> info_keys(const Params&, const physics::Model<double>&) {
    return {{"x_position"},  {"z_distance_from_origin"}, {"x_velocity"}, {"reward_forward"},
            {"reward_ctrl"}, {"reward_survive"}};
  }

  // For drawing (replays): qpos from an observation.
  static void qpos_from_observation(const Params& p, const physics::Model<double>& m,
                                    const float* obs, float* qpos) {
    qpos_from_prefix(m, p.exclude_current_positions_from_observation ? 1 : 0, obs, qpos);
  }

  template <class T, int B>
  MYRIAD_HD static void reset(const Params& p, const ModelView<T>& m, EnvData<T, B>& d, Rng& rng) {
    qpos_uniform_noise(m, d, rng, p.reset_noise_scale);
    qvel_uniform_noise(m, d, rng, p.reset_noise_scale);
  }
  template <class T, int B>
  MYRIAD_HD static void before_step(const Params&, const ModelView<T>&, const EnvData<T, B>& d,
                                    T* before) {
    before[0] = d.qpos[0];
  }
  template <class T, int B>
  MYRIAD_HD static bool healthy(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d) {
    const T z = d.qpos[1], angle = d.qpos[2];
    bool ok = p.healthy_z_range[0] < z && z < p.healthy_z_range[1] &&
              p.healthy_angle_range[0] < angle && angle < p.healthy_angle_range[1];
    if (V::kStateRange) {
      // state_vector()[2:]: qpos[2:], then qvel.
      for (int k = 2; k < m.nq + m.nv; ++k) {
        const T s = k < m.nq ? d.qpos[k] : d.qvel[k - m.nq];
        ok = ok && p.healthy_state_range[0] < s && s < p.healthy_state_range[1];
      }
    }
    return ok;
  }
  template <class T, int B>
  MYRIAD_HD static void after_step(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                   const float* action, const T* before, float& reward,
                                   bool& terminated, InfoRow info) {
    const T x_velocity = (d.qpos[0] - before[0]) / static_cast<T>(p.dt);
    const bool is_healthy = healthy(p, m, d);
    const T forward = static_cast<T>(p.forward_reward_weight) * x_velocity;
    const T survive = is_healthy ? static_cast<T>(p.healthy_reward) : T(0);
    const T ctrl = static_cast<T>(p.ctrl_cost_weight) * squared_norm<T>(action, m.nu);
    reward = static_cast<float>(forward + survive - ctrl);
    terminated = !is_healthy && p.terminate_when_unhealthy;
    info.set(0, static_cast<float>(d.qpos[0]));
    info.set(1, static_cast<float>(d.qpos[1] - m.qpos0[1]));
    info.set(2, static_cast<float>(x_velocity));
    info.set(3, static_cast<float>(forward));
    info.set(4, static_cast<float>(-ctrl));
    info.set(5, static_cast<float>(survive));
  }
  template <class T, int B>
  MYRIAD_HD static void observe(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                float* obs) {
    const int skip = p.exclude_current_positions_from_observation ? 1 : 0;
    int o = 0;
    for (int k = skip; k < m.nq; ++k) obs[o++] = static_cast<float>(d.qpos[k]);
    for (int k = 0; k < m.nv; ++k) obs[o++] = static_cast<float>(clip(d.qvel[k], T(-10), T(10)));
  }
};

}  // namespace myriad::envs::locomotion
