// Collision (physics/collision/) against libmujoco 2.2.2: for each supported pair type, many
// random and degenerate poses (fixed seed); for the filter, models that exercise contype /
// conaffinity, parent-child and weld exclusion, <exclude>, <pair>, margin/gap, priority and
// mixing, and the override flag. The geom poses come from libmujoco's mj_kinematics, and
// libmujoco's d->contact after mj_collision is the reference: count, order, geoms, dist, pos,
// frame, includemargin, friction, solref, solimp, condim and exclude agree to 1e-9.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "physics/collision/collide.h"
#include "physics/mujoco_compat.h"
#include "tests/physics/mj_from_string.h"

namespace myriad::physics::collision {
namespace {

constexpr double kTol = 1e-9;

using Loaded = physics::test_support::MjLoaded;
std::unique_ptr<Loaded> load(const std::string& xml) {
  return physics::test_support::load_mj_string(xml);
}

// An mjModel array as the view's: mjtNum ones as they are; float ones (hfield_data) promoted
// into a buffer that lives as long as the test binary.
const double* real_array(const mjtNum* p, int64_t) { return p; }
const double* real_array(const float* p, int64_t n) {
  static std::deque<std::vector<double>> promoted;
  promoted.emplace_back(p, p + n);
  return promoted.back().data();
}

// The collision view of an mjModel (mjtNum is double, int is int32_t: no copies but the float
// elevations), field by field from the MYRIAD_COLLISION_* lists (myriad/physics/model_fields.h).
CollisionModel<double> view(const mjModel* m) {
  static_assert(sizeof(int) == sizeof(int32_t), "mjModel ints are 32-bit");
  CollisionModel<double> v;
#define MYRIAD_FROM_copy(name) m->name
#define MYRIAD_FROM_opt(name) m->opt.name
#define MYRIAD_FROM_custom(name) custom_##name
  constexpr int custom_collision = 0;  // MuJoCo 3 merges explicit and dynamic pairs
#define MYRIAD_X(name, init, from) v.name = MYRIAD_FROM_##from(name);
  MYRIAD_COLLISION_INT_SCALARS(MYRIAD_X)
  MYRIAD_COLLISION_FLAGS(MYRIAD_X)
  MYRIAD_COLLISION_REAL_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, length, from) \
  for (int k = 0; k < (length); ++k) v.name[k] = MYRIAD_FROM_##from(name)[k];
  MYRIAD_COLLISION_REAL_VECTORS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) v.name = MYRIAD_FROM_##from(name);
  MYRIAD_COLLISION_INT_ARRAYS(MYRIAD_X)
  MYRIAD_COLLISION_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) \
  v.name = real_array(MYRIAD_FROM_##from(name), int64_t{m->rows} * (cols));
  MYRIAD_COLLISION_REAL_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#undef MYRIAD_FROM_copy
#undef MYRIAD_FROM_opt
  return v;
}

// The same in float: every real converted into store (whose arrays the view points at).
CollisionModel<float> view_float(const mjModel* m, std::deque<std::vector<float>>& store) {
  const CollisionModel<double> vd = view(m);
  CollisionModel<float> v;
#define MYRIAD_X(name, init, from) v.name = vd.name;
  MYRIAD_COLLISION_INT_SCALARS(MYRIAD_X)
  MYRIAD_COLLISION_FLAGS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, init, from) v.name = static_cast<float>(vd.name);
  MYRIAD_COLLISION_REAL_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, length, from) \
  for (int k = 0; k < (length); ++k) v.name[k] = static_cast<float>(vd.name[k]);
  MYRIAD_COLLISION_REAL_VECTORS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from) v.name = vd.name;
  MYRIAD_COLLISION_INT_ARRAYS(MYRIAD_X)
  MYRIAD_COLLISION_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#define MYRIAD_X(name, rows, cols, from)                            \
  store.emplace_back(vd.name, vd.name + int64_t{vd.rows} * (cols)); \
  v.name = store.back().data();
  MYRIAD_COLLISION_REAL_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
  return v;
}

std::string describe(const Contact<double>& c) {
  std::ostringstream s;
  s.precision(17);
  s << "g" << c.geom1 << "-g" << c.geom2 << " dist " << c.dist << " pos " << c.pos[0] << " "
    << c.pos[1] << " " << c.pos[2] << " n " << c.frame[0] << " " << c.frame[1] << " " << c.frame[2];
  return s.str();
}

std::string describe(const mjContact& c) {
  Contact<double> k{};
  k.dist = c.dist;
  for (int i = 0; i < 3; ++i) k.pos[i] = c.pos[i];
  for (int i = 0; i < 9; ++i) k.frame[i] = c.frame[i];
  k.geom1 = c.geom1;
  k.geom2 = c.geom2;
  return describe(k);
}

bool near(double a, double b) { return std::fabs(a - b) <= kTol; }

