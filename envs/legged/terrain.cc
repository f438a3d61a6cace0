// The legged tasks' terrain generator (envs/legged/terrain.h).
#include "envs/legged/terrain.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "myriad/rng.h"

namespace myriad::envs::legged {
namespace {

constexpr double kPi = 3.14159265358979323846;

// One tile's heights in vertical units at local sample (i along x, j along y), 0 <= i, j <= px.
struct TileShape {
  TerrainKind kind;
  double d;       // difficulty
  int px;         // samples per tile side
  double hs, vs;  // horizontal and vertical scale
  Rng* rng;       // random_rough's draws

  // pyramid_stairs: step height 0.1 d, steps 0.3 m wide, a 1 m border, a 3 m platform.
  double stairs(int i, int j) const {
    const double size = px * hs, u = i * hs, v = j * hs;
    const double edge = std::min(std::min(u, size - u), std::min(v, size - v));
    const double border = 1.0, width = 0.3, platform = 3.0;
    const int steps = static_cast<int>((size - 2 * border - platform) / (2 * width) + 1e-9);
    if (edge < border) return 0;
    const int ring = std::min(static_cast<int>((edge - border) / width + 1e-9) + 1, steps + 1);
    return ring * 0.1 * d;
  }
  // The inner area of a height-field kind: a 0.25 m border of zeros around it.
  int border_px() const { return static_cast<int>(0.25 / hs); }
  // pyramid_slope in vertical units: height_max * tx * ty, clipped at the platform's edge.
  double slope_units(int i, int j) const {
    const int b = border_px(), inner = px - 2 * b;
    const double half = inner / 2.0;
    const double height_max = std::floor(d * (inner * hs / 2) / vs);
    const auto tent = [&](int k) { return std::max(0.0, 1.0 - std::fabs(k - b - half) / half); };
    const double platform_px = 1.0 / hs;  // the platform's half width, 1 m
    const double top = (half - platform_px) / half;
    return std::round(std::min(height_max * tent(i) * tent(j), height_max * top * top));
  }
  bool inner(int i, int j) const {
    const int b = border_px();
    return i >= b && i <= px - b && j >= b && j <= px - b;
  }
  double units(int i, int j) const {
    switch (kind) {
      case TerrainKind::kFlat:
        return 0;
      case TerrainKind::kPyramidStairs:
        return stairs(i, j) / vs;
      case TerrainKind::kPyramidStairsInv:
        return -stairs(i, j) / vs;
      case TerrainKind::kPyramidSlope:
        return slope_units(i, j);
      case TerrainKind::kPyramidSlopeInv:
        return -slope_units(i, j);
      case TerrainKind::kRandomRough:  // {4, 8, ..., 20} units: 0.02 ... 0.10 m
        return inner(i, j) ? 4.0 * (1 + static_cast<int>(rng->uniform() * 5.0f)) : 0.0;
      case TerrainKind::kWave: {
        if (!inner(i, j)) return 0;
        const int b = border_px();
        const double wavelength = (px - 2 * b) / 4.0, amplitude = std::floor(0.5 * 0.2 * d / vs);
        return std::round(amplitude * (std::cos(2 * kPi * (j - b) / wavelength) +
                                       std::sin(2 * kPi * (i - b) / wavelength)));
      }
    }
    return 0;
  }
  // The spawn height at the tile's centre.
  double origin_height() const {
    switch (kind) {
      case TerrainKind::kPyramidStairs:
        return stairs(px / 2, px / 2);
      case TerrainKind::kPyramidStairsInv:
        return -stairs(px / 2, px / 2);
      case TerrainKind::kPyramidSlope:  // the platform
        return slope_units(px / 2, px / 2) * vs;
      case TerrainKind::kPyramidSlopeInv:
        return -slope_units(px / 2, px / 2) * vs;
      case TerrainKind::kRandomRough:
        return 0.06;
      default:
        return 0;
    }
  }
};

}  // namespace

std::vector<SubTerrain> rough_terrains() {
  return {{TerrainKind::kFlat, "flat", 0.2},
          {TerrainKind::kPyramidStairs, "pyramid_stairs", 0.2},
          {TerrainKind::kPyramidStairsInv, "pyramid_stairs_inv", 0.2},
          {TerrainKind::kPyramidSlope, "hf_pyramid_slope", 0.1},
          {TerrainKind::kPyramidSlopeInv, "hf_pyramid_slope_inv", 0.1},
          {TerrainKind::kRandomRough, "random_rough", 0.1},
          {TerrainKind::kWave, "wave_terrain", 0.1}};
}

std::vector<double> kind_cdf(const std::vector<SubTerrain>& kinds) {
  double total = 0;
  for (const auto& k : kinds) total += k.proportion;
  std::vector<double> cdf;
  double acc = 0;
  for (const auto& k : kinds) cdf.push_back(acc += k.proportion / total);
  if (!cdf.empty()) cdf.back() = 1.0;
  return cdf;
}

int kind_of_draw(const std::vector<SubTerrain>& kinds, double u) {
  const std::vector<double> cdf = kind_cdf(kinds);
  for (size_t c = 0; c < cdf.size(); ++c)
    if (u < cdf[c]) return static_cast<int>(c);
  return static_cast<int>(kinds.size()) - 1;
}

Terrain generate_terrain(const TerrainConfig& c) {
  if (c.levels < 2)
    throw std::invalid_argument("terrain: levels must be at least 2, got " +
                                std::to_string(c.levels));
  if (c.kinds.empty()) throw std::invalid_argument("terrain: no sub-terrain kinds");
  double total = 0;
  for (const auto& k : c.kinds) {
    if (!(k.proportion >= 0) || !std::isfinite(k.proportion))
      throw std::invalid_argument("terrain: sub-terrain '" + k.name +
                                  "' has a proportion that is negative or not finite");
    total += k.proportion;
  }
  if (!(total > 0)) throw std::invalid_argument("terrain: the proportions sum to 0");
  if (!(c.horizontal_scale > 0) || !(c.vertical_scale > 0) || !(c.tile_size > 0))
    throw std::invalid_argument(
        "terrain: tile_size, horizontal_scale and vertical_scale must be "
        "positive");
  const double px_real = c.tile_size / c.horizontal_scale;
  const int px = static_cast<int>(std::lround(px_real));
  if (std::fabs(px_real - px) > 1e-9 || px < 16)
    throw std::invalid_argument("terrain: tile_size " + std::to_string(c.tile_size) +
                                " m is not a whole number (at least 16) of samples of " +
                                std::to_string(c.horizontal_scale) + " m");
  const double border_real = c.border / c.horizontal_scale;
  const int bpx = static_cast<int>(std::lround(border_real));
  if (!(c.border >= 0) || std::fabs(border_real - bpx) > 1e-9)
    throw std::invalid_argument("terrain: border " + std::to_string(c.border) +
                                " m is not a whole number of samples of " +
                                std::to_string(c.horizontal_scale) + " m");
  Terrain t;
  t.levels = c.levels;
  t.kinds = static_cast<int>(c.kinds.size());
  t.ncol = c.levels * px + 1 + 2 * bpx;
  t.nrow = t.kinds * px + 1 + 2 * bpx;
  t.grid_half_x = 0.5 * c.levels * c.tile_size;
  t.grid_half_y = 0.5 * t.kinds * c.tile_size;
  t.half_x = t.grid_half_x + bpx * c.horizontal_scale;
  t.half_y = t.grid_half_y + bpx * c.horizontal_scale;
  t.horizontal_scale = c.horizontal_scale;
  t.height.assign(static_cast<size_t>(t.nrow) * t.ncol, 0.0);
  t.origin.assign(static_cast<size_t>(3) * t.levels * t.kinds, 0.0);
  for (int level = 0; level < t.levels; ++level)
    for (int k = 0; k < t.kinds; ++k) {
      // random_rough's draws: one stream per tile.
      Rng rng(c.seed, static_cast<uint32_t>(level * t.kinds + k), 0, 0xE0000000u);
      const TileShape shape{c.kinds[k].kind,
                            static_cast<double>(level) / (c.levels - 1),
                            px,
                            c.horizontal_scale,
                            c.vertical_scale,
                            &rng};
      // Tile (level, k) owns samples [level*px, level*px + px] along x (the last sample is the
      // next tile's first: the later tile writes it).
      for (int j = 0; j <= px; ++j)
        for (int i = 0; i <= px; ++i) {
          const size_t row = static_cast<size_t>(bpx + k * px + j), col = bpx + level * px + i;
          t.height[row * t.ncol + col] = shape.units(i, j) * c.vertical_scale;
        }
      double* o = t.origin.data() + 3 * (level * t.kinds + k);
      o[0] = -t.grid_half_x + (level + 0.5) * c.tile_size;
      o[1] = -t.grid_half_y + (k + 0.5) * c.tile_size;
      o[2] = shape.origin_height();
    }
  const auto [lo, hi] = std::minmax_element(t.height.begin(), t.height.end());
  t.z_min = std::min(*lo, 0.0);
  t.z_max = std::max(*hi, 0.0);
  return t;
}

double Terrain::height_at(double x, double y) const {
  const long col = std::lround((x + half_x) / horizontal_scale);
  const long row = std::lround((y + half_y) / horizontal_scale);
  if (col < 0 || row < 0 || col >= ncol || row >= nrow) return 0;
  return height[static_cast<size_t>(row) * ncol + col];
}

}  // namespace myriad::envs::legged
