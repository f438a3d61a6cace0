// solve_bench MODEL.xml...: Google Benchmark of the constraint solve (physics/constraint/solve.h)
// on one core, over the rows' sparse structure (efc_J_colmask: what the engine solves) against
// the same solve over the dense rows (newton.h's Rows::colmask null). The states:
// 64 envs of each model, moved from qpos0 at random and stepped under random controls, their rows
// built by a forward pass at 8 points along the way; each iteration solves every state with rows
// once. MODEL.xml#KEY starts them at keyframe KEY instead, its joints moved by up to 0.1 and
// every actuator driving its joint towards the key's angle give or take 0.3 (a legged robot
// standing near its default pose; every actuator must be a gear-1 position actuator on a hinge
// or slide joint). Both variants give the same bits
// (tests/physics/test_solve_group.cc). Built on demand:
//   cmake --build build --target solve_bench
//   build/tools/solve_bench --benchmark_repetitions=3 MODEL.xml...
// Counters: solves/s; nnz/nv, the rows' mean share of columns that the sparse sums read; the
// states' row counts (nefc_p50, nefc_p90, nefc_most: the most any state had) and the share of
// them whose whole solve, rows included, fits CUDA's warp solve's shared memory on sm_90 in
// float32 and float64 (rows_shared_f32/f64: solve_group.h's placement at kWarpSolveStorage, the
// rows copied dense or packed; rows_dense_f32/f64: those whose dense copy fits; the row counts of
// these float64 states). --storage-kib=K takes K KiB for both precisions instead (what
// MYRIAD_SOLVE_STORAGE_KIB=K gives the GPU's solve, physics/launch.h).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "myriad/physics/engine.h"
#include "myriad/physics/import.h"
#include "physics/constraint/solve_dense.h"
#include "physics/constraint/solve_group.h"
#include "physics/model_view.h"

namespace myriad::physics {
namespace {

constexpr int kEnvs = 64;
constexpr int kStates = 8;

// The warp solve's storage, in scalars, float32 then float64: sm_90's (kWarpSolveStorage) unless
// --storage-kib says otherwise.
int64_t storage[2] = {constraint::kWarpSolveStorage<float>, constraint::kWarpSolveStorage<double>};

// One model's states: kStates snapshots of a batch of kEnvs, each after a forward pass.
struct States {
  Model<double> model;
  std::vector<Data<double>> snapshots;
  double nnz_share = 0;     // mean over rows of (columns in the row's set) / nv
  int64_t solves = 0;       // states with rows, per pass over all snapshots
  std::vector<int> nefc;    // each state's rows, those with rows, sorted
  double rows_shared[2]{};  // share of them whose rows fit the warp solve's storage: f32, f64
  double rows_dense[2]{};   // share of them whose dense rows fit it: f32, f64
};

// The q-th quantile (0..1) of sorted counts (0 for none).
double quantile(const std::vector<int>& sorted, double q) {
  if (sorted.empty()) return 0;
  return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5)];
}

bool hinge_or_slide(const Model<double>& m, int j) {
  return m.jnt_type[j] == kSlide || m.jnt_type[j] == kHinge;
}

// Actuator a's joint's qpos address, for a position actuator on a hinge or slide joint with gear
// 1 (its ctrl is then the joint's target); else throws naming the actuator (a keyframe's states
// hold the key's pose through them).
int position_target(const Model<double>& m, int a) {
  const int j = m.actuator_trnid[a];
  const bool joint = m.actuator_trntype[a] == kTrnJoint && hinge_or_slide(m, j);
  const bool position = m.actuator_gaintype[a] == kGainFixed &&
                        m.actuator_biastype[a] == kBiasAffine && m.actuator_biasprm[3 * a] == 0 &&
                        m.actuator_biasprm[3 * a + 1] == -m.actuator_gainprm[3 * a];
  if (!joint || !position || m.actuator_gear[a] != 1)
    throw std::invalid_argument("actuator " + std::to_string(a) +
                                " is not a position actuator on a hinge or slide joint with gear "
                                "1; a keyframe's states need every actuator to be one");
  return m.jnt_qposadr[j];
}

