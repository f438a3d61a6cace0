// PhysicsBatchEnv<Env>: the BatchEnv of a physics env (envs/locomotion/), over the engine
// (physics=myriad, float32 or float64, on the CPU or CUDA) or libmujoco
// (physics=mujoco, CPU). Owns the framework's buffers (torch tensors on the env's device) and a
// runner (envs/physics_runner.h) that owns the physics data; the env logic lives only in Env and
// the framework's kernels (envs/physics_kernels.h).
//
// Options: the env's own (Gymnasium's keyword names; ranges such as healthy_z_range are text
// "low,high"), plus max_episode_steps, frame_skip, precision (32 or 64; the engine's),
// cuda_graph (1, the default: on CUDA the staged env step replays as one CUDA graph; 0: plain
// launches) and the text options physics ("myriad" or "mujoco"), launch and randomize (domain
// randomization terms as JSON, envs/randomization.h: per-env model parameters drawn from
// (seed, env) whenever reset() is given a seed).
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/action_checks.h"
#include "envs/batch_env_checks.h"
#include "envs/env_options.h"
#include "envs/episode_buffers.h"
#include "envs/locomotion/models.h"
#include "envs/mjcf/mjcf_drawing.h"
#include "envs/physics_runner.h"
#include "envs/physics_task_kernels.h"
#include "envs/randomization.h"
#include "myriad/batch_env.h"
#include "myriad/physics/import.h"
#include "myriad/registry.h"
#include "myriad/torch_device.h"

namespace myriad::envs {

// "low,high" (or "(low, high)", "[low, high]"; "inf" and "-inf" allowed) as two doubles.
inline bool parse_range(const std::string& text, double& lo, double& hi) {
  std::string s;
  for (char c : text)
    if (c != '(' && c != ')' && c != '[' && c != ']' && c != ' ') s += c;
  const size_t comma = s.find(',');
  if (comma == std::string::npos || s.find(',', comma + 1) != std::string::npos) return false;
  const std::string a = s.substr(0, comma), b = s.substr(comma + 1);
  char* end = nullptr;
  lo = std::strtod(a.c_str(), &end);
  if (a.empty() || *end) return false;
  hi = std::strtod(b.c_str(), &end);
  return !b.empty() && !*end;
}

// Gymnasium's reward_threshold, where the env declares one (kRewardThreshold).
template <class Env>
auto reward_threshold(int) -> decltype(Env::kRewardThreshold, std::optional<double>()) {
  return Env::kRewardThreshold;
}
template <class Env>
std::optional<double> reward_threshold(long) {
  return std::nullopt;
}

// Text options that are names, not ranges (MJCF-v0's xml and forward_body).
using NameOptions = std::map<std::string, std::string>;
template <class Env>
auto name_option_names(int) -> decltype(Env::name_option_names()) {
  return Env::name_option_names();
}
template <class Env>
std::vector<std::string> name_option_names(long) {
  return {};
}
// The env's preparation from its model (and its name options, where it takes them).
template <class Env, class P>
auto prepare_env(P& p, const physics::Model<double>& m, const NameOptions& names, int)
    -> decltype(Env::prepare(p, m, names)) {
  return Env::prepare(p, m, names);
}
template <class Env, class P>
void prepare_env(P& p, const physics::Model<double>& m, const NameOptions&, long) {
  Env::prepare(p, m);
}
// A model file the options name (MJCF-v0), or "" for a model embedded in the binary.
template <class Env>
auto model_path(const NameOptions& names, int) -> decltype(Env::model_path(names)) {
  return Env::model_path(names);
}
template <class Env>
std::string model_path(const NameOptions&, long) {
  return "";
}

template <class Env>
class PhysicsBatchEnv final : public BatchEnv {
 public:
  using Params = typename Env::Params;

