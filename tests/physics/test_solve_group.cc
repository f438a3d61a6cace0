// The constraint solve by a lane group (physics/constraint/solve_group.h, a warp per env on CUDA)
// against the one-thread solve (physics/constraint/solve.h): on Gymnasium's published models and
// the shipped models with elliptic cones, rolling friction, frictionloss and limits and the
// legged robots' (Go1, G1), in float64
// and float32, at states along noisy trajectories, qacc, qfrc_constraint, efc_force and the
// iteration count are the one-thread solve's bits. The groups: SerialGroup (the CPU staged
// step's), and InterleavedGroup with 5 and 32 lanes, which run the lanes of each phase one after
// another in reverse, so that a lane reading another lane's item of the same phase would change
// the result. Each also on a blocked batch (physics/batch_layout.h), as CUDA lays its out.
// With the group's own storage (CUDA's shared memory) at each level, the rows copied dense or
// packed. Also the solve over the rows' sparse structure against the same solve over the dense
// rows and over the packed rows: the same bits.
// Also GJK/EPA's pairs by a lane group (pipeline.h's collision_ccd_group, CUDA's collision_ccd
// and collision_hfield kernels) against the per-pair staged function, on the shipped hfield and
// convex models: the same counts and contacts, with 1, 4 and 8 lanes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "myriad/physics/engine.h"
#include "myriad/physics/import.h"
#include "physics/batch_layout.h"
#include "physics/constraint/solve_dense.h"
#include "physics/constraint/solve_group.h"
#include "physics/launch.h"
#include "physics/model_view.h"
#include "physics/pipeline.h"

namespace myriad::physics {
namespace {

std::string gym_model(const std::string& name) {
  return std::string(MYRIAD_GYM_ASSETS) + "/" + name + ".xml";
}

std::string shipped_model(const std::string& name) {
  const char* src = std::getenv("MYRIAD_SOURCE_DIR");
  return std::string(src ? src : MYRIAD_SOURCE_DIR_DEFAULT) + "/physics/models/" + name + ".xml";
}

// The legged robots' models (envs/robots/models), G1's rows the most of any: where the warp's
// storage holds them packed but not dense.
std::string robot_model(const std::string& name) {
  const char* src = std::getenv("MYRIAD_SOURCE_DIR");
  return std::string(src ? src : MYRIAD_SOURCE_DIR_DEFAULT) + "/envs/robots/models/" + name +
         ".xml";
}

bool readable(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f) std::fclose(f);
  return f != nullptr;
}

template <class T>
bool same_bits(const T* a, const T* b, int64_t n) {
  return n == 0 || std::memcmp(a, b, static_cast<size_t>(n) * sizeof(T)) == 0;
}

// Two solves of one env gave the same bits: qacc, qfrc_constraint, efc_force, the iterations.
template <class T>
void expect_same_solve(const Model<T>& m, const EnvData<T>& a, const EnvData<T>& b,
                       const std::string& what) {
  const int nefc = static_cast<int>(a.nefc[0]);
  EXPECT_TRUE(same_bits(a.qacc, b.qacc, m.nv)) << what << ": qacc";
  EXPECT_TRUE(same_bits(a.qfrc_constraint, b.qfrc_constraint, m.nv)) << what << ": qfrc_constraint";
  EXPECT_TRUE(same_bits(a.efc_force, b.efc_force, nefc)) << what << ": efc_force";
  EXPECT_EQ(a.solver_niter[0], b.solver_niter[0]) << what << ": iterations";
}

// d reset, then each env's qpos moved by up to 0.1 and its qvel set within 0.5 at random.
template <class T>
void reset_noisy(const Model<T>& m, Data<T>& d, int envs, std::mt19937& rng) {
  reset_data(m, d);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < envs; ++i) {
    EnvData<T> e = d.env(m, i);
    for (int k = 0; k < m.nq; ++k) e.qpos[k] += T(0.1 * u(rng));
    for (int k = 0; k < m.nv; ++k) e.qvel[k] = T(0.5 * u(rng));
  }
}

// What the group's own storage (constraint::GroupStorage: CUDA's shared memory) is sized to take
// in expect_group_solve_matches: none, exactly what each env's placement level needs, or (kWarp)
// CUDA's size on sm_90, whatever level each env's rows then reach. In Placed's order.
enum class Own { kNone, kHessian, kScratch, kRowsPacked, kRows, kWarp };

