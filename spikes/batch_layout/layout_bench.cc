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

namespace spike {

TreeModel ant_like_tree() {
  TreeModel m;
  auto add = [&](int parent, Joint joint, std::vector<float> pos, std::vector<float> axis) {
    m.parent.push_back(parent);
    m.joint.push_back(joint);
    m.qposadr.push_back(m.nq);
    m.nq += joint == Joint::kFree ? 7 : joint == Joint::kHinge ? 1 : 0;
    m.nv += joint == Joint::kFree ? 6 : joint == Joint::kHinge ? 1 : 0;
    m.body_pos.insert(m.body_pos.end(), pos.begin(), pos.end());
    m.body_quat.insert(m.body_quat.end(), {1, 0, 0, 0});
    m.body_ipos.insert(m.body_ipos.end(), {0.5f * pos[0], 0.5f * pos[1], 0.5f * pos[2]});
    m.jnt_axis.insert(m.jnt_axis.end(), axis.begin(), axis.end());
    m.jnt_pos.insert(m.jnt_pos.end(), {0.0f, 0.0f, 0.0f});
    return m.nbody++;
  };
  add(-1, Joint::kNone, {0, 0, 0}, {0, 0, 1});  // world
  const int torso = add(0, Joint::kFree, {0, 0, 0.75f}, {0, 0, 1});
  const float sx[4] = {1, -1, -1, 1}, sy[4] = {1, 1, -1, -1};
  for (int leg = 0; leg < 4; ++leg) {
    const float x = 0.2f * sx[leg], y = 0.2f * sy[leg];
    const int aux = add(torso, Joint::kNone, {x, y, 0}, {0, 0, 1});
    const int hip = add(aux, Joint::kHinge, {x, y, 0}, {0, 0, 1});
    const float n = 0.70710678f;
    add(hip, Joint::kHinge, {x, y, 0}, {-n * sy[leg], n * sx[leg], 0});
  }
  m.body_quat[4 * 3] = 0.9238795f, m.body_quat[4 * 3 + 3] = 0.3826834f;  // one rotated body
  return m;
}

namespace {

constexpr int kNumEnvs = 1024;

// Inputs per env: a random pose and joint angles, and an SPD matrix B B^T + n I.
struct Inputs {
  TreeModel model = ant_like_tree();
  int n = model.nv;
  std::vector<float> qpos, a;  // env-major [N, nq], [N, nv * nv]
  Inputs() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    qpos.resize(static_cast<size_t>(kNumEnvs) * model.nq);
    a.resize(static_cast<size_t>(kNumEnvs) * n * n);
    for (int i = 0; i < kNumEnvs; ++i) {
      float* q = &qpos[static_cast<size_t>(i) * model.nq];
      for (int k = 0; k < model.nq; ++k) q[k] = u(rng);
      std::vector<float> b(static_cast<size_t>(n) * n);
      for (float& x : b) x = u(rng);
      float* ai = &a[static_cast<size_t>(i) * n * n];
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) {
          float s = r == c ? static_cast<float>(n) : 0.0f;
          for (int k = 0; k < n; ++k) s += b[r * n + k] * b[c * n + k];
          ai[r * n + c] = s;
        }
    }
  }
};

const Inputs& inputs() {
  static const Inputs in;
  return in;
}

// A batch of one field: env-major for W = 1, else [N / W][size][W].
struct Field {
  int size, width;
  std::vector<float> v;
  Field(int size_, int width_)
      : size(size_), width(width_), v(static_cast<size_t>(kNumEnvs) * size_) {}
  size_t at(int env, int k) const {
    if (width == 1) return static_cast<size_t>(env) * size + k;
    return (static_cast<size_t>(env / width) * size + k) * width + env % width;
  }
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
      kinematics<T>(m, {slice(qpos), slice(xpos), slice(xquat), slice(xmat), slice(xipos)});
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
      kinematics<Lanes<W>>(m, {qpos.data(), xpos.data(), xquat.data(), xmat.data(), xipos.data()});
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