  // Every option the env takes besides max_episode_steps: its own (numbers, ranges, names),
  // then the sim's (frame_skip, precision, physics, launch, cuda_graph).
  static std::vector<std::string> all_option_names() {
    std::vector<std::string> names = locomotion::option_names(Env::options());
    for (const auto& name : name_option_names<Env>(0)) names.push_back(name);
    for (const char* common :
         {"frame_skip", "precision", "physics", "launch", "cuda_graph", "randomize"})
      names.push_back(common);
    return names;
  }

  PhysicsBatchEnv(int64_t n, DeviceId device, uint64_t seed, const EnvOptions& options,
                  const EnvTextOptions& text)
      : n_(n), device_(device) {
    spec_.id = Env::kId;
    spec_.max_episode_steps = Env::kMaxEpisodeSteps;
    spec_.reward_threshold = reward_threshold<Env>(0);
    const auto env_options = Env::options();
    const std::vector<std::string> name_options = name_option_names<Env>(0);
    spec_.option_names = all_option_names();
    spec_.physics_env = true;
    int precision = 32;
    bool cuda_graph = true;
    int frame_skip = Env::kFrameSkip;
    std::string physics = "myriad";
    std::string launch = "auto";
    std::string randomize;
    for (const auto& [key, value] : options) {
      if (take_common_option(spec_, key, value)) continue;
      if (key == "frame_skip") {
        // Physics steps per env step; more than 1,000 would make one step() take minutes.
        if (!(value >= 1 && value <= 1000) || value != std::floor(value))
          throw std::invalid_argument(spec_.id +
                                      " option frame_skip must be an integer in [1, "
                                      "1000], got " +
                                      std::to_string(value));
        frame_skip = static_cast<int>(value);
      } else if (key == "precision") {
        if (value != 32 && value != 64)
          throw std::invalid_argument(spec_.id + " option precision must be 32 or 64, got " +
                                      std::to_string(value));
        precision = static_cast<int>(value);
      } else if (key == "cuda_graph") {
        if (value != 0 && value != 1)
          throw std::invalid_argument(spec_.id + " option cuda_graph must be 0 or 1, got " +
                                      std::to_string(value));
        cuda_graph = value == 1;
      } else if (!locomotion::set_number_option(env_options, spec_.id, params_, key, value)) {
        throw std::invalid_argument(spec_.id + " has no number option '" + key +
                                    "' (valid: " + valid_options(spec_) + ")");
      }
    }
    NameOptions names;
    for (const auto& [key, value] : text) {
      if (key == "physics") {
        if (value != "myriad" && value != "mujoco")
          throw std::invalid_argument(spec_.id + " option physics must be one of: myriad, " +
                                      "mujoco; got '" + value + "'");
        physics = value;
        continue;
      }
      if (key == "randomize") {
        randomize = value;
        continue;
      }
      if (key == "launch") {
        if (value != "auto" && value != "fused" && value != "staged" && value != "tiled" &&
            value != "blocked")
          throw std::invalid_argument(spec_.id + " option launch must be one of: auto, fused, " +
                                      "staged, tiled, blocked; got '" + value + "'");
        launch = value;
        continue;
      }
      if (std::find(name_options.begin(), name_options.end(), key) != name_options.end()) {
        names[key] = value;
        continue;
      }
      double lo = 0, hi = 0;
      if (!parse_range(value, lo, hi)) {
        throw std::invalid_argument(spec_.id + " option " + key +
                                    ": expected a range 'low,high', "
                                    "got '" +
                                    value + "' (valid options: " + valid_options(spec_) + ")");
      }
      if (!locomotion::set_range_option(env_options, spec_.id, params_, key, lo, hi))
        throw std::invalid_argument(spec_.id + " has no range option '" + key +
                                    "' (valid: " + valid_options(spec_) + ")");
    }
    if (device.is_cuda() && physics != "myriad")
      throw std::invalid_argument(
          spec_.id + " on CUDA runs physics=myriad only (got physics=" + physics + ")");
    if ((launch == "staged" || launch == "tiled" || launch == "blocked") && physics != "myriad")
      throw std::invalid_argument(spec_.id + " option launch=" + launch +
                                  " needs physics=myriad (got " + physics + ")");
    if ((launch == "tiled" || launch == "fused") && device.is_cuda())
      throw std::invalid_argument(spec_.id + " option launch=" + launch +
                                  " runs on the CPU only (CUDA runs staged or blocked: a kernel "
                                  "per stage, the env step replayed as one CUDA graph)");
    if constexpr (is_task_env_v<Env>) {
      // A task env runs its robot's randomization unless the option replaces it.
      if (text.find("randomize") == text.end()) randomize = Env::default_randomize();
      if (launch == "tiled")
        throw std::invalid_argument(
            spec_.id + " runs launch=fused, staged, blocked or auto: its task reads the contacts " +
            "between substeps, which the tiled launch's SIMD lanes do not stop for; got " +
            "launch=tiled");
      if (!names.count("keyframe")) names["keyframe"] = Env::keyframe();
    }
    if (!randomize.empty()) {
      try {
        terms_ = parse_randomization(randomize);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(spec_.id + " option " + e.what());
      }
      if constexpr (is_task_env_v<Env>) {
        if (Env::plays(params_))
          terms_.erase(
              std::remove_if(terms_.begin(), terms_.end(),
                             [](const RandomTerm& t) { return t.mode == RandomTerm::kInterval; }),
              terms_.end());
      }
      // The untasked envs' staged post-step has no forward pass for a push (a task env's
      // staged step has: envs/physics_task_kernels.h).
      if (!kTask && push_terms() && (device.is_cuda() || launch == "staged" || launch == "blocked"))
        throw std::invalid_argument(
            spec_.id + " option randomize: a push (an interval term) needs launch=fused, " +
            "tiled or auto on the CPU (the staged launch, CUDA's, pushes task envs only)");
      if (model_terms() && launch == "tiled")
        throw std::invalid_argument(spec_.id + " option randomize: per-env model parameters " +
                                    "need launch=fused, staged, blocked or auto (the tiled " +
                                    "launch's SIMD " + "lanes share one model), got launch=tiled");
    }
    // auto: staged on CUDA (a kernel per stage, each at its own occupancy), tiled on the CPU (the
    // smooth stages of 8 envs at once in SIMD lanes; the same bits as fused), fused on the CPU
    // when the model differs per env. blocked: staged on a batch in blocks of a warp's envs
    // (physics/batch_layout.h): coalesced loads on CUDA, the CPU's check of the same code.
    const PhysicsLaunch cpu_launch =
        launch == "fused" || (launch == "auto" && (!terms_.empty() || kTask))
            ? PhysicsLaunch::kFused
        : launch == "staged"  ? PhysicsLaunch::kStaged
        : launch == "blocked" ? PhysicsLaunch::kBlocked
                              : PhysicsLaunch::kTiled;
    physics_ = physics;
    // The engine's import; load_mjcf(_text) also says, once, what the engine solves differently
    // (Humanoid asks for PGS: Newton), which concerns physics=myriad only.
    const std::string path = model_path<Env>(names, 0);
    if (!path.empty()) {  // the user's file: includes and meshes resolve beside it
      compiled_ = std::make_unique<physics::MjModelHandle>(path);
      model_ =
          physics == "myriad" ? physics::load_mjcf(path) : physics::import_model(compiled_->get());
    } else {
      const std::string name = std::string(Env::kModel) + ".xml";
      const std::string& xml = locomotion::embedded_model(Env::kModel);
      compiled_ = std::make_unique<physics::MjModelHandle>(name, xml);
      model_ = physics == "myriad" ? physics::load_mjcf_text(name, xml)
                                   : physics::import_model(compiled_->get());
    }
    // A keyframe as the episodes' start (MJCF-v0's option keyframe: its name in the model).
    if (auto key = names.find("keyframe"); key != names.end()) {
      try {
        physics::use_keyframe(model_, key->second);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(spec_.id + " option keyframe: " + e.what());
      }
    }
    // A task's scene (the rough tasks' terrain), in both sims' models.
    if constexpr (kTask) {
      Env::build_scene(params_, model_);
      if (model_.nhfielddata > 0)
        compiled_->set_height_fields(model_.hfield_data.data(), model_.nhfielddata);
    }
    try {
      resolved_ = resolve_randomization(terms_, model_);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(spec_.id + " option " + e.what());
    }
    prepare_env<Env>(params_, model_, names, 0);
    params_.dt = model_.timestep * frame_skip;
    push_ = push_event(resolved_, model_, params_.dt);
    frame_skip_ = frame_skip;
    obs_dim_ = Env::obs_dim(params_, model_);
    if constexpr (kTask) {
      spec_.actor_obs_dim = Env::actor_obs_dim(params_, model_);
      task_dim_ = Env::task_dim(params_, model_);
    }
    info_keys_ = Env::info_keys(params_, model_);
    for (const auto& k : info_keys_) info_dim_ += k.width;

    const int nq = model_.nq, nv = model_.nv, nu = model_.nu;
    const int64_t bytes = 4 * (2 * obs_dim_ + info_dim_ + nu + 10) + 8 * int64_t(1 + nq + nv) * 2 +
                          8 * 64 * model_.nbody;
    check_batch_size(spec_, n, device.is_cpu(), bytes);
    const float inf = std::numeric_limits<float>::infinity();
    spec_.observation_space =
        Space::box(std::vector<float>(obs_dim_, -inf), std::vector<float>(obs_dim_, inf));
    std::vector<float> low(nu), high(nu);
    for (int u = 0; u < nu; ++u) {  // Gymnasium's Box from the actuators' ctrlrange
      const bool limited = model_.actuator_ctrllimited[u];
      low[u] = limited ? static_cast<float>(model_.actuator_ctrlrange[2 * u]) : -inf;
      high[u] = limited ? static_cast<float>(model_.actuator_ctrlrange[2 * u + 1]) : inf;
    }
    spec_.action_space = Space::box(low, high);
    spec_.state_float64 = true;
    spec_.dt = params_.dt;
    spec_.state_names = {"time"};
    for (int k = 0; k < nq; ++k) spec_.state_names.push_back("qpos[" + std::to_string(k) + "]");
    for (int k = 0; k < nv; ++k) spec_.state_names.push_back("qvel[" + std::to_string(k) + "]");

    if (device.is_cuda()) {
      runner_ = make_cuda_runner<Env>(
          model_, n, device.index,
          launch == "blocked" ? PhysicsLaunch::kBlocked : PhysicsLaunch::kStaged, precision,
          cuda_graph);
    } else {
      const PhysicsSim sim = physics == "mujoco" ? PhysicsSim::kMujoco
                             : precision == 64   ? PhysicsSim::kMyriad64
                                                 : PhysicsSim::kMyriad32;
      runner_ = make_cpu_runner<Env>(sim, model_, compiled_->get(), n, cpu_launch);
    }
    ep_ = EpisodeBuffers(n_, device, obs_dim_, /*agents=*/0, seed);
    task_ = at::zeros({n_, task_dim_},
                      at::TensorOptions().dtype(at::kFloat).device(torch_device(device_)));
    if constexpr (kTask) final_qpos_ = at::zeros({n_, model_.nq}, double_options());
    info_ = at::zeros({info_dim_, n_},
                      at::TensorOptions().dtype(at::kFloat).device(torch_device(device_)));
    int64_t row = 0;
    for (const auto& k : info_keys_) {
      const at::Tensor rows = info_.narrow(0, row, k.width);
      ep_.buffers().info[k.name] = k.width == 1 ? rows[0] : rows.t();
      row += k.width;
    }
    reset(seed);
  }

