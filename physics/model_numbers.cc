#include "physics/model_numbers.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "myriad/physics/import.h"
#include "physics/collision/contact.h"

namespace myriad::physics {
namespace {

const NumberField kFields[] = {
#define MYRIAD_X(array, rows, width, element, attribute, rule) \
  {#array,                                                     \
   NumberElement::element,                                     \
   attribute,                                                  \
   NumberRule::rule,                                           \
   width,                                                      \
   [](const mjModel* m) { return static_cast<int>(m->rows); }, \
   [](mjModel* m) { return m->array; }},
    MYRIAD_MODEL_NUMBERS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(field, width, attribute, rule) \
  {"opt." #field,                               \
   NumberElement::kOption,                      \
   attribute,                                   \
   NumberRule::rule,                            \
   width,                                       \
   [](const mjModel*) { return 1; },            \
   [](mjModel* m) { return reinterpret_cast<mjtNum*>(&m->opt.field); }},
        MYRIAD_OPTION_NUMBERS(MYRIAD_X)
#undef MYRIAD_X
};

// Each rule's bounds (inclusive) and how a message states them, in NumberRule's order.
struct RuleBounds {
  double low, high;
  const char* text;
};
constexpr RuleBounds kRules[] = {
    {-1e6, 1e6, "lengths and positions are within +-1e6 m"},
    {0, 1e6, "sizes are 0 to 1e6 m"},
    {-1 - 1e-6, 1 + 1e-6, "orientations and axes are unit once compiled"},
    {0, 1e9, "masses are 0 to 1e9 kg"},
    {0, 1e15, "inertias and armatures are 0 to 1e15 kg m^2 (kg on slide joints)"},
    {0, 1e9, "coefficients (damping, stiffness, friction, ...) are 0 to 1e9"},
    {-1e9, 1e9, "parameters (gear, gains, ranges, solref, solimp, ...) are within +-1e9"},
    {-1e4, 1e4, "accelerations are within +-1e4 m/s^2"},
    {1e-6, 1, "the timestep is 1e-6 to 1 s"},
};
static_assert(sizeof kRules / sizeof kRules[0] == static_cast<int>(NumberRule::kTimestep) + 1,
              "one bound per NumberRule");

// Whether x keeps the rule (NaN fails every comparison, so fails every rule).
bool keeps(NumberRule rule, double x) {
  const RuleBounds& r = kRules[static_cast<int>(rule)];
  return x >= r.low && x <= r.high;
}

std::string name_at(const mjModel* m, int adr) { return std::string(m->names + adr); }

// "'torso'", "the world", or "3" for an unnamed body.
std::string body_label(const mjModel* m, int b) {
  const std::string name = name_at(m, m->name_bodyadr[b]);
  if (!name.empty()) return "'" + name + "'";
  return b == 0 ? std::string("the world") : std::to_string(b);
}

std::string joint_label(const mjModel* m, int j) {
  static const char* const kTypes[] = {"free", "ball", "slide", "hinge"};
  const std::string name = name_at(m, m->name_jntadr[j]);
  const int type = m->jnt_type[j];
  const std::string what = std::string(type >= 0 && type < 4 ? kTypes[type] : "joint") + ", body " +
                           body_label(m, m->jnt_bodyid[j]);
  return "joint " + (name.empty() ? std::to_string(j) : "'" + name + "'") + " (" + what + ")";
}

// A named element by its name, an unnamed one by its index (and what places it).
std::string element_label(const mjModel* m, NumberElement e, int row) {
  auto named = [&](const char* kind, const int* adr) {
    const std::string name = name_at(m, adr[row]);
    return std::string(kind) + " " + (name.empty() ? std::to_string(row) : "'" + name + "'");
  };
  switch (e) {
    case NumberElement::kOption:
      return "option";
    case NumberElement::kBody:
      return row == 0 ? std::string("worldbody") : "body " + body_label(m, row);
    case NumberElement::kJoint:
      return joint_label(m, row);
    case NumberElement::kDof:
      return joint_label(m, m->dof_jntid[row]);
    case NumberElement::kQpos:
      for (int j = m->njnt - 1; j >= 0; --j)
        if (m->jnt_qposadr[j] <= row) return joint_label(m, j);
      return "qpos " + std::to_string(row);
    case NumberElement::kGeom: {
      const int type = m->geom_type[row];
      return named("geom", m->name_geomadr) + " (" + collision::geom_type_name(type) + ", body " +
             body_label(m, m->geom_bodyid[row]) + ")";
    }
    case NumberElement::kSite:
      return named("site", m->name_siteadr) + " (body " + body_label(m, m->site_bodyid[row]) + ")";
    case NumberElement::kPair:
      return "contact pair " + std::to_string(row);
    case NumberElement::kEquality:
      return named("equality", m->name_eqadr);
    case NumberElement::kTendon:
      return named("tendon", m->name_tendonadr);
    case NumberElement::kActuator:
      return named("actuator", m->name_actuatoradr);
  }
  return "element";
}

std::string values_text(const mjtNum* v, int width) {
  std::string s;
  char buf[32];
  for (int k = 0; k < width; ++k) {
    std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(v[k]));
    s += (k ? " " : "") + std::string(buf);
  }
  return s;
}

// Whether every whitespace-separated token of v is a number, one of them NaN or infinite.
bool all_numbers_one_nonfinite(const std::string& v) {
  bool nonfinite = false, any = false;
  const char* p = v.c_str();
  while (*p) {
    while (*p && std::isspace(static_cast<unsigned char>(*p))) ++p;
    if (!*p) break;
    char* end = nullptr;
    const double x = std::strtod(p, &end);
    if (end == p || (*end && !std::isspace(static_cast<unsigned char>(*end)))) return false;
    any = true;
    nonfinite = nonfinite || !std::isfinite(x);
    p = end;
  }
  return any && nonfinite;
}

}  // namespace

