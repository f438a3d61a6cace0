#include "learner/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "envs/randomization.h"
#include "myriad/registry.h"

namespace myriad::learner {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::invalid_argument("config key '" + path + "': " + what);
}

std::string scalar_text(const YAML::Node& n) {
  if (!n.IsScalar()) return n.IsMap() ? "a mapping" : n.IsSequence() ? "a list" : "null";
  return "'" + n.Scalar() + "'";
}

template <class T>
T read_as(const YAML::Node& n, const std::string& path, const char* type) {
  if (!n.IsScalar()) fail(path, std::string("expected ") + type + ", got " + scalar_text(n));
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    fail(path, std::string("expected ") + type + ", got " + scalar_text(n));
  }
}

// One config field: how to read it from YAML, how to write it back, what values are valid.
struct Field {
  std::string path;
  std::function<void(const YAML::Node&)> read;
  std::function<YAML::Node()> write;
};

using Check = std::function<std::string(double)>;  // "" when valid, else the complaint

Check positive() {
  return [](double v) { return v > 0 ? "" : "must be > 0"; };
}
Check non_negative() {
  return [](double v) { return v >= 0 ? "" : "must be >= 0"; };
}
Check unit_interval() {
  return [](double v) { return v >= 0 && v <= 1 ? "" : "must lie in [0, 1]"; };
}