// Runs libmujoco's kinematics and collision and ours on the same poses; true when they agree.
// Adds at most one failure per call (with both contact lists).
bool matches_mujoco(const mjModel* m, mjData* d, const std::string& what, int* ncon_out = nullptr) {
  mj_kinematics(m, d);
  mj_collision(m, d);
  const CollisionModel<double> v = view(m);
  const int npair = collision_pairs(v, nullptr, 0);
  std::vector<CollisionPair> pairs(npair);
  collision_pairs(v, pairs.data(), npair);
  const int cap = max_contacts(v, pairs.data(), npair);
  const int room = cap + pair_scratch(v, pairs.data(), npair);
  std::vector<Contact<double>> mine(room);
  const int n = collide(v, pairs.data(), npair, d->geom_xpos, d->geom_xmat, mine.data(), room);
  if (ncon_out) *ncon_out = d->ncon;
  EXPECT_LE(n, cap) << what << ": more contacts than the model's bound";
  std::string why;
  if (n != d->ncon) why = "ncon " + std::to_string(n) + " vs libmujoco " + std::to_string(d->ncon);
  for (int i = 0; why.empty() && i < n; ++i) {
    const Contact<double>& a = mine[i];
    const mjContact& b = d->contact[i];
    bool ok = a.geom1 == b.geom1 && a.geom2 == b.geom2 && a.dim == b.dim &&
              a.exclude == b.exclude && near(a.dist, b.dist) &&
              near(a.includemargin, b.includemargin);
    for (int k = 0; k < 3; ++k) ok = ok && near(a.pos[k], b.pos[k]);
    for (int k = 0; k < 9; ++k) ok = ok && near(a.frame[k], b.frame[k]);
    for (int k = 0; k < 5; ++k) ok = ok && near(a.friction[k], b.friction[k]);
    for (int k = 0; k < kNRef; ++k) ok = ok && near(a.solref[k], b.solref[k]);
    for (int k = 0; k < kNImp; ++k) ok = ok && near(a.solimp[k], b.solimp[k]);
    if (!ok) why = "contact " + std::to_string(i) + " differs";
  }
  if (why.empty()) return true;
  std::ostringstream s;
  s << what << ": " << why << "\n mine:";
  for (int i = 0; i < n && i < cap; ++i) s << "\n  " << describe(mine[i]);
  s << "\n libmujoco:";
  for (int i = 0; i < d->ncon; ++i) s << "\n  " << describe(d->contact[i]);
  ADD_FAILURE() << s.str();
  return false;
}

// ---------------------------------------------------------------------------------------------
// Pair functions: random and degenerate poses.

struct Rng {
  std::mt19937_64 gen{20240917};
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(gen);
  }
  int below(int n) { return static_cast<int>(gen() % static_cast<uint64_t>(n)); }
  void unit(double* v) {
    std::normal_distribution<double> g;
    double n2 = 0;
    do {
      n2 = 0;
      for (int k = 0; k < 3; ++k) {
        v[k] = g(gen);
        n2 += v[k] * v[k];
      }
    } while (n2 < 1e-6);
    for (int k = 0; k < 3; ++k) v[k] /= std::sqrt(n2);
  }
  void quat(double* q) {
    std::normal_distribution<double> g;
    double n2 = 0;
    for (int k = 0; k < 4; ++k) {
      q[k] = g(gen);
      n2 += q[k] * q[k];
    }
    for (int k = 0; k < 4; ++k) q[k] /= std::sqrt(n2);
  }
  // One of the 24 rotations that map axes onto axes.
  void axis_quat(double* q) {
    double mat[9];
    for (;;) {
      const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
      const int* p = perm[below(6)];
      for (int k = 0; k < 9; ++k) mat[k] = 0;
      for (int r = 0; r < 3; ++r) mat[3 * r + p[r]] = below(2) ? 1 : -1;
      const double det = mat[0] * (mat[4] * mat[8] - mat[5] * mat[7]) -
                         mat[1] * (mat[3] * mat[8] - mat[5] * mat[6]) +
                         mat[2] * (mat[3] * mat[7] - mat[4] * mat[6]);
      if (det > 0) break;
    }
    mju_mat2Quat(q, mat);
  }
};

const char* type_name(int t) { return geom_type_name(t); }

// Random size and the matching bounding radius (as the compiler sets geom_rbound).
void random_size(Rng& rng, int type, double* size, double* rbound) {
  size[0] = size[1] = size[2] = 0;
  if (type == kSphere) {
    size[0] = rng.uniform(0.05, 0.5);
    *rbound = size[0];
  } else if (type == kCapsule) {
    size[0] = rng.uniform(0.05, 0.3);
    size[1] = rng.uniform(0.05, 0.5);
    *rbound = size[0] + size[1];
  } else if (type == kBox) {
    for (int k = 0; k < 3; ++k) size[k] = rng.uniform(0.05, 0.5);
    *rbound = std::sqrt(size[0] * size[0] + size[1] * size[1] + size[2] * size[2]);
  }
}