  const EnvSpec& spec() const override { return spec_; }
  int64_t num_envs() const override { return n_; }
  DeviceId device_id() const override { return device_; }
  const StepBuffers& buffers() const override { return ep_.buffers(); }
  // Which sim runs the physics ("myriad" or "mujoco") and the simulated seconds per step.
  const std::string& physics() const { return physics_; }

  void reset(std::optional<uint64_t> seed) override {
    ep_.begin_reset(spec_, seed);
    // Domain randomization: every env's model parameters, drawn from (seed, env) when a seed is
    // given (and once at construction).
    if (!resolved_.empty() && (seed || !params_drawn_)) draw_params();
    info_.zero_();
    task_.zero_();
    if constexpr (kTask) Env::curriculum(params_, curriculum_step());
    runner_->reset(frame(nullptr), params_, stream());
  }

  void step(const at::Tensor& actions) override {
    action_ = checked_actions(actions);
    // A task's curriculum at the env's step count, counted before the step (mjlab's
    // common_step_counter; reset() leaves it, a rollout state carries it).
    if constexpr (kTask) Env::curriculum(params_, ++curriculum_step());
    runner_->step(frame(action_.data_ptr<float>()), params_, stream());
  }

  at::Tensor get_state() const override {
    at::Tensor s = at::empty({n_, state_width()}, double_options());
    runner_->read_state(frame(nullptr), params_, s.data_ptr<double>(), stream());
    return s;
  }

