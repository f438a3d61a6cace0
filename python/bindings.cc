// pybind11 module myriad._core: declarations and zero-copy conversion only. The
// Gymnasium-style classes live in python/myriad/*.py.
//
// Arrays cross without copies: CPU buffers become numpy arrays that view the env's tensors
// (kept alive by a capsule), CUDA buffers become DLPack capsules that torch.from_dlpack takes.
// Actions come in as numpy arrays (viewed with at::from_blob), lists or DLPack capsules. Stepping,
// the step in flight and the done mask are envs::AsyncStepper's; summary.json is learner/summary's.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "envs/async_stepper.h"
#include "learner/cpu_math.h"
#include "learner/distributed.h"
#include "learner/record.h"
#include "learner/run_dir.h"
#include "learner/summary.h"
#include "learner/trainer.h"
#include "myriad/registry.h"
#include "myriad/version.h"

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

// The ATen dtype of a numpy dtype in native byte order, if ATen has one.
std::optional<at::ScalarType> aten_scalar_type(const py::dtype& d) {
  if (d.byteorder() == '>') return std::nullopt;
  switch (d.kind()) {
    case 'f':
      if (d.itemsize() == 4) return at::kFloat;
      if (d.itemsize() == 8) return at::kDouble;
      break;
    case 'i':
      if (d.itemsize() == 1) return at::kChar;
      if (d.itemsize() == 2) return at::kShort;
      if (d.itemsize() == 4) return at::kInt;
      if (d.itemsize() == 8) return at::kLong;
      break;
    case 'u':  // kept unsigned: converting 2**64-1 to int64 would wrap it to -1
      if (d.itemsize() == 1) return at::kByte;
      if (d.itemsize() == 2) return at::kUInt16;
      if (d.itemsize() == 4) return at::kUInt32;
      if (d.itemsize() == 8) return at::kUInt64;
      break;
    case 'b':
      return at::kBool;
  }
  return std::nullopt;
}

// A tensor viewing numpy array a (no copy; a must outlive the tensor's use).
at::Tensor tensor_view(const py::array& a) {
  if (!(a.flags() & py::array::c_style)) throw std::invalid_argument("array must be C-contiguous");
  const std::optional<at::ScalarType> type = aten_scalar_type(a.dtype());
  if (!type) throw py::type_error("unsupported array dtype " + std::string(py::str(a.dtype())));
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  return at::from_blob(const_cast<void*>(a.data()), shape, at::TensorOptions().dtype(*type));
}

// A tensor for what Python passed as actions or a state: a DLPack capsule (from torch), or
// anything numpy.asarray takes. A C-contiguous array of a dtype ATen has is viewed, not copied;
// other numbers are converted once (integers to int64, floats to float32/float64). The tensor may
// view `keep`, which must outlive its use.
at::Tensor input_tensor(const py::handle& obj, py::object& keep) {
  if (PyCapsule_CheckExact(obj.ptr()))
    return from_dlpack_capsule(py::reinterpret_borrow<py::capsule>(obj));
  py::array a = py::array::ensure(obj, py::array::c_style);
  if (!a) throw py::type_error("expected a numpy array, a torch tensor or a list of numbers");
  if (!aten_scalar_type(a.dtype())) {
    const char kind = a.dtype().kind();
    const char* to = kind == 'i' || kind == 'u' ? "int64"
                     : kind == 'f'              ? (a.itemsize() < 4 ? "float32" : "float64")
                     : kind == 'b'              ? "bool"
                                                : nullptr;
    if (to == nullptr)
      throw py::type_error("expected numbers, got an array of dtype " +
                           std::string(py::str(a.dtype())));
    a = py::array::ensure(a.attr("astype")(to), py::array::c_style);
  }
  keep = a;
  return tensor_view(a);
}