// Two geoms (typeA then typeB, each on a free body; a plane on the world body) in `configs`
// poses; returns how many poses gave contacts, -1 at the first mismatch.
int run_pair(int typeA, int typeB, int configs, int* total_contacts) {
  auto geom = [](int type, const char* name) {
    std::string s = std::string("<geom name=\"") + name + "\" type=\"" + type_name(type) + "\" ";
    if (type == kPlane) return s + "size=\"0 0 1\"/>";
    return s + "size=\"0.1 0.1 0.1\"/>";
  };
  // A plane goes in the world body (its pose set through geom_pos/geom_quat): libmujoco 2.2.2
  // collides a plane on a world-welded body twice when its sweep-and-prune also finds the pair
  // (see PlaneOnWorldWeldedBody below).
  auto body = [&](int type, const char* name, const char* gname) {
    if (type == kPlane) return geom(type, gname);
    return std::string("<body name=\"") + name + "\"><freejoint/>" + geom(type, gname) + "</body>";
  };
  const std::string xml = "<mujoco><worldbody>" + body(typeA, "a", "ga") + body(typeB, "b", "gb") +
                          "</worldbody></mujoco>";
  auto md = load(xml);
  if (!md) return 0;
  mjModel* m = md->m;
  mjData* d = md->d;
  Rng rng;
  rng.gen.seed(1000 + 10 * typeA + typeB);
  int with_contacts = 0;
  *total_contacts = 0;
  for (int c = 0; c < configs; ++c) {
    const int types[2] = {typeA, typeB};
    double size[2][3], rb[2];
    for (int g = 0; g < 2; ++g) {
      random_size(rng, types[g], size[g], &rb[g]);
      if (types[g] == kPlane) rb[g] = 0;
      for (int k = 0; k < 3; ++k) m->geom_size[3 * g + k] = size[g][k];
      m->geom_rbound[g] = rb[g];
      // MuJoCo 3's broad phase reads the geom's local bounding box (center, half-sizes), which
      // the compiler derived from the size: set it for the new size too.
      if (types[g] != kPlane) {
        const double r = size[g][0];
        const double half[3] = {types[g] == kBox ? size[g][0] : r,
                                types[g] == kBox ? size[g][1] : r,
                                types[g] == kBox       ? size[g][2]
                                : types[g] == kCapsule ? size[g][1] + r
                                                       : r};
        for (int k = 0; k < 3; ++k) {
          m->geom_aabb[6 * g + k] = 0;
          m->geom_aabb[6 * g + 3 + k] = half[k];
        }
      }
      // Margins in a third of the poses, gaps in half of those.
      m->geom_margin[g] = (c % 3 == 0) ? rng.uniform(0, 0.1) : 0;
      m->geom_gap[g] = (c % 6 == 0) ? m->geom_margin[g] * rng.uniform(0, 1) : 0;
    }
    // Orientations: random; identity; axis-aligned (24 rotations); geom B aligned with A.
    const int mode = c % 4;
    double q[2][4];
    for (int g = 0; g < 2; ++g) {
      if (mode == 0) rng.quat(q[g]);
      if (mode == 1) q[g][0] = 1, q[g][1] = q[g][2] = q[g][3] = 0;
      if (mode == 2) rng.axis_quat(q[g]);
    }
    if (mode == 3) {
      rng.quat(q[0]);
      double turn[4];
      rng.axis_quat(turn);
      mju_mulQuat(q[1], q[0], turn);
    }
    // Positions: A near the origin; B at a distance that spans separated, touching (within
    // margin) and penetrating, along a random direction or one of A's axes.
    double pa[3], pb[3], dir[3];
    for (int k = 0; k < 3; ++k) pa[k] = rng.uniform(-0.3, 0.3);
    double mat[9];
    mju_quat2Mat(mat, q[0]);
    const int plane = typeA == kPlane ? 0 : (typeB == kPlane ? 1 : -1);
    const double margin = std::max(m->geom_margin[0], m->geom_margin[1]);
    if (plane >= 0) {
      // The other geom's center at height h over the plane, anywhere across it.
      double pm[9];
      mju_quat2Mat(pm, q[plane]);
      const double n[3] = {pm[2], pm[5], pm[8]};
      const double h = rng.uniform(-rb[1 - plane], rb[1 - plane] + margin + 0.05);
      double* pp = plane == 0 ? pa : pb;
      double* po = plane == 0 ? pb : pa;
      for (int k = 0; k < 3; ++k) pp[k] = rng.uniform(-0.3, 0.3);
      for (int k = 0; k < 3; ++k)
        po[k] =
            pp[k] + n[k] * h + pm[3 * k] * rng.uniform(-1, 1) + pm[3 * k + 1] * rng.uniform(-1, 1);
      // Exactly touching now and then.
      if (c % 7 == 0 && types[1 - plane] == kSphere) {
        for (int k = 0; k < 3; ++k) po[k] = pp[k] + n[k] * size[1 - plane][0];
      }
    } else {
      const bool along_axis = (mode != 0) && rng.below(2);
      if (along_axis) {
        const int ax = rng.below(3);
        const double sgn = rng.below(2) ? 1 : -1;
        for (int k = 0; k < 3; ++k) dir[k] = sgn * mat[3 * k + ax];
      } else {
        rng.unit(dir);
      }
      const double reach = rb[0] + rb[1];
      double dist = rng.uniform(0, 1.1) * reach;
      // Boxes and capsules face to face: exactly touching, slightly in, or within margin.
      if (along_axis && rng.below(2)) {
        double ext[2];
        for (int g = 0; g < 2; ++g) {
          double gm[9];
          mju_quat2Mat(gm, q[g]);
          ext[g] = 0;
          for (int col = 0; col < 3; ++col) {
            const double proj =
                std::fabs(gm[col] * dir[0] + gm[3 + col] * dir[1] + gm[6 + col] * dir[2]);
            if (types[g] == kBox) ext[g] += size[g][col] * proj;
            if (types[g] == kCapsule && col == 2) ext[g] += size[g][1] * proj;
          }
          if (types[g] != kBox) ext[g] += size[g][0];
        }
        const double delta[4] = {0, -0.01, 0.5 * margin, -0.2 * std::min(ext[0], ext[1])};
        dist = ext[0] + ext[1] + delta[rng.below(4)];
      }
      for (int k = 0; k < 3; ++k) pb[k] = pa[k] + dir[k] * dist;
      // Sideways shifts keep faces partly overlapping.
      if (along_axis) {
        for (int k = 0; k < 3; ++k) pb[k] += rng.uniform(-0.2, 0.2) * (1 - std::fabs(dir[k]));
      }
      // Coincident centers now and then.
      if (c % 50 == 7) {
        for (int k = 0; k < 3; ++k) pb[k] = pa[k];
      }
    }
    // Write the poses.
    const double* pos[2] = {pa, pb};
    for (int g = 0; g < 2; ++g) {
      const int b = m->geom_bodyid[g];
      if (types[g] == kPlane) {
        for (int k = 0; k < 3; ++k) m->geom_pos[3 * g + k] = pos[g][k];
        for (int k = 0; k < 4; ++k) m->geom_quat[4 * g + k] = q[g][k];
      } else {
        const int adr = m->jnt_qposadr[m->body_jntadr[b]];
        for (int k = 0; k < 3; ++k) d->qpos[adr + k] = pos[g][k];
        for (int k = 0; k < 4; ++k) d->qpos[adr + 3 + k] = q[g][k];
      }
    }
    int ncon = 0;
    const std::string what = std::string(type_name(typeA)) + "-" + type_name(typeB) + " pose " +
                             std::to_string(c) + " (mode " + std::to_string(mode) + ")";
    if (!matches_mujoco(m, d, what, &ncon)) return -1;
    with_contacts += ncon > 0;
    *total_contacts += ncon;
  }
  return with_contacts;
}