  void set_state(const at::Tensor& state, const at::Tensor& env_ids) override {
    const int64_t rows = env_ids.defined() ? env_ids.numel() : n_;
    if (state.dim() != 2 || state.size(0) != rows || state.size(1) != state_width())
      throw std::invalid_argument("set_state: expected state of shape [" + std::to_string(rows) +
                                  ", " + std::to_string(state_width()) + "] (" + spec_.id +
                                  " state: time, qpos, qvel), got " + shape_string(state.sizes()));
    const at::Tensor s = state.to(double_options()).contiguous();
    if (!at::isfinite(s).all().item<bool>())
      throw std::invalid_argument("set_state: state contains NaN or infinity");
    at::Tensor ids = env_ids.defined() ? env_ids.to(at::kCPU, at::kLong).contiguous()
                                       : at::arange(n_, at::TensorOptions().dtype(at::kLong));
    const int64_t* p = ids.data_ptr<int64_t>();
    std::vector<bool> seen(static_cast<size_t>(n_), false);
    for (int64_t r = 0; r < rows; ++r) {
      if (p[r] < 0 || p[r] >= n_)
        throw std::invalid_argument("set_state: env_ids must lie in [0, " + std::to_string(n_) +
                                    "), got " + std::to_string(p[r]));
      if (seen[p[r]])
        throw std::invalid_argument("set_state: env_ids names env " + std::to_string(p[r]) +
                                    " twice");
      seen[p[r]] = true;
    }
    at::Tensor written = at::zeros({n_}, at::TensorOptions().dtype(at::kByte));
    written.index_fill_(0, ids, 1);
    ids = ids.to(torch_device(device_));
    written = written.to(torch_device(device_));
    runner_->write_state(frame(nullptr), params_, s.data_ptr<double>(), ids.data_ptr<int64_t>(),
                         rows, written.data_ptr<uint8_t>(), stream());
  }