py::dict eval_dict(const learner::EvalResult& r) {
  py::dict d;
  d["return_mean"] = r.return_mean;
  d["return_std"] = r.return_std;
  d["length_mean"] = r.length_mean;
  d["episodes"] = r.episodes;
  if (!r.teams.empty()) {
    py::list teams;
    for (const learner::TeamEval& t : r.teams) {
      py::dict e;
      e["name"] = t.name;
      e["learns"] = t.learns;
      e["return_mean"] = t.return_mean;
      e["return_std"] = t.return_std;
      e["win_rate"] = std::isfinite(t.win_rate) ? py::object(py::float_(t.win_rate)) : py::none();
      teams.append(e);
    }
    d["teams"] = teams;
  }
  if (std::isfinite(r.draw_rate)) d["draw_rate"] = r.draw_rate;
  for (const auto& [key, value] : r.errors) d[py::str(key)] = value;
  for (const auto& [key, value] : r.reward_terms) d[py::str(key)] = value;
  if (!r.errors.empty() || !r.reward_terms.empty()) d["diverged_episodes"] = r.diverged;
  return d;
}

// A seed from Python: an int (or numpy integer) in [0, 2**63-1], the range checkpoints and
// env state store; anything else is refused, never wrapped.
uint64_t to_seed(const py::handle& seed) {
  if (PyBool_Check(seed.ptr()) || !PyIndex_Check(seed.ptr()))
    throw py::type_error("seed must be an integer, got " +
                         std::string(py::str(py::type::of(seed).attr("__name__"))));
  const auto value = py::reinterpret_steal<py::object>(PyNumber_Index(seed.ptr()));
  if (!value) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0 || v < 0)
    throw py::value_error("seed must be an integer in [0, 2**63-1], got " +
                          std::string(py::repr(seed)));
  return static_cast<uint64_t>(v);
}

// The CPU thread setting (set_cpu_threads: the calling thread's) at `threads` while it lives, then
// as it was: an env's calls on the caller's thread run on the env's own count and leave the
// caller's (and so every other env's) as it was.
class CpuThreadsFor {
 public:
  explicit CpuThreadsFor(int threads) : saved_(cpu_threads()) { set_cpu_threads(threads); }
  ~CpuThreadsFor() { set_cpu_threads(saved_); }
  CpuThreadsFor(const CpuThreadsFor&) = delete;
  CpuThreadsFor& operator=(const CpuThreadsFor&) = delete;

 private:
  int saved_;
};

// The env object behind myriad.VectorEnv. Stepping, the step in flight (step_async/step_wait)
// and the done mask live in envs::AsyncStepper; this class converts arrays and releases the GIL.
// What runs on the caller's thread (making the env, reset, step, get_state, set_state, record)
// runs on the env's own thread count; step_async's step runs on the stepper's worker, which
// sets it too.
class Env {
 public:
  Env(const std::string& id, int64_t n, const std::string& device, const py::object& seed,
      const EnvOptions& options, const EnvTextOptions& text_options, int threads)
      : threads_(threads),
        stepper_(make_env(id, n, device, to_seed(seed), options, text_options, threads), threads) {}

  void reset(const py::object& seed) {
    std::optional<uint64_t> s;
    if (!seed.is_none()) s = to_seed(seed);
    py::gil_scoped_release release;
    const CpuThreadsFor on(threads_);
    stepper_.reset(s);
  }

  // actions: a numpy array (or anything numpy takes) or a DLPack capsule.
  void step(const py::handle& actions) {
    py::object keep;
    const at::Tensor a = input_tensor(actions, keep);
    py::gil_scoped_release release;
    const CpuThreadsFor on(threads_);
    stepper_.step(a);
  }
  void step_async(const py::handle& actions) {
    py::object keep;
    const at::Tensor a = input_tensor(actions, keep);
    py::gil_scoped_release release;
    stepper_.step_async(a);
  }
  void step_wait() {
    py::gil_scoped_release release;
    stepper_.step_wait();
  }

  // Buffers by name (numpy views on CPU, DLPack capsules on CUDA), "done" included.
  py::dict buffers() const {
    const StepBuffers& b = stepper_.buffers();
    py::dict out;
    const std::pair<const char*, const at::Tensor*> named[] = {
        {"obs", &b.obs},
        {"reward", &b.reward},
        {"terminated", &b.terminated},
        {"truncated", &b.truncated},
        {"done", &stepper_.done()},
        {"final_obs", &b.final_obs},
        {"episode_return", &b.episode_return},
        {"episode_length", &b.episode_length}};
    for (const auto& [name, t] : named) out[name] = export_tensor(*t);
    if (b.winner.defined()) out["winner"] = export_tensor(b.winner);
    for (const auto& [key, t] : b.info) out[py::str("info." + key)] = export_tensor(t);
    return out;
  }

