// physics-bench --lockstep: how much of a batch's per-env variable work (contacts, constraint
// rows, Newton iterations) tiles of W envs in lockstep would spend on padding, read from the
// engine's Data after each step. See docs/architecture.md, "Batch layout".
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "myriad/physics/data.h"
#include "myriad/physics/model.h"

namespace myriad::tools {

// Lockstep accounting for one per-env quantity q (work units): over every timed step, the work
// the envs need (sum of q) and the work tiles of W envs do when each tile runs as long as its
// largest member (sum over tiles of W * max q). useful / lockstep is the tile's lane efficiency.
struct LockstepTally {
  std::vector<int> widths;
  std::vector<double> lockstep, lockstep_sorted;  // per width; sorted: tiles re-formed each step
  double useful = 0;                              // by the previous step's q (ascending)

  void add(const std::vector<double>& q, const std::vector<int64_t>& order) {
    const int64_t n = static_cast<int64_t>(q.size());
    useful += std::accumulate(q.begin(), q.end(), 0.0);
    for (size_t w = 0; w < widths.size(); ++w) {
      const int64_t width = widths[w];
      for (int64_t start = 0; start < n; start += width) {
        double top = 0, top_sorted = 0;
        const int64_t end = std::min(n, start + width);
        for (int64_t i = start; i < end; ++i) {
          top = std::max(top, q[i]);
          top_sorted = std::max(top_sorted, q[order[i]]);
        }
        lockstep[w] += static_cast<double>(width) * top;
        lockstep_sorted[w] += static_cast<double>(width) * top_sorted;
      }
    }
  }

  nlohmann::json report() const {
    nlohmann::json out = nlohmann::json::object();
    for (size_t w = 0; w < widths.size(); ++w) {
      const std::string key = "w" + std::to_string(widths[w]);
      out[key] = {
          {"efficiency", lockstep[w] > 0 ? useful / lockstep[w] : 1.0},
          {"efficiency_sorted", lockstep_sorted[w] > 0 ? useful / lockstep_sorted[w] : 1.0}};
    }
    return out;
  }
};

// The per-env work quantities of the lockstep report, read from Data after a step.
struct LockstepReport {
  static constexpr const char* kNames[] = {"contacts", "constraint_rows", "solver_iterations",
                                           "solver_iterations_x_rows"};
  static constexpr int kCount = 4;
  LockstepTally tally[kCount];
  std::vector<double> previous_rows;  // the previous step's nefc, to form sorted tiles
  int64_t steps = 0;

  explicit LockstepReport(const std::vector<int>& widths) {
    for (LockstepTally& t : tally) {
      t.widths = widths;
      t.lockstep.assign(widths.size(), 0.0);
      t.lockstep_sorted.assign(widths.size(), 0.0);
    }
  }

  template <class T>
  void add(const physics::Model<T>& m, physics::Data<T>& d) {
    const int64_t n = d.num_envs();
    const T* ncon = d.field(m, "ncon");
    const T* nefc = d.field(m, "nefc");
    const T* niter = d.field(m, "solver_niter");
    std::vector<double> q[kCount];
    for (auto& v : q) v.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      q[0][i] = static_cast<double>(ncon[i]);
      q[1][i] = static_cast<double>(nefc[i]);
      q[2][i] = static_cast<double>(niter[i]);
      q[3][i] = q[1][i] * q[2][i];
    }
    // Sorted tiles: envs ordered by the rows they had the step before (what a scheduler knows).
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    if (previous_rows.size() == order.size())
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return previous_rows[a] < previous_rows[b]; });
    for (int k = 0; k < kCount; ++k) tally[k].add(q[k], order);
    previous_rows = q[1];
    ++steps;
  }

  nlohmann::json report(int64_t num_envs) const {
    nlohmann::json out = nlohmann::json::object();
    for (int k = 0; k < kCount; ++k) {
      nlohmann::json r = tally[k].report();
      r["mean_per_env_step"] =
          tally[k].useful / static_cast<double>(num_envs * std::max<int64_t>(steps, 1));
      out[kNames[k]] = r;
    }
    return out;
  }
};

}  // namespace myriad::tools