std::string first_nonfinite_attribute(const std::string& xml) {
  size_t i = 0;
  int line = 1;
  auto advance_to = [&](size_t to) {
    for (; i < to && i < xml.size(); ++i) line += xml[i] == '\n';
  };
  while (i < xml.size()) {
    const size_t open = xml.find('<', i);
    if (open == std::string::npos) break;
    advance_to(open);
    if (xml.compare(i, 4, "<!--") == 0) {  // a comment
      const size_t close = xml.find("-->", i);
      advance_to(close == std::string::npos ? xml.size() : close + 3);
      continue;
    }
    ++i;
    if (i >= xml.size() || !std::isalpha(static_cast<unsigned char>(xml[i]))) continue;
    const size_t tag_end = xml.find_first_of(" \t\r\n/>", i);
    const std::string tag = xml.substr(i, tag_end - i);
    const int tag_line = line;
    advance_to(tag_end);
    std::string name, bad;
    // Attributes key="value" (or 'value') up to the tag's end.
    while (i < xml.size() && xml[i] != '>') {
      const size_t eq = xml.find_first_of("=>", i);
      if (eq == std::string::npos || xml[eq] == '>') break;
      size_t k0 = xml.find_last_not_of(" \t\r\n", eq - 1);
      size_t k1 = k0;
      while (k1 > i && !std::isspace(static_cast<unsigned char>(xml[k1 - 1]))) --k1;
      const std::string key = xml.substr(k1, k0 + 1 - k1);
      const size_t q = xml.find_first_of("\"'", eq);
      if (q == std::string::npos) break;
      const size_t q_end = xml.find(xml[q], q + 1);
      if (q_end == std::string::npos) break;
      const std::string value = xml.substr(q + 1, q_end - q - 1);
      advance_to(q_end + 1);
      if (key == "name")
        name = value;
      else if (bad.empty() && key != "class" && key != "childclass" &&
               all_numbers_one_nonfinite(value))
        bad = key + " = \"" + value + "\"";
    }
    if (!bad.empty())
      return tag + (name.empty() ? std::string() : " '" + name + "'") + " (line " +
             std::to_string(tag_line) + "): " + bad + " is not finite";
  }
  return "";
}

const NumberField* number_fields(int* count) {
  *count = static_cast<int>(sizeof kFields / sizeof kFields[0]);
  return kFields;
}

const char* number_rule_text(NumberRule rule) { return kRules[static_cast<int>(rule)].text; }

void check_model_numbers(const mjModel* m) {
  // The accessors take a mutable model (the tests write through them); this only reads.
  mjModel* model = const_cast<mjModel*>(m);
  for (const NumberField& f : kFields) {
    const int rows = f.rows(m);
    const mjtNum* values = f.values(model);
    for (int i = 0; i < rows; ++i)
      for (int k = 0; k < f.width; ++k) {
        const double x = values[static_cast<int64_t>(i) * f.width + k];
        if (keeps(f.rule, x)) continue;
        const mjtNum* row = values + static_cast<int64_t>(i) * f.width;
        const std::string problem =
            std::isfinite(x) ? std::string("is out of range (") + number_rule_text(f.rule) + ")"
                             : std::string("is not finite");
        throw std::invalid_argument(element_label(m, f.element, i) + ": " + f.attribute + " = \"" +
                                    values_text(row, f.width) + "\" " + problem);
      }
  }
}

}  // namespace myriad::physics