struct PairCase {
  int a, b;
};

void PrintTo(const PairCase& c, std::ostream* os) {
  *os << geom_type_name(c.a) << "-" << geom_type_name(c.b);
}

class PairFunctions : public ::testing::TestWithParam<PairCase> {};

TEST_P(PairFunctions, MatchLibmujocoOnRandomAndDegeneratePoses) {
  const PairCase pc = GetParam();
  int total = 0;
  const int configs = 3000;
  const int with = run_pair(pc.a, pc.b, configs, &total);
  ASSERT_GE(with, 0);
  // Enough poses make contacts for the comparison to mean something.
  EXPECT_GT(with, configs / 10) << total << " contacts";
  std::printf("%s-%s: %d poses, %d with contacts, %d contacts\n", geom_type_name(pc.a),
              geom_type_name(pc.b), configs, with, total);
}

INSTANTIATE_TEST_SUITE_P(AllSupportedPairs, PairFunctions,
                         ::testing::Values(PairCase{kPlane, kSphere}, PairCase{kPlane, kCapsule},
                                           PairCase{kPlane, kBox}, PairCase{kSphere, kSphere},
                                           PairCase{kSphere, kCapsule}, PairCase{kCapsule, kSphere},
                                           PairCase{kSphere, kBox}, PairCase{kBox, kSphere},
                                           PairCase{kCapsule, kCapsule}, PairCase{kCapsule, kBox},
                                           PairCase{kBox, kCapsule}, PairCase{kBox, kBox}),
                         [](const ::testing::TestParamInfo<PairCase>& info) {
                           return std::string(geom_type_name(info.param.a)) + "_" +
                                  geom_type_name(info.param.b);
                         });

// ---------------------------------------------------------------------------------------------
// Scenes: filters, explicit pairs, parameters, order.

// Sets every free joint's pose (random orientation, position in a cube of side `spread` at
// height z0) and compares.
void random_free_poses(mjModel* m, mjData* d, Rng& rng, double spread, double z0) {
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_type[j] == mjJNT_FREE) {
      double* q = d->qpos + m->jnt_qposadr[j];
      for (int k = 0; k < 3; ++k) q[k] = rng.uniform(-spread, spread);
      q[2] += z0;
      rng.quat(q + 3);
    } else if (m->jnt_type[j] == mjJNT_HINGE) {
      d->qpos[m->jnt_qposadr[j]] = rng.uniform(-1, 1);
    }
  }
}

