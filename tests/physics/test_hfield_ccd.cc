// Height field against sphere, capsule and box (physics/collision/hfield.h, ccd.h) against
// libmujoco 3.11's mj_collision (mjc_ConvexHField with native GJK/EPA), on the scenes of
// spikes/hfield_ccd/check.py: random height fields with nrow != ncol, tilted frames, geom margins
// 0 / 0.01 / 0.02, random poses (shallow, deep, partly outside the field), axis-aligned poses on
// plateaus (exact touching, grazing), non-default ccd settings, and scenes that hit the 50-contact
// cap. Double: count exact, dist and pos bitwise, frame normal within 1e-12. Float (the same
// inputs rounded): finite results, the count differs in at most 10% of the pairs and by at most 5%
// in total, and a float contact within 1e-3 of a double one has its dist within 1e-3 (flat contacts
// have no well-defined point, so some float contacts sit elsewhere on the face: counted, not
// checked). Built with -ffp-contract=off (no FMA), as 3.11's x86-64 build computes.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// The most faces any EPA call used (ccd.h's test hook).
static int g_peak_faces = 0;
#define MYRIAD_CCD_NOTE_FACES(n) (g_peak_faces = (n) > g_peak_faces ? (n) : g_peak_faces)
// GJK passes replayed because gjkIntersect returned -1 (ccd.h's test hook).
static int g_replays = 0;
#define MYRIAD_CCD_NOTE_REPLAY() (++g_replays)

#include "physics/collision/hfield.h"
#include "tests/physics/mj_from_string.h"