  py::object get_state() {
    at::Tensor state;
    {
      py::gil_scoped_release release;
      const CpuThreadsFor on(threads_);
      state = stepper_.env().get_state();
    }
    return export_tensor(state);
  }
  void set_state(const py::handle& state, const py::handle& ids) {
    py::object keep_state, keep_ids;
    const at::Tensor s = input_tensor(state, keep_state);
    const at::Tensor i = ids.is_none() ? at::Tensor() : input_tensor(ids, keep_ids);
    py::gil_scoped_release release;
    const CpuThreadsFor on(threads_);
    stepper_.env().set_state(s, i);
    stepper_.refresh_done();
  }

  // Records K episodes per env driven by Python callables: act(obs) -> numpy actions, value(obs)
  // -> numpy [N] (or None). obs is what buffers() gives (numpy view or DLPack capsule).
  py::dict record(const std::string& path, py::function act, py::object value, int64_t episodes,
                  const py::object& seed_arg) {
    const uint64_t seed = to_seed(seed_arg);
    const CpuThreadsFor on(threads_);
    BatchEnv& env = stepper_.env();
    const at::Device device = env.buffers().obs.device();
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
    learner::Recording rec = learner::record_episodes(env, driver, o);
    stepper_.refresh_done();
    replay::write_file(path, rec.replay);
    py::dict d = eval_dict(rec.eval);
    // Driven by a Python callable: whether a team "learns" means nothing here.
    if (d.contains("teams"))
      for (py::handle team : d["teams"].cast<py::list>())
        PyDict_DelItemString(team.ptr(), "learns");
    d["path"] = path;
    return d;
  }

  int64_t num_envs() const { return stepper_.num_envs(); }
  std::string device() const { return device_name(stepper_.device()); }
  int64_t diverged_count() { return stepper_.env().diverged_count(); }
  const EnvSpec& spec() const { return stepper_.spec(); }

 private:
  static std::unique_ptr<BatchEnv> make_env(const std::string& id, int64_t n,
                                            const std::string& device, uint64_t seed,
                                            const EnvOptions& options,
                                            const EnvTextOptions& text_options, int threads) {
    const CpuThreadsFor on(threads);  // threads < 0 throws here, naming it
    return envs::make(id, n, resolve_device_id(device), seed, options, text_options);
  }

  py::object export_tensor(const at::Tensor& t) const {
    if (!t.is_cuda()) return numpy_view(t);
    return dlpack_capsule(t);
  }

  int threads_;  // the env's CPU threads (0: the default)
  envs::AsyncStepper stepper_;
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
  d["state_dtype"] = s.state_float64 ? "float64" : "float32";
  d["physics_env"] = s.physics_env;
  d["observation_space"] = space_dict(s.observation_space);
  d["action_space"] = space_dict(s.action_space);
  d["max_episode_steps"] = s.max_episode_steps;
  d["reward_threshold"] = s.reward_threshold ? py::cast(*s.reward_threshold) : py::none();
  d["dt"] = s.dt ? py::cast(*s.dt) : py::none();
  d["state_names"] = s.state_names;
  d["option_names"] = s.option_names;
  // Agents (myriad/env_spec.h): num_agents 1 and empty lists for single-agent envs.
  d["num_agents"] = s.num_agents;
  d["agent_names"] = s.agent_names;
  d["team_ids"] = s.team_ids;
  d["team_names"] = s.team_names;
  d["decides_winner"] = s.decides_winner;
  d["actor_obs_dim"] = s.actor_obs_dim;  // > 0: obs is [actor | critic]
  d["agent_obs_sizes"] = s.agent_obs_sizes;
  return d;
}