// The values in the sets of env e's rows (e's efc_J_colmask).
template <class T>
int64_t set_values(const EnvData<T>& e) {
  constraint::Rows<T> sets;
  sets.nefc = static_cast<int>(e.nefc[0]);
  sets.colmask = e.efc_J_colmask;
  return constraint::row_values_count(sets);
}

// The storage an env with nefc rows, nnz values in their sets, has for `own` (none for kNone).
template <class T>
int64_t own_size(Own own, int nv, int nefc, int64_t nnz) {
  const int64_t scratch = constraint::newton_scratch_size(nv, nefc);
  switch (own) {
    case Own::kNone:
      return 0;
    case Own::kHessian:
      return int64_t{nv} * nv;
    case Own::kScratch:
      return scratch;
    case Own::kRowsPacked:
      return scratch + constraint::packed_rows_size(nefc, nnz);
    case Own::kRows:
      return scratch + constraint::placed_rows_size(nv, nefc);
    case Own::kWarp:
      return constraint::kWarpSolveStorage<T>;
  }
  return 0;
}

// What an env with nefc rows and nnz set values places in storage sized for `own`: that level,
// but the dense rows where they fit in the packed rows' room (a row of few dofs, or every column
// in its set), and at kWarp wherever its rows reach.
template <class T>
constraint::Placed expected_placement(Own own, int nv, int nefc, int64_t nnz) {
  using constraint::Placed;
  if (own == Own::kWarp)
    return constraint::placement(nv, nefc, constraint::kWarpSolveStorage<T>, nnz);
  if (own == Own::kRowsPacked &&
      constraint::packed_rows_size(nefc, nnz) >= constraint::placed_rows_size(nv, nefc))
    return Placed::kRows;
  return static_cast<Placed>(own);
}

// How many solves expect_group_solve_matches saw place their rows packed, at the packed level's
// storage and at the warp's (so that a model whose rows never pack is noticed, not passed).
struct PackedSeen {
  int at_level = 0, at_warp = 0;
};
PackedSeen packed_seen;

// Every env of d solved by the one-thread solve and by group G, from the same inputs, on an
// env-major batch (W = 1) or a blocked one (W envs a block, physics/batch_layout.h: the solver on
// its contiguous copies, filled and read back by the group). kOwn: the group's own storage sized
// for each env to take that much of its solve (the Hessian; the Newton scratch too; the rows'
// copy too, packed or dense), as CUDA's warp solve keeps it in shared memory: solve says it placed
// that much, and
// the env's scratch where the placed arrays would have been is left alone (NaN before and after).
// Returns how many of the envs had constraint rows.
template <class G, int W = 1, Own kOwn = Own::kNone, class T>
int expect_group_solve_matches(const Model<T>& m, const Data<T>& d, int envs,
                               const std::string& what) {
  const ModelView<T> v = view_of(m);
  Data<T> one(m, envs), grouped(m, envs);
  one = d;
  grouped = d;
  std::unique_ptr<BlockedData<T>> blocked;
  if constexpr (W > 1) {
    blocked = std::make_unique<BlockedData<T>>(m, envs, W);
    blocked->pack(m, grouped);
  }
  constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();
  const auto solve_grouped = [&](auto b, int64_t nnz) {
    const int nefc = static_cast<int>(b.nefc[0]);
    std::vector<T> storage(static_cast<size_t>(own_size<T>(kOwn, m.nv, nefc, nnz)), kNaN);
    const constraint::Placed expected = expected_placement<T>(kOwn, m.nv, nefc, nnz);
    const int64_t untouched = expected == constraint::Placed::kNothing ? 0
                              : expected == constraint::Placed::kHessian
                                  ? int64_t{m.nv} * m.nv
                                  : constraint::newton_scratch_size(m.nv, nefc);
    std::fill(b.solver_scratch, b.solver_scratch + untouched, kNaN);
    const constraint::Placed placed = constraint::solve(
        G{}, v, b,
        constraint::GroupStorage<T>{storage.data(), static_cast<int64_t>(storage.size())});
    if (nefc == 0) return;
    EXPECT_EQ(static_cast<int>(placed), static_cast<int>(expected))
        << what << ": what the storage took";
    if (placed == constraint::Placed::kRowsPacked)
      ++(kOwn == Own::kWarp ? packed_seen.at_warp : packed_seen.at_level);
    for (int64_t k = 0; k < untouched; ++k)
      EXPECT_TRUE(std::isnan(b.solver_scratch[k]))
          << what << ": the scratch's [" << k << "] written, though placed in the storage";
  };
  for (int i = 0; i < envs; ++i) {
    EnvData<T> a = one.env(m, i);
    constraint::solve(v, a);
    const int64_t nnz = set_values(a);
    if constexpr (W == 1)
      solve_grouped(grouped.env(m, i), nnz);
    else
      solve_grouped(blocked->template view<W>().env(i), nnz);
  }
  if constexpr (W > 1) blocked->unpack(m, grouped);
  int with_rows = 0;
  for (int i = 0; i < envs; ++i) {
    EnvData<T> a = one.env(m, i), b = grouped.env(m, i);
    const int nefc = static_cast<int>(a.nefc[0]);
    with_rows += nefc > 0;
    expect_same_solve(m, a, b, what + ", env " + std::to_string(i));
  }
  return with_rows;
}

