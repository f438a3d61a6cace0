// The batch layout spike: the same two stages (stages.h) over N envs, laid out env-major (the
// engine's layout today, one env per call of the scalar code) and blocked by W envs (one env
// per SIMD lane). First checks that every layout gives every env the same bits, then times
// them with Google Benchmark (items = env stage evaluations).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "stages.h"
#include "tree.h"

namespace spike {

namespace {

constexpr int kNumEnvs = 1024;

const Inputs& inputs() {
  static const Inputs in(kNumEnvs);
  return in;
}

// A batch of one field: env-major for W = 1, else [N / W][size][W].
struct Field {
  int size, width;
  std::vector<float> v;
  Field(int size_, int width_)
      : size(size_), width(width_), v(static_cast<size_t>(kNumEnvs) * size_) {}
  size_t at(int env, int k) const { return layout_index(width, size, env, k); }
  void fill(const std::vector<float>& env_major) {
    for (int i = 0; i < kNumEnvs; ++i)
      for (int k = 0; k < size; ++k) v[at(i, k)] = env_major[static_cast<size_t>(i) * size + k];
  }
  float get(int env, int k) const { return v[at(env, k)]; }
};

template <int W>
using Value = std::conditional_t<W == 1, float, Lanes<W>>;

// One batch of the kinematics fields in layout W.
template <int W>
struct KinematicsBatch {
  const TreeModel& m = inputs().model;
  Field qpos{m.nq, W}, xpos{3 * m.nbody, W}, xquat{4 * m.nbody, W}, xmat{9 * m.nbody, W},
      xipos{3 * m.nbody, W};
  KinematicsBatch() { qpos.fill(inputs().qpos); }
  void run() {
    using T = Value<W>;
    for (int t = 0; t < kNumEnvs / W; ++t) {
      auto slice = [&](Field& f) {
        return reinterpret_cast<T*>(f.v.data()) + static_cast<size_t>(t) * f.size;
      };
      kinematics<T>(view_of(m), KinematicsData<T*>{slice(qpos), slice(xpos), slice(xquat),
                                                   slice(xmat), slice(xipos)});
    }
  }
};

// The engine's env-major batch, with each tile of W envs gathered into lanes for the stage and
// its outputs scattered back: the blocked layout's speed without changing the batch's layout.
template <int W>
struct KinematicsGathered {
  const TreeModel& m = inputs().model;
  KinematicsBatch<1> batch;
  std::vector<Lanes<W>> qpos, xpos, xquat, xmat, xipos;
  KinematicsGathered()
      : qpos(m.nq), xpos(3 * m.nbody), xquat(4 * m.nbody), xmat(9 * m.nbody), xipos(3 * m.nbody) {}
  static void gather(const Field& f, int t, std::vector<Lanes<W>>& out) {
    for (int l = 0; l < W; ++l)
      for (int k = 0; k < f.size; ++k) out[k].v[l] = f.v[f.at(t * W + l, k)];
  }
  static void scatter(const std::vector<Lanes<W>>& in, int t, Field& f) {
    for (int l = 0; l < W; ++l)
      for (int k = 0; k < f.size; ++k) f.v[f.at(t * W + l, k)] = in[k].v[l];
  }
  void run() {
    for (int t = 0; t < kNumEnvs / W; ++t) {
      gather(batch.qpos, t, qpos);
      kinematics<Lanes<W>>(
          view_of(m), KinematicsData<Lanes<W>*>{qpos.data(), xpos.data(), xquat.data(), xmat.data(),
                                                xipos.data()});
      scatter(xpos, t, batch.xpos), scatter(xquat, t, batch.xquat);
      scatter(xmat, t, batch.xmat), scatter(xipos, t, batch.xipos);
    }
  }
};

template <int W>
struct CholeskyBatch {
  int n = inputs().n;
  Field a{n * n, W}, l{n * n, W};
  CholeskyBatch() { a.fill(inputs().a); }
  void run() {
    using T = Value<W>;
    for (int t = 0; t < kNumEnvs / W; ++t) {
      const size_t off = static_cast<size_t>(t) * n * n;
      cholesky<T>(n, reinterpret_cast<const T*>(a.v.data()) + off,
                  reinterpret_cast<T*>(l.v.data()) + off);
    }
  }
};

// Every env's outputs in layout W equal the env-major ones bit for bit.
template <int W>
bool same_bits() {
  KinematicsBatch<1> k1;
  KinematicsBatch<W> kw;
  CholeskyBatch<1> c1;
  CholeskyBatch<W> cw;
  k1.run(), kw.run(), c1.run(), cw.run();
  auto equal = [](const Field& x, const Field& y) {
    for (int i = 0; i < kNumEnvs; ++i)
      for (int k = 0; k < x.size; ++k) {
        const float p = x.get(i, k), q = y.get(i, k);
        if (std::memcmp(&p, &q, sizeof(float)) != 0) return false;
      }
    return true;
  };
  KinematicsGathered<W> kg;
  kg.run();
  if (!equal(k1.xmat, kg.batch.xmat) || !equal(k1.xipos, kg.batch.xipos)) return false;
  return equal(k1.xpos, kw.xpos) && equal(k1.xquat, kw.xquat) && equal(k1.xmat, kw.xmat) &&
         equal(k1.xipos, kw.xipos) && equal(c1.l, cw.l);
}

template <class Batch>
void BM_Stage(benchmark::State& state) {
  Batch batch;
  for (auto _ : state) {
    batch.run();
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kNumEnvs);
}

BENCHMARK_TEMPLATE(BM_Stage, KinematicsBatch<1>)->Name("kinematics/env_major");
BENCHMARK_TEMPLATE(BM_Stage, KinematicsBatch<4>)->Name("kinematics/lanes_4");
BENCHMARK_TEMPLATE(BM_Stage, KinematicsBatch<8>)->Name("kinematics/lanes_8");
BENCHMARK_TEMPLATE(BM_Stage, KinematicsBatch<16>)->Name("kinematics/lanes_16");
BENCHMARK_TEMPLATE(BM_Stage, KinematicsGathered<8>)->Name("kinematics/env_major_gather_8");
BENCHMARK_TEMPLATE(BM_Stage, CholeskyBatch<1>)->Name("cholesky14/env_major");
BENCHMARK_TEMPLATE(BM_Stage, CholeskyBatch<4>)->Name("cholesky14/lanes_4");
BENCHMARK_TEMPLATE(BM_Stage, CholeskyBatch<8>)->Name("cholesky14/lanes_8");
BENCHMARK_TEMPLATE(BM_Stage, CholeskyBatch<16>)->Name("cholesky14/lanes_16");

}  // namespace
}  // namespace spike

int main(int argc, char** argv) {
  if (!spike::same_bits<4>() || !spike::same_bits<8>() || !spike::same_bits<16>()) {
    std::fprintf(stderr, "layout_bench: a blocked layout's results differ from env-major's\n");
    return 1;
  }
  std::printf("bitwise check: lanes 4, 8 and 16 equal env-major for all %d envs\n",
              spike::kNumEnvs);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
