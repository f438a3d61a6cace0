#include "physics/scene_edits.h"

#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <stdexcept>

namespace myriad::physics {
namespace {

constexpr const char* kEditPrefix = "myriad:";

// The folder "mjlab:" paths are in: $MYRIAD_MJLAB_DIR, else the package the build found.
std::string mjlab_dir() {
  if (const char* env = std::getenv("MYRIAD_MJLAB_DIR"); env && *env) return env;
#ifdef MYRIAD_MJLAB_DIR
  return MYRIAD_MJLAB_DIR;
#else
  return "";
#endif
}

// How many values an attribute takes (at least, at most) and whether they are integers.
struct Attribute {
  const char* element;
  const char* name;
  int min_values, max_values;
  bool integer;
};
constexpr Attribute kAttributes[] = {
    {"joint", "armature", 1, 1, false},     {"joint", "damping", 1, 1, false},
    {"joint", "frictionloss", 1, 1, false}, {"joint", "stiffness", 1, 1, false},
    {"geom", "contype", 1, 1, true},        {"geom", "conaffinity", 1, 1, true},
    {"geom", "condim", 1, 1, true},         {"geom", "priority", 1, 1, true},
    {"geom", "friction", 1, 3, false},      {"geom", "solref", 2, 2, false},
    {"geom", "solimp", 5, 5, false},        {"geom", "solmix", 1, 1, false},
    {"geom", "margin", 1, 1, false},        {"geom", "gap", 1, 1, false}};

std::string attribute_list(const std::string& element) {
  std::string out;
  for (const Attribute& a : kAttributes)
    if (element == a.element) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

void set_values(double* dst, const std::vector<double>& v) {
  for (size_t k = 0; k < v.size(); ++k) dst[k] = v[k];
}

// Applies one edit to one element of the spec.
void apply(const SceneEdit& e, mjsElement* element) {
  const std::vector<double>& v = e.values;
  if (e.element == "joint") {
    mjsJoint* j = mjs_asJoint(element);
    if (e.attribute == "armature") j->armature = v[0];
    if (e.attribute == "damping") j->damping[0] = v[0];
    if (e.attribute == "frictionloss") j->frictionloss = v[0];
    if (e.attribute == "stiffness") j->stiffness[0] = v[0];
    return;
  }
  mjsGeom* g = mjs_asGeom(element);
  if (e.attribute == "contype") g->contype = static_cast<int>(v[0]);
  if (e.attribute == "conaffinity") g->conaffinity = static_cast<int>(v[0]);
  if (e.attribute == "condim") g->condim = static_cast<int>(v[0]);
  if (e.attribute == "priority") g->priority = static_cast<int>(v[0]);
  if (e.attribute == "friction") set_values(g->friction, v);
  if (e.attribute == "solref") set_values(g->solref, v);
  if (e.attribute == "solimp") set_values(g->solimp, v);
  if (e.attribute == "solmix") g->solmix = v[0];
  if (e.attribute == "margin") g->margin = v[0];
  if (e.attribute == "gap") g->gap = v[0];
}

// Applies the edits to the spec; the first failure's message, or "".
std::string apply_all(mjSpec* spec, const std::vector<SceneEdit>& edits) {
  for (const SceneEdit& e : edits) {
    const mjtObj type = e.element == "joint" ? mjOBJ_JOINT : mjOBJ_GEOM;
    std::regex pattern;
    try {
      pattern = std::regex(e.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& err) {
      return "scene edit '" + e.numeric + "': the name pattern is not a regular expression (" +
             err.what() + ")";
    }
    int matched = 0;
    for (mjsElement* el = mjs_firstElement(spec, type); el; el = mjs_nextElement(spec, el)) {
      const char* name = mjs_getString(mjs_getName(el));
      if (name && std::regex_match(name, pattern)) {
        apply(e, el);
        ++matched;
      }
    }
    if (matched == 0) return "scene edit '" + e.numeric + "': no " + e.element + " name matches";
  }
  return "";
}

}  // namespace

std::string with_package_paths(const std::string& path, const std::string& text) {
  static const std::regex package_file(R"(file\s*=\s*(["'])mjlab:([^"']*)\1)");
  std::string out;
  std::string::const_iterator last = text.begin();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), package_file);
       it != std::sregex_iterator(); ++it) {
    const std::string dir = mjlab_dir();
    const std::string named = "'mjlab:" + (*it)[2].str() + "'";
    if (dir.empty() || !std::filesystem::is_directory(dir))
      throw std::invalid_argument(
          "cannot load MJCF '" + path + "': it names " + named +
          " but the mjlab package was not found" + (dir.empty() ? "" : " (in '" + dir + "')") +
          "; install it with pip install mjlab==1.6.0 --no-deps (bash scripts/install-deps.sh "
          "does) or set MYRIAD_MJLAB_DIR to its folder");
    const std::string file = (std::filesystem::path(dir) / (*it)[2].str()).string();
    if (!std::filesystem::is_regular_file(file))
      throw std::invalid_argument("cannot load MJCF '" + path + "': " + named + ": no such file '" +
                                  file + "'");
    out.append(last, (*it)[0].first);
    out += "file=\"" + file + "\"";
    last = (*it)[0].second;
  }
  out.append(last, text.end());
  return out;
}