// Every env of d solved three times by the one-thread solve: over the rows' sparse structure
// (efc_J_colmask, as the engine solves), over the dense rows (Rows::colmask null, every column of
// every row) and over the rows packed (Rows::packed_at: each row's set's values only, as a lane
// group's storage holds them where the dense rows do not fit, copied there by place_in_storage).
// The same bits, and every entry of J outside its row's column set is +0. Returns how many rows
// had fewer columns than nv (the sparse sums skipped something).
template <class T>
int expect_sparse_rows_match(const Model<T>& m, const Data<T>& d, int envs,
                             const std::string& what) {
  const ModelView<T> v = view_of(m);
  Data<T> sparse(m, envs), dense(m, envs), packed(m, envs);
  sparse = d;
  dense = d;
  packed = d;
  int narrow = 0;
  for (int i = 0; i < envs; ++i) {
    EnvData<T> a = sparse.env(m, i), b = dense.env(m, i), c = packed.env(m, i);
    const int nefc = static_cast<int>(a.nefc[0]);
    for (int r = 0; r < nefc; ++r) {
      const constraint::ColumnMask columns =
          constraint::column_set(a.efc_J_colmask + int64_t{constraint::kColumnWords} * r);
      const T* J = a.efc_J + int64_t{r} * m.nv;
      narrow += __builtin_popcountll(columns) < m.nv;
      EXPECT_EQ(columns & ~constraint::columns_to(m.nv - 1), 0u)
          << what << ", env " << i << ", row " << r << ": a column past nv";
      for (int k = 0; k < m.nv; ++k)
        EXPECT_TRUE((columns >> k & 1) || (J[k] == T(0) && !std::signbit(J[k])))
            << what << ", env " << i << ", row " << r << ": column " << k
            << " not +0 but not in the row's set";
    }
    constraint::solve(v, a);
    constraint::solve_dense_rows(v, b);
    expect_same_solve(m, a, b, what + ", env " + std::to_string(i));
    if (nefc == 0) continue;
    // The packed rows: storage with room for them (and the Hessian and scratch before them).
    const int64_t nnz = set_values(c);
    std::vector<T> storage(static_cast<size_t>(constraint::newton_scratch_size(m.nv, nefc) +
                                               constraint::packed_rows_size(nefc, nnz)));
    const bool cones = constraint::solve_prepare(v, c);
    constraint::NewtonRun<T> run = constraint::solve_run(v, c, cones);
    const constraint::Placed placed = constraint::place_in_storage(
        constraint::SerialGroup{}, run,
        constraint::GroupStorage<T>{storage.data(), static_cast<int64_t>(storage.size())});
    EXPECT_EQ(static_cast<int>(placed),
              static_cast<int>(expected_placement<T>(Own::kRowsPacked, m.nv, nefc, nnz)))
        << what << ", env " << i;
    const T* warm =
        v.disableflags & constraint::kDisableWarmstart ? c.qacc_smooth : c.qacc_warmstart;
    constraint::solve_finish(v, c,
                             constraint::newton_finish(run, constraint::newton_begin(run, warm)));
    expect_same_solve(m, a, c, what + ", packed rows, env " + std::to_string(i));
  }
  return narrow;
}

