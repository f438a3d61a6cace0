// The legged tasks' terrain generator (envs/legged/terrain.h) against the geometry mjlab's
// ROUGH_TERRAINS_CFG gives each sub-terrain (envs/legged/mjlab-velocity-reference.md, section
// 10): the grid's layout and origins, each kind's heights at chosen samples and difficulties,
// random_rough's values and determinism, the kinds' proportions, and bad configs refused.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

#include "envs/legged/terrain.h"

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

}  // namespace
}  // namespace myriad::envs::legged