// Trains like `myriad train` and returns summary.json's content as a JSON string. out_dir ""
// claims a new runs/<stem>-<timestamp>[-k]; one holding another run is refused unless resumed
// in place or overwrite (learner/run_dir.h).
std::string train(const std::string& yaml_text, const std::vector<std::string>& overrides,
                  const std::string& out, const std::string& stem, bool overwrite) {
  // Under torchrun or srun this process is one rank of a data-parallel job (learner/run_dir.h).
  const learner::RankInfo rank = learner::rank_from_environment();
  std::vector<std::string> all = overrides;
  const bool resume_given = std::any_of(overrides.begin(), overrides.end(), [](const auto& o) {
    return o.rfind("run.resume=", 0) == 0;
  });
  const std::string restart = learner::restart_resume_override(rank.restart, out, resume_given);
  if (!restart.empty()) all.push_back(restart);
  const learner::TrainConfig config = learner::parse_config(yaml_text, all);
  learner::check_trainable(config);
  learner::TrainSummary s;
  {
    py::gil_scoped_release release;
    // The trainer sets run.threads on this thread: the caller's setting comes back after.
    const CpuThreadsFor keep(cpu_threads());
    const std::string out_dir =
        learner::claim_job_run_dir(rank.rank, out, stem, config.run.resume, overwrite);
    learner::Trainer trainer(config, out_dir);
    s = trainer.train();
    if (!out_dir.empty()) learner::write_summary(s, out_dir);
  }
  return learner::summary_json(s).dump();
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
  py::dict evaluate(int64_t episodes, const py::object& seed_arg) {
    const uint64_t seed = to_seed(seed_arg);
    learner::EvalResult r;
    {
      py::gil_scoped_release release;
      r = learner::evaluate(p_, episodes, seed);
    }
    return eval_dict(r);
  }
  py::dict record(const std::string& path, int64_t envs, int64_t episodes,
                  const py::object& seed_arg, const std::string& checkpoint) {
    const uint64_t seed = to_seed(seed_arg);
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
  // Actions of the wrong kind are TypeErrors (a subclass, so `except TypeError` catches them).
  py::register_exception<envs::ActionTypeError>(m, "ActionTypeError", PyExc_TypeError);
  m.attr("__version__") = MYRIAD_VERSION;
  m.def("registered_ids", &envs::registered_ids);
  m.def("spec", [](const std::string& id) { return spec_dict(envs::spec_of(id)); });
  m.def("cuda_available", &cuda_available);
  // The calling thread's CPU thread count (what no env's call nor train() may change:
  // tests/python/test_api.py).
  m.def("cpu_threads", &cpu_threads);
  // The pybind11 this module was built with; it must be the one torch was built with.
  m.attr("pybind11_version") = std::to_string((PYBIND11_VERSION_HEX >> 24) & 0xff) + "." +
                               std::to_string((PYBIND11_VERSION_HEX >> 16) & 0xff) + "." +
                               std::to_string((PYBIND11_VERSION_HEX >> 8) & 0xff);
  m.def("pin_cpu_math", &learner::pin_cpu_math);
  m.def("keep_freed_memory", &learner::keep_freed_memory);
  m.def("cuda_compiled", &cuda_compiled);
  m.def("train", &train, py::arg("yaml_text"), py::arg("overrides"), py::arg("out_dir"),
        py::arg("stem") = "python", py::arg("overwrite") = false);
  py::register_exception<learner::RunDirExists>(m, "RunDirExists", PyExc_FileExistsError);

  py::class_<Env>(m, "Env")
      .def(py::init<const std::string&, int64_t, const std::string&, const py::object&,
                    const EnvOptions&, const EnvTextOptions&, int>(),
           py::arg("id"), py::arg("num_envs"), py::arg("device"), py::arg("seed"),
           py::arg("options"), py::arg("text_options"), py::arg("threads"))
      .def("reset", &Env::reset, py::arg("seed") = py::none())
      .def("step", &Env::step, py::arg("actions"))
      .def("step_async", &Env::step_async, py::arg("actions"))
      .def("step_wait", &Env::step_wait)
      .def("record", &Env::record, py::arg("path"), py::arg("act"), py::arg("value"),
           py::arg("episodes"), py::arg("seed"))
      .def("buffers", &Env::buffers)
      .def("get_state", &Env::get_state)
      .def("set_state", &Env::set_state, py::arg("state"), py::arg("ids") = py::none())
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
