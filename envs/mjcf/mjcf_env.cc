#include "envs/mjcf/mjcf_env.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "envs/mjcf/mjcf_drawing.h"
#include "envs/mjcf/physics_backend.h"
#include "myriad/parallel_for.h"
#include "myriad/physics/import.h"
#include "myriad/registry.h"
#include "myriad/rng.h"

namespace myriad::envs {
namespace {

constexpr const char* kId = "MJCF-v0";
constexpr int kMaxObs = 256;  // nv <= 64 (checked at import), so nq + nv <= 4 * 64

class MjcfBatchEnv final : public BatchEnv {
 public:
  MjcfBatchEnv(int64_t n, DeviceId device, uint64_t seed, const EnvOptions& options,
               const EnvTextOptions& text)
      : n_(n), seed_(seed) {
    if (!device.is_cpu())
      throw std::invalid_argument(std::string(kId) +
                                  " runs on the CPU only for now (device=cpu, not " +
                                  device_name(device) + ")");
    if (n <= 0) throw std::invalid_argument("num_envs must be positive, got " + std::to_string(n));
    std::string xml, physics = "myriad";
    for (const auto& [key, value] : text) {
      if (key == "xml") {
        xml = value;
      } else if (key == "physics") {
        physics = value;
      } else {
        throw std::invalid_argument(std::string(kId) + " has no text option '" + key +
                                    "' (valid: xml, physics)");
      }
    }
    if (xml.empty())
      throw std::invalid_argument(std::string(kId) +
                                  " needs the option xml=<path to an MJCF file>");
    int precision = 32;
    for (const auto& [key, value] : options) {
      if (key == "frame_skip") {
        // Physics steps per env step; more than 1,000 would make one step() take minutes.
        frame_skip_ = positive_int(key, value, 1000);
      } else if (key == "max_episode_steps") {
        max_steps_ = positive_int(key, value, std::numeric_limits<int32_t>::max());
      } else if (key == "reset_noise_scale") {
        if (!(value >= 0) || !std::isfinite(value))
          throw std::invalid_argument(std::string(kId) +
                                      " option reset_noise_scale must be finite and >= 0, got " +
                                      std::to_string(value));
        noise_ = value;
      } else if (key == "precision") {
        if (value != 32 && value != 64)
          throw std::invalid_argument(std::string(kId) +
                                      " option precision must be 32 or 64, got " +
                                      std::to_string(value));
        precision = static_cast<int>(value);
      } else {
        throw std::invalid_argument(std::string(kId) + " has no option '" + key +
                                    "' (valid options: max_episode_steps, frame_skip, "
                                    "reset_noise_scale, precision)");
      }
    }
    physics_ = make_physics(xml, n, physics, precision);
    xml_ = xml;
    const auto& m = physics_->model();
    nq_ = m.nq, nv_ = m.nv, nu_ = m.nu;
    spec_ = mjcf_spec_template();
    spec_.max_episode_steps = max_steps_;
    const float inf = std::numeric_limits<float>::infinity();
    spec_.observation_space =
        Space::box(std::vector<float>(nq_ + nv_, -inf), std::vector<float>(nq_ + nv_, inf));
    std::vector<float> low(nu_), high(nu_);
    for (int u = 0; u < nu_; ++u) {
      const bool limited = m.actuator_ctrllimited[u];
      low[u] = limited ? static_cast<float>(m.actuator_ctrlrange[2 * u]) : -inf;
      high[u] = limited ? static_cast<float>(m.actuator_ctrlrange[2 * u + 1]) : inf;
    }
    spec_.action_space = Space::box(low, high);
    spec_.dt = physics_->model().timestep * frame_skip_;
    spec_.state_names = {"time"};
    for (int k = 0; k < nq_; ++k) spec_.state_names.push_back("qpos[" + std::to_string(k) + "]");
    for (int k = 0; k < nv_; ++k) spec_.state_names.push_back("qvel[" + std::to_string(k) + "]");
    const auto f32 = at::TensorOptions().dtype(at::kFloat);
    buf_.obs = at::zeros({n_, nq_ + nv_}, f32);
    buf_.final_obs = at::zeros({n_, nq_ + nv_}, f32);
    buf_.reward = at::zeros({n_}, f32);
    buf_.terminated = at::zeros({n_}, f32.dtype(at::kBool));
    buf_.truncated = at::zeros({n_}, f32.dtype(at::kBool));
    buf_.episode_return = at::zeros({n_}, f32);
    buf_.episode_length = at::zeros({n_}, f32.dtype(at::kInt));
    elapsed_ = at::zeros({n_}, f32.dtype(at::kInt));
    episode_ = at::zeros({n_}, f32.dtype(at::kInt));
    diverged_ = at::zeros({n_}, f32.dtype(at::kInt));
    reset(seed);
  }

