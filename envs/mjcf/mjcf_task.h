// MJCF-v0: the user's own MJCF model as a physics env of the framework (envs/physics_*.h), with
// a reward made of documented terms chosen by options, so a model can be trained without C++:
//
//   reward = forward_reward_weight * x velocity of forward_body   (its xpos, per env step)
//          + healthy_reward        when healthy (forward_body's z strictly inside healthy_z_range)
//          - ctrl_cost_weight * sum(action^2)
//          - contact_cost_weight * sum(clip(cfrc_ext, contact_force_range)^2)   (every body)
//
// Every weight defaults to 0 (reward 0). terminate_when_unhealthy (0) ends the episode when
// unhealthy. forward_body (text) names the body; by default the first body after the world.
// Observation: qpos, then qvel, then (include_sensordata_in_observation) the model's sensordata in
// its sensor order (rangefinders give height scans, touch sensors foot contacts). Actions: the
// actuators' controls (Box from ctrlrange; an actuator without ctrllimited is unbounded). Episodes
// start at qpos0 and zero velocity, or at the keyframe the option keyframe names, each coordinate
// plus U(-reset_noise_scale, reset_noise_scale). Text options: xml (the model file, required),
// forward_body, keyframe, and the framework's physics.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "envs/locomotion/env_support.h"

namespace myriad::envs {

struct MjcfTask {
  static constexpr const char* kId = "MJCF-v0";
  static constexpr const char* kModel = nullptr;  // the option xml names the model file
  static constexpr int kFrameSkip = 1;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr int kBeforeDim = 1;  // forward_body's x before the step

  struct Params {
    double dt = 0;  // timestep * frame_skip (set by the framework)
    int forward_body = 1;
    float forward_reward_weight = 0.0f;
    float ctrl_cost_weight = 0.0f;
    float healthy_reward = 0.0f;
    bool terminate_when_unhealthy = false;
    float healthy_z_range[2] = {-INFINITY, INFINITY};
    float contact_cost_weight = 0.0f;
    float contact_force_range[2] = {-1.0f, 1.0f};
    float reset_noise_scale = 0.0f;
    bool include_sensordata = false;
  };

  // Number and range options (envs/locomotion/env_support.h, Option).
  static std::vector<locomotion::Option<Params>> options() {
    using namespace locomotion;
    return {nonnegative("reset_noise_scale", &Params::reset_noise_scale),
            finite("forward_reward_weight", &Params::forward_reward_weight),
            finite("ctrl_cost_weight", &Params::ctrl_cost_weight),
            finite("healthy_reward", &Params::healthy_reward),
            range("healthy_z_range", &Params::healthy_z_range),
            flag("terminate_when_unhealthy", &Params::terminate_when_unhealthy),
            finite("contact_cost_weight", &Params::contact_cost_weight),
            range("contact_force_range", &Params::contact_force_range),
            flag("include_sensordata_in_observation", &Params::include_sensordata)};
  }
  // Text options that are names, not ranges.
  static std::vector<std::string> name_option_names() {
    return {"xml", "forward_body", "keyframe"};
  }

  // The model file: the option xml (a path; includes and meshes resolve beside it).
  static std::string model_path(const std::map<std::string, std::string>& names) {
    auto it = names.find("xml");
    if (it == names.end() || it->second.empty())
      throw std::invalid_argument(std::string(kId) +
                                  " needs the option xml=<path to an MJCF file>");
    return it->second;
  }
  static void prepare(Params& p, const physics::Model<double>& m,
                      const std::map<std::string, std::string>& names) {
    auto it = names.find("forward_body");
    if (it != names.end()) {
      p.forward_body = locomotion::body_id(m, kId, it->second);
    } else {
      p.forward_body = m.nbody > 1 ? 1 : 0;
    }
  }
  static int obs_dim(const Params& p, const physics::Model<double>& m) {
    return m.nq + m.nv + (p.include_sensordata ? m.nsensordata : 0);
  }
  static std::vector<locomotion::InfoKey> info_keys(const Params&, const physics::Model<double>&) {
    return {{"x_position"},  {"x_velocity"},     {"reward_forward"},
            {"reward_ctrl"}, {"reward_contact"}, {"reward_survive"}};
  }
  static void qpos_from_observation(const Params&, const physics::Model<double>& m,
                                    const float* obs, float* qpos) {
    locomotion::qpos_from_prefix(m, 0, obs, qpos);
  }

  template <class T, int B>
  MYRIAD_HD static void reset(const Params& p, const physics::ModelView<T>& m,
                              physics::EnvData<T, B>& d, Rng& rng) {
    const float s = p.reset_noise_scale;
    for (int k = 0; k < m.nq; ++k) d.qpos[k] = m.qpos_init[k] + static_cast<T>(rng.uniform(-s, s));
    for (int k = 0; k < m.nv; ++k) d.qvel[k] = m.qvel_init[k] + static_cast<T>(rng.uniform(-s, s));
  }
  template <class T, int B>
  MYRIAD_HD static void before_step(const Params& p, const physics::ModelView<T>&,
                                    const physics::EnvData<T, B>& d, T* before) {
    before[0] = d.xpos[3 * p.forward_body];
  }
  template <class T, int B>
  MYRIAD_HD static void after_step(const Params& p, const physics::ModelView<T>& m,
                                   const physics::EnvData<T, B>& d, const float* action,
                                   const T* before, float& reward, bool& terminated, InfoRow info) {
    const T x = d.xpos[3 * p.forward_body], z = d.xpos[3 * p.forward_body + 2];
    const T x_velocity = (x - before[0]) / static_cast<T>(p.dt);
    const bool healthy = p.healthy_z_range[0] < z && z < p.healthy_z_range[1];
    const T forward = static_cast<T>(p.forward_reward_weight) * x_velocity;
    const T survive = healthy ? static_cast<T>(p.healthy_reward) : T(0);
    const T ctrl = static_cast<T>(p.ctrl_cost_weight) * locomotion::squared_norm<T>(action, m.nu);
    const T contact = p.contact_cost_weight == 0.0f
                          ? T(0)
                          : static_cast<T>(p.contact_cost_weight) *
                                locomotion::clipped_contact_force_sq(m, d, p.contact_force_range);
    reward = static_cast<float>(forward + survive - (ctrl + contact));
    terminated = !healthy && p.terminate_when_unhealthy;
    info.set(0, static_cast<float>(x));
    info.set(1, static_cast<float>(x_velocity));
    info.set(2, static_cast<float>(forward));
    info.set(3, static_cast<float>(-ctrl));
    info.set(4, static_cast<float>(-contact));
    info.set(5, static_cast<float>(survive));
  }
  template <class T, int B>
  MYRIAD_HD static void observe(const Params& p, const physics::ModelView<T>& m,
                                const physics::EnvData<T, B>& d, float* obs) {
    int o = 0;
    for (int k = 0; k < m.nq; ++k) obs[o++] = static_cast<float>(d.qpos[k]);
    for (int k = 0; k < m.nv; ++k) obs[o++] = static_cast<float>(d.qvel[k]);
    if (p.include_sensordata)
      for (int k = 0; k < m.nsensordata; ++k) obs[o++] = static_cast<float>(d.sensordata[k]);
  }
};

}  // namespace myriad::envs