// An integer as written, exactly: digits parse as a 64-bit integer (no rounding through a
// double, so 2**63 is out of range instead of wrapped); a number such as 1e6 must be whole and
// within 2**53. Then it must fit T; unsigned fields (the seed) take 0 .. 2**63-1, what a
// checkpoint stores.
template <class T>
T read_integer(const YAML::Node& n, const std::string& path) {
  const std::string expected = "expected an integer, got ";
  if (!n.IsScalar()) fail(path, expected + scalar_text(n));
  const std::string& s = n.Scalar();
  const char* first = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  const char* last = s.data() + s.size();
  int64_t v = 0;
  const auto [end, err] = std::from_chars(first, last, v);
  if (end != last || err == std::errc::invalid_argument) {
    const double d = read_as<double>(n, path, "an integer");
    if (!std::isfinite(d) || d != std::floor(d)) fail(path, expected + scalar_text(n));
    if (std::abs(d) > 9007199254740992.0)
      fail(path, "write integers above 2**53 as digits, got " + scalar_text(n));
    v = static_cast<int64_t>(d);
  } else if (err == std::errc::result_out_of_range) {
    fail(path, "out of the 64-bit integer range, got " + scalar_text(n));
  }
  const int64_t lo = std::is_signed_v<T> ? static_cast<int64_t>(std::numeric_limits<T>::min()) : 0;
  const int64_t hi = sizeof(T) >= sizeof(int64_t)
                         ? std::numeric_limits<int64_t>::max()
                         : static_cast<int64_t>(std::numeric_limits<T>::max());
  if (v < lo || v > hi)
    fail(path, "must lie in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                   scalar_text(n));
  return static_cast<T>(v);
}

template <class T>
Field number(const std::string& path, T* target, Check check = nullptr) {
  return {path,
          [=](const YAML::Node& n) {
            const char* type = std::is_integral_v<T> ? "an integer" : "a number";
            T v;
            if constexpr (std::is_integral_v<T>) {
              v = read_integer<T>(n, path);
            } else {
              v = read_as<T>(n, path, type);
            }
            if (!std::isfinite(static_cast<double>(v))) fail(path, "must be finite");
            if (check) {
              const std::string why = check(static_cast<double>(v));
              if (!why.empty()) fail(path, why + ", got " + scalar_text(n));
            }
            *target = v;
          },
          [=] { return YAML::Node(*target); }};
}

Field flag(const std::string& path, bool* target) {
  return {path, [=](const YAML::Node& n) { *target = read_as<bool>(n, path, "true or false"); },
          [=] { return YAML::Node(*target); }};
}

Field text(const std::string& path, std::string* target, std::vector<std::string> choices = {}) {
  return {path,
          [=](const YAML::Node& n) {
            const auto v = read_as<std::string>(n, path, "a string");
            if (!choices.empty() && std::find(choices.begin(), choices.end(), v) == choices.end()) {
              std::string valid;
              for (const auto& c : choices) valid += (valid.empty() ? "" : ", ") + c;
              fail(path, "'" + v + "' is not one of: " + valid);
            }
            *target = v;
          },
          [=] { return YAML::Node(*target); }};
}

Field int_list(const std::string& path, std::vector<int64_t>* target) {
  return {path,
          [=](const YAML::Node& n) {
            if (!n.IsSequence() || n.size() == 0)
              fail(path, "expected a non-empty list of positive integers, got " + scalar_text(n));
            std::vector<int64_t> v;
            for (size_t k = 0; k < n.size(); ++k) {
              const auto item = path + "[" + std::to_string(k) + "]";
              const auto x = read_as<int64_t>(n[k], item, "a positive integer");
              if (x <= 0) fail(item, "must be > 0");
              v.push_back(x);
            }
            *target = v;
          },
          [=] {
            YAML::Node list(YAML::NodeType::Sequence);
            for (auto x : *target) list.push_back(x);
            list.SetStyle(YAML::EmitterStyle::Flow);
            return list;
          }};
}

Field text_list(const std::string& path, std::vector<std::string>* target) {
  return {path,
          [=](const YAML::Node& n) {
            if (n.IsNull()) return target->clear();
            if (!n.IsSequence()) fail(path, "expected a list of names, got " + scalar_text(n));
            std::vector<std::string> v;
            for (size_t k = 0; k < n.size(); ++k) {
              const auto item = path + "[" + std::to_string(k) + "]";
              const auto name = read_as<std::string>(n[k], item, "a name");
              if (std::find(v.begin(), v.end(), name) != v.end())
                fail(item, "'" + name + "' appears twice in the list");
              v.push_back(name);
            }
            *target = v;
          },
          [=] {
            YAML::Node list(YAML::NodeType::Sequence);
            for (const auto& x : *target) list.push_back(x);
            list.SetStyle(YAML::EmitterStyle::Flow);
            return list;
          }};
}

// The shortest text that reads back as the same double ("0.8", not "0.80000000000000004").
std::string shortest(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// env.options: Gymnasium-style keyword arguments. A number (or a YAML boolean, as 1/0) goes to
// *numbers; a list [low, high] of two numbers to *texts as "low,high" (a range, as the
// locomotion envs' healthy_z_range); any other scalar (a name) to *texts as written.
Field env_options(const std::string& path, std::map<std::string, double>* numbers,
                  std::map<std::string, std::string>* texts) {
  return {path,
          [=](const YAML::Node& n) {
            numbers->clear();
            texts->clear();
            if (n.IsNull()) return;
            if (!n.IsMap())
              fail(path, "expected a mapping of option names to values, got " + scalar_text(n));
            for (const auto& kv : n) {
              const auto key = kv.first.as<std::string>();
              const std::string at = path + "." + key;
              if (numbers->count(key) || texts->count(key))
                fail(at, "appears twice in the same mapping");
              const YAML::Node& v = kv.second;
              if (v.IsSequence()) {
                if (v.size() != 2) fail(at, "expected a number or a range [low, high]");
                const double lo = read_as<double>(v[0], at + "[0]", "a number");
                const double hi = read_as<double>(v[1], at + "[1]", "a number");
                (*texts)[key] = shortest(lo) + "," + shortest(hi);
                continue;
              }
              if (!v.IsScalar()) fail(at, "expected a number, a range [low, high] or a name");
              double x = 0;
              bool b = false;
              if (YAML::convert<double>::decode(v, x)) {
                if (!std::isfinite(x)) fail(at, "must be finite");
                (*numbers)[key] = x;
              } else if (YAML::convert<bool>::decode(v, b)) {
                (*numbers)[key] = b ? 1 : 0;
              } else {
                (*texts)[key] = v.Scalar();
              }
            }
          },
          [=] {
            YAML::Node m(YAML::NodeType::Map);
            for (const auto& [k, v] : *numbers) m[k] = v;
            for (const auto& [k, v] : *texts) m[k] = v;
            return m;
          }};
}

// YAML <-> JSON for env.randomize (the env takes its terms as JSON text): mappings, lists,
// booleans, numbers and names.
nlohmann::json to_json(const YAML::Node& n, const std::string& path) {
  if (n.IsMap()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& kv : n) {
      const auto key = kv.first.as<std::string>();
      o[key] = to_json(kv.second, path + "." + key);
    }
    return o;
  }
  if (n.IsSequence()) {
    nlohmann::json a = nlohmann::json::array();
    for (size_t k = 0; k < n.size(); ++k)
      a.push_back(to_json(n[k], path + "[" + std::to_string(k) + "]"));
    return a;
  }
  if (!n.IsScalar()) return nullptr;
  bool b = false;
  double x = 0;
  int64_t i = 0;
  if (n.Tag() != "!" && YAML::convert<bool>::decode(n, b)) return b;
  if (n.Tag() != "!" && YAML::convert<int64_t>::decode(n, i)) return i;
  if (n.Tag() != "!" && YAML::convert<double>::decode(n, x)) {
    if (!std::isfinite(x)) fail(path, "must be finite, got " + scalar_text(n));
    return x;
  }
  return n.Scalar();
}
YAML::Node to_yaml_node(const nlohmann::json& j) {
  if (j.is_object()) {
    YAML::Node m(YAML::NodeType::Map);
    for (const auto& [k, v] : j.items()) m[k] = to_yaml_node(v);
    return m;
  }
  if (j.is_array()) {
    YAML::Node l(YAML::NodeType::Sequence);
    for (const auto& v : j) l.push_back(to_yaml_node(v));
    l.SetStyle(YAML::EmitterStyle::Flow);
    return l;
  }
  if (j.is_boolean()) return YAML::Node(j.get<bool>());
  if (j.is_number()) return YAML::Node(j.get<double>());
  if (j.is_string()) return YAML::Node(j.get<std::string>());
  return YAML::Node();
}

// env.randomize: domain randomization terms (envs/randomization.h), checked when read; kept as
// the JSON text the env takes.
Field env_randomize(const std::string& path, std::string* json_text) {
  return {path,
          [=](const YAML::Node& n) {
            json_text->clear();
            if (n.IsNull() || (n.IsMap() && n.size() == 0)) return;
            if (!n.IsMap())
              fail(path, "expected a mapping of term names to terms, got " + scalar_text(n));
            const std::string text = to_json(n, path).dump();
            try {
              envs::parse_randomization(text);
            } catch (const std::invalid_argument& e) {
              // "randomize.<term>.<key>: what" => config key 'env.randomize.<term>.<key>': what
              const std::string what = e.what();
              const size_t colon = what.find(": ");
              if (colon == std::string::npos) fail(path, what);
              throw std::invalid_argument("config key 'env." + what.substr(0, colon) +
                                          "': " + what.substr(colon + 2));
            }
            *json_text = text;
          },
          [=] {
            if (json_text->empty()) return YAML::Node(YAML::NodeType::Map);
            return to_yaml_node(nlohmann::json::parse(*json_text));
          }};
}

// The one list of every config key.
std::vector<Field> fields(TrainConfig& c) {
  return {
      text("env.id", &c.env.id),
      number("env.num_envs", &c.env.num_envs, positive()),
      text("env.device", &c.env.device, {"cpu", "cuda", "auto"}),
      env_options("env.options", &c.env.options, &c.env.text_options),
      env_randomize("env.randomize", &c.env.randomize),
      text("env.xml", &c.env.xml),
      text("env.physics", &c.env.physics, {"myriad", "mujoco"}),
      number("ppo.num_steps", &c.ppo.num_steps, positive()),
      number("ppo.learning_rate", &c.ppo.learning_rate, positive()),
      text("ppo.lr_schedule", &c.ppo.lr_schedule, {"constant", "linear", "kl_adaptive"}),
      number("ppo.target_kl", &c.ppo.target_kl, positive()),
      number("ppo.gamma", &c.ppo.gamma, unit_interval()),
      number("ppo.gae_lambda", &c.ppo.gae_lambda, unit_interval()),
      number("ppo.num_minibatches", &c.ppo.num_minibatches, positive()),
      number("ppo.update_epochs", &c.ppo.update_epochs, positive()),
      number("ppo.clip_coef", &c.ppo.clip_coef, positive()),
      flag("ppo.clip_vloss", &c.ppo.clip_vloss),
      number("ppo.ent_coef", &c.ppo.ent_coef, non_negative()),
      number("ppo.vf_coef", &c.ppo.vf_coef, non_negative()),
      number("ppo.max_grad_norm", &c.ppo.max_grad_norm, positive()),
      flag("ppo.norm_adv", &c.ppo.norm_adv),
      flag("ppo.normalize_obs", &c.ppo.normalize_obs),
      flag("ppo.normalize_reward", &c.ppo.normalize_reward),
      number("ppo.obs_clip", &c.ppo.obs_clip, positive()),
      number("ppo.reward_clip", &c.ppo.reward_clip, positive()),
      int_list("ppo.hidden_sizes", &c.ppo.hidden_sizes),
      text("ppo.activation", &c.ppo.activation, {"tanh", "relu", "elu"}),
      number("ppo.init_log_std", &c.ppo.init_log_std),
      flag("agents.agent_id", &c.agents.agent_id),
      flag("agents.central_value", &c.agents.central_value),
      text_list("agents.random_teams", &c.agents.random_teams),
      number("distributed.timeout_seconds", &c.distributed.timeout_seconds, positive()),
      number("run.total_env_steps", &c.run.total_env_steps, positive()),
      number("run.max_minutes", &c.run.max_minutes, non_negative()),
      flag("run.random_episode_starts", &c.run.random_episode_starts),
      number("run.seed", &c.run.seed),
      number("run.threads", &c.run.threads, non_negative()),
      number("run.learner_threads", &c.run.learner_threads, non_negative()),
      text("run.learner_math", &c.run.learner_math, {"auto", "fused", "libtorch"}),
      number("run.eval_episodes", &c.run.eval_episodes, non_negative()),
      number("run.checkpoint_every", &c.run.checkpoint_every, non_negative()),
      number("run.log_every_seconds", &c.run.log_every_seconds, positive()),
      flag("run.stop_when_solved", &c.run.stop_when_solved),
      text("run.resume", &c.run.resume),
      flag("eval.record", &c.eval.record),
      number("eval.record_envs", &c.eval.record_envs, positive()),
      number("eval.record_episodes", &c.eval.record_episodes, positive()),
      text("serve.host", &c.serve.host),
      number("serve.port", &c.serve.port,
             [](double v) { return v >= 0 && v <= 65535 ? "" : "must lie in [0, 65535]"; }),
      number("serve.num_envs", &c.serve.num_envs, non_negative()),
      number("serve.chunks_per_update", &c.serve.chunks_per_update, positive()),
      number("serve.max_lag", &c.serve.max_lag, non_negative()),
      number("serve.snapshot_every", &c.serve.snapshot_every, positive()),
      number("serve.max_snapshots", &c.serve.max_snapshots,
             [](double v) { return v == 0 || v >= 2 ? "" : "must be 0 (no cap) or >= 2"; }),
      text("serve.opponents", &c.serve.opponents, {"latest", "uniform", "pfsp"}),
      text("serve.pfsp_weighting", &c.serve.pfsp_weighting, {"hard", "variance"}),
      number("serve.pfsp_p", &c.serve.pfsp_p, non_negative()),
      number("serve.elo_k", &c.serve.elo_k, positive()),
      number("serve.elo_initial", &c.serve.elo_initial),
  };
}

// Walks the YAML tree; every leaf must be a known field, every group a mapping.
void apply(const YAML::Node& node, const std::string& prefix, std::vector<Field>& table) {
  if (!node.IsMap())
    fail(prefix.empty() ? "<top level>" : prefix, "expected a mapping, got " + scalar_text(node));
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    // YAML forbids a key twice in one mapping; yaml-cpp keeps both and the last would win.
    if (!seen.insert(key).second) fail(path, "appears twice in the same mapping");
    auto it =
        std::find_if(table.begin(), table.end(), [&](const Field& f) { return f.path == path; });
    if (it != table.end()) {
      it->read(kv.second);
      continue;
    }
    const bool is_group = std::any_of(table.begin(), table.end(), [&](const Field& f) {
      return f.path.rfind(path + ".", 0) == 0;
    });
    if (is_group) {
      apply(kv.second, path, table);
      continue;
    }
    std::string valid;
    for (const auto& f : table) {
      const bool same_group = f.path.rfind(prefix.empty() ? "" : prefix + ".", 0) == 0;
      if (same_group) valid += (valid.empty() ? "" : ", ") + f.path;
    }
    fail(path, "unknown key (valid keys: " + valid + ")");
  }
}

