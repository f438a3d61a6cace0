// The legged tasks' terrain generator (envs/legged/terrain.h) against the geometry mjlab's
// ROUGH_TERRAINS_CFG gives each sub-terrain (envs/legged/mjlab-velocity-reference.md, section
// 10): the grid's layout and origins, each kind's heights at chosen samples and difficulties,
// random_rough's values and determinism, the kinds' proportions, and bad configs refused; what the
// tasks read of it (envs/legged/terrain_sense.h): the surface against libmujoco's ray cast as the
// engine transcribes it (physics/ray.h), and the fitted terrain normal.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

#include "envs/legged/terrain.h"
#include "envs/legged/terrain_sense.h"
#include "physics/ray.h"

namespace myriad::envs::legged {
namespace {

constexpr int kPx = 80;  // samples per 8 m tile at 0.1 m

int column_of(const Terrain& t, TerrainKind kind) {
  const auto kinds = rough_terrains();
  for (size_t c = 0; c < kinds.size(); ++c)
    if (kinds[c].kind == kind) return static_cast<int>(c);
  return -1;
}

// The height at tile (level, kind)'s local sample (i along x, j along y).
double tile_height(const Terrain& t, int level, int kind, int i, int j) {
  const int row = kind * kPx + j, col = level * kPx + i;
  return t.height[static_cast<size_t>(row) * t.ncol + col];
}

// Proves the grid: levels along x, one column per kind along y, centred on the origin, tile
// origins at the tiles' centres.
TEST(Terrain, GridLayoutAndOrigins) {
  const Terrain t = generate_terrain({});
  EXPECT_EQ(t.levels, 10);
  EXPECT_EQ(t.kinds, 7);
  EXPECT_EQ(t.ncol, 801);
  EXPECT_EQ(t.nrow, 561);
  EXPECT_DOUBLE_EQ(t.half_x, 40.0);
  EXPECT_DOUBLE_EQ(t.half_y, 28.0);
  const double* o = t.tile_origin(0, 0);
  EXPECT_DOUBLE_EQ(o[0], -36.0);
  EXPECT_DOUBLE_EQ(o[1], -24.0);
  EXPECT_DOUBLE_EQ(o[2], 0.0);
  o = t.tile_origin(9, 6);
  EXPECT_DOUBLE_EQ(o[0], 36.0);
  EXPECT_DOUBLE_EQ(o[1], 24.0);
  // Every tile's origin height is the surface there (the stairs' and slopes' platforms).
  for (int level = 0; level < t.levels; ++level)
    for (int k = 0; k < t.kinds; ++k) {
      // mjlab's origins of random_rough (the mean, 0.06) and wave (0: its centre is a crest).
      if (k == column_of(t, TerrainKind::kRandomRough) || k == column_of(t, TerrainKind::kWave))
        continue;
      const double* p = t.tile_origin(level, k);
      EXPECT_NEAR(t.height_at(p[0], p[1]), p[2], 1e-12) << "level " << level << " kind " << k;
    }
}

// Proves the border: a flat margin of whole samples around the grid, the tiles shifted into it,
// their origins where they were.
TEST(Terrain, BorderAroundTheGrid) {
  TerrainConfig c;
  c.border = 5;
  const Terrain t = generate_terrain(c), plain = generate_terrain({});
  EXPECT_EQ(t.ncol, 901);
  EXPECT_EQ(t.nrow, 661);
  EXPECT_DOUBLE_EQ(t.half_x, 45.0);
  EXPECT_DOUBLE_EQ(t.grid_half_x, 40.0);
  EXPECT_EQ(t.origin, plain.origin);
  for (int level = 0; level < t.levels; ++level)
    for (int k = 0; k < t.kinds; ++k) {
      const double* o = t.tile_origin(level, k);
      EXPECT_DOUBLE_EQ(t.height_at(o[0] + 1.3, o[1] - 0.7),
                       plain.height_at(o[0] + 1.3, o[1] - 0.7));
    }
  for (int col = 0; col < t.ncol; col += 9) {
    EXPECT_DOUBLE_EQ(t.height[col], 0.0);
    EXPECT_DOUBLE_EQ(t.height[static_cast<size_t>(t.nrow - 1) * t.ncol + col], 0.0);
  }
  c.border = 0.05;
  EXPECT_THROW(generate_terrain(c), std::invalid_argument);
}

// Proves the stairs: a 1 m flat border, 5 rings 0.3 m wide rising by 0.1 d, the platform at 6
// steps (mjlab's origin height), inverted stairs the same downwards; level 0 is flat.
TEST(Terrain, PyramidStairs) {
  const Terrain t = generate_terrain({});
  const int up = column_of(t, TerrainKind::kPyramidStairs);
  const int down = column_of(t, TerrainKind::kPyramidStairsInv);
  const double h = 0.1;                                 // level 9: difficulty 1
  EXPECT_DOUBLE_EQ(tile_height(t, 9, up, 5, 40), 0.0);  // the border, 0.5 m in
  for (int ring = 0; ring < 5; ++ring) {
    const int i = 10 + 3 * ring + 1;  // 1.1 m + 0.3 m per ring from the edge
    EXPECT_NEAR(tile_height(t, 9, up, i, 40), (ring + 1) * h, 1e-12) << "ring " << ring;
    EXPECT_NEAR(tile_height(t, 9, down, i, 40), -(ring + 1) * h, 1e-12) << "ring " << ring;
  }
  EXPECT_NEAR(tile_height(t, 9, up, 40, 40), 6 * h, 1e-12);
  EXPECT_NEAR(t.tile_origin(9, up)[2], 0.6, 1e-12);
  EXPECT_NEAR(t.tile_origin(9, down)[2], -0.6, 1e-12);
  EXPECT_NEAR(t.tile_origin(3, up)[2], 6 * 0.1 * 3 / 9.0, 1e-12);
  for (int i = 0; i <= kPx; i += 7) EXPECT_DOUBLE_EQ(tile_height(t, 0, up, i, 40), 0.0);
}

// Proves the slope: 0 at its border, its platform at mjlab's height (2.065 m at difficulty 1,
// reference section 10), rising monotonically towards it; the inverted slope a pit as deep.
TEST(Terrain, PyramidSlope) {
  const Terrain t = generate_terrain({});
  const int up = column_of(t, TerrainKind::kPyramidSlope);
  const int pit = column_of(t, TerrainKind::kPyramidSlopeInv);
  EXPECT_NEAR(t.tile_origin(9, up)[2], 2.065, 1e-12);
  EXPECT_NEAR(t.tile_origin(9, pit)[2], -2.065, 1e-12);
  EXPECT_NEAR(tile_height(t, 9, up, 40, 40), 2.065, 1e-12);
  EXPECT_DOUBLE_EQ(tile_height(t, 9, up, 1, 40), 0.0);
  // Along the centre line it rises until tx * ty reaches the platform corner's (28/38)^2, then
  // stays at the platform's height.
  for (int i = 3; i < 18; ++i)
    EXPECT_LT(tile_height(t, 9, up, i, 40), tile_height(t, 9, up, i + 1, 40)) << i;
  for (int i = 23; i < 58; ++i) EXPECT_NEAR(tile_height(t, 9, up, i, 40), 2.065, 1e-12) << i;
  EXPECT_NEAR(tile_height(t, 9, pit, 40, 40), -2.065, 1e-12);
  // Heights in whole vertical units (0.005 m).
  for (int i = 0; i <= kPx; i += 3) {
    const double units = tile_height(t, 5, up, i, 33) / 0.005;
    EXPECT_NEAR(units, std::round(units), 1e-9);
  }
  EXPECT_DOUBLE_EQ(t.tile_origin(0, up)[2], 0.0);
}

// Proves random_rough: inside its 0.25 m border every sample is one of 0.02 ... 0.10 m, each
// value drawn, at every difficulty; the same seed gives the same field, another seed another.
TEST(Terrain, RandomRoughValuesAndSeed) {
  TerrainConfig c;
  c.seed = 3;
  const Terrain a = generate_terrain(c), b = generate_terrain(c);
  EXPECT_EQ(a.height, b.height);
  c.seed = 4;
  const Terrain other = generate_terrain(c);
  EXPECT_NE(a.height, other.height);
  const int k = column_of(a, TerrainKind::kRandomRough);
  for (int level : {0, 9}) {
    std::set<long> seen;
    for (int j = 3; j < kPx - 2; ++j)
      for (int i = 3; i < kPx - 2; ++i) {
        const double h = tile_height(a, level, k, i, j);
        const long cm = std::lround(h * 100);
        EXPECT_NEAR(h, cm / 100.0, 1e-12);
        seen.insert(cm);
      }
    EXPECT_EQ(seen, (std::set<long>{2, 4, 6, 8, 10})) << "level " << level;
  }
  EXPECT_DOUBLE_EQ(tile_height(a, 4, k, 0, 40), 0.0);  // the border
}

// Proves the wave: flat at difficulty 0, amplitude 0.2 d split over the two axes at d = 1 (at
// most 0.2 m from 0), 4 periods of 1.9 m across the tile.
TEST(Terrain, Wave) {
  const Terrain t = generate_terrain({});
  const int k = column_of(t, TerrainKind::kWave);
  double peak = 0;
  for (int j = 0; j <= kPx; ++j)
    for (int i = 0; i <= kPx; ++i) {
      EXPECT_DOUBLE_EQ(tile_height(t, 0, k, i, j), 0.0);
      peak = std::max(peak, std::fabs(tile_height(t, 9, k, i, j)));
    }
  EXPECT_GT(peak, 0.15);
  EXPECT_LE(peak, 0.2 + 1e-12);
  // One period along x: the same height 19 samples on.
  EXPECT_NEAR(tile_height(t, 9, k, 10, 30), tile_height(t, 9, k, 29, 30), 1e-12);
}

// Proves the kinds' proportions pick the columns: draws spread over [0, 1) land in each
// column in its share.
TEST(Terrain, KindsByProportion) {
  const auto kinds = rough_terrains();
  std::vector<int> count(kinds.size(), 0);
  const int n = 10000;
  for (int e = 0; e < n; ++e) ++count[kind_of_draw(kinds, (e + 0.5) / n)];
  for (size_t c = 0; c < kinds.size(); ++c)
    EXPECT_NEAR(count[c], kinds[c].proportion * n, 1.0) << kinds[c].name;
}

// Proves bad configs are refused naming what is wrong.
TEST(Terrain, BadConfigsAreRefused) {
  const auto refused = [](TerrainConfig c, const std::string& what) {
    try {
      generate_terrain(c);
      ADD_FAILURE() << "accepted; expected a refusal naming " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  TerrainConfig c;
  c.levels = 1;
  refused(c, "levels");
  c = {};
  c.kinds.clear();
  refused(c, "kinds");
  c = {};
  c.kinds[2].proportion = -1;
  refused(c, "pyramid_stairs_inv");
  c = {};
  c.tile_size = 8.05;
  refused(c, "tile_size");
  c = {};
  c.horizontal_scale = 0;
  refused(c, "horizontal_scale");
}

// Proves surface_height is where a vertical ray from above meets the field (mj_rayHfield as
// physics/ray.h transcribes it), over stairs, slopes, rough cells and waves, and off the field.
TEST(Terrain, SurfaceHeightIsTheVerticalRaysHit) {
  TerrainConfig c;
  c.border = 1;
  const Terrain t = generate_terrain(c);
  std::vector<double> data(t.height.size());
  const double range = t.z_max - t.z_min;
  for (size_t k = 0; k < data.size(); ++k) data[k] = (t.height[k] - t.z_min) / range;
  const double size[4] = {t.half_x, t.half_y, range, 0.1};
  const double pos[3] = {0.25, -0.5, t.z_min - 0.3};  // the geom moved: world vs local
  const double mat[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const FieldView<double> view{size, data.data(), t.nrow, t.ncol, pos};
  const physics::ray::HField<double> shape{size, data.data(), t.nrow, t.ncol};
  uint64_t state = 12345;
  const auto uniform = [&state](double lo, double hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * static_cast<double>(state >> 11) * (1.0 / 9007199254740992.0);
  };
  double worst = 0;
  for (int k = 0; k < 4000; ++k) {
    const double x = uniform(-t.half_x, t.half_x) + pos[0],
                 y = uniform(-t.half_y, t.half_y) + pos[1];
    double z = 0;
    ASSERT_TRUE(surface_height(view, x, y, z));
    const double top = pos[2] + range + 1.0;
    const double pnt[3] = {x, y, top}, vec[3] = {0, 0, -1};
    const double hit = physics::ray::hfield(shape, pos, mat, pnt, vec);
    ASSERT_GE(hit, 0.0);
    worst = std::max(worst, std::fabs((top - hit) - z));
  }
  EXPECT_LT(worst, 1e-9);
  double z = 0;
  EXPECT_FALSE(surface_height(view, t.half_x + pos[0] + 0.01, 0.0, z));
  EXPECT_FALSE(surface_height(view, 0.0, -t.half_y + pos[1] - 0.01, z));
}

// Proves the fitted normal: a tilted plane's own normal (pointing up), (0, 0, 1) for too few,
// collinear or non-planar points.
TEST(Terrain, TerrainNormalFromHits) {
  const double want[3] = {0.3, -0.2, 0.9327379053088815};  // unit
  std::vector<double> pts;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) {
      const double x = 0.2 * i - 0.7, y = 0.25 * j - 0.4;
      pts.insert(pts.end(), {x + 3, y - 1, 0.5 - (want[0] * x + want[1] * y) / want[2]});
    }
  double n[3];
  terrain_normal(pts.data(), 32, n);
  for (int a = 0; a < 3; ++a) EXPECT_NEAR(n[a], want[a], 1e-10) << a;
  terrain_normal(pts.data(), 2, n);
  EXPECT_EQ(n[2], 1.0);
  std::vector<double> line;
  for (int k = 0; k < 10; ++k) line.insert(line.end(), {0.1 * k, 0.2 * k, 0.05 * k});
  terrain_normal(line.data(), 10, n);
  EXPECT_EQ(n[2], 1.0);
  std::vector<double> cloud;  // a cube's corners: no plane
  for (int k = 0; k < 8; ++k)
    cloud.insert(cloud.end(), {double(k & 1), double(k >> 1 & 1), double(k >> 2)});
  terrain_normal(cloud.data(), 8, n);
  EXPECT_EQ(n[0], 0.0);
  EXPECT_EQ(n[2], 1.0);
}

}  // namespace
}  // namespace myriad::envs::legged