  const EnvSpec& spec() const override { return spec_; }
  int64_t num_envs() const override { return n_; }
  DeviceId device_id() const override { return {Device::kCpu, 0}; }
  const StepBuffers& buffers() const override { return buf_; }

  void reset(std::optional<uint64_t> seed) override {
    if (seed) {
      seed_ = *seed;
      episode_.zero_();
    } else {
      episode_.add_(1);
    }
    diverged_.zero_();
    buf_.reward.zero_();
    buf_.terminated.zero_();
    buf_.truncated.zero_();
    parallel_for(
        Device::kCpu, "mjcf.reset", n_, [&](int64_t i) { start_episode(i); }, nullptr, 2);
  }

  void step(const at::Tensor& actions) override {
    const bool shape_ok = (actions.dim() == 2 && actions.size(0) == n_ && actions.size(1) == nu_) ||
                          (nu_ == 1 && actions.dim() == 1 && actions.size(0) == n_);
    if (!shape_ok)
      throw std::invalid_argument(std::string(kId) + " step: expected actions of shape [" +
                                  std::to_string(n_) + ", " + std::to_string(nu_) + "], got " +
                                  shape_string(actions.sizes()));
    if (!actions.is_floating_point())
      throw std::invalid_argument(std::string(kId) + " step: actions must be floats");
    if (!actions.device().is_cpu())
      throw std::invalid_argument(std::string(kId) + " step: actions must be on the CPU");
    const at::Tensor a = actions.to(at::kFloat).contiguous();
    const float* act = a.data_ptr<float>();
    for (int64_t k = 0; k < a.numel(); ++k)  // a NaN control would poison the physics state
      if (!std::isfinite(act[k]))
        throw std::invalid_argument(std::string(kId) + " step: action " + std::to_string(act[k]) +
                                    " of env " + std::to_string(k / nu_) + " is not finite");
    parallel_for(
        Device::kCpu, "mjcf.step", n_, [&](int64_t i) { step_one(i, act + i * nu_); }, nullptr, 2);
  }

  at::Tensor get_state() const override {
    at::Tensor s = at::empty({n_, 1 + nq_ + nv_}, at::TensorOptions().dtype(at::kDouble));
    double* p = s.data_ptr<double>();
    for (int64_t i = 0; i < n_; ++i) {
      double* row = p + i * (1 + nq_ + nv_);
      physics_->get(i, row + 1, row + 1 + nq_, row);
    }
    return s;
  }

  void set_state(const at::Tensor& state, const at::Tensor& env_ids) override {
    const int64_t rows = env_ids.defined() ? env_ids.numel() : n_;
    if (state.dim() != 2 || state.size(0) != rows || state.size(1) != 1 + nq_ + nv_)
      throw std::invalid_argument("set_state: expected state of shape [" + std::to_string(rows) +
                                  ", " + std::to_string(1 + nq_ + nv_) +
                                  "] (time, qpos, qvel), got " + shape_string(state.sizes()));
    const at::Tensor s = state.to(at::kDouble).contiguous();
    if (!at::isfinite(s).all().item<bool>())
      throw std::invalid_argument("set_state: state contains NaN or infinity");
    const at::Tensor ids = env_ids.defined() ? env_ids.to(at::kLong).contiguous()
                                             : at::arange(n_, at::TensorOptions().dtype(at::kLong));
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = ids.data_ptr<int64_t>()[r];
      if (i < 0 || i >= n_)
        throw std::invalid_argument("set_state: env_ids must lie in [0, " + std::to_string(n_) +
                                    ")");
      const double* row = s.data_ptr<double>() + r * (1 + nq_ + nv_);
      physics_->set(i, row + 1, row + 1 + nq_, row[0]);
      observe(i, buf_.obs.data_ptr<float>() + i * (nq_ + nv_));
    }
  }

  int64_t diverged_count() const override { return diverged_.sum().item<int64_t>(); }

  Scene scene() const override {
    // Meshes and materials live only in the compiled mjModel, not in the engine's import.
    const physics::MjModelHandle compiled(xml_);
    return mjcf_scene(physics_->model(), compiled.get(), physics_->model().timestep * frame_skip_);
  }
  at::Tensor body_poses(const at::Tensor& obs) const override {
    return mjcf_body_poses(physics_->model(), observations_for_drawing(obs, spec_));
  }

  std::map<std::string, at::Tensor> save_rollout_state() const override {
    return {{"state", get_state()},
            {"elapsed", elapsed_.clone()},
            {"episode", episode_.clone()},
            {"running_return", buf_.reward.new_zeros({n_})},
            {"diverged", diverged_.clone()},
            {"obs", buf_.obs.clone()},
            {"seed", at::tensor({static_cast<int64_t>(seed_)}, at::kLong)}};
  }