template <class T>
void expect_groups_match(const std::string& path) {
  const Model<T> m = load_mjcf(path).template cast<T>();
  constexpr int kEnvs = 4;
  Data<T> d(m, kEnvs);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  reset_noisy(m, d, kEnvs, rng);
  int with_rows = 0, narrow_rows = 0;
  packed_seen = PackedSeen{};
  for (int s = 0; s < 40; ++s) {
    if (s % 10 == 0)
      for (int i = 0; i < kEnvs; ++i) {
        EnvData<T> e = d.env(m, i);
        for (int k = 0; k < m.nu; ++k) e.ctrl[k] = T(u(rng));
      }
    step(m, d, 1);
    if (s % 4 != 3) continue;
    forward(m, d);  // the rows at this state, warm-started from the last step
    const std::string at =
        path + " (float" + std::to_string(8 * sizeof(T)) + ", step " + std::to_string(s) + ")";
    with_rows += expect_group_solve_matches<constraint::SerialGroup>(m, d, kEnvs, at + ", 1 lane");
    narrow_rows += expect_sparse_rows_match(m, d, kEnvs, at + ", sparse against dense rows");
    expect_group_solve_matches<constraint::InterleavedGroup<5>>(m, d, kEnvs, at + ", 5 lanes");
    expect_group_solve_matches<constraint::InterleavedGroup<32>>(m, d, kEnvs, at + ", 32 lanes");
    // On a blocked batch, as CUDA's warp solves an env of its blocks of 32.
    expect_group_solve_matches<constraint::SerialGroup, 8>(m, d, kEnvs, at + ", 1 lane, blocked");
    expect_group_solve_matches<constraint::InterleavedGroup<32>, 32>(m, d, kEnvs,
                                                                     at + ", 32 lanes, blocked");
    // With the group's own storage (CUDA's shared memory) taking each level, both layouts.
    using Lanes32 = constraint::InterleavedGroup<32>;
    expect_group_solve_matches<Lanes32, 1, Own::kHessian>(m, d, kEnvs, at + ", own Hessian");
    expect_group_solve_matches<Lanes32, 1, Own::kScratch>(m, d, kEnvs, at + ", own scratch");
    expect_group_solve_matches<Lanes32, 1, Own::kRowsPacked>(m, d, kEnvs, at + ", own packed rows");
    expect_group_solve_matches<Lanes32, 1, Own::kRows>(m, d, kEnvs, at + ", own rows");
    expect_group_solve_matches<Lanes32, 1, Own::kWarp>(m, d, kEnvs, at + ", warp's storage");
    expect_group_solve_matches<Lanes32, 32, Own::kHessian>(m, d, kEnvs,
                                                           at + ", blocked, own Hessian");
    expect_group_solve_matches<Lanes32, 32, Own::kScratch>(m, d, kEnvs,
                                                           at + ", blocked, own scratch");
    expect_group_solve_matches<Lanes32, 32, Own::kRowsPacked>(m, d, kEnvs,
                                                              at + ", blocked, own packed rows");
    expect_group_solve_matches<Lanes32, 32, Own::kRows>(m, d, kEnvs, at + ", blocked, own rows");
  }
  EXPECT_GT(with_rows, 0) << path << ": no state had constraint rows; the test compared nothing";
  // Packed rows are smaller wherever a row misses a column, but for a row of one column at nv 2.
  if (m.nv > 2) EXPECT_GT(packed_seen.at_level, 0) << path << ": no solve placed its rows packed";
  // G1's rows outgrow the warp's dense storage (kWarpSolveStorage) in float64 in some of these
  // states (17% of solve_bench's from qpos0 at 27 KiB).
  if (m.nv >= 35 && sizeof(T) == 8)
    EXPECT_GT(packed_seen.at_warp, 0) << path << ": no solve packed its rows at the warp's size";
  EXPECT_GT(narrow_rows, 0) << path << ": no row had fewer columns than nv; the sparse sums "
                            << "skipped nothing";
}

class SolveGroup : public ::testing::TestWithParam<std::string> {};