  int64_t diverged_count() const override { return ep_.diverged_count(); }

  Scene scene() const override {
    return mjcf_scene(model_, compiled_->get(), model_.timestep * frame_skip_);
  }
  // Poses from observations: the qpos an observation holds, with the coordinates it leaves out
  // (the x, y the envs exclude by default) at qpos0.
  at::Tensor body_poses(const at::Tensor& obs) const override {
    const at::Tensor o = observations_for_drawing(obs, spec_);
    const int64_t width = model_.nq + model_.nv;
    at::Tensor q = at::zeros({o.size(0), width}, at::kFloat);
    for (int64_t i = 0; i < o.size(0); ++i)
      Env::qpos_from_observation(params_, model_, o.data_ptr<float>() + i * obs_dim_,
                                 q.data_ptr<float>() + i * width);
    return mjcf_body_poses(model_, q);
  }

  // A task env's observation holds no root position: its poses come from its state, and from
  // the terminal qpos the step keeps for the episodes that ended.
  at::Tensor current_body_poses() const override {
    if constexpr (kTask) {
      return poses_of_qpos(get_state().to(at::kCPU).narrow(1, 1, model_.nq));
    } else {
      return BatchEnv::current_body_poses();
    }
  }
  at::Tensor final_body_poses() const override {
    if constexpr (kTask) {
      return poses_of_qpos(final_qpos_.to(at::kCPU));
    } else {
      return BatchEnv::final_body_poses();
    }
  }
  // Series to plot (a task env's commanded and actual velocity), from observations.
  std::vector<std::string> series_names() const override {
    if constexpr (has_series_v<Env>) {
      return Env::series_names();
    } else {
      return {};
    }
  }
  at::Tensor series(const at::Tensor& obs) const override {
    if constexpr (has_series_v<Env>) {
      if (obs.dim() != 2 || obs.size(1) != obs_dim_)
        throw std::invalid_argument(spec_.id + " series: expected observations of shape [B, " +
                                    std::to_string(obs_dim_) + "], got " +
                                    shape_string(obs.sizes()));
      const at::Tensor o = obs.to(at::kCPU, at::kFloat).contiguous();
      const int64_t S = static_cast<int64_t>(Env::series_names().size());
      at::Tensor out = at::empty({o.size(0), S}, at::kFloat);
      for (int64_t i = 0; i < o.size(0); ++i)
        Env::series(params_, o.data_ptr<float>() + i * obs_dim_, out.data_ptr<float>() + i * S);
      return out;
    } else {
      return BatchEnv::series(obs);
    }
  }

