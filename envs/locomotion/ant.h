// Ant-v5: Gymnasium's quadruped (ant_v5.py), on the project's model
// (envs/locomotion/models/ant.xml). Reward: forward (x) velocity of the main body's xpos +
// healthy reward - control cost - contact cost (clipped cfrc_ext, every body); terminates when
// unhealthy (a non-finite state, or torso z outside the closed healthy_z_range). Observation:
// qpos[2:] (or all), qvel, then cfrc_ext of bodies 1.. clipped to contact_force_range. Reset:
// uniform qpos noise, Gaussian qvel noise.
//
// The main body's xpos after a step is the one mj_step's last forward pass computed, one
// substep behind qpos: Gymnasium's reward has this lag, and so has this one.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "envs/locomotion/env_support.h"

namespace myriad::envs::locomotion {

struct Ant {
  static constexpr const char* kId = "Ant-v5";
  static constexpr const char* kModel = "ant";
  static constexpr int kFrameSkip = 5;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr double kRewardThreshold = 6000.0;  // Gymnasium's registration
  static constexpr int kBeforeDim = 2;                // the main body's x, y before the step

  struct Params {
    double dt = 0;
    float forward_reward_weight = 1.0f;
    float ctrl_cost_weight = 0.5f;
    float contact_cost_weight = 5e-4f;
    float healthy_reward = 1.0f;
    int main_body = 1;
    bool terminate_when_unhealthy = true;
    float healthy_z_range[2] = {0.2f, 1.0f};
    float contact_force_range[2] = {-1.0f, 1.0f};
    float reset_noise_scale = 0.1f;
    bool exclude_current_positions_from_observation = true;
    bool include_cfrc_ext_in_observation = true;
  };

  // Gymnasium's keyword arguments (envs/locomotion/env_support.h, Option).
  static std::vector<Option<Params>> options() {
    return {finite("forward_reward_weight", &Params::forward_reward_weight),
            finite("ctrl_cost_weight", &Params::ctrl_cost_weight),
            finite("contact_cost_weight", &Params::contact_cost_weight),
            finite("healthy_reward", &Params::healthy_reward),
            body_index("main_body", &Params::main_body),
            flag("terminate_when_unhealthy", &Params::terminate_when_unhealthy),
            range("healthy_z_range", &Params::healthy_z_range),
            range("contact_force_range", &Params::contact_force_range),
            nonnegative("reset_noise_scale", &Params::reset_noise_scale),
            flag("exclude_current_positions_from_observation",
                 &Params::exclude_current_positions_from_observation),
            flag("include_cfrc_ext_in_observation", &Params::include_cfrc_ext_in_observation)};
  }
  static void prepare(Params& p, const physics::Model<double>& m) {
    require_sizes(m, kId, 15, 14, 8);
    if (p.main_body >= m.nbody)
      throw std::invalid_argument(std::string(kId) + " option main_body " +
                                  std::to_string(p.main_body) + " is not a body (the model has " +
                                  std::to_string(m.nbody) + ")");
  }
  static int obs_dim(const Params& p, const physics::Model<double>& m) {
    return m.nq + m.nv - (p.exclude_current_positions_from_observation ? 2 : 0) +
           (p.include_cfrc_ext_in_observation ? 6 * (m.nbody - 1) : 0);
  }
  static std::vector<InfoKey> info_keys(const Params&, const physics::Model<double>&) {
    return {{"x_position"},  {"y_position"},     {"distance_from_origin"},
            {"x_velocity"},  {"y_velocity"},     {"reward_forward"},
            {"reward_ctrl"}, {"reward_contact"}, {"reward_survive"}};
  }

  // For drawing (replays): qpos from an observation.
  static void qpos_from_observation(const Params& p, const physics::Model<double>& m,
                                    const float* obs, float* qpos) {
    qpos_from_prefix(m, p.exclude_current_positions_from_observation ? 2 : 0, obs, qpos);
  }

  template <class T, int B>
  MYRIAD_HD static void reset(const Params& p, const ModelView<T>& m, EnvData<T, B>& d, Rng& rng) {
    qpos_uniform_noise(m, d, rng, p.reset_noise_scale);
    qvel_normal_noise(m, d, rng, p.reset_noise_scale);
  }
  template <class T, int B>
  MYRIAD_HD static void before_step(const Params& p, const ModelView<T>&, const EnvData<T, B>& d,
                                    T* before) {
    before[0] = d.xpos[3 * p.main_body];
    before[1] = d.xpos[3 * p.main_body + 1];
  }
  template <class T, int B>
  MYRIAD_HD static T contact_force(const Params& p, const EnvData<T, B>& d, int k) {
    return clip(d.cfrc_ext[k], static_cast<T>(p.contact_force_range[0]),
                static_cast<T>(p.contact_force_range[1]));
  }
  template <class T, int B>
  MYRIAD_HD static void after_step(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                   const float* action, const T* before, float& reward,
                                   bool& terminated, InfoRow info) {
    const T dt = static_cast<T>(p.dt);
    const T x_velocity = (d.xpos[3 * p.main_body] - before[0]) / dt;
    const T y_velocity = (d.xpos[3 * p.main_body + 1] - before[1]) / dt;
    bool finite = true;
    for (int k = 0; k < m.nq; ++k) finite = finite && is_finite(d.qpos[k]);
    for (int k = 0; k < m.nv; ++k) finite = finite && is_finite(d.qvel[k]);
    const T z = d.qpos[2];
    const bool is_healthy = finite && p.healthy_z_range[0] <= z && z <= p.healthy_z_range[1];
    const T forward = x_velocity * static_cast<T>(p.forward_reward_weight);
    const T survive = is_healthy ? static_cast<T>(p.healthy_reward) : T(0);
    const T ctrl = static_cast<T>(p.ctrl_cost_weight) * squared_norm<T>(action, m.nu);
    const T contact = static_cast<T>(p.contact_cost_weight) *
                      clipped_contact_force_sq(m, d, p.contact_force_range);
    reward = static_cast<float>(forward + survive - (ctrl + contact));
    terminated = !is_healthy && p.terminate_when_unhealthy;
    info.set(0, static_cast<float>(d.qpos[0]));
    info.set(1, static_cast<float>(d.qpos[1]));
    info.set(2, static_cast<float>(sqrt(d.qpos[0] * d.qpos[0] + d.qpos[1] * d.qpos[1])));
    info.set(3, static_cast<float>(x_velocity));
    info.set(4, static_cast<float>(y_velocity));
    info.set(5, static_cast<float>(forward));
    info.set(6, static_cast<float>(-ctrl));
    info.set(7, static_cast<float>(-contact));
    info.set(8, static_cast<float>(survive));
  }
  template <class T, int B>
  MYRIAD_HD static void observe(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                float* obs) {
    const int skip = p.exclude_current_positions_from_observation ? 2 : 0;
    int o = 0;
    for (int k = skip; k < m.nq; ++k) obs[o++] = static_cast<float>(d.qpos[k]);
    for (int k = 0; k < m.nv; ++k) obs[o++] = static_cast<float>(d.qvel[k]);
    if (p.include_cfrc_ext_in_observation)
      for (int k = 6; k < 6 * m.nbody; ++k) obs[o++] = static_cast<float>(contact_force(p, d, k));
  }
};

}  // namespace myriad::envs::locomotion