// Geom ids of each contact, as (body1, body2) pairs.
std::vector<std::pair<int, int>> contact_bodies(const mjModel* m, const mjData* d) {
  std::vector<std::pair<int, int>> out;
  for (int i = 0; i < d->ncon; ++i)
    out.emplace_back(m->geom_bodyid[d->contact[i].geom1], m->geom_bodyid[d->contact[i].geom2]);
  return out;
}

bool has_contact(const mjModel* m, const mjData* d, const char* body1, const char* body2) {
  const int b1 = mj_name2id(m, mjOBJ_BODY, body1), b2 = mj_name2id(m, mjOBJ_BODY, body2);
  for (auto [a, b] : contact_bodies(m, d))
    if ((a == b1 && b == b2) || (a == b2 && b == b1)) return true;
  return false;
}

TEST(CollisionFilter, ContypeConaffinity) {
  auto md = load(R"(<mujoco><worldbody>
    <geom type="plane" size="0 0 1" contype="1" conaffinity="1"/>
    <body name="a" pos="0 0 0.1"><freejoint/>
      <geom type="sphere" size="0.15" contype="1" conaffinity="0"/></body>
    <body name="b" pos="0.2 0 0.1"><freejoint/>
      <geom type="sphere" size="0.15" contype="2" conaffinity="1"/></body>
    <body name="c" pos="0.1 0.2 0.1"><freejoint/>
      <geom type="box" size="0.1 0.1 0.1" contype="2" conaffinity="2"/></body>
    <body name="d" pos="0.1 0.1 0.1"><freejoint/>
      <geom type="capsule" size="0.05 0.2" contype="0" conaffinity="0"/></body>
  </worldbody></mujoco>)");
  ASSERT_TRUE(md);
  ASSERT_TRUE(matches_mujoco(md->m, md->d, "contype"));
  EXPECT_TRUE(has_contact(md->m, md->d, "a", "b"));   // 1 & 1
  EXPECT_TRUE(has_contact(md->m, md->d, "b", "c"));   // 2 & 2
  EXPECT_FALSE(has_contact(md->m, md->d, "a", "c"));  // 1 & 2, 2 & 0
  for (const char* other : {"a", "b", "c"}) EXPECT_FALSE(has_contact(md->m, md->d, "d", other));
  EXPECT_TRUE(has_contact(md->m, md->d, "world", "a"));
}

const char* const kChain = R"(<mujoco>%s<worldbody>
    <geom type="plane" size="0 0 1"/>
    <body name="base" pos="0 0 0.5">
      <geom type="box" size="0.1 0.1 0.1"/>
      <body name="arm" pos="0 0 0.15"><joint type="hinge" axis="1 0 0"/>
        <geom type="capsule" size="0.05 0.1"/>
        <body name="hand" pos="0 0 0.15"><joint type="hinge" axis="0 1 0"/>
          <geom type="sphere" size="0.08"/>
          <body name="finger" pos="0 0 0.02"><geom type="sphere" size="0.05"/></body>
        </body>
      </body>
    </body>
    <body name="free" pos="0.1 0 0.45"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
  </worldbody></mujoco>)";

std::string with_option(const char* templ, const std::string& option) {
  std::string s = templ;
  return s.replace(s.find("%s"), 2, option);
}

TEST(CollisionFilter, ParentChildAndWeld) {
  auto md = load(with_option(kChain, ""));
  ASSERT_TRUE(md);
  ASSERT_TRUE(matches_mujoco(md->m, md->d, "chain"));
  // base is welded to the world: the parent filter does not apply to arm-base.
  EXPECT_TRUE(has_contact(md->m, md->d, "base", "arm"));
  // hand is arm's child, finger is welded to hand (same weld body), hand's weld parent is arm.
  EXPECT_FALSE(has_contact(md->m, md->d, "arm", "hand"));
  EXPECT_FALSE(has_contact(md->m, md->d, "hand", "finger"));
  EXPECT_FALSE(has_contact(md->m, md->d, "arm", "finger"));
  EXPECT_TRUE(has_contact(md->m, md->d, "base", "free"));

  auto off = load(with_option(kChain, R"(<option><flag filterparent="disable"/></option>)"));
  ASSERT_TRUE(off);
  ASSERT_TRUE(matches_mujoco(off->m, off->d, "chain, filterparent off"));
  EXPECT_TRUE(has_contact(off->m, off->d, "arm", "hand"));
  EXPECT_TRUE(has_contact(off->m, off->d, "arm", "finger"));
  EXPECT_FALSE(has_contact(off->m, off->d, "hand", "finger"));

  Rng rng;
  for (int c = 0; c < 200; ++c) {
    random_free_poses(md->m, md->d, rng, 0.2, 0.5);
    ASSERT_TRUE(matches_mujoco(md->m, md->d, "chain pose " + std::to_string(c)));
  }
}