namespace myriad::physics::collision {
namespace {

using test_support::load_mj_string;
using test_support::MjLoaded;

// Totals of one comparison run.
struct Stats {
  int pairs = 0;
  int contacts_mj = 0;
  int contacts_mine = 0;
  int count_mismatch = 0;
  int not_bitwise = 0;  // contacts whose dist or pos differ in any bit
  int capped = 0;       // pairs with kMaxHFieldContacts contacts
  double dist = 0, pos = 0, frame = 0;
  // float32 run on the same inputs
  int contacts_f32 = 0;
  int count_mismatch_f32 = 0;  // pairs whose float count differs from the double one
  int nonfinite_f32 = 0;
  int unmatched_f32 = 0;  // float contacts with no double contact within kMatchPos
  double dist_f32 = 0;    // max |dist_f32 - dist_f64| over matched contacts
  Stats() { g_peak_faces = g_replays = 0; }
};

// A float contact matches the double contact nearest to it when their positions are this close.
constexpr double kMatchPos = 1e-3;

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

// Random elevations with some structure (as check.py makes them).
std::vector<double> random_elevation(std::mt19937_64& rng, int nrow, int ncol) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> e(nrow * ncol);
  for (int r = 0; r < nrow; ++r)
    for (int c = 0; c < ncol; ++c)
      e[r * ncol + c] = 0.5 * u(rng) + 0.5 * (0.5 + 0.5 * std::sin(c / 2.0) * std::cos(r / 3.0));
  return e;
}

// One height field and three free bodies (sphere, capsule, box), as check.py's make_xml.
std::string make_xml(int nrow, int ncol, const std::vector<double>& elev, const double* size,
                     const double* tilt, double margin, const std::string& option,
                     const std::string& sphere = "0.23", const std::string& capsule = "0.12 0.3",
                     const std::string& box = "0.2 0.15 0.1") {
  std::string e;
  for (double v : elev) e += fmt("%.6f ", v);
  char head[512];
  std::snprintf(head, sizeof head,
                "<mujoco><option timestep=\"0.002\" %s/><asset><hfield name=\"hf\" nrow=\"%d\" "
                "ncol=\"%d\" size=\"%g %g %g %g\" elevation=\"",
                option.c_str(), nrow, ncol, size[0], size[1], size[2], size[3]);
  const std::string m = fmt("%g", margin);
  char body[256];
  std::snprintf(body, sizeof body,
                "<body name=\"terrain\" pos=\"0.1 -0.2 0.05\" euler=\"%g %g %g\">", tilt[0],
                tilt[1], tilt[2]);
  const std::string geom = "contype=\"2\" conaffinity=\"1\" margin=\"" + m + "\"";
  return std::string(head) + e + "\"/></asset><worldbody>" + body +
         "<geom name=\"hf\" type=\"hfield\" hfield=\"hf\" contype=\"1\" conaffinity=\"2\" "
         "margin=\"" +
         m + "\"/></body>" +
         "<body name=\"ball\"><freejoint/><geom name=\"sphere\" type=\"sphere\" size=\"" + sphere +
         "\" " + geom + "/></body>" +
         "<body name=\"cap\"><freejoint/><geom name=\"capsule\" type=\"capsule\" size=\"" +
         capsule + "\" " + geom + "/></body>" +
         "<body name=\"box\"><freejoint/><geom name=\"box\" type=\"box\" size=\"" + box + "\" " +
         geom + "/></body></worldbody></mujoco>";
}

void random_quat(std::mt19937_64& rng, double* q) {
  std::normal_distribution<double> n(0, 1);
  for (int k = 0; k < 4; ++k) q[k] = n(rng);
  mju_normalize4(q);
}

// Puts free body j at local point lp of the hfield frame with orientation q.
void set_body(const mjModel* m, mjData* d, int hf, int j, const double* lp, const double* q) {
  const double* hpos = d->geom_xpos + 3 * hf;
  const double* hmat = d->geom_xmat + 9 * hf;
  double w[3];
  mju_mulMatVec3(w, hmat, lp);
  const int adr = m->jnt_qposadr[j];
  for (int k = 0; k < 3; ++k) d->qpos[adr + k] = hpos[k] + w[k];
  for (int k = 0; k < 4; ++k) d->qpos[adr + 3 + k] = q[k];
}

// Elevation (times sz) of the grid point nearest to local (x, y).
double height_at(const mjModel* m, int hid, double x, double y) {
  const double* s = m->hfield_size + 4 * hid;
  const int nrow = m->hfield_nrow[hid], ncol = m->hfield_ncol[hid];
  const int c =
      std::clamp(static_cast<int>(std::lround((x + s[0]) / (2 * s[0]) * (ncol - 1))), 0, ncol - 1);
  const int r =
      std::clamp(static_cast<int>(std::lround((y + s[1]) / (2 * s[1]) * (nrow - 1))), 0, nrow - 1);
  return m->hfield_data[m->hfield_adr[hid] + r * ncol + c] * s[2];
}

// Random poses near the surface: shallow, separated, deep, and partly outside the field.
void place_random(const mjModel* m, mjData* d, int hf, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  const int hid = m->geom_dataid[hf];
  const double* s = m->hfield_size + 4 * hid;
  for (int j = 0; j < 3; ++j) {
    const double x = (u(rng) * 2 - 1) * 1.1 * s[0], y = (u(rng) * 2 - 1) * 1.1 * s[1];
    const double h = height_at(m, hid, x, y);
    double z = h - 0.25 + 0.6 * u(rng);
    const double kind = u(rng);
    if (kind < 0.1) z = h - 0.6 + 0.3 * u(rng);  // deep
    const double lp[3] = {x, y, z};
    double q[4];
    random_quat(rng, q);
    set_body(m, d, hf, j, lp, q);
  }
}

// Compares libmujoco's contacts of pair (hf, g) with hfield_convex in double and float.
void compare_pair(const mjModel* m, const mjData* d, int hf, int g, const std::string& what,
                  Stats* S) {
  std::vector<const mjContact*> mj;
  for (int i = 0; i < d->ncon; ++i) {
    const mjContact& c = d->contact[i];
    if (c.geom1 == g && c.geom2 == hf) ADD_FAILURE() << what << ": hfield is not geom1";
    if (c.geom1 == hf && c.geom2 == g) mj.push_back(&c);
  }
  const int hid = m->geom_dataid[hf];
  const double margin = m->geom_margin[hf] + m->geom_margin[g];
  const double* hsize = m->hfield_size + 4 * hid;
  const float* data = m->hfield_data + m->hfield_adr[hid];
  const int nrow = m->hfield_nrow[hid], ncol = m->hfield_ncol[hid];
  const int it = m->opt.ccd_iterations;
  const double tol = m->opt.ccd_tolerance;
  Contact<double> mine[kMaxHFieldContacts];
  const int n = hfield_convex<double>(mine, margin, hsize, nrow, ncol, data, d->geom_xpos + 3 * hf,
                                      d->geom_xmat + 9 * hf, m->geom_type[g], m->geom_rbound[g],
                                      d->geom_xpos + 3 * g, d->geom_xmat + 9 * g,
                                      m->geom_size + 3 * g, it, tol);
  // The same pair by lane groups (hfield_convex_group, as the GPU runs a pair on a few lanes): one
  // lane, and 32, 8 and 5 lanes interleaved on this thread: hfield_convex's contacts, bit for bit.
  {
    auto by_group = [&](const auto& grp, auto* round) {
      Contact<double> got[kMaxHFieldContacts];
      ccd::LocalPolytope<double> arena;
      const int ng = hfield_convex_group<double>(
          grp, round, got, margin, hsize, nrow, ncol, data, d->geom_xpos + 3 * hf,
          d->geom_xmat + 9 * hf, m->geom_type[g], m->geom_rbound[g], d->geom_xpos + 3 * g,
          d->geom_xmat + 9 * g, m->geom_size + 3 * g, it, tol, arena);
      bool same = ng == n;
      for (int i = 0; same && i < n; ++i) {
        same = std::memcmp(&got[i].dist, &mine[i].dist, sizeof(double)) == 0;
        for (int k = 0; k < 6; ++k)
          same = same && std::memcmp(&got[i].frame[k], &mine[i].frame[k], sizeof(double)) == 0;
        for (int k = 0; k < 3; ++k)
          same = same && std::memcmp(&got[i].pos[k], &mine[i].pos[k], sizeof(double)) == 0;
      }
      return same;
    };
    ContactValues<double> round[32];
    EXPECT_TRUE(by_group(constraint::SerialGroup{}, round)) << what << ": one lane";
    EXPECT_TRUE(by_group(constraint::InterleavedGroup<32>{}, round)) << what << ": 32 lanes";
    EXPECT_TRUE(by_group(constraint::InterleavedGroup<8>{}, round)) << what << ": 8 lanes";
    EXPECT_TRUE(by_group(constraint::InterleavedGroup<5>{}, round)) << what << ": 5 lanes";
  }
  S->pairs++;
  S->contacts_mj += static_cast<int>(mj.size());
  S->contacts_mine += n;
  S->capped += n == kMaxHFieldContacts;
  if (n != static_cast<int>(mj.size())) {
    S->count_mismatch++;
    ADD_FAILURE() << what << " " << mj_id2name(m, mjOBJ_GEOM, g) << ": " << n
                  << " contacts, libmujoco " << mj.size();
  } else {
    for (int i = 0; i < n; ++i) {
      const mjContact& b = *mj[i];
      const Contact<double>& a = mine[i];
      bool bitwise = std::memcmp(&a.dist, &b.dist, sizeof(double)) == 0;
      S->dist = std::max(S->dist, std::fabs(a.dist - b.dist));
      for (int k = 0; k < 3; ++k) {
        bitwise = bitwise && std::memcmp(&a.pos[k], &b.pos[k], sizeof(double)) == 0;
        S->pos = std::max(S->pos, std::fabs(a.pos[k] - b.pos[k]));
        S->frame = std::max(S->frame, std::fabs(a.frame[k] - b.frame[k]));
      }
      S->not_bitwise += !bitwise;
    }
  }
  // Float: the same inputs rounded to float.
  float hs[4], p1[3], x1[9], p2[3], x2[9], s2[3];
  for (int k = 0; k < 4; ++k) hs[k] = static_cast<float>(hsize[k]);
  for (int k = 0; k < 3; ++k) {
    p1[k] = static_cast<float>(d->geom_xpos[3 * hf + k]);
    p2[k] = static_cast<float>(d->geom_xpos[3 * g + k]);
    s2[k] = static_cast<float>(m->geom_size[3 * g + k]);
  }
  for (int k = 0; k < 9; ++k) {
    x1[k] = static_cast<float>(d->geom_xmat[9 * hf + k]);
    x2[k] = static_cast<float>(d->geom_xmat[9 * g + k]);
  }
  Contact<float> mf[kMaxHFieldContacts];
  const int nf = hfield_convex<float>(mf, static_cast<float>(margin), hs, nrow, ncol, data, p1, x1,
                                      m->geom_type[g], static_cast<float>(m->geom_rbound[g]), p2,
                                      x2, s2, it, static_cast<float>(tol));
  S->contacts_f32 += nf;
  for (int i = 0; i < nf; ++i) {
    bool finite = is_finite(mf[i].dist);
    for (int k = 0; k < 3; ++k)
      finite = finite && is_finite(mf[i].pos[k]) && is_finite(mf[i].frame[k]);
    S->nonfinite_f32 += !finite;
  }
  S->count_mismatch_f32 += nf != n;
  for (int i = 0; i < nf; ++i) {
    double best = 1e300, ddist = 0;
    for (int j = 0; j < n; ++j) {
      double e = 0;
      for (int k = 0; k < 3; ++k) e = std::max(e, std::fabs(mf[i].pos[k] - mine[j].pos[k]));
      if (e < best) best = e, ddist = std::fabs(mf[i].dist - mine[j].dist);
    }
    if (best > kMatchPos) {
      S->unmatched_f32++;
    } else {
      S->dist_f32 = std::max(S->dist_f32, ddist);
    }
  }
}

// mj_collision on the current poses, then every hfield pair compared.
void collide_and_compare(const MjLoaded& md, int hf, const std::string& what, Stats* S) {
  mj_kinematics(md.m, md.d);
  mj_collision(md.m, md.d);
  for (const char* name : {"sphere", "capsule", "box"}) {
    const int g = mj_name2id(md.m, mjOBJ_GEOM, name);
    compare_pair(md.m, md.d, hf, g, what, S);
  }
}

void print(const char* title, const Stats& S) {
  std::printf(
      "%-11s pairs=%d contacts mj=%d mine=%d count_mismatch=%d not_bitwise=%d capped_pairs=%d "
      "max|ddist|=%.3g max|dpos|=%.3g max|dframe|=%.3g\n  f32: contacts=%d pairs_count_differs=%d "
      "nonfinite=%d unmatched=%d max|ddist f32-f64| matched=%.3g; peak EPA faces=%d; GJK "
      "replays=%d\n",
      title, S.pairs, S.contacts_mj, S.contacts_mine, S.count_mismatch, S.not_bitwise, S.capped,
      S.dist, S.pos, S.frame, S.contacts_f32, S.count_mismatch_f32, S.nonfinite_f32,
      S.unmatched_f32, S.dist_f32, g_peak_faces, g_replays);
}

// Double agrees bitwise; float runs, finite, and nearly the same contacts.
void expect_agreement(const Stats& S) {
  EXPECT_EQ(S.count_mismatch, 0);
  EXPECT_EQ(S.not_bitwise, 0);
  EXPECT_EQ(S.dist, 0);
  EXPECT_EQ(S.pos, 0);
  EXPECT_LE(S.frame, 1e-12);
  EXPECT_EQ(S.nonfinite_f32, 0);
  EXPECT_LE(S.count_mismatch_f32, S.pairs / 10 + 1);
  EXPECT_LE(std::abs(S.contacts_f32 - S.contacts_mine), S.contacts_mine / 20 + 2);
  EXPECT_LE(S.dist_f32, 1e-3);
}

struct Variant {
  int nrow, ncol;
  double tilt[3];
  double size[4];
};

const Variant kVariants[] = {{7, 11, {0, 0, 0}, {1.5, 1.0, 0.4, 0.3}},
                             {12, 9, {8, -5, 30}, {1.0, 1.3, 0.5, 0.2}},
                             {5, 16, {-12, 4, 75}, {2.0, 0.8, 0.3, 0.5}},
                             {9, 6, {3, 10, -20}, {0.9, 1.1, 0.6, 0.25}}};

TEST(HFieldCcd, RandomPosesAgreeWithMujoco) {
  std::mt19937_64 rng(20261204);
  Stats S;
  const double margins[] = {0, 0.01, 0.02};
  const char* options[] = {"", "ccd_iterations=\"12\" ccd_tolerance=\"1e-3\""};
  for (int v = 0; v < 4; ++v) {
    const Variant& V = kVariants[v];
    const std::vector<double> elev = random_elevation(rng, V.nrow, V.ncol);
    for (double margin : margins) {
      for (const char* option : options) {
        auto md = load_mj_string(make_xml(V.nrow, V.ncol, elev, V.size, V.tilt, margin, option));
        ASSERT_TRUE(md);
        const int hf = mj_name2id(md->m, mjOBJ_GEOM, "hf");
        mj_kinematics(md->m, md->d);
        for (int t = 0; t < 40; ++t) {
          place_random(md->m, md->d, hf, rng);
          collide_and_compare(*md, hf,
                              "variant " + std::to_string(v) + " margin " + fmt("%g", margin) +
                                  " '" + option + "' pose " + std::to_string(t),
                              &S);
        }
      }
    }
  }
  print("random", S);
  expect_agreement(S);
  EXPECT_GT(S.contacts_mj, 3000);
}

// Axis-aligned poses over a plateau with a raised block: exact touching, grazing, contact at
// grid nodes and cell centres, geoms sunk to their centre.
TEST(HFieldCcd, DegeneratePosesAgreeWithMujoco) {
  std::mt19937_64 rng(7);
  Stats S;
  const int nrow = 6, ncol = 9;
  std::vector<double> elev(nrow * ncol, 0.5);
  elev[0] = 0;
  elev[nrow * ncol - 1] = 1;
  for (int r = 2; r < 4; ++r)
    for (int c = 5; c < 7; ++c) elev[r * ncol + c] = 0.8;
  const double size[4] = {1.6, 1.0, 0.4, 0.3};
  const double s2 = std::sqrt(0.5);
  const double quats[4][4] = {
      {1, 0, 0, 0}, {s2, s2, 0, 0}, {s2, 0, s2, 0}, {std::cos(M_PI / 8), 0, 0, std::sin(M_PI / 8)}};
  std::uniform_int_distribution<int> pick(0, 1 << 30);
  for (int trial = 0; trial < 6; ++trial) {
    const double margins[3] = {0.0, 0.0, 0.01};
    const double margin = margins[trial % 3];
    const double tilt[3] = {0, 0, trial % 2 ? 90.0 : 0.0};
    auto md = load_mj_string(make_xml(nrow, ncol, elev, size, tilt, margin, ""));
    ASSERT_TRUE(md);
    const mjModel* m = md->m;
    const int hf = mj_name2id(m, mjOBJ_GEOM, "hf");
    const int hid = m->geom_dataid[hf];
    const double* hs = m->hfield_size + 4 * hid;
    const double dx = 2 * hs[0] / (ncol - 1), dy = 2 * hs[1] / (nrow - 1);
    mj_kinematics(m, md->d);
    for (int t = 0; t < 60; ++t) {
      for (int j = 0; j < 3; ++j) {
        const int c = pick(rng) % ncol, r = pick(rng) % nrow;
        const double fx[3] = {0, 0.5, 0.25}, fy[2] = {0, 0.5};
        const double x = -hs[0] + c * dx + fx[pick(rng) % 3] * dx;
        const double y = -hs[1] + r * dy + fy[pick(rng) % 2] * dy;
        const double h = m->hfield_data[m->hfield_adr[hid] + r * ncol + c] * hs[2];
        const double* q = quats[pick(rng) % 4];
        double R[9];
        mju_quat2Mat(R, q);
        const int gid = m->body_geomadr[j + 1];
        const double* gs = m->geom_size + 3 * gid;
        double ext;
        if (m->geom_type[gid] == mjGEOM_SPHERE) {
          ext = gs[0];
        } else if (m->geom_type[gid] == mjGEOM_CAPSULE) {
          ext = gs[0] + gs[1] * std::fabs(R[8]);
        } else {
          ext = std::fabs(R[6]) * gs[0] + std::fabs(R[7]) * gs[1] + std::fabs(R[8]) * gs[2];
        }
        const double off[7] = {0.0, -1e-9, -0.01, -0.05, margin, -ext, -ext - 0.02};
        const double lp[3] = {x, y, h + ext + off[pick(rng) % 7]};
        set_body(m, md->d, hf, j, lp, q);
      }
      collide_and_compare(*md, hf,
                          "degenerate " + std::to_string(trial) + " pose " + std::to_string(t), &S);
    }
  }
  print("degenerate", S);
  expect_agreement(S);
  // Faces through the origin: gjkIntersect's -1, after which ccd.h's GJK replays its pass.
  EXPECT_GT(g_replays, 0) << "no scene reaches the GJK's replay any more";
}

// A fine grid under large deep geoms: more than 50 prisms collide, the first 50 are kept.
TEST(HFieldCcd, ContactCapAgreesWithMujoco) {
  std::mt19937_64 rng(77);
  Stats S;
  const int nrow = 31, ncol = 27;
  const double size[4] = {1.0, 1.2, 0.1, 0.3};
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 4; ++trial) {
    const std::vector<double> elev = random_elevation(rng, nrow, ncol);
    const double tilt[3] = {trial % 2 ? 5.0 : 0, trial % 2 ? 3.0 : 0, trial % 2 ? 10.0 : 0};
    auto md = load_mj_string(
        make_xml(nrow, ncol, elev, size, tilt, 0.0, "", "0.5", "0.3 0.6", "0.6 0.5 0.2"));
    ASSERT_TRUE(md);
    const int hf = mj_name2id(md->m, mjOBJ_GEOM, "hf");
    mj_kinematics(md->m, md->d);
    for (int t = 0; t < 5; ++t) {
      for (int j = 0; j < 3; ++j) {
        const double lp[3] = {-0.3 + 0.6 * u(rng), -0.3 + 0.6 * u(rng), 0.15 + 0.2 * u(rng)};
        double q[4] = {1, 0, 0, 0};
        if (trial % 2) random_quat(rng, q);
        set_body(md->m, md->d, hf, j, lp, q);
      }
      collide_and_compare(*md, hf, "maxcon " + std::to_string(trial), &S);
    }
  }
  print("maxcon", S);
  expect_agreement(S);
  EXPECT_GT(S.capped, 10);
}