// spec: MODEL.xml, or MODEL.xml#KEY for states around keyframe KEY.
States make_states(const std::string& spec) {
  const size_t hash = spec.rfind('#');
  const std::string key = hash == std::string::npos ? "" : spec.substr(hash + 1);
  if (hash != std::string::npos && key.empty())
    throw std::invalid_argument("no keyframe name after '#' (MODEL.xml#KEY)");
  States s{load_mjcf(spec.substr(0, hash)), {}};
  if (!key.empty()) use_keyframe(s.model, key);
  const Model<double>& m = s.model;
  std::vector<int> target(m.nu, -1);  // a keyframe's states: each actuator's joint's qpos
  if (!key.empty())
    for (int a = 0; a < m.nu; ++a) target[a] = position_target(m, a);
  Data<double> d(m, kEnvs);
  reset_data(m, d);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < kEnvs; ++i) {
    EnvData<double> e = d.env(m, i);
    if (key.empty()) {
      for (int k = 0; k < m.nq; ++k) e.qpos[k] += 0.1 * u(rng);
      for (int k = 0; k < m.nv; ++k) e.qvel[k] = 0.5 * u(rng);
    } else {  // the key's pose and velocity (reset_data starts at qpos0), its joints moved
      for (int k = 0; k < m.nq; ++k) e.qpos[k] = m.qpos_init[k];
      for (int k = 0; k < m.nv; ++k) e.qvel[k] = m.qvel_init[k];
      for (int j = 0; j < m.njnt; ++j)
        if (hinge_or_slide(m, j)) e.qpos[m.jnt_qposadr[j]] += 0.1 * u(rng);
    }
  }
  int64_t rows = 0;
  double share = 0;
  for (int snap = 0; snap < kStates; ++snap) {
    for (int step_k = 0; step_k < 10; ++step_k) {
      for (int i = 0; i < kEnvs; ++i) {
        EnvData<double> e = d.env(m, i);
        for (int k = 0; k < m.nu; ++k)
          e.ctrl[k] = key.empty() ? u(rng) : m.qpos_init[target[k]] + 0.3 * u(rng);
      }
      step(m, d, 1);
    }
    forward(m, d);
    for (int i = 0; i < kEnvs; ++i) {
      EnvData<double> e = d.env(m, i);
      const int nefc = static_cast<int>(e.nefc[0]);
      s.solves += nefc > 0;
      constraint::Rows<double> sets;  // the rows' column sets alone
      sets.nefc = nefc;
      sets.colmask = e.efc_J_colmask;
      const int64_t nnz = constraint::row_values_count(sets);
      share += static_cast<double>(nnz) / static_cast<double>(m.nv);
      rows += nefc;
      if (nefc == 0) continue;
      s.nefc.push_back(nefc);
      using constraint::Placed;
      const Placed at[2] = {constraint::placement(m.nv, nefc, storage[0], nnz),
                            constraint::placement(m.nv, nefc, storage[1], nnz)};
      for (int p = 0; p < 2; ++p) {
        s.rows_shared[p] += at[p] == Placed::kRows || at[p] == Placed::kRowsPacked;
        s.rows_dense[p] += at[p] == Placed::kRows;
      }
    }
    s.snapshots.push_back(d);
  }
  s.nnz_share = rows ? share / static_cast<double>(rows) : 0;
  std::sort(s.nefc.begin(), s.nefc.end());
  const double with_rows = s.nefc.empty() ? 1 : static_cast<double>(s.nefc.size());
  for (int p = 0; p < 2; ++p) {
    s.rows_shared[p] /= with_rows;
    s.rows_dense[p] /= with_rows;
  }
  return s;
}

// Env e's solve, over its rows' sparse structure or (dense) every column.
void solve_env(const ModelView<double>& v, EnvData<double>& e, bool dense) {
  if (dense)
    constraint::solve_dense_rows(v, e);
  else
    constraint::solve(v, e);
}

void bench_solve(benchmark::State& state, std::shared_ptr<States> s, bool dense) {
  const ModelView<double> v = view_of(s->model);
  for (auto _ : state)
    for (Data<double>& d : s->snapshots)
      for (int i = 0; i < kEnvs; ++i) {
        EnvData<double> e = d.env(s->model, i);
        if (e.nefc[0] == 0) continue;
        solve_env(v, e, dense);
        benchmark::DoNotOptimize(e.qacc[0]);
      }
  state.counters["solves/s"] = benchmark::Counter(
      static_cast<double>(s->solves * state.iterations()), benchmark::Counter::kIsRate);
  state.counters["nnz/nv"] = s->nnz_share;
  state.counters["nefc_p50"] = quantile(s->nefc, 0.5);
  state.counters["nefc_p90"] = quantile(s->nefc, 0.9);
  state.counters["nefc_most"] = s->nefc.empty() ? 0 : s->nefc.back();
  state.counters["rows_shared_f32"] = s->rows_shared[0];
  state.counters["rows_shared_f64"] = s->rows_shared[1];
  state.counters["rows_dense_f32"] = s->rows_dense[0];
  state.counters["rows_dense_f64"] = s->rows_dense[1];
}

}  // namespace
}  // namespace myriad::physics

int main(int argc, char** argv) {
  using namespace myriad::physics;
  benchmark::Initialize(&argc, argv);
  int first = 1;
  const std::string kStorageFlag = "--storage-kib=";
  if (argc > 1 && std::string(argv[1]).rfind(kStorageFlag, 0) == 0) {
    const std::string v = argv[1] + kStorageFlag.size();
    char* end = nullptr;
    const long kib = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || kib < 0 || kib > 227) {
      std::fprintf(stderr, "solve_bench: %s: expected whole KiB from 0 to 227\n", argv[1]);
      return 2;
    }
    storage[0] = kib * 1024 / static_cast<int64_t>(sizeof(float));
    storage[1] = kib * 1024 / static_cast<int64_t>(sizeof(double));
    first = 2;
  }
  if (argc <= first) {
    std::fprintf(stderr,
                 "usage: solve_bench [--benchmark_...] [--storage-kib=K] MODEL.xml[#KEY]...\n"
                 "  (--storage-kib=K, if given, comes before the models)\n");
    return 2;
  }
  for (int a = first; a < argc; ++a) {
    const std::string spec = argv[a];
    std::shared_ptr<States> states;
    try {
      states = std::make_shared<States>(make_states(spec));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "solve_bench: %s: %s\n", spec.c_str(), e.what());
      return 2;
    }
    const std::string name = spec.substr(spec.find_last_of('/') + 1);
    // Interleaved: sparse then dense, model by model.
    benchmark::RegisterBenchmark((name + "/sparse").c_str(), bench_solve, states, false);
    benchmark::RegisterBenchmark((name + "/dense").c_str(), bench_solve, states, true);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