TEST(CollisionFilter, ExcludeAndExplicitPairs) {
  const char* templ = R"(<mujoco>%s<worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <body name="a" pos="0 0 0.1"><freejoint/>
      <geom name="a1" type="sphere" size="0.15"/>
      <geom name="a2" type="box" size="0.1 0.1 0.1" pos="0 0 -0.05"/></body>
    <body name="b" pos="0.2 0 0.1"><freejoint/>
      <geom name="b1" type="capsule" size="0.1 0.1"/></body>
    <body name="c" pos="0.1 0.15 0.1"><freejoint/>
      <geom name="c1" type="box" size="0.1 0.1 0.1" contype="0" conaffinity="0"/></body>
  </worldbody>
  <contact>
    <exclude body1="a" body2="b"/>
    <pair geom1="b1" geom2="c1" condim="6" friction="0.3 0.2 0.01 0.002 0.001" margin="0.02"
          gap="0.01" solref="0.05 0.8" solimp="0.8 0.9 0.002 0.4 3"/>
    <pair geom1="c1" geom2="a1" condim="1"/>
    <pair geom1="a2" geom2="floor" condim="4"/>
  </contact></mujoco>)";
  auto md = load(with_option(templ, ""));
  ASSERT_TRUE(md);
  ASSERT_TRUE(matches_mujoco(md->m, md->d, "exclude/pair"));
  EXPECT_FALSE(has_contact(md->m, md->d, "a", "b"));  // excluded
  EXPECT_TRUE(has_contact(md->m, md->d, "b", "c"));   // explicit, despite contype 0
  int floor_a2 = 0;  // a2-floor is both dynamic and explicit: collided once, as the pair
  for (int i = 0; i < md->d->ncon; ++i) {
    const mjContact& k = md->d->contact[i];
    if (k.geom1 == 0 && k.geom2 == mj_name2id(md->m, mjOBJ_GEOM, "a2")) {
      ++floor_a2;
      EXPECT_EQ(k.dim, 4);
    }
  }
  EXPECT_GT(floor_a2, 0);
  // MuJoCo 3 always collides explicit and dynamic pairs together (opt.collision is gone).
  Rng rng;
  for (int c = 0; c < 300; ++c) {
    random_free_poses(md->m, md->d, rng, 0.2, 0.15);
    ASSERT_TRUE(matches_mujoco(md->m, md->d, "exclude/pair pose " + std::to_string(c)));
  }
}

TEST(CollisionParams, MarginGapPriorityMixingOverride) {
  const char* templ = R"(<mujoco>%s<worldbody>
    <geom type="plane" size="0 0 1" margin="0.05" gap="0.02" friction="0.7 0.01 0.001"
          solref="0.01 0.5" priority="1" condim="1"/>
    <body pos="0 0 0.3"><freejoint/>
      <geom type="sphere" size="0.1" margin="0.03" gap="0.01" condim="4" solmix="2"
            friction="0.4 0.02 0.003" solref="0.03 1.2" solimp="0.8 0.9 0.01 0.3 4"/></body>
    <body pos="0.2 0 0.3"><freejoint/>
      <geom type="box" size="0.1 0.08 0.06" solmix="0.5" condim="6" friction="1.1 0.001 0"
            solref="-100 -10" solimp="0.7 0.95 0.02 0.6 2"/></body>
    <body pos="0 0.2 0.3"><freejoint/>
      <geom type="capsule" size="0.06 0.1" solmix="0" condim="3" solref="0.04 0.9"
            solimp="0.6 0.9 0.003 0.5 2" margin="0.01"/></body>
    <body pos="0.2 0.2 0.3"><freejoint/>
      <geom type="sphere" size="0.08" solmix="0" priority="-1" condim="6"
            friction="2 0.1 0.1" solref="0.02 1"/></body>
  </worldbody></mujoco>)";
  Rng rng;
  for (const char* option :
       // o_margin stays at most every geom margin: libmujoco's sweep-and-prune sizes its boxes
       // with the geom margins and would miss pairs within a larger o_margin (Myriad has no such
       // pose-dependent pruning).
       {"", R"(<option o_margin="0" o_solref="0.07 0.6" o_solimp="0.5 0.8 0.004 0.2 3">
                <flag override="enable"/></option>)"}) {
    auto md = load(with_option(templ, option));
    ASSERT_TRUE(md);
    int active = 0, in_gap = 0;
    for (int c = 0; c < 1000; ++c) {
      random_free_poses(md->m, md->d, rng, 0.2, 0.12);
      ASSERT_TRUE(matches_mujoco(md->m, md->d, std::string(option) + " pose " + std::to_string(c)));
      for (int i = 0; i < md->d->ncon; ++i) (md->d->contact[i].exclude ? in_gap : active)++;
    }
    EXPECT_GT(active, 100);
    EXPECT_GT(in_gap, 10);  // contacts within margin but outside margin - gap
  }
}