void set_path(YAML::Node root, const std::string& path, const YAML::Node& value) {
  const auto dot = path.find('.');
  if (dot == std::string::npos) {
    root[path] = value;
    return;
  }
  YAML::Node child = root[path.substr(0, dot)];
  if (!child.IsDefined() || child.IsNull()) {
    root[path.substr(0, dot)] = YAML::Node(YAML::NodeType::Map);
    child = root[path.substr(0, dot)];
  }
  set_path(child, path.substr(dot + 1), value);
}

void validate(const TrainConfig& c) {
  if (c.env.num_envs > std::numeric_limits<int64_t>::max() / c.ppo.num_steps)
    fail("env.num_envs", "times ppo.num_steps overflows a 64-bit count");
  const int64_t batch = c.env.num_envs * c.ppo.num_steps;
  if (batch % c.ppo.num_minibatches != 0)
    fail("ppo.num_minibatches",
         "must divide env.num_envs * ppo.num_steps = " + std::to_string(batch) + ", got " +
             std::to_string(c.ppo.num_minibatches));
  if (batch / c.ppo.num_minibatches < 2)
    fail("ppo.num_minibatches",
         "gives minibatches of " + std::to_string(batch / c.ppo.num_minibatches) +
             " sample (env.num_envs * ppo.num_steps = " + std::to_string(batch) +
             "); a minibatch needs at least 2 (advantage normalization divides by their std)");
  if (c.ppo.hidden_sizes.empty()) fail("ppo.hidden_sizes", "must not be empty");
}

}  // namespace

