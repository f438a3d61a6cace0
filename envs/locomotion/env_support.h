// What the locomotion envs share: option parsing by Gymnasium's keyword names, info keys, and
// the small terms their rewards and resets are made of (control cost, reset noise, ranges).
// The per-env functions are MYRIAD_HD and templated on the sim's scalar T (float or double).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "envs/physics_frame.h"
#include "myriad/hd.h"
#include "myriad/physics/data.h"
#include "myriad/physics/model.h"
#include "myriad/rng.h"
#include "physics/model_view.h"

namespace myriad::envs::locomotion {

using physics::EnvData;
using physics::ModelView;

// One info key: its name (Gymnasium's) and how many values it holds (1, or e.g. the tendons).
struct InfoKey {
  std::string name;
  int width = 1;
};

// An option value as given: a number, or a range "lo,hi" (Gymnasium's tuples).
inline bool option_flag(const std::string& env, const std::string& key, double v) {
  if (v != 0.0 && v != 1.0)
    throw std::invalid_argument(env + " option " + key + " must be 0 or 1 (false or true), got " +
                                std::to_string(v));
  return v == 1.0;
}

inline double option_finite(const std::string& env, const std::string& key, double v) {
  if (!std::isfinite(v))
    throw std::invalid_argument(env + " option " + key + " must be finite, got " +
                                std::to_string(v));
  return v;
}

inline double option_nonnegative(const std::string& env, const std::string& key, double v) {
  if (!(v >= 0) || !std::isfinite(v))
    throw std::invalid_argument(env + " option " + key + " must be finite and >= 0, got " +
                                std::to_string(v));
  return v;
}

inline void option_range(const std::string& env, const std::string& key, double lo, double hi,
                         float out[2]) {
  if (std::isnan(lo) || std::isnan(hi) || !(lo <= hi))
    throw std::invalid_argument(env + " option " + key +
                                " must be a range (low, high) with low <= high, got (" +
                                std::to_string(lo) + ", " + std::to_string(hi) + ")");
  out[0] = static_cast<float>(lo);
  out[1] = static_cast<float>(hi);
}

// One option of an env: its name (Gymnasium's keyword argument), how its value is checked, and
// the member of the env's Params it sets. An env lists them once (options()); the framework
// derives the spec's option names and the parsing from that list.
template <class P>
struct Option {
  enum Kind { kFinite, kNonNegative, kFlag, kBodyIndex, kRange };
  const char* name;
  Kind kind;
  float P::*number = nullptr;      // kFinite, kNonNegative
  bool P::*flag = nullptr;         // kFlag: 0 or 1
  int P::*index = nullptr;         // kBodyIndex: a whole number >= 0 (checked against nbody later)
  float (P::*range)[2] = nullptr;  // kRange: "low,high" with low <= high
};
template <class P>
Option<P> finite(const char* name, float P::*m) {
  return {name, Option<P>::kFinite, m};
}
template <class P>
Option<P> nonnegative(const char* name, float P::*m) {
  return {name, Option<P>::kNonNegative, m};
}
template <class P>
Option<P> flag(const char* name, bool P::*m) {
  return {name, Option<P>::kFlag, nullptr, m};
}
template <class P>
Option<P> body_index(const char* name, int P::*m) {
  return {name, Option<P>::kBodyIndex, nullptr, nullptr, m};
}
template <class P>
Option<P> range(const char* name, float (P::*m)[2]) {
  return {name, Option<P>::kRange, nullptr, nullptr, nullptr, m};
}

template <class P>
std::vector<std::string> option_names(const std::vector<Option<P>>& options) {
  std::vector<std::string> names;
  for (const auto& o : options) names.push_back(o.name);
  return names;
}

// Sets the number option `key` of env `env` (false if it has none of that name; a range option
// given a number is an error naming it).
template <class P>
bool set_number_option(const std::vector<Option<P>>& options, const std::string& env, P& p,
                       const std::string& key, double v) {
  for (const auto& o : options) {
    if (key != o.name) continue;
    switch (o.kind) {
      case Option<P>::kFinite:
        p.*o.number = static_cast<float>(option_finite(env, key, v));
        return true;
      case Option<P>::kNonNegative:
        p.*o.number = static_cast<float>(option_nonnegative(env, key, v));
        return true;
      case Option<P>::kFlag:
        p.*o.flag = option_flag(env, key, v);
        return true;
      case Option<P>::kBodyIndex:
        if (!(v >= 0 && v < 1e6) || v != std::floor(v))
          throw std::invalid_argument(env + " option " + key + " must be a body index, got " +
                                      std::to_string(v));
        p.*o.index = static_cast<int>(v);
        return true;
      case Option<P>::kRange:
        throw std::invalid_argument(env + " option " + key +
                                    " is a range: give (low, high) or \"low,high\", got " +
                                    std::to_string(v));
    }
  }
  return false;
}

// Sets the range option `key` (false if the env has no range option of that name).
template <class P>
bool set_range_option(const std::vector<Option<P>>& options, const std::string& env, P& p,
                      const std::string& key, double lo, double hi) {
  for (const auto& o : options) {
    if (key != o.name || o.kind != Option<P>::kRange) continue;
    option_range(env, key, lo, hi, p.*o.range);
    return true;
  }
  return false;
}

// The body of a model by name (std::invalid_argument naming the model's bodies if absent).
inline int body_id(const physics::Model<double>& m, const std::string& env,
                   const std::string& name) {
  for (size_t b = 0; b < m.body_names.size(); ++b)
    if (m.body_names[b] == name) return static_cast<int>(b);
  std::string names;
  for (const auto& n : m.body_names) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument(env + ": the model has no body '" + name + "' (bodies: " + names +
                              ")");
}

// Refuses a model whose sizes the env's code assumes otherwise.
inline void require_sizes(const physics::Model<double>& m, const std::string& env, int nq, int nv,
                          int nu) {
  if (m.nq != nq || m.nv != nv || m.nu != nu)
    throw std::invalid_argument(env + " expects a model with nq " + std::to_string(nq) + ", nv " +
                                std::to_string(nv) + ", nu " + std::to_string(nu) + "; got " +
                                std::to_string(m.nq) + ", " + std::to_string(m.nv) + ", " +
                                std::to_string(m.nu));
}

// For drawing: qpos from an observation that starts with qpos[skip:] (the envs that leave out
// x, or x and y): the left-out coordinates at qpos0.
inline void qpos_from_prefix(const physics::Model<double>& m, int skip, const float* obs,
                             float* qpos) {
  for (int k = 0; k < m.nq; ++k)
    qpos[k] = k < skip ? static_cast<float>(m.qpos0[k]) : obs[k - skip];
}

// sum(action^2), Gymnasium's control cost before its weight, in the sim's precision.
template <class T>
MYRIAD_HD T squared_norm(const float* a, int n) {
  T s = 0;
  for (int k = 0; k < n; ++k) s += static_cast<T>(a[k]) * static_cast<T>(a[k]);
  return s;
}

// qpos0 + U(-scale, scale) per coordinate.
template <class T, int B>
MYRIAD_HD void qpos_uniform_noise(const ModelView<T>& m, EnvData<T, B>& d, Rng& rng, float scale) {
  for (int k = 0; k < m.nq; ++k)
    d.qpos[k] = m.qpos0[k] + static_cast<T>(rng.uniform(-scale, scale));
}
// 0 + U(-scale, scale) per velocity.
template <class T, int B>
MYRIAD_HD void qvel_uniform_noise(const ModelView<T>& m, EnvData<T, B>& d, Rng& rng, float scale) {
  for (int k = 0; k < m.nv; ++k) d.qvel[k] = static_cast<T>(rng.uniform(-scale, scale));
}
// 0 + scale * N(0, 1) per velocity.
template <class T, int B>
MYRIAD_HD void qvel_normal_noise(const ModelView<T>& m, EnvData<T, B>& d, Rng& rng, float scale) {
  for (int k = 0; k < m.nv; ++k) d.qvel[k] = static_cast<T>(scale * rng.normal());
}

template <class T>
MYRIAD_HD T clip(T x, T lo, T hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

// sum over every body and component of clip(cfrc_ext, range)^2: Ant's (and MJCF-v0's) contact
// cost before its weight. Body 0, the world, counts as in Gymnasium (its cfrc_ext is 0).
template <class T, int B>
MYRIAD_HD T clipped_contact_force_sq(const ModelView<T>& m, const EnvData<T, B>& d,
                                     const float range[2]) {
  T sum = 0;
  for (int k = 0; k < 6 * m.nbody; ++k) {
    const T c = clip(d.cfrc_ext[k], static_cast<T>(range[0]), static_cast<T>(range[1]));
    sum += c * c;
  }
  return sum;
}

}  // namespace myriad::envs::locomotion
