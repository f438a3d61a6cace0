// pybind11 module myriad._core: declarations and zero-copy conversion only (DESIGN.md,
// convention 8). The Gymnasium-style classes live in python/myriad/*.py.
//
// Arrays cross without copies: CPU buffers become numpy arrays that view the env's tensors
// (kept alive by a capsule), CUDA buffers become DLPack capsules that torch.from_dlpack takes.
// Actions come in as numpy arrays (viewed with at::from_blob) or DLPack capsules.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>

#include "learner/record.h"
#include "learner/trainer.h"
#include "myriad/registry.h"

namespace py = pybind11;

namespace myriad::python {
namespace {

// A numpy array viewing tensor t (CPU, contiguous); the capsule keeps t's storage alive.
py::array numpy_view(const at::Tensor& t) {
  py::dtype dtype;
  switch (t.scalar_type()) {
    case at::kFloat:
      dtype = py::dtype::of<float>();
      break;
    case at::kDouble:
      dtype = py::dtype::of<double>();
      break;
    case at::kInt:
      dtype = py::dtype::of<int32_t>();
      break;
    case at::kLong:
      dtype = py::dtype::of<int64_t>();
      break;
    case at::kBool:
      dtype = py::dtype::of<bool>();
      break;
    default:
      throw std::invalid_argument("unsupported dtype");
  }
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<py::ssize_t> strides;
  for (auto s : t.strides()) strides.push_back(s * t.element_size());
  auto* owner = new at::Tensor(t);
  py::capsule base(owner, [](void* p) { delete static_cast<at::Tensor*>(p); });
  return py::array(dtype, shape, strides, t.data_ptr(), base);
}

// A DLPack capsule for tensor t, as torch.from_dlpack expects ("dltensor", renamed once used).
py::capsule dlpack_capsule(const at::Tensor& t) {
  DLManagedTensor* managed = at::toDLPack(t);
  return py::capsule(managed, "dltensor", [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
}

at::Tensor from_dlpack_capsule(py::capsule cap) {
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  if (managed == nullptr) throw py::error_already_set();
  at::Tensor t = at::fromDLPack(managed);
  PyCapsule_SetName(cap.ptr(), "used_dltensor");
  return t;
}

at::ScalarType numpy_scalar_type(const py::array& a) {
  const py::dtype d = a.dtype();
  if (d.is(py::dtype::of<float>())) return at::kFloat;
  if (d.is(py::dtype::of<double>())) return at::kDouble;
  if (d.is(py::dtype::of<int32_t>())) return at::kInt;
  if (d.is(py::dtype::of<int64_t>())) return at::kLong;
  if (d.is(py::dtype::of<bool>())) return at::kBool;
  throw py::type_error("unsupported array dtype " + std::string(py::str(d)));
}

// A tensor viewing numpy array a (no copy; a must outlive the tensor's use).
at::Tensor tensor_view(const py::array& a) {
  if (!(a.flags() & py::array::c_style)) throw std::invalid_argument("array must be C-contiguous");
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  return at::from_blob(const_cast<void*>(a.data()), shape,
                       at::TensorOptions().dtype(numpy_scalar_type(a)));
}

// The env object behind myriad.VectorEnv: stepping with the GIL released, and an optional
// step in flight (step_async / step_wait).
py::dict eval_dict(const learner::EvalResult& r) {
  py::dict d;
  d["return_mean"] = r.return_mean;
  d["return_std"] = r.return_std;
  d["length_mean"] = r.length_mean;
  d["episodes"] = r.episodes;
  return d;
}

class Env {
 public:
  Env(const std::string& id, int64_t n, const std::string& device, uint64_t seed,
      const EnvOptions& options, const EnvTextOptions& text_options, int threads)
      : threads_(threads) {
    set_cpu_threads(threads);
    env_ = envs::make(id, n, resolve_device(device), seed, options, text_options);
  }

  void reset(std::optional<uint64_t> seed) {
    wait_pending();
    awaiting_wait_ = false;  // a reset supersedes the pending step's results
    py::gil_scoped_release release;
    env_->reset(seed);
  }

  void step_numpy(const py::array& actions) { step_tensor(tensor_view(actions), actions); }
  void step_dlpack(py::capsule actions) { step_tensor(from_dlpack_capsule(actions), py::none()); }

  void step_async_numpy(const py::array& actions) { start_async(tensor_view(actions), actions); }
  void step_async_dlpack(py::capsule actions) {
    start_async(from_dlpack_capsule(actions), py::none());
  }
  void step_wait() {
    if (!awaiting_wait_) throw std::logic_error("step_wait() called with no step_async() pending");
    awaiting_wait_ = false;
    wait_pending();  // rethrows the step's error, once
  }

  // Buffers by name: numpy views on CPU, DLPack capsules on CUDA.
  py::dict buffers() const {
    const StepBuffers& b = env_->buffers();
    py::dict out;
    const std::pair<const char*, const at::Tensor*> named[] = {
        {"obs", &b.obs},
        {"reward", &b.reward},
        {"terminated", &b.terminated},
        {"truncated", &b.truncated},
        {"final_obs", &b.final_obs},
        {"episode_return", &b.episode_return},
        {"episode_length", &b.episode_length}};
    for (const auto& [name, t] : named) out[name] = export_tensor(*t);
    return out;
  }

  py::object get_state() {
    wait_pending();
    return export_tensor(env_->get_state());
  }
  void set_state_numpy(const py::array& state, std::optional<py::array> ids) {
    wait_pending();
    env_->set_state(tensor_view(state), ids ? tensor_view(*ids) : at::Tensor());
  }
  void set_state_dlpack(py::capsule state, std::optional<py::capsule> ids) {
    wait_pending();
    env_->set_state(from_dlpack_capsule(state), ids ? from_dlpack_capsule(*ids) : at::Tensor());
  }

  // Records K episodes per env driven by Python callables: act(obs) -> numpy actions, value(obs)
  // -> numpy [N] (or None). obs is what buffers() gives (numpy view or DLPack capsule).
  py::dict record(const std::string& path, py::function act, py::object value, int64_t episodes,
                  uint64_t seed) {
    wait_pending();
    const at::Device device =
        env_->device() == Device::kCpu ? at::Device(at::kCPU) : at::Device(at::kCUDA, 0);
    auto call = [this, device](const py::function& f, const at::Tensor& obs) {
      const py::array out = f(export_tensor(obs)).cast<py::array>();
      return tensor_view(py::array::ensure(out, py::array::c_style)).clone().to(device);
    };
    learner::Driver driver;
    driver.act = [&](const at::Tensor& obs) { return call(act, obs); };
    if (!value.is_none())
      driver.value = [&](const at::Tensor& obs) { return call(value.cast<py::function>(), obs); };
    learner::RecordOptions o;
    o.episodes = episodes;
    o.seed = seed;
    learner::Recording rec = learner::record_episodes(*env_, driver, o);
    replay::write_file(path, rec.replay);
    py::dict d = eval_dict(rec.eval);
    d["path"] = path;
    return d;
  }

  int64_t num_envs() const { return env_->num_envs(); }
  std::string device() const { return device_name(env_->device()); }
  int64_t diverged_count() const { return env_->diverged_count(); }
  const EnvSpec& spec() const { return env_->spec(); }

 private:
  py::object export_tensor(const at::Tensor& t) const {
    if (env_->device() == Device::kCpu) return numpy_view(t);
    return dlpack_capsule(t);
  }

  void step_tensor(const at::Tensor& actions, py::object keep_alive) {
    wait_pending();
    awaiting_wait_ = false;  // a new step supersedes the pending step's results
    (void)keep_alive;
    py::gil_scoped_release release;
    env_->step(actions);
  }

  void start_async(at::Tensor actions, py::object keep_alive) {
    wait_pending();
    // The worker owns a copy of the actions, so the caller may reuse its array or tensor at once.
    (void)keep_alive;
    at::Tensor owned = actions.clone();
    const int threads = threads_;
    BatchEnv* env = env_.get();
    awaiting_wait_ = true;
    pending_ = std::async(std::launch::async, [env, owned, threads] {
      set_cpu_threads(threads);  // OpenMP settings are per thread
      env->step(owned);
    });
  }

  // Finishes the step in flight (if any); its results stay for step_wait().
  void wait_pending() {
    if (!pending_.valid()) return;
    py::gil_scoped_release release;
    pending_.get();  // rethrows the step's error, if any
  }

  std::unique_ptr<BatchEnv> env_;
  std::future<void> pending_;   // the step_async() in flight, if any
  bool awaiting_wait_ = false;  // a step_async() whose results step_wait() has not returned
  int threads_;
};

py::dict space_dict(const Space& s) {
  py::dict d;
  d["kind"] = s.is_discrete() ? "discrete" : "box";
  d["shape"] = s.shape;
  d["low"] = s.low;
  d["high"] = s.high;
  d["n"] = s.n;
  return d;
}

py::dict spec_dict(const EnvSpec& s) {
  py::dict d;
  d["id"] = s.id;
  d["observation_space"] = space_dict(s.observation_space);
  d["action_space"] = space_dict(s.action_space);
  d["max_episode_steps"] = s.max_episode_steps;
  d["reward_threshold"] = s.reward_threshold ? py::cast(*s.reward_threshold) : py::none();
  d["state_names"] = s.state_names;
  d["option_names"] = s.option_names;
  return d;
}

// Trains like `myriad train` and returns summary.json's content as a JSON string.
std::string train(const std::string& yaml_text, const std::vector<std::string>& overrides,
                  const std::string& out_dir) {
  const learner::TrainConfig config = learner::parse_config(yaml_text, overrides);
  learner::TrainSummary s;
  {
    py::gil_scoped_release release;
    if (!out_dir.empty()) std::filesystem::create_directories(out_dir);
    learner::Trainer trainer(config, out_dir);
    s = trainer.train();
  }
  nlohmann::json j = {{"env_steps", s.env_steps},
                      {"updates", s.updates},
                      {"wall_seconds", s.wall_seconds},
                      {"eval_return_mean", s.eval.return_mean},
                      {"eval_return_std", s.eval.return_std},
                      {"eval_episodes", s.eval.episodes},
                      {"diverged_episodes", s.diverged},
                      {"checkpoint", s.checkpoint},
                      {"run_dir", s.run_dir}};
  j["solved_seconds"] = s.solved_seconds ? nlohmann::json(*s.solved_seconds) : nlohmann::json();
  if (!out_dir.empty()) std::ofstream(out_dir + "/summary.json") << j.dump(2) << "\n";
  return j.dump();
}

class Policy {
 public:
  Policy(const std::string& checkpoint, const std::string& device)
      : p_(learner::load_policy(checkpoint, device)) {}
  py::object act_numpy(const py::array& obs) {
    at::Tensor a;
    {
      const at::Tensor o = tensor_view(obs);
      py::gil_scoped_release release;
      a = p_.act(o).contiguous();
    }
    return numpy_view(a.cpu());
  }
  py::capsule act_dlpack(py::capsule obs) {
    return dlpack_capsule(p_.act(from_dlpack_capsule(obs)));
  }
  std::string config_yaml() const { return learner::to_yaml(p_.config); }
  // What an exported network needs besides its weights.
  py::dict info() const {
    py::dict d;
    d["env_id"] = p_.config.env.id;
    d["activation"] = p_.config.ppo.activation;
    d["normalize_obs"] = p_.config.ppo.normalize_obs;
    d["obs_clip"] = p_.config.ppo.obs_clip;
    d["spec"] = spec_dict(p_.spec);
    return d;
  }
  py::dict evaluate(int64_t episodes, uint64_t seed) {
    learner::EvalResult r;
    {
      py::gil_scoped_release release;
      r = learner::evaluate(p_, episodes, seed);
    }
    return eval_dict(r);
  }
  py::dict record(const std::string& path, int64_t envs, int64_t episodes, uint64_t seed,
                  const std::string& checkpoint) {
    learner::RecordOptions o;
    o.envs = envs, o.episodes = episodes, o.seed = seed, o.checkpoint = checkpoint;
    learner::EvalResult r;
    {
      py::gil_scoped_release release;
      r = learner::record_to_file(p_, o, path);
    }
    py::dict d = eval_dict(r);
    d["path"] = path;
    return d;
  }

 private:
  learner::LoadedPolicy p_;
};

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "Myriad's C++ core (use the `myriad` package, not this module)";
  m.def("registered_ids", &envs::registered_ids);
  m.def("spec", [](const std::string& id) { return spec_dict(envs::spec_of(id)); });
  m.def("cuda_available", &cuda_available);
  m.def("cuda_compiled", &cuda_compiled);
  m.def("train", &train, py::arg("yaml_text"), py::arg("overrides"), py::arg("out_dir"));

  py::class_<Env>(m, "Env")
      .def(py::init<const std::string&, int64_t, const std::string&, uint64_t, const EnvOptions&,
                    const EnvTextOptions&, int>(),
           py::arg("id"), py::arg("num_envs"), py::arg("device"), py::arg("seed"),
           py::arg("options"), py::arg("text_options"), py::arg("threads"))
      .def("reset", &Env::reset, py::arg("seed") = py::none())
      .def("step_numpy", &Env::step_numpy)
      .def("step_dlpack", &Env::step_dlpack)
      .def("step_async_numpy", &Env::step_async_numpy)
      .def("step_async_dlpack", &Env::step_async_dlpack)
      .def("step_wait", &Env::step_wait)
      .def("record", &Env::record, py::arg("path"), py::arg("act"), py::arg("value"),
           py::arg("episodes"), py::arg("seed"))
      .def("buffers", &Env::buffers)
      .def("get_state", &Env::get_state)
      .def("set_state_numpy", &Env::set_state_numpy, py::arg("state"), py::arg("ids") = py::none())
      .def("set_state_dlpack", &Env::set_state_dlpack, py::arg("state"),
           py::arg("ids") = py::none())
      .def_property_readonly("num_envs", &Env::num_envs)
      .def_property_readonly("device", &Env::device)
      .def_property_readonly("diverged_count", &Env::diverged_count)
      .def_property_readonly("spec", [](const Env& e) { return spec_dict(e.spec()); });

  py::class_<Policy>(m, "Policy")
      .def(py::init<const std::string&, const std::string&>(), py::arg("checkpoint"),
           py::arg("device") = "")
      .def("act_numpy", &Policy::act_numpy)
      .def("act_dlpack", &Policy::act_dlpack)
      .def("evaluate", &Policy::evaluate, py::arg("episodes"), py::arg("seed") = 12345)
      .def("record", &Policy::record, py::arg("path"), py::arg("envs"), py::arg("episodes"),
           py::arg("seed"), py::arg("checkpoint"))
      .def_property_readonly("config_yaml", &Policy::config_yaml)
      .def_property_readonly("info", &Policy::info);
}

}  // namespace myriad::python