// Box-box contacts at identical positions are removed (aligned equal boxes; a box turned 45
// degrees on another).
TEST(CollisionScenes, BoxBoxRepeatedContactsRemoved) {
  auto md = load(R"(<mujoco><worldbody>
    <body pos="0 0 0"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body pos="0 0 0.199"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
  </worldbody></mujoco>)");
  ASSERT_TRUE(md);
  mjModel* m = md->m;
  mjData* d = md->d;
  struct Case {
    double shift[3], angle;
  };
  const Case cases[] = {{{0, 0, 0}, 0},   {{0.05, 0, 0}, 0},     {{0.05, 0.03, 0}, 0},
                        {{0, 0, 0}, 45},  {{0.02, 0.01, 0}, 45}, {{0, 0, 0}, 90},
                        {{0.2, 0, 0}, 0}, {{0.2, 0.2, 0}, 0},    {{0, 0, 0.001}, 30}};
  int raw_total = 0, kept_total = 0;
  for (const Case& k : cases) {
    const int adr = m->jnt_qposadr[1];
    d->qpos[adr + 0] = k.shift[0];
    d->qpos[adr + 1] = k.shift[1];
    d->qpos[adr + 2] = 0.199 + k.shift[2];
    const double half = k.angle * M_PI / 360;
    d->qpos[adr + 3] = std::cos(half);
    d->qpos[adr + 4] = d->qpos[adr + 5] = 0;
    d->qpos[adr + 6] = std::sin(half);
    int ncon = 0;
    ASSERT_TRUE(matches_mujoco(m, d, "stacked boxes, angle " + std::to_string(k.angle), &ncon));
    Contact<double> raw[kMaxBoxBoxContacts];
    raw_total += box_box(raw, 0.0, d->geom_xpos, d->geom_xmat, m->geom_size, d->geom_xpos + 3,
                         d->geom_xmat + 9, m->geom_size + 3);
    kept_total += ncon;
  }
  EXPECT_GT(raw_total, kept_total);  // the removal was exercised
}

// Pair functions write in place at the end of the contact list: a model with a box-box pair
// needs 16 entries past its bound (24 written, 8 kept), any other none; with less room than
// that, collide() says so (-1) instead of writing past the list.
TEST(CollisionScenes, ContactRoomForThePairFunctions) {
  auto boxes = load(R"(<mujoco><worldbody><geom type="plane" size="0 0 1"/>
    <body pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body pos="0 0 0.299"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
  </worldbody></mujoco>)");
  auto balls = load(R"(<mujoco><worldbody><geom type="plane" size="0 0 1"/>
    <body pos="0 0 0.09"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
  </worldbody></mujoco>)");
  ASSERT_TRUE(boxes && balls);
  for (auto* md : {boxes.get(), balls.get()}) {
    mj_kinematics(md->m, md->d);
    const CollisionModel<double> v = view(md->m);
    CollisionPair pairs[8];
    const int npair = collision_pairs(v, pairs, 8);
    const int bound = max_contacts(v, pairs, npair), extra = pair_scratch(v, pairs, npair);
    EXPECT_EQ(extra, md == boxes.get() ? kMaxBoxBoxContacts - kMaxBoxBoxKept : 0);
    std::vector<Contact<double>> con(bound + extra);
    const int n =
        collide(v, pairs, npair, md->d->geom_xpos, md->d->geom_xmat, con.data(), bound + extra);
    EXPECT_GT(n, 0);
    EXPECT_LE(n, bound);
    if (extra > 0)
      EXPECT_EQ(collide(v, pairs, npair, md->d->geom_xpos, md->d->geom_xmat, con.data(), bound),
                -1);
  }
}

// Many bodies with several geoms each: the contact order (body pairs by signature, geoms by
// index, explicit pairs merged) and the contact bound.
TEST(CollisionScenes, ClusterOrderAndBound) {
  std::string xml = R"(<mujoco><worldbody><geom type="plane" size="0 0 1"/>
                       <geom type="box" size="0.2 0.2 0.05" pos="0.3 0 0"/>)";
  const char* shapes[] = {R"(type="sphere" size="0.08"/>)",
                          R"(type="capsule" size="0.05 0.1" pos="0.05 0 0"/>)",
                          R"(type="box" size="0.07 0.05 0.04" pos="0 0.05 0"/>)"};
  for (int b = 0; b < 8; ++b) {
    xml += "<body name=\"b" + std::to_string(b) + "\"><freejoint/>";
    for (int g = 0; g <= b % 3; ++g)
      xml += "<geom name=\"g" + std::to_string(b) + "_" + std::to_string(g) + "\" " +
             shapes[(b + g) % 3];
    xml += "</body>";
  }
  // Explicit pairs: one also found dynamically, one between bodies of other pairs.
  xml += R"(</worldbody><contact><pair geom1="g2_1" geom2="g1_0" condim="1"/>
            <pair geom1="g7_0" geom2="g3_0" margin="0.01"/></contact></mujoco>)";
  auto md = load(xml);
  ASSERT_TRUE(md);
  const CollisionModel<double> v = view(md->m);
  const int npair = collision_pairs(v, nullptr, 0);
  std::vector<CollisionPair> pairs(npair);
  collision_pairs(v, pairs.data(), npair);
  int expected = 0;
  for (const CollisionPair& p : pairs)
    expected += max_pair_contacts(md->m->geom_type[p.geom1], md->m->geom_type[p.geom2]);
  EXPECT_EQ(max_contacts(v, pairs.data(), npair), expected);
  EXPECT_EQ(first_unsupported_pair(v, pairs.data(), npair), -1);
  Rng rng;
  int most = 0;
  for (int c = 0; c < 500; ++c) {
    random_free_poses(md->m, md->d, rng, 0.25, 0.15);
    int ncon = 0;
    ASSERT_TRUE(matches_mujoco(md->m, md->d, "cluster pose " + std::to_string(c), &ncon));
    most = std::max(most, ncon);
  }
  EXPECT_GT(most, 10);
}

