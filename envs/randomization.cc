// Domain randomization terms: parsing, resolution against a model, and the per-env draw.
#include "envs/randomization.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>

#include "myriad/rng.h"
#include "physics/set_const.h"

namespace myriad::envs {
namespace {

using Json = nlohmann::json;

// The Philox counters of the startup draw: episode slot kStartup (no episode reaches it), step
// slot kStream + the term's index (no step counter reaches it).
constexpr uint32_t kStartupEpisode = 0xFFFFFFFFu;
constexpr uint32_t kRandomizeStream = 0x80000000u;

// What elements a field's rows are.
enum class Elements { kGeom, kBody, kDof, kJoint, kActuator, kNone };

struct FieldInfo {
  const char* name;
  Elements elements;
  int cols;
  bool nonnegative;  // physical values >= 0
  bool set_const;    // mj_setConst's derived constants depend on it
};

// The fields of MYRIAD_ENV_PARAM_FIELDS, with what they mean, and gravity.
const std::vector<FieldInfo>& field_table() {
  static const std::vector<FieldInfo> table = {
      {"geom_friction", Elements::kGeom, 3, true, false},
      {"body_mass", Elements::kBody, 1, true, true},
      {"body_ipos", Elements::kBody, 3, false, true},
      {"body_inertia", Elements::kBody, 3, true, true},
      {"dof_damping", Elements::kDof, 1, true, false},
      {"dof_armature", Elements::kDof, 1, true, true},
      {"dof_frictionloss", Elements::kDof, 1, true, false},
      {"jnt_stiffness", Elements::kJoint, 1, true, false},
      {"actuator_gainprm", Elements::kActuator, 3, false, false},
      {"actuator_biasprm", Elements::kActuator, 3, false, false},
      {"actuator_forcerange", Elements::kActuator, 2, false, false},
      // A position actuator's gains as mjlab's pd_gains randomizes them: kp is gainprm[0] and
      // -biasprm[1] together, kd is -biasprm[2].
      {"actuator_kp", Elements::kActuator, 1, true, false},
      {"actuator_kd", Elements::kActuator, 1, true, false},
      // State, not model: the root free joint's velocity (world frame), by interval events.
      {"root_velocity", Elements::kNone, 6, false, false},
      {"gravity", Elements::kNone, 3, false, false},
  };
  return table;
}

const FieldInfo* find_field(const std::string& name) {
  for (const auto& f : field_table())
    if (name == f.name) return &f;
  return nullptr;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

[[noreturn]] void fail(const std::string& at, const std::string& what) {
  throw std::invalid_argument(at + ": " + what);
}

std::pair<double, double> read_range(const Json& v, const std::string& at) {
  if (!v.is_array()) fail(at, "expected [low, high], got " + v.dump());
  if (v.empty()) fail(at, "the range is empty; expected [low, high]");
  if (v.size() != 2) fail(at, "expected [low, high] (two numbers), got " + v.dump());
  if (!v[0].is_number() || !v[1].is_number())
    fail(at, "expected [low, high] (two numbers), got " + v.dump());
  const double lo = v[0].get<double>(), hi = v[1].get<double>();
  if (!std::isfinite(lo) || !std::isfinite(hi)) fail(at, "low and high must be finite");
  if (lo > hi)
    fail(at, "the range is inverted: low " + Json(lo).dump() + " > high " + Json(hi).dump());
  return {lo, hi};
}

int read_axis(const Json& v, int cols, const std::string& at) {
  int axis = -1;
  if (v.is_number_integer()) {
    axis = v.get<int>();
  } else if (v.is_number() && v.get<double>() == std::floor(v.get<double>()) &&
             std::abs(v.get<double>()) < 1e6) {
    axis = static_cast<int>(v.get<double>());
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      axis = std::stoi(s);
  }
  if (axis < 0 || axis >= cols)
    fail(at, "axis " + v.dump() + " is not a column of the field (0.." + std::to_string(cols - 1) +
                 ")");
  return axis;
}

RandomTerm parse_term(const std::string& name, const Json& spec) {
  const std::string at = "randomize." + name;
  if (!spec.is_object()) fail(at, "expected a mapping (field, names, axes, range, ...)");
  static const std::set<std::string> keys = {
      "field", "names", "axes", "range", "distribution", "operation", "shared", "mode", "interval"};
  for (const auto& [key, value] : spec.items())
    if (!keys.count(key))
      fail(at + "." + key,
           "unknown key (valid: field, names, axes, range, distribution, operation, shared, "
           "mode, interval)");
  RandomTerm t;
  t.name = name;
  if (!spec.contains("field") || !spec["field"].is_string())
    fail(at + ".field", "required: one of " + join(randomizable_fields()));
  t.field = spec["field"].get<std::string>();
  const FieldInfo* info = find_field(t.field);
  if (!info)
    fail(at + ".field",
         "unknown field '" + t.field + "' (valid: " + join(randomizable_fields()) + ")");
  if (spec.contains("mode")) {
    const Json& mode = spec["mode"];
    const std::string m = mode.is_string() ? mode.get<std::string>() : "";
    if (m == "startup") {
      t.mode = RandomTerm::kStartup;
    } else if (m == "interval") {
      t.mode = RandomTerm::kInterval;
    } else {
      fail(at + ".mode",
           "expected startup (drawn once per env when the seed is set) or interval "
           "(root_velocity pushes); got " +
               mode.dump() + " (reset mode: not yet)");
    }
  }
  const bool state_field = t.field == "root_velocity";
  if (state_field && t.mode != RandomTerm::kInterval)
    fail(at + ".mode", "root_velocity is state, changed by interval events: give mode: interval");
  if (!state_field && t.mode == RandomTerm::kInterval)
    fail(at + ".mode",
         "interval events change root_velocity only (field " + t.field + " is drawn at startup)");
  if (t.mode == RandomTerm::kInterval) {
    if (!spec.contains("interval")) fail(at + ".interval", "required: [low, high] seconds");
    const auto iv = read_range(spec["interval"], at + ".interval");
    if (!(iv.first > 0)) fail(at + ".interval", "seconds between events must be > 0");
    t.interval[0] = iv.first;
    t.interval[1] = iv.second;
  } else if (spec.contains("interval")) {
    fail(at + ".interval", "only interval events take an interval");
  }
  if (spec.contains("names")) {
    const Json& names = spec["names"];
    if (info->elements == Elements::kNone)
      fail(at + ".names", "field " + t.field + " has no elements to name");
    if (names.is_string()) {
      t.names.push_back(names.get<std::string>());
    } else if (names.is_array()) {
      if (names.empty()) fail(at + ".names", "an empty list names nothing (omit it for all)");
      for (const auto& n : names) {
        if (!n.is_string()) fail(at + ".names", "expected names (strings), got " + n.dump());
        t.names.push_back(n.get<std::string>());
      }
    } else {
      fail(at + ".names", "expected a name or a list of names, got " + names.dump());
    }
    for (const auto& n : t.names) {
      try {
        std::regex re(n);
      } catch (const std::regex_error& e) {
        fail(at + ".names", "'" + n + "' is not a regular expression (" + e.what() + ")");
      }
    }
    t.all_names = false;
  }
  if (!spec.contains("range")) fail(at + ".range", "required: [low, high]");
  const Json& range = spec["range"];
  if (range.is_object()) {
    if (range.empty()) fail(at + ".range", "the range is empty; expected {axis: [low, high]}");
    if (spec.contains("axes"))
      fail(at + ".axes", "give the axes either here or as the keys of range, not both");
    for (const auto& [axis, r] : range.items()) {
      const int a = read_axis(Json(axis), info->cols, at + ".range." + axis);
      t.ranges[a] = read_range(r, at + ".range." + axis);
    }
  } else {
    const auto lo_hi = read_range(range, at + ".range");
    std::vector<int> axes;
    if (spec.contains("axes")) {
      const Json& a = spec["axes"];
      if (!a.is_array() || a.empty())
        fail(at + ".axes", "expected a list of columns, e.g. [0], got " + a.dump());
      for (const auto& x : a) {
        const int axis = read_axis(x, info->cols, at + ".axes");
        if (std::find(axes.begin(), axes.end(), axis) != axes.end())
          fail(at + ".axes", "axis " + std::to_string(axis) + " appears twice");
        axes.push_back(axis);
      }
    } else {
      for (int c = 0; c < info->cols; ++c) axes.push_back(c);
    }
    for (int a : axes) t.ranges[a] = lo_hi;
  }
  if (spec.contains("distribution")) {
    const Json& d = spec["distribution"];
    const std::string s = d.is_string() ? d.get<std::string>() : "";
    if (s == "uniform") {
      t.distribution = RandomTerm::kUniform;
    } else if (s == "log_uniform") {
      t.distribution = RandomTerm::kLogUniform;
    } else {
      fail(at + ".distribution", "expected uniform or log_uniform, got " + d.dump());
    }
  }
  if (t.distribution == RandomTerm::kLogUniform)
    for (const auto& [axis, r] : t.ranges)
      if (!(r.first > 0))
        fail(at + ".range", "log_uniform needs low > 0, got " + Json(r.first).dump());
  if (spec.contains("operation")) {
    const Json& o = spec["operation"];
    const std::string s = o.is_string() ? o.get<std::string>() : "";
    if (s == "abs") {
      t.operation = RandomTerm::kAbs;
    } else if (s == "add") {
      t.operation = RandomTerm::kAdd;
    } else if (s == "scale") {
      t.operation = RandomTerm::kScale;
    } else {
      fail(at + ".operation", "expected abs, add or scale, got " + o.dump());
    }
  }
  if (state_field && t.operation != RandomTerm::kAdd)
    fail(at + ".operation", "root_velocity pushes add to the velocity: give operation: add");
  if (state_field && spec.contains("distribution") && t.distribution != RandomTerm::kUniform)
    fail(at + ".distribution", "root_velocity pushes draw uniformly");
  if (state_field && spec.contains("shared"))
    fail(at + ".shared", "root_velocity has one element; shared does not apply");
  if (spec.contains("shared")) {
    if (!spec["shared"].is_boolean())
      fail(at + ".shared", "expected true or false, got " + spec["shared"].dump());
    t.shared = spec["shared"].get<bool>();
  }
  return t;
}

// The model's names and row counts of an element kind.
const std::vector<std::string>& element_names(const physics::Model<double>& m, Elements e) {
  static const std::vector<std::string> none;
  switch (e) {
    case Elements::kGeom:
      return m.geom_names;
    case Elements::kBody:
      return m.body_names;
    case Elements::kDof:
    case Elements::kJoint:
      return m.joint_names;
    case Elements::kActuator:
      return m.actuator_names;
    case Elements::kNone:
      break;
  }
  return none;
}

int joint_dofs(const physics::Model<double>& m, int j) {
  const int type = m.jnt_type[j];
  return type == physics::kFree ? 6 : type == physics::kBall ? 3 : 1;
}

// A per-env field's storage and the model's default values, by name.
// The model fields a term writes: its own, or a gain's gainprm and biasprm.
std::vector<std::string> written_fields(const std::string& name) {
  if (name == "actuator_kp") return {"actuator_gainprm", "actuator_biasprm"};
  if (name == "actuator_kd") return {"actuator_biasprm"};
  return {name};
}

std::vector<double>* storage(physics::EnvParams<double>& p, const std::string& name) {
  if (name == "gravity") return &p.gravity;
#define MYRIAD_X(field, rows, cols) \
  if (name == #field) return &p.field;
  MYRIAD_ENV_ALL_PARAM_FIELDS(MYRIAD_X)
#undef MYRIAD_X
  return nullptr;
}
std::vector<double> defaults(const physics::Model<double>& m, const std::string& name) {
  if (name == "gravity") return {m.gravity[0], m.gravity[1], m.gravity[2]};
  if (name == "actuator_kp" || name == "actuator_kd") {
    std::vector<double> gains(m.nu);
    for (int u = 0; u < m.nu; ++u)
      gains[u] = name == "actuator_kp" ? m.actuator_gainprm[3 * u] : -m.actuator_biasprm[3 * u + 2];
    return gains;
  }
#define MYRIAD_X(field, rows, cols) \
  if (name == #field) return m.field;
  MYRIAD_ENV_ALL_PARAM_FIELDS(MYRIAD_X)
#undef MYRIAD_X
  return {};
}

double draw(Rng& rng, const RandomTerm& t, std::pair<double, double> r) {
  const double u = static_cast<double>(rng.uniform());
  if (t.distribution == RandomTerm::kLogUniform) {
    const double a = std::log(r.first), b = std::log(r.second);
    return std::exp(a + (b - a) * u);
  }
  return r.first + (r.second - r.first) * u;
}

double apply(const RandomTerm& t, double base, double v) {
  return t.operation == RandomTerm::kAbs   ? v
         : t.operation == RandomTerm::kAdd ? base + v
                                           : base * v;
}

}  // namespace

std::vector<std::string> randomizable_fields() {
  std::vector<std::string> names;
  for (const auto& f : field_table()) names.push_back(f.name);
  return names;
}

std::vector<RandomTerm> parse_randomization(const std::string& json_text) {
  Json root;
  try {
    root = Json::parse(json_text);
  } catch (const Json::parse_error& e) {
    throw std::invalid_argument(std::string("randomize: not a valid JSON mapping (") + e.what() +
                                ")");
  }
  if (root.is_null()) return {};
  if (!root.is_object())
    throw std::invalid_argument("randomize: expected a mapping of term names to terms, got " +
                                root.dump());
  std::vector<RandomTerm> terms;
  for (const auto& [name, spec] : root.items()) terms.push_back(parse_term(name, spec));
  return terms;
}

std::vector<ResolvedTerm> resolve_randomization(const std::vector<RandomTerm>& terms,
                                                const physics::Model<double>& m) {
  std::vector<ResolvedTerm> out;
  int pushes = 0;
  for (const auto& t : terms) {
    const std::string at = "randomize." + t.name;
    if (t.field == "root_velocity") {
      if (++pushes > 1) fail(at + ".field", "one root_velocity push per env, this is the second");
      if (m.njnt == 0 || m.jnt_type[0] != physics::kFree)
        fail(at + ".field",
             "root_velocity needs the model's first joint to be a free joint (a "
             "floating base)");
      ResolvedTerm r;
      r.term = t;
      r.cols = 6;
      out.push_back(std::move(r));
      continue;
    }
    const FieldInfo& info = *find_field(t.field);
    ResolvedTerm r;
    r.term = t;
    r.cols = info.cols;
    const std::vector<std::string>& names = element_names(m, info.elements);
    // Elements by name: every element (bodies but the world), or those a regex matches whole.
    std::vector<int> elements;
    if (info.elements == Elements::kNone) {
      elements.push_back(0);
    } else if (t.all_names) {
      for (size_t e = info.elements == Elements::kBody ? 1 : 0; e < names.size(); ++e)
        elements.push_back(static_cast<int>(e));
    } else {
      std::set<int> chosen;
      for (const auto& pattern : t.names) {
        const std::regex re(pattern);
        bool any = false;
        for (size_t e = 0; e < names.size(); ++e)
          if (std::regex_match(names[e], re)) {
            chosen.insert(static_cast<int>(e));
            any = true;
          }
        if (!any)
          fail(at + ".names", "'" + pattern + "' matches no " +
                                  (info.elements == Elements::kGeom       ? "geom"
                                   : info.elements == Elements::kBody     ? "body"
                                   : info.elements == Elements::kActuator ? "actuator"
                                                                          : "joint") +
                                  " of the model (names: " + join(names) + ")");
      }
      elements.assign(chosen.begin(), chosen.end());
    }
    for (int e : elements) {
      if (info.elements == Elements::kDof) {
        for (int k = 0; k < joint_dofs(m, e); ++k) r.rows.push_back(m.jnt_dofadr[e] + k);
      } else {
        r.rows.push_back(e);
      }
    }
    if (t.field == "actuator_kp" || t.field == "actuator_kd")
      for (int u : r.rows)
        if (m.actuator_biastype[u] != physics::kBiasAffine ||
            (t.field == "actuator_kp" &&
             m.actuator_gainprm[3 * u] != -m.actuator_biasprm[3 * u + 1]))
          fail(at + ".names",
               t.field + " applies to position actuators (affine bias, gainprm[0] == " +
                   "-biasprm[1]); actuator '" + m.actuator_names[u] + "' is not one");
    // The extreme values each element can take, against what the field allows.
    const std::vector<double> base = defaults(m, t.field);
    for (int row : r.rows)
      for (const auto& [axis, range] : t.ranges) {
        const double def = base[static_cast<size_t>(row) * info.cols + axis];
        for (double v : {range.first, range.second}) {
          const double value = apply(t, def, v);
          // A body with mass (or inertia) keeps some: zero would make M singular.
          if ((t.field == "body_mass" || t.field == "body_inertia") && def > 0 && !(value > 0))
            fail(at + ".range", t.field + " of '" + m.body_names[row] + "' could become " +
                                    Json(value).dump() + " (default " + Json(def).dump() +
                                    "); a body with mass keeps it > 0");
          // Friction loss adds a constraint row per dof that has it: the batch is sized for the
          // model's dofs with friction loss, so a dof without it cannot gain it.
          if (t.field == "dof_frictionloss" && def == 0 && value != 0)
            fail(at + ".range", "dof " + std::to_string(row) + " (joint '" +
                                    m.joint_names[m.dof_jntid[row]] +
                                    "') has no friction loss in the model, and a drawn one would "
                                    "add constraint rows the batch is not sized for; give the "
                                    "joint a frictionloss in the model (or leave it out of names)");
          if (info.nonnegative && !(value >= 0))
            fail(at + ".range", t.field + " could become " + Json(value).dump() + " (default " +
                                    Json(def).dump() + ", drawn " + Json(v).dump() +
                                    "); it must stay >= 0");
          if (!std::isfinite(value))
            fail(at + ".range", t.field + " could become " + Json(value).dump());
        }
      }
    out.push_back(std::move(r));
  }
  return out;
}

PushEvent push_event(const std::vector<ResolvedTerm>& terms, const physics::Model<double>& m,
                     double dt) {
  PushEvent e;
  for (const auto& r : terms) {
    if (r.term.field != "root_velocity") continue;
    e.enabled = 1;
    e.qpos_adr = m.jnt_qposadr[0];
    e.qvel_adr = m.jnt_dofadr[0];
    e.interval[0] = static_cast<float>(r.term.interval[0]);
    e.interval[1] = static_cast<float>(r.term.interval[1]);
    for (const auto& [axis, range] : r.term.ranges) {
      e.lo[axis] = static_cast<float>(range.first);
      e.hi[axis] = static_cast<float>(range.second);
    }
    e.dt = dt;
  }
  return e;
}

physics::EnvParams<double> draw_env_params(const std::vector<ResolvedTerm>& terms,
                                           const physics::Model<double>& m, int64_t n,
                                           uint64_t seed) {
  physics::EnvParams<double> p;
  p.n = n;
  if (terms.empty()) return p;
  bool needs_set_const = false;
  // Every field a term touches: [n, size], every row starting at the model's values.
  for (const auto& r : terms) {
    if (r.term.mode != RandomTerm::kStartup) continue;
    needs_set_const = needs_set_const || find_field(r.term.field)->set_const;
    for (const auto& name : written_fields(r.term.field)) {
      std::vector<double>& f = *storage(p, name);
      if (!f.empty()) continue;
      const std::vector<double> def = defaults(m, name);
      f.resize(def.size() * static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) std::copy(def.begin(), def.end(), f.begin() + i * def.size());
    }
  }
  if (needs_set_const) {
#define MYRIAD_X(field, rows, cols) p.field.resize(m.field.size() * static_cast<size_t>(n));
    MYRIAD_ENV_DERIVED_FIELDS(MYRIAD_X)
#undef MYRIAD_X
    p.meaninertia.resize(static_cast<size_t>(n));
  }
  // Each term's model values, once.
  std::vector<std::vector<double>> term_defaults;
  for (const auto& r : terms) term_defaults.push_back(defaults(m, r.term.field));
  for (int64_t i = 0; i < n; ++i) {
    // Startup terms are numbered among themselves (a push among them moves no stream).
    uint32_t stream = kRandomizeStream;
    for (size_t t = 0; t < terms.size(); ++t) {
      const ResolvedTerm& r = terms[t];
      if (r.term.mode != RandomTerm::kStartup) continue;
      Rng rng(seed, static_cast<uint32_t>(i), kStartupEpisode, stream++);
      std::map<int, double> shared;
      if (r.term.shared)
        for (const auto& [axis, range] : r.term.ranges) shared[axis] = draw(rng, r.term, range);
      const std::vector<double>& def = term_defaults[t];
      const bool kp = r.term.field == "actuator_kp", kd = r.term.field == "actuator_kd";
      if (kp || kd) {
        double* gain = p.actuator_gainprm.data() + i * m.actuator_gainprm.size();
        double* bias = p.actuator_biasprm.data() + i * m.actuator_biasprm.size();
        for (int u : r.rows) {
          const auto& range = r.term.ranges.begin()->second;
          const double v = r.term.shared ? shared.begin()->second : draw(rng, r.term, range);
          const double value = apply(r.term, def[u], v);
          if (kp) gain[3 * u] = value;
          bias[3 * u + (kp ? 1 : 2)] = -value;
        }
        continue;
      }
      std::vector<double>& f = *storage(p, r.term.field);
      double* row_i = f.data() + i * def.size();
      for (int row : r.rows)
        for (const auto& [axis, range] : r.term.ranges) {
          const size_t k = static_cast<size_t>(row) * r.cols + axis;
          const double v = r.term.shared ? shared[axis] : draw(rng, r.term, range);
          row_i[k] = apply(r.term, def[k], v);
        }
    }
  }
  if (needs_set_const) {
    // mj_setConst's constants per env, from the env's own masses, inertias and armature.
    physics::Data<double> scratch(m, 1);
    const physics::ModelView<double> base = physics::view_of(m);
    const physics::EnvParamsView<double> view = physics::params_view(p, m);
    for (int64_t i = 0; i < n; ++i) {
      physics::ModelView<double> v = base;
      view.apply(v, i);
      physics::set_const(
          v, m, scratch,
          physics::DerivedConstants{p.body_subtreemass.data() + i * m.body_subtreemass.size(),
                                    p.dof_invweight0.data() + i * m.dof_invweight0.size(),
                                    p.body_invweight0.data() + i * m.body_invweight0.size(),
                                    p.tendon_invweight0.data() + i * m.tendon_invweight0.size(),
                                    p.meaninertia.data() + i});
    }
  }
  return p;
}

}  // namespace myriad::envs
