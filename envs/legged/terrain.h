// A terrain of sub-terrain tiles for the legged tasks, as mjlab's TerrainGenerator lays out its
// ROUGH_TERRAINS_CFG in curriculum mode (mjlab 1.6.0, terrains/; transcribed in
// envs/legged/mjlab-velocity-reference.md, section 10): a grid of `levels` rows of difficulty
// (along x, difficulty level / (levels - 1)) by one column per sub-terrain kind (along y), square
// tiles of `tile_size` metres, centred on the world origin, sampled as one height field at
// `horizontal_scale` metres with heights in whole `vertical_scale` units. Each tile has an origin,
// where its envs spawn.
//
//   kind                 at difficulty d                                      origin height
//   flat                 0                                                    0
//   pyramid_stairs       5 rising square rings 0.3 m wide of step 0.1 d,      6 * 0.1 d
//                        a 1 m flat border and a 3 m platform
//   pyramid_stairs_inv   the same, descending                                 -6 * 0.1 d
//   pyramid_slope        slope d up to a 2 m platform (product of two tents,  the platform
//                        0.25 m border)
//   pyramid_slope_inv    the same, a pit                                      -the platform
//   random_rough         every cell 0.02 ... 0.10 m in 0.02 steps (d unused)  0.06
//   wave                 4 waves per tile side, 0.1 d per axis (0.2 d total)  0
//
// Where it differs from mjlab: mjlab builds the stairs of boxes and the other kinds as height
// fields, here every tile is one height field (a stair edge is a ramp one sample wide); the
// random draws are the project's (Philox from the seed), not numpy's; the flat border around the
// grid is part of the height field (mjlab: 20 m of boxes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace myriad::envs::legged {

enum class TerrainKind {
  kFlat,
  kPyramidStairs,
  kPyramidStairsInv,
  kPyramidSlope,
  kPyramidSlopeInv,
  kRandomRough,
  kWave
};

struct SubTerrain {
  TerrainKind kind;
  std::string name;
  double proportion;  // the share of envs spawned on this column
};

// mjlab's ROUGH_TERRAINS_CFG: 7 kinds with their proportions.
std::vector<SubTerrain> rough_terrains();

struct TerrainConfig {
  int levels = 10;       // rows of difficulty 0, 1/(levels-1), ..., 1
  double tile_size = 8;  // metres, square tiles
  double horizontal_scale = 0.1;
  double vertical_scale = 0.005;
  double border = 0;  // a flat margin (m, whole samples) around the grid, part of the field
  uint64_t seed = 0;  // random_rough's draws
  std::vector<SubTerrain> kinds = rough_terrains();
};

struct Terrain {
  int levels = 0, kinds = 0;
  int nrow = 0, ncol = 0;         // height-field samples: rows along y, columns along x
  double half_x = 0, half_y = 0;  // the field's half extents (m, border included), centred on 0
  double grid_half_x = 0, grid_half_y = 0;  // the tiles' half extents (m)
  double horizontal_scale = 0;
  std::vector<double> height;  // [nrow * ncol] metres, row-major (row = y, column = x)
  double z_min = 0, z_max = 0;
  // The tiles' spawn points [levels][kinds][3] (x, y, z) in the world.
  std::vector<double> origin;
  const double* tile_origin(int level, int kind) const {
    return origin.data() + 3 * (level * kinds + kind);
  }
  // The height of the sample nearest world (x, y); 0 outside the grid.
  double height_at(double x, double y) const;
};

// The terrain of `config`; std::invalid_argument naming what is wrong (levels < 2, no kinds, a
// tile or border that is not a whole number of samples, a negative proportion).
Terrain generate_terrain(const TerrainConfig& config);

// The kinds' cumulative shares (proportions normalised), the last 1.
std::vector<double> kind_cdf(const std::vector<SubTerrain>& kinds);

// The column of a draw u in [0, 1) by the kinds' proportions (kind_cdf).
int kind_of_draw(const std::vector<SubTerrain>& kinds, double u);

}  // namespace myriad::envs::legged