// Unsupported types are listed and named so that an importer can refuse them.
TEST(CollisionScenes, UnsupportedTypesAreNamed) {
  auto md = load(R"(<mujoco><asset><mesh name="tet" vertex="0 0 0 .1 0 0 0 .1 0 0 0 .1"/></asset>
    <worldbody><geom type="plane" size="0 0 1"/>
    <body><freejoint/><geom type="cylinder" size="0.1 0.1"/></body>
    <body pos="1 0 0"><freejoint/><geom type="mesh" mesh="tet"/></body></worldbody></mujoco>)");
  ASSERT_TRUE(md);
  const CollisionModel<double> v = view(md->m);
  CollisionPair pairs[4];
  const int n = collision_pairs(v, pairs, 4);
  ASSERT_EQ(n, 3);  // plane-cylinder, plane-mesh, cylinder-mesh
  const int bad = first_unsupported_pair(v, pairs, n);
  ASSERT_GE(bad, 0);
  EXPECT_STREQ(geom_type_name(md->m->geom_type[pairs[bad].geom2]), "mesh");
  EXPECT_TRUE(pair_supported(kPlane, kCylinder));
  EXPECT_TRUE(pair_supported(kEllipsoid, kHField));
  EXPECT_FALSE(pair_supported(kHField, kMesh));
  EXPECT_FALSE(pair_supported(kHField, kPlane));
  EXPECT_STREQ(geom_type_name(kEllipsoid), "ellipsoid");
  EXPECT_STREQ(geom_type_name(kMesh), "mesh");
}

// A plane on a non-world body welded to the world collides with every body once (libmujoco
// 2.2.2's sweep-and-prune could add the same body pair twice and report every contact twice;
// MuJoCo 3 and Myriad collide each pair once).
TEST(CollisionScenes, PlaneOnWorldWeldedBody) {
  auto md = load(R"(<mujoco><worldbody>
    <body name="ground" pos="0 0 0"><geom type="plane" size="0 0 1"/></body>
    <body pos="0 0 0.05"><freejoint/><geom type="sphere" size="0.1"/></body>
  </worldbody></mujoco>)");
  ASSERT_TRUE(md);
  mj_kinematics(md->m, md->d);
  mj_collision(md->m, md->d);
  const CollisionModel<double> v = view(md->m);
  CollisionPair pairs[4];
  const int npair = collision_pairs(v, pairs, 4);
  Contact<double> con[4];
  const int n = collide(v, pairs, npair, md->d->geom_xpos, md->d->geom_xmat, con, 4);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(md->d->ncon, 1);
  EXPECT_TRUE(matches_mujoco(md->m, md->d, "plane on a welded body"));
}

// The same code in float: agrees with libmujoco to float rounding on clear-cut poses.
TEST(CollisionScenes, Float32) {
  auto md = load(R"(<mujoco><worldbody><geom type="plane" size="0 0 1"/>
    <body pos="0 0 0.08"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body pos="0.3 0 0.08"><freejoint/><geom type="capsule" size="0.1 0.1"/></body>
    <body pos="0.15 0 0.25"><freejoint/><geom type="sphere" size="0.1"/></body>
  </worldbody></mujoco>)");
  ASSERT_TRUE(md);
  mjModel* m = md->m;
  mj_kinematics(m, md->d);
  mj_collision(m, md->d);
  auto f = [](const double* p, int n) { return std::vector<float>(p, p + n); };
  const auto xpos = f(md->d->geom_xpos, 3 * m->ngeom), xmat = f(md->d->geom_xmat, 9 * m->ngeom);
  std::deque<std::vector<float>> store;
  const CollisionModel<float> v = view_float(m, store);
  const int npair = collision_pairs(v, nullptr, 0);
  std::vector<CollisionPair> pairs(npair);
  collision_pairs(v, pairs.data(), npair);
  std::vector<Contact<float>> con(max_contacts(v, pairs.data(), npair) +
                                  pair_scratch(v, pairs.data(), npair));
  const int n = collide(v, pairs.data(), npair, xpos.data(), xmat.data(), con.data(),
                        static_cast<int>(con.size()));
  ASSERT_EQ(n, md->d->ncon);
  ASSERT_GT(n, 5);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(con[i].geom1, md->d->contact[i].geom1);
    EXPECT_NEAR(con[i].dist, md->d->contact[i].dist, 1e-6);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(con[i].pos[k], md->d->contact[i].pos[k], 1e-6);
    for (int k = 0; k < 9; ++k) EXPECT_NEAR(con[i].frame[k], md->d->contact[i].frame[k], 1e-6);
  }
}

}  // namespace
}  // namespace myriad::physics::collision
