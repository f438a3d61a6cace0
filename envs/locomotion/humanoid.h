// Humanoid-v5: Gymnasium's 3D biped (humanoid_v5.py), on the project's model
// (envs/locomotion/models/humanoid.xml; its two fixed tendons couple hips and knees). Reward:
// 1.25 x the mass centre's x velocity (from xipos, one substep behind qpos as in Gymnasium) +
// healthy reward - control cost (of ctrl) - contact cost (sum of cfrc_ext^2, clipped to
// contact_cost_range); terminates when torso z leaves the open healthy_z_range. Observation:
// qpos[2:] (or all), qvel, cinert, cvel (bodies 1..), qfrc_actuator[6:], cfrc_ext (bodies 1..),
// each part optional as in Gymnasium.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "envs/locomotion/env_support.h"

namespace myriad::envs::locomotion {

struct Humanoid {
  static constexpr const char* kId = "Humanoid-v5";
  static constexpr const char* kModel = "humanoid";
  static constexpr int kFrameSkip = 5;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr int kBeforeDim = 2;  // the mass centre's x, y before the step

  struct Params {
    double dt = 0;
    float forward_reward_weight = 1.25f;
    float ctrl_cost_weight = 0.1f;
    float contact_cost_weight = 5e-7f;
    float contact_cost_range[2] = {-INFINITY, 10.0f};
    float healthy_reward = 5.0f;
    bool terminate_when_unhealthy = true;
    float healthy_z_range[2] = {1.0f, 2.0f};
    float reset_noise_scale = 1e-2f;
    bool exclude_current_positions_from_observation = true;
    bool include_cinert_in_observation = true;
    bool include_cvel_in_observation = true;
    bool include_qfrc_actuator_in_observation = true;
    bool include_cfrc_ext_in_observation = true;
  };

  // Gymnasium's keyword arguments (envs/locomotion/env_support.h, Option).
  static std::vector<Option<Params>> options() {
    return {
        finite("forward_reward_weight", &Params::forward_reward_weight),
        finite("ctrl_cost_weight", &Params::ctrl_cost_weight),
        finite("contact_cost_weight", &Params::contact_cost_weight),
        range("contact_cost_range", &Params::contact_cost_range),
        finite("healthy_reward", &Params::healthy_reward),
        flag("terminate_when_unhealthy", &Params::terminate_when_unhealthy),
        range("healthy_z_range", &Params::healthy_z_range),
        nonnegative("reset_noise_scale", &Params::reset_noise_scale),
        flag("exclude_current_positions_from_observation",
             &Params::exclude_current_positions_from_observation),
        flag("include_cinert_in_observation", &Params::include_cinert_in_observation),
        flag("include_cvel_in_observation", &Params::include_cvel_in_observation),
        flag("include_qfrc_actuator_in_observation", &Params::include_qfrc_actuator_in_observation),
        flag("include_cfrc_ext_in_observation", &Params::include_cfrc_ext_in_observation)};
  }
  static void prepare(Params&, const physics::Model<double>& m) {
    require_sizes(m, kId, 24, 23, 17);
  }
  static int obs_dim(const Params& p, const physics::Model<double>& m) {
    const int bodies = m.nbody - 1;
    return m.nq - (p.exclude_current_positions_from_observation ? 2 : 0) + m.nv +
           (p.include_cinert_in_observation ? 10 * bodies : 0) +
           (p.include_cvel_in_observation ? 6 * bodies : 0) +
           (p.include_qfrc_actuator_in_observation ? m.nv - 6 : 0) +
           (p.include_cfrc_ext_in_observation ? 6 * bodies : 0);
  }
  static std::vector<InfoKey> info_keys(const Params&, const physics::Model<double>& m) {
    return {{"x_position"},
            {"y_position"},
            {"tendon_length", m.ntendon},
            {"tendon_velocity", m.ntendon},
            {"distance_from_origin"},
            {"x_velocity"},
            {"y_velocity"},
            {"reward_survive"},
            {"reward_forward"},
            {"reward_ctrl"},
            {"reward_contact"}};
  }

  // For drawing (replays): qpos from an observation.
  static void qpos_from_observation(const Params& p, const physics::Model<double>& m,
                                    const float* obs, float* qpos) {
    qpos_from_prefix(m, p.exclude_current_positions_from_observation ? 2 : 0, obs, qpos);
  }