// ccd_iterations above kCcdMaxIterations: the EPA is clamped (no overflow); reports agreement.
TEST(HFieldCcd, MoreIterationsThanTheBuffersHoldStaysInBounds) {
  std::mt19937_64 rng(3);
  Stats S;
  const Variant& V = kVariants[1];
  const std::vector<double> elev = random_elevation(rng, V.nrow, V.ncol);
  auto md = load_mj_string(
      make_xml(V.nrow, V.ncol, elev, V.size, V.tilt, 0.01,
               "ccd_iterations=\"" + std::to_string(3 * ccd::kCcdMaxIterations) + "\""));
  ASSERT_TRUE(md);
  const int hf = mj_name2id(md->m, mjOBJ_GEOM, "hf");
  mj_kinematics(md->m, md->d);
  for (int t = 0; t < 40; ++t) {
    place_random(md->m, md->d, hf, rng);
    collide_and_compare(*md, hf, "iterations " + std::to_string(t), &S);
  }
  print("iterations", S);
  EXPECT_EQ(S.nonfinite_f32, 0);
}

TEST(HFieldCcd, BufferSizes) {
  std::printf("sizeof Polytope<float>=%zu Polytope<double>=%zu (kEpaMaxFaces=%d kEpaMaxVerts=%d)\n",
              sizeof(ccd::Polytope<float>), sizeof(ccd::Polytope<double>), ccd::kEpaMaxFaces,
              ccd::kEpaMaxVerts);
  std::printf("sizeof Status<float>=%zu Status<double>=%zu Obj<float>=%zu Obj<double>=%zu\n",
              sizeof(ccd::Status<float>), sizeof(ccd::Status<double>), sizeof(ccd::Obj<float>),
              sizeof(ccd::Obj<double>));
}

}  // namespace
}  // namespace myriad::physics::collision