  void load_rollout_state(const std::map<std::string, at::Tensor>& saved) override {
    auto get = [&](const char* key) {
      auto it = saved.find(key);
      if (it == saved.end()) throw std::invalid_argument(std::string("rollout state lacks ") + key);
      return it->second;
    };
    set_state(get("state"), at::Tensor());
    elapsed_.copy_(get("elapsed"));
    episode_.copy_(get("episode"));
    diverged_.copy_(get("diverged"));
    buf_.obs.copy_(get("obs"));
    seed_ = static_cast<uint64_t>(get("seed").item<int64_t>());
  }

 private:
  // An integer option in [1, max]; NaN, inf and fractions are refused, not truncated.
  static int positive_int(const std::string& key, double v, double max) {
    if (!(v >= 1 && v <= max) || v != std::floor(v))
      throw std::invalid_argument(std::string(kId) + " option " + key +
                                  " must be an integer in [1, " + std::to_string(int64_t(max)) +
                                  "], got " + std::to_string(v));
    return static_cast<int>(v);
  }

  void observe(int64_t i, float* obs) const { physics_->observe(i, obs); }

  // qpos0 and zero velocity, each plus U(-noise, noise), from the (seed, env, episode) stream.
  void start_episode(int64_t i) {
    const auto& m = physics_->model();
    Rng rng(seed_, static_cast<uint32_t>(i), static_cast<uint32_t>(episode_.data_ptr<int32_t>()[i]),
            0u);
    std::vector<double> qpos(m.qpos0), qvel(nv_, 0.0);
    const float s = static_cast<float>(noise_);
    if (noise_ > 0) {
      for (auto& q : qpos) q += rng.uniform(-s, s);
      for (auto& v : qvel) v += rng.uniform(-s, s);
    }
    physics_->set(i, qpos.data(), qvel.data(), 0.0);
    elapsed_.data_ptr<int32_t>()[i] = 0;
    observe(i, buf_.obs.data_ptr<float>() + i * (nq_ + nv_));
  }

  void step_one(int64_t i, const float* action) {
    physics_->set_ctrl(i, action);
    physics_->step(i, frame_skip_);
    float* obs = buf_.obs.data_ptr<float>() + i * (nq_ + nv_);
    float next[kMaxObs];
    observe(i, next);
    bool finite = true;
    for (int k = 0; k < nq_ + nv_; ++k)
      finite = finite && std::isfinite(next[k]) && std::abs(next[k]) < 1e10f;
    int32_t& t = elapsed_.data_ptr<int32_t>()[i];
    t += 1;
    const bool truncated = t >= max_steps_ || !finite;
    buf_.reward.data_ptr<float>()[i] = 0.0f;
    buf_.terminated.data_ptr<bool>()[i] = false;
    buf_.truncated.data_ptr<bool>()[i] = truncated;
    if (!finite) diverged_.data_ptr<int32_t>()[i] += 1;
    float* fin = buf_.final_obs.data_ptr<float>() + i * (nq_ + nv_);
    if (truncated) {
      // A diverged state is never returned: final_obs keeps the last finite observation.
      for (int k = 0; k < nq_ + nv_; ++k) fin[k] = finite ? next[k] : obs[k];
      buf_.episode_return.data_ptr<float>()[i] = 0.0f;
      buf_.episode_length.data_ptr<int32_t>()[i] = t;
      episode_.data_ptr<int32_t>()[i] += 1;
      start_episode(i);
    } else {
      std::copy(next, next + nq_ + nv_, obs);
    }
  }

  int64_t n_;
  uint64_t seed_;
  int nq_ = 0, nv_ = 0, nu_ = 0, frame_skip_ = 1, max_steps_ = 1000;
  double noise_ = 0;
  EnvSpec spec_;
  std::unique_ptr<PhysicsBackend> physics_;
  std::string xml_;
  StepBuffers buf_;
  at::Tensor elapsed_, episode_, diverged_;
};

}  // namespace

EnvSpec mjcf_spec_template() {
  EnvSpec s;
  s.id = kId;
  s.observation_space = Space::box({}, {});
  s.action_space = Space::box({}, {});
  s.max_episode_steps = 1000;
  s.state_float64 = true;
  s.option_names = {"frame_skip", "reset_noise_scale", "precision"};
  return s;
}

std::unique_ptr<BatchEnv> make_mjcf_env(int64_t n, DeviceId device, uint64_t seed,
                                        const EnvOptions& options, const EnvTextOptions& text) {
  return std::make_unique<MjcfBatchEnv>(n, device, seed, options, text);
}

}  // namespace myriad::envs