TEST_P(SolveGroup, GivesTheOneThreadSolvesBits) {
  const std::string name = GetParam();
  const bool gym = name.rfind("gym:", 0) == 0, robot = name.rfind("robot:", 0) == 0;
  const std::string path = gym     ? gym_model(name.substr(4))
                           : robot ? robot_model(name.substr(6))
                                   : shipped_model(name);
  if (gym && !readable(path))
    GTEST_SKIP() << "gymnasium's MuJoCo assets not found (" << path << ")";
  expect_groups_match<double>(path);
  expect_groups_match<float>(path);
}

INSTANTIATE_TEST_SUITE_P(Models, SolveGroup,
                         ::testing::Values("gym:hopper", "gym:half_cheetah", "gym:walker2d_v5",
                                           "gym:ant", "gym:humanoid", "gym:inverted_pendulum",
                                           "gym:inverted_double_pendulum", "gym:reacher",
                                           "elliptic", "rolling_friction", "actuators",
                                           "ant_contacts", "robot:go1", "robot:g1"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

// The warp solve's storage: what the register-bound blocks an SM leave each block, less the
// runtime's reserve, in whole KiB, within the device's most a block. At sm_90's figures and this
// build's 12 / 8 blocks (133 / 180 registers) it is 18 / 27 KiB, at an A100's 164 KiB 12 / 19 KiB.
TEST(WarpSolveStorage, IsWhatTheRegisterBoundBlocksLeaveEachBlock) {
  using constraint::warp_solve_storage_bytes;
  constexpr int64_t kKiB = 1024, kSm90 = 228 * kKiB, kSm80 = 164 * kKiB;
  EXPECT_EQ(warp_solve_storage_bytes(kSm90, 12, kKiB, 227 * kKiB), 18 * kKiB);
  EXPECT_EQ(warp_solve_storage_bytes(kSm90, 8, kKiB, 227 * kKiB), 27 * kKiB);
  EXPECT_EQ(warp_solve_storage_bytes(kSm80, 12, kKiB, 163 * kKiB), 12 * kKiB);
  EXPECT_EQ(warp_solve_storage_bytes(kSm80, 8, kKiB, 163 * kKiB), 19 * kKiB);
  EXPECT_EQ(constraint::kWarpSolveStorage<float> * 4, 18 * kKiB);
  EXPECT_EQ(constraint::kWarpSolveStorage<double> * 8, 27 * kKiB);
  for (const int blocks : {1, 2, 7, 12, 15, 32}) {  // the blocks fit with the reserve
    const int64_t bytes = warp_solve_storage_bytes(kSm90, blocks, kKiB, 227 * kKiB);
    EXPECT_LE(blocks * (bytes + kKiB), kSm90) << blocks;
    EXPECT_EQ(bytes % kKiB, 0) << blocks;
  }
  EXPECT_EQ(warp_solve_storage_bytes(kSm90, 1, kKiB, 227 * kKiB), 227 * kKiB);  // the block's most
  EXPECT_EQ(warp_solve_storage_bytes(kSm90, 0, kKiB, 227 * kKiB), 227 * kKiB);  // as one block
  EXPECT_EQ(warp_solve_storage_bytes(2 * kKiB, 4, kKiB, 227 * kKiB), 0);        // nothing left
}

// MYRIAD_SOLVE_STORAGE_KIB: unset or empty leaves the size to the device; whole KiB from 0 to
// the device's most a block are taken; anything else is refused with a message naming it.
TEST(WarpSolveStorage, TakesTheVariablesKibOrRefusesIt) {
  using physics::detail::solve_storage_override;
  constexpr int kMost = 227 * 1024;
  const char* kName = "MYRIAD_SOLVE_STORAGE_KIB";
  const char* before = std::getenv(kName);
  const std::string kept = before ? before : "";
  ::unsetenv(kName);
  EXPECT_EQ(solve_storage_override(kMost), -1);
  ::setenv(kName, "", 1);
  EXPECT_EQ(solve_storage_override(kMost), -1);
  for (const auto& [text, bytes] :
       std::vector<std::pair<std::string, int>>{{"0", 0}, {"32", 32 * 1024}, {"227", kMost}}) {
    ::setenv(kName, text.c_str(), 1);
    EXPECT_EQ(solve_storage_override(kMost), bytes) << text;
  }
  for (const char* bad : {"228", "-1", "32k", "abc", "99999999999999999999"}) {
    ::setenv(kName, bad, 1);
    try {
      solve_storage_override(kMost);
      ADD_FAILURE() << bad << " was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(kName) + "=" + bad), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("from 0 to 227"), std::string::npos) << e.what();
    }
  }
  if (before)
    ::setenv(kName, kept.c_str(), 1);
  else
    ::unsetenv(kName);
}

// The group's storage: each level taken only with room for it and the ones before (the rows
// packed only where the dense ones do not fit), and at the rows' levels the solve's run reads its
// rows from the storage (the bitwise tests above cannot tell a copy that is made but not read),
// holding the env's rows: dense, or each row's set's values in order after the one before.
TEST(GroupStorage, PlacesEachLevelWhereItFitsAndReadsTheRowsFromIt) {
  using constraint::Placed;
  using constraint::placement;
  for (const int nv : {1, 14, 35}) {
    for (const int nefc : {1, 40}) {
      const int64_t hessian = int64_t{nv} * nv;
      const int64_t scratch = constraint::newton_scratch_size(nv, nefc);
      const int64_t rows = scratch + constraint::placed_rows_size(nv, nefc);
      EXPECT_EQ(placement(nv, nefc, hessian - 1), Placed::kNothing);
      EXPECT_EQ(placement(nv, nefc, hessian), Placed::kHessian);
      EXPECT_EQ(placement(nv, nefc, scratch - 1), Placed::kHessian);
      EXPECT_EQ(placement(nv, nefc, scratch), Placed::kScratch);
      EXPECT_EQ(placement(nv, nefc, rows - 1), Placed::kScratch);
      EXPECT_EQ(placement(nv, nefc, rows), Placed::kRows);
      // Packed, with one column a row: short of the dense rows' room, given the rows' sets.
      if (nv == 1) continue;  // a row of one column takes more packed (its offset) than dense
      const int64_t nnz = nefc;
      const int64_t packed = scratch + constraint::packed_rows_size(nefc, nnz);
      ASSERT_LT(packed, rows);
      EXPECT_EQ(placement(nv, nefc, packed - 1, nnz), Placed::kScratch);
      EXPECT_EQ(placement(nv, nefc, packed, nnz), Placed::kRowsPacked);
      EXPECT_EQ(placement(nv, nefc, packed), Placed::kScratch) << "packed without the sets";
      EXPECT_EQ(placement(nv, nefc, rows - 1, nnz), Placed::kRowsPacked);
      EXPECT_EQ(placement(nv, nefc, rows, nnz), Placed::kRows) << "dense where it fits";
    }
  }

  if (!readable(gym_model("ant")))
    GTEST_SKIP() << "gymnasium's MuJoCo assets not found (" << gym_model("ant") << ")";
  const Model<double> m = load_mjcf(gym_model("ant")).cast<double>();
  Data<double> d(m, 1);
  reset_data(m, d);
  EnvData<double> e = d.env(m, 0);
  e.qpos[2] = 0.3;  // the torso low: its legs on the floor
  forward(m, d);
  const int nefc = static_cast<int>(e.nefc[0]);
  ASSERT_GT(nefc, 0) << "the Ant pressed to the floor has no constraint rows";
  const ModelView<double> v = view_of(m);
  const bool has_cones = constraint::solve_prepare(v, e);
  const int64_t nnz = set_values(e);
  ASSERT_LT(constraint::packed_rows_size(nefc, nnz), constraint::placed_rows_size(m.nv, nefc))
      << "the Ant's rows are no smaller packed";
  for (const Placed level : {Placed::kRows, Placed::kRowsPacked}) {
    const bool packed = level == Placed::kRowsPacked;
    const std::string what = packed ? "packed rows" : "dense rows";
    constraint::NewtonRun<double> run = constraint::solve_run(v, e, has_cones);
    const constraint::Rows<double> global = run.rows;
    std::vector<double> storage(
        static_cast<size_t>(constraint::newton_scratch_size(m.nv, nefc) +
                            (packed ? constraint::packed_rows_size(nefc, nnz)
                                    : constraint::placed_rows_size(m.nv, nefc))));
    const double* begin = storage.data();
    const double* end = begin + storage.size();
    const auto inside = [&](const void* p) {
      return p >= static_cast<const void*>(begin) && p < static_cast<const void*>(end);
    };
    ASSERT_EQ(
        constraint::place_in_storage(
            constraint::SerialGroup{}, run,
            constraint::GroupStorage<double>{storage.data(), static_cast<int64_t>(storage.size())}),
        level)
        << what;
    EXPECT_EQ(run.H, begin);
    EXPECT_EQ(run.scratch, begin);
    for (const void* p :
         {static_cast<const void*>(run.rows.J), static_cast<const void*>(run.rows.D),
          static_cast<const void*>(run.rows.R), static_cast<const void*>(run.rows.aref),
          static_cast<const void*>(run.rows.frictionloss), static_cast<const void*>(run.rows.cone),
          static_cast<const void*>(run.rows.colmask), static_cast<const void*>(run.rows.type),
          static_cast<const void*>(run.rows.cone_dim)})
      EXPECT_TRUE(inside(p)) << what << ": a row array read from outside the storage";
    EXPECT_TRUE(
        same_bits(run.rows.colmask, global.colmask, int64_t{constraint::kColumnWords} * nefc))
        << what;
    if (!packed) {
      EXPECT_EQ(run.rows.packed_at, nullptr);
      EXPECT_TRUE(same_bits(run.rows.J, global.J, int64_t{nefc} * m.nv));
    } else {
      ASSERT_NE(run.rows.packed_at, nullptr);
      EXPECT_TRUE(inside(run.rows.packed_at)) << "packed_at outside the storage";
      // The values fill the storage's end, row after row, each at its set's columns in order.
      int64_t at = 0;
      for (int i = 0; i < nefc; ++i) {
        EXPECT_EQ(run.rows.packed_at[i], at) << "row " << i;
        const constraint::ColumnMask set = constraint::row_columns(global, i, m.nv);
        int rank = 0;
        for (int k = 0; k < m.nv; ++k) {
          if (!(set >> k & 1)) continue;
          EXPECT_TRUE(same_bits(run.rows.J + at + rank, global.J + int64_t{i} * m.nv + k, 1))
              << "row " << i << ", column " << k;
          EXPECT_TRUE(same_bits(
              constraint::row_values(run.rows, i, m.nv) + constraint::value_index(true, set, k),
              global.J + int64_t{i} * m.nv + k, 1))
              << "row " << i << ", column " << k << ": value_index";
          ++rank;
        }
        at += rank;
      }
      EXPECT_EQ(at, nnz);
      EXPECT_EQ(run.rows.J + nnz, end) << "the packed values end where the storage does";
    }
    for (int i = 0; i < nefc; ++i) {
      EXPECT_EQ(run.rows.type[i], global.type[i]) << what << ", row " << i;
      EXPECT_EQ(run.rows.cone_dim[i], global.cone_dim[i]) << what << ", row " << i;
      EXPECT_TRUE(same_bits(run.rows.D + i, global.D + i, 1) &&
                  same_bits(run.rows.R + i, global.R + i, 1) &&
                  same_bits(run.rows.aref + i, global.aref + i, 1) &&
                  same_bits(run.rows.frictionloss + i, global.frictionloss + i, 1) &&
                  same_bits(run.rows.cone + i, global.cone + i, 1))
          << what << ", row " << i;
    }
  }
}

// GJK/EPA's pairs by a lane group, as CUDA's collision_ccd and collision_hfield kernels run them
// (pipeline.h's collision_ccd_group: the bounding tests, the group pair function, the leader's
// count) against the per-pair staged function (collision_pair): the same count and the same
// contacts in the pair's slot, bit for bit, for every env and GJK/EPA candidate.
template <int kGroup, class G, class T>
int expect_ccd_group_matches(const Model<T>& m, const Data<T>& d, int envs, int first, int count,
                             const std::string& what) {
  const ModelView<T> v = view_of(m);
  Data<T> one(m, envs), grouped(m, envs);
  one = d;
  grouped = d;
  collision::ContactValues<double> round[32];
  collision::ccd::LocalPolytope<double> arena;
  int with_contacts = 0;
  for (int i = 0; i < envs; ++i) {
    EnvData<T> a = one.env(m, i), b = grouped.env(m, i);
    for (int k = first; k < first + count; ++k) {
      const int ip = m.candidate_grouped[k];
      // The group's count and slot start as garbage, so a write it skips shows.
      const int g1 = m.candidate_pairs[3 * ip], g2 = m.candidate_pairs[3 * ip + 1];
      auto* slot_b = constraint::contacts_of(b) + m.candidate_slot[ip];
      for (int c = 0; c < collision::max_pair_raw_contacts(m.geom_type[g1], m.geom_type[g2]); ++c) {
        slot_b[c].dist = std::numeric_limits<T>::quiet_NaN();
        for (int q = 0; q < 6; ++q) {
          slot_b[c].frame[q] = std::numeric_limits<T>::quiet_NaN();
          if (q < 3) slot_b[c].pos[q] = std::numeric_limits<T>::quiet_NaN();
        }
      }
      b.pair_ncon[ip] = T(-1);
      collision_pair<T, kGroup>(v, a, ip);
      collision_ccd_group<kGroup>(G{}, v, b, ip, round, arena);
      const int n = static_cast<int>(a.pair_ncon[ip]);
      with_contacts += n > 0;
      EXPECT_EQ(a.pair_ncon[ip], b.pair_ncon[ip]) << what << ", env " << i << ", pair " << ip;
      if (a.pair_ncon[ip] != b.pair_ncon[ip]) continue;
      const auto* ca = constraint::contacts_of(a) + m.candidate_slot[ip];
      const auto* cb = constraint::contacts_of(b) + m.candidate_slot[ip];
      for (int c = 0; c < n; ++c) {
        bool same = std::memcmp(&ca[c].dist, &cb[c].dist, sizeof(T)) == 0;
        same = same && same_bits(ca[c].pos, cb[c].pos, 3) && same_bits(ca[c].frame, cb[c].frame, 6);
        EXPECT_TRUE(same) << what << ", env " << i << ", pair " << ip << ", contact " << c;
      }
    }
  }
  return with_contacts;
}

template <class T>
void expect_ccd_groups_match(const std::string& path) {
  const Model<T> m = load_mjcf(path).template cast<T>();
  constexpr int kEnvs = 4;
  Data<T> d(m, kEnvs);
  std::mt19937 rng(5);
  reset_noisy(m, d, kEnvs, rng);
  const int first_ccd = m.ncandidate_primitive + m.ncandidate_box_box;
  const int ccd = m.nccd_pairs - m.ncandidate_hfield, hfield = m.ncandidate_hfield;
  int with_contacts = 0;
  for (int s = 0; s < 60; ++s) {
    step(m, d, 1);
    if (s % 6 != 5) continue;
    forward(m, d);  // the geoms' poses at this state
    const std::string at =
        path + " (float" + std::to_string(8 * sizeof(T)) + ", step " + std::to_string(s) + ")";
    using constraint::InterleavedGroup;
    using constraint::SerialGroup;
    with_contacts += expect_ccd_group_matches<collision::kPairsCcd, SerialGroup>(
        m, d, kEnvs, first_ccd, ccd, at + ", 1 lane");
    expect_ccd_group_matches<collision::kPairsCcd, InterleavedGroup<4>>(m, d, kEnvs, first_ccd, ccd,
                                                                        at + ", 4 lanes");
    with_contacts += expect_ccd_group_matches<collision::kPairsHfield, SerialGroup>(
        m, d, kEnvs, first_ccd + ccd, hfield, at + ", 1 lane");
    expect_ccd_group_matches<collision::kPairsHfield, InterleavedGroup<8>>(
        m, d, kEnvs, first_ccd + ccd, hfield, at + ", 8 lanes");
  }
  EXPECT_GT(m.nccd_pairs, 0) << path << ": no GJK/EPA pair";
  EXPECT_GT(with_contacts, 0) << path
                              << ": no GJK/EPA pair had contacts; the test compared nothing";
}

TEST(CcdGroup, GivesTheStagedPairsBits) {
  for (const char* name : {"hfield", "convex"}) {
    expect_ccd_groups_match<double>(shipped_model(name));
    expect_ccd_groups_match<float>(shipped_model(name));
  }
}

}  // namespace
}  // namespace myriad::physics