  std::map<std::string, at::Tensor> save_rollout_state() const override {
    at::Tensor snapshot = at::empty({n_, runner_->snapshot_width()}, double_options());
    runner_->save_snapshot(frame(nullptr), params_, snapshot.data_ptr<double>(), stream());
    auto out = ep_.save(own_tensors());
    out["physics"] = snapshot.to(at::kCPU);
    out["state"] = get_state().to(at::kCPU);  // for reading; loading uses the snapshot
    return out;
  }

  void load_rollout_state(const std::map<std::string, at::Tensor>& saved) override {
    auto it = saved.find("physics");
    if (it == saved.end()) throw std::invalid_argument("rollout state lacks physics");
    const int64_t width = runner_->snapshot_width();
    if (!it->second.sizes().equals({n_, width}))
      throw std::invalid_argument("rollout state 'physics' has shape " +
                                  shape_string(it->second.sizes()) + ", expected [" +
                                  std::to_string(n_) + ", " + std::to_string(width) + "]");
    const at::Tensor snapshot = it->second.to(double_options()).contiguous();
    ep_.load(saved, own_tensors());  // checks every entry before it writes any
    // A rollout saved under another seed ran on that seed's models.
    if (!resolved_.empty() && ep_.seed() != params_seed_) draw_params();
    runner_->load_snapshot(frame(nullptr), params_, snapshot.data_ptr<double>(), stream());
  }

 private:
  int64_t state_width() const { return 1 + model_.nq + model_.nv; }
  at::TensorOptions double_options() const {
    return at::TensorOptions().dtype(at::kDouble).device(torch_device(device_));
  }
  void* stream() const { return current_stream(device_); }