  template <class T, int B>
  MYRIAD_HD static void reset(const Params& p, const ModelView<T>& m, EnvData<T, B>& d, Rng& rng) {
    qpos_uniform_noise(m, d, rng, p.reset_noise_scale);
    qvel_uniform_noise(m, d, rng, p.reset_noise_scale);
  }
  // Gymnasium's mass_center: sum(body_mass * xipos) / sum(body_mass), x and y. The masses are
  // the env's own (randomized per env where env.randomize sets them), the total summed in double
  // as prepare sums the model's.
  template <class T, int B>
  MYRIAD_HD static void mass_center(const Params&, const ModelView<T>& m, const EnvData<T, B>& d,
                                    T* xy) {
    T x = 0, y = 0;
    double total = 0;
    for (int b = 0; b < m.nbody; ++b) {
      x += m.body_mass[b] * d.xipos[3 * b];
      y += m.body_mass[b] * d.xipos[3 * b + 1];
      total += static_cast<double>(m.body_mass[b]);
    }
    xy[0] = x / static_cast<T>(total);
    xy[1] = y / static_cast<T>(total);
  }
  template <class T, int B>
  MYRIAD_HD static void before_step(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                    T* before) {
    mass_center(p, m, d, before);
  }
  template <class T, int B>
  MYRIAD_HD static void after_step(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                   const float*, const T* before, float& reward, bool& terminated,
                                   InfoRow info) {
    const T dt = static_cast<T>(p.dt);
    T after[2];
    mass_center(p, m, d, after);
    const T x_velocity = (after[0] - before[0]) / dt;
    const T y_velocity = (after[1] - before[1]) / dt;
    const T z = d.qpos[2];
    const bool is_healthy = p.healthy_z_range[0] < z && z < p.healthy_z_range[1];
    const T forward = static_cast<T>(p.forward_reward_weight) * x_velocity;
    const T survive = is_healthy ? static_cast<T>(p.healthy_reward) : T(0);
    T ctrl_sq = 0;  // Gymnasium's Humanoid costs data.ctrl (the action as stored)
    for (int u = 0; u < m.nu; ++u) ctrl_sq += d.ctrl[u] * d.ctrl[u];
    const T ctrl = static_cast<T>(p.ctrl_cost_weight) * ctrl_sq;
    T contact_sq = 0;
    for (int k = 0; k < 6 * m.nbody; ++k) contact_sq += d.cfrc_ext[k] * d.cfrc_ext[k];
    const T contact =
        clip(static_cast<T>(p.contact_cost_weight) * contact_sq,
             static_cast<T>(p.contact_cost_range[0]), static_cast<T>(p.contact_cost_range[1]));
    reward = static_cast<float>(forward + survive - (ctrl + contact));
    terminated = !is_healthy && p.terminate_when_unhealthy;
    int k = 0;
    info.set(k++, static_cast<float>(d.qpos[0]));
    info.set(k++, static_cast<float>(d.qpos[1]));
    for (int t = 0; t < m.ntendon; ++t) info.set(k++, static_cast<float>(d.ten_length[t]));
    for (int t = 0; t < m.ntendon; ++t) info.set(k++, static_cast<float>(d.ten_velocity[t]));
    info.set(k++, static_cast<float>(sqrt(d.qpos[0] * d.qpos[0] + d.qpos[1] * d.qpos[1])));
    info.set(k++, static_cast<float>(x_velocity));
    info.set(k++, static_cast<float>(y_velocity));
    info.set(k++, static_cast<float>(survive));
    info.set(k++, static_cast<float>(forward));
    info.set(k++, static_cast<float>(-ctrl));
    info.set(k++, static_cast<float>(-contact));
  }
  template <class T, int B>
  MYRIAD_HD static void observe(const Params& p, const ModelView<T>& m, const EnvData<T, B>& d,
                                float* obs) {
    const int skip = p.exclude_current_positions_from_observation ? 2 : 0;
    int o = 0;
    for (int k = skip; k < m.nq; ++k) obs[o++] = static_cast<float>(d.qpos[k]);
    for (int k = 0; k < m.nv; ++k) obs[o++] = static_cast<float>(d.qvel[k]);
    if (p.include_cinert_in_observation)
      for (int k = 10; k < 10 * m.nbody; ++k) obs[o++] = static_cast<float>(d.cinert[k]);
    if (p.include_cvel_in_observation)
      for (int k = 6; k < 6 * m.nbody; ++k) obs[o++] = static_cast<float>(d.cvel[k]);
    if (p.include_qfrc_actuator_in_observation)
      for (int k = 6; k < m.nv; ++k) obs[o++] = static_cast<float>(d.qfrc_actuator[k]);
    if (p.include_cfrc_ext_in_observation)
      for (int k = 6; k < 6 * m.nbody; ++k) obs[o++] = static_cast<float>(d.cfrc_ext[k]);
  }
};

}  // namespace myriad::envs::locomotion