bool has_scene_edits(const mjModel* m) {
  for (int i = 0; i < m->nnumeric; ++i)
    if (std::strncmp(m->names + m->name_numericadr[i], kEditPrefix, std::strlen(kEditPrefix)) == 0)
      return true;
  return false;
}

std::vector<SceneEdit> scene_edits(const mjModel* m) {
  std::vector<SceneEdit> edits;
  for (int i = 0; i < m->nnumeric; ++i) {
    const std::string name = m->names + m->name_numericadr[i];
    if (name.rfind(kEditPrefix, 0) != 0) continue;
    SceneEdit e;
    e.numeric = name;
    const std::string spec = name.substr(std::strlen(kEditPrefix));
    const size_t a = spec.find(' ');
    const size_t b = a == std::string::npos ? a : spec.find(' ', a + 1);
    if (b == std::string::npos)
      throw std::invalid_argument("scene edit '" + name +
                                  "': expected \"myriad:<joint|geom> <attribute> <name pattern>\"");
    e.element = spec.substr(0, a);
    e.attribute = spec.substr(a + 1, b - a - 1);
    e.pattern = spec.substr(b + 1);
    if (e.element != "joint" && e.element != "geom")
      throw std::invalid_argument("scene edit '" + name + "': element '" + e.element +
                                  "' (valid: joint, geom)");
    const Attribute* attribute = nullptr;
    for (const Attribute& at : kAttributes)
      if (e.element == at.element && e.attribute == at.name) attribute = &at;
    if (!attribute)
      throw std::invalid_argument("scene edit '" + name + "': " + e.element + " attribute '" +
                                  e.attribute + "' (valid: " + attribute_list(e.element) + ")");
    e.values.assign(m->numeric_data + m->numeric_adr[i],
                    m->numeric_data + m->numeric_adr[i] + m->numeric_size[i]);
    const int n = static_cast<int>(e.values.size());
    if (n < attribute->min_values || n > attribute->max_values)
      throw std::invalid_argument("scene edit '" + name + "': " + std::to_string(n) +
                                  " values, expected " + std::to_string(attribute->min_values) +
                                  (attribute->max_values > attribute->min_values
                                       ? " to " + std::to_string(attribute->max_values)
                                       : std::string()));
    for (double x : e.values)
      if (!std::isfinite(x) || (attribute->integer && x != std::floor(x)))
        throw std::invalid_argument("scene edit '" + name + "': value " + std::to_string(x) +
                                    (attribute->integer ? " is not an integer" : " is not finite"));
    edits.push_back(e);
  }
  return edits;
}

mjModel* compile_with_edits(const std::string& name, const mjVFS* vfs,
                            const std::vector<SceneEdit>& edits, char* error, int error_size) {
  mjSpec* spec = mj_parseXML(name.c_str(), vfs, error, error_size);
  if (!spec) return nullptr;
  const std::string failed = apply_all(spec, edits);
  mjModel* m = nullptr;
  if (failed.empty()) {
    m = mj_compile(spec, vfs);
    if (!m) std::snprintf(error, error_size, "%s", mjs_getError(spec));
  } else {
    std::snprintf(error, error_size, "%s", failed.c_str());
  }
  mj_deleteSpec(spec);
  return m;
}

}  // namespace myriad::physics