TrainConfig parse_config(const std::string& yaml_text, const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(std::string("config is not valid YAML: ") + e.what());
  }
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("override '" + o + "' is not of the form key.path=value");
    YAML::Node value;
    try {
      value = YAML::Load(o.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      throw std::invalid_argument("override '" + o + "': value is not valid YAML");
    }
    if (!root.IsMap()) fail("<top level>", "expected a mapping");
    set_path(root, o.substr(0, eq), value);
  }
  TrainConfig config;
  auto table = fields(config);
  apply(root, "", table);
  validate(config);
  return config;
}

TrainConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read config file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), overrides);
}

std::map<std::string, std::string> env_text_options(const EnvConfig& env) {
  std::map<std::string, std::string> text = env.text_options;
  if (!env.randomize.empty()) text["randomize"] = env.randomize;
  if (!env.xml.empty()) {
    text["xml"] = env.xml;
    text["physics"] = env.physics;
    return text;
  }
  // The physics envs (envs/locomotion/) take the sim by name too.
  if (envs::spec_of(env.id).physics_env) text["physics"] = env.physics;
  return text;
}

std::string to_yaml(const TrainConfig& config) {
  TrainConfig copy = config;
  YAML::Node root(YAML::NodeType::Map);
  for (const auto& f : fields(copy)) set_path(root, f.path, f.write());
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

std::vector<std::pair<std::string, std::string>> settings(const TrainConfig& config) {
  TrainConfig copy = config;
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : fields(copy)) {
    YAML::Emitter e;
    e << YAML::Flow << f.write();
    std::string v = e.c_str();
    // One line per setting, whatever a string holds.
    for (size_t k = 0; (k = v.find('\n', k)) != std::string::npos; k += 2) v.replace(k, 1, "\\n");
    out.emplace_back(f.path, v);
  }
  return out;
}

}  // namespace myriad::learner