  // Validates shape, dtype and device; returns contiguous float32 actions.
  at::Tensor checked_actions(const at::Tensor& a) const {
    const int64_t k = model_.nu;
    const bool shape_ok = (a.dim() == 2 && a.size(0) == n_ && a.size(1) == k) ||
                          (k == 1 && a.dim() == 1 && a.size(0) == n_);
    if (!shape_ok)
      throw std::invalid_argument(spec_.id + " step: expected actions of shape [" +
                                  std::to_string(n_) + ", " + std::to_string(k) + "], got " +
                                  shape_string(a.sizes()));
    check_action_device(spec_.id, a, torch_device(device_));
    return checked_continuous_actions(spec_.id, a, device_.is_cpu(),
                                      [k](int64_t i) { return "env " + std::to_string(i / k); });
  }

  // Body poses [B, nbody, 7] for qpos [B, nq] (float64, CPU), through the engine's kinematics.
  at::Tensor poses_of_qpos(const at::Tensor& qpos) const {
    const int64_t width = model_.nq + model_.nv;
    at::Tensor q = at::zeros({qpos.size(0), width}, at::kFloat);
    q.narrow(1, 0, model_.nq).copy_(qpos);
    return mjcf_body_poses(model_, q);
  }

  PhysicsFrame frame(const float* action) const {
    PhysicsFrame f;
    ep_.fill(f, spec_.max_episode_steps);
    f.frame_skip = frame_skip_;
    f.obs_dim = static_cast<int32_t>(obs_dim_);
    f.action_dim = model_.nu;
    f.action = action;
    f.info = info_.data_ptr<float>();
    f.push = push_;
    f.task = task_dim_ > 0 ? task_.data_ptr<float>() : nullptr;
    f.task_dim = static_cast<int32_t>(task_dim_);
    f.final_qpos = final_qpos_.defined() ? final_qpos_.data_ptr<double>() : nullptr;
    return f;
  }

  EnvSpec spec_;
  int64_t n_;
  DeviceId device_;
  std::string physics_;
  int frame_skip_ = 1;
  int64_t obs_dim_ = 0, info_dim_ = 0;
  std::vector<locomotion::InfoKey> info_keys_;
  Params params_{};
  physics::Model<double> model_;
  std::unique_ptr<physics::MjModelHandle> compiled_;
  std::unique_ptr<PhysicsRunner<Env>> runner_;
  std::vector<RandomTerm> terms_;
  std::vector<ResolvedTerm> resolved_;
  bool params_drawn_ = false;
  uint64_t params_seed_ = 0;  // the seed the per-env parameters in force were drawn from
  void draw_params() {
    runner_->set_params(draw_env_params(resolved_, model_, n_, ep_.seed()));
    params_drawn_ = true;
    params_seed_ = ep_.seed();
  }
  PushEvent push_;  // randomize's interval push, if any
  // Whether a randomize term draws model parameters (not only pushes).
  bool model_terms() const {
    for (const auto& t : terms_)
      if (t.mode == RandomTerm::kStartup) return true;
    return false;
  }
  // Whether a randomize term pushes (an interval term).
  bool push_terms() const {
    for (const auto& t : terms_)
      if (t.mode == RandomTerm::kInterval) return true;
    return false;
  }
  static constexpr bool kTask = is_task_env_v<Env>;
  // What a rollout state holds besides the bookkeeping: a task env's own state.
  RolloutTensors own_tensors() const {
    RolloutTensors own;
    if (task_dim_ > 0) own.push_back({"task", &task_});
    if (kTask) own.push_back({"curriculum_step", &curriculum_step_});
    return own;
  }
  // A task env's step() calls since it was made ([1] int64 on the CPU): its curriculum's clock.
  at::Tensor curriculum_step_ = at::zeros({1}, at::TensorOptions().dtype(at::kLong));
  int64_t& curriculum_step() { return *curriculum_step_.data_ptr<int64_t>(); }
  int64_t task_dim_ = 0;
  at::Tensor task_;        // [N, task_dim] a task env's own state (envs/physics_task_kernels.h)
  at::Tensor final_qpos_;  // [N, nq] float64, a task env's terminal qpos (for drawing)
  at::Tensor info_, action_;
  EpisodeBuffers ep_;
};

}  // namespace myriad::envs
