// Ray casts (physics/ray.h) against libmujoco's: mju_rayGeom for each primitive, mj_rayHfield on
// a height field that is not square (rows and columns differ), and mj_ray over a scene with
// every geom type the engine ray-casts, invisible geoms (own colour and material), geom groups
// and static geoms; hits, misses and the geom hit agree, distances to rounding. Float32 too.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "myriad/physics/data.h"
#include "myriad/physics/engine.h"
#include "myriad/physics/import.h"
#include "myriad/physics/model.h"
#include "physics/model_view.h"
#include "physics/ray.h"
#include "tests/physics/mj_from_string.h"

namespace myriad::physics {
namespace {

using test_support::load_mj_string;

// Random unit quaternion as a rotation matrix.
void random_mat(std::mt19937_64& rng, double* mat) {
  std::normal_distribution<double> n(0, 1);
  double q[4] = {n(rng), n(rng), n(rng), n(rng)};
  mju_normalize4(q);
  mju_quat2Mat(mat, q);
}

// A ray from a random point within `spread` of `target` through a point near it: aimed at the
// target most of the time, so hits and misses both occur.
void random_ray(std::mt19937_64& rng, const double* target, double spread, double* pnt,
                double* vec) {
  std::uniform_real_distribution<double> u(-1, 1);
  double through[3];
  for (int k = 0; k < 3; ++k) {
    pnt[k] = target[k] + spread * u(rng);
    through[k] = target[k] + 0.5 * spread * u(rng);
  }
  const double scale = 0.2 + std::abs(u(rng)) * 3;  // not unit length
  for (int k = 0; k < 3; ++k) vec[k] = (through[k] - pnt[k]) * scale;
}

void expect_same(double mine, double theirs, const std::string& what) {
  if (theirs < 0) {
    EXPECT_LT(mine, 0) << what << ": libmujoco misses, the engine hits at " << mine;
  } else {
    EXPECT_NEAR(mine, theirs, 1e-12 * (1 + theirs)) << what;
  }
}

TEST(Ray, PrimitivesAgreeWithMujoco) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> size(0.05, 0.6);
  const int types[] = {mjGEOM_PLANE,     mjGEOM_SPHERE,   mjGEOM_CAPSULE,
                       mjGEOM_ELLIPSOID, mjGEOM_CYLINDER, mjGEOM_BOX};
  for (int type : types) {
    int hits = 0;
    const int rays = 4000;
    for (int i = 0; i < rays; ++i) {
      double pos[3] = {size(rng), -size(rng), size(rng)}, mat[9], sz[3];
      random_mat(rng, mat);
      for (double& s : sz) s = size(rng);
      if (type == mjGEOM_PLANE && i % 2 == 0) sz[0] = sz[1] = 0;  // infinite plane
      double pnt[3], vec[3];
      random_ray(rng, pos, 1.5, pnt, vec);
      const double theirs = mju_rayGeom(pos, mat, sz, pnt, vec, type, nullptr);
      const double mine = ray::geom<double>(type, pos, mat, sz, pnt, vec);
      expect_same(mine, theirs,
                  std::string(collision::geom_type_name(type)) + " ray " + std::to_string(i));
      hits += theirs >= 0;
    }
    // Both outcomes are exercised.
    EXPECT_GT(hits, rays / 10) << collision::geom_type_name(type);
    EXPECT_LT(hits, rays * 9 / 10) << collision::geom_type_name(type);
  }
}

// A height field of 5 rows and 7 columns, tilted, with a bump and a trough; rays from above, the
// sides and below.
// Nothing collides (rays do not need it; ellipsoid and cylinder collisions are not supported).
const char* kScene = R"(
<mujoco>
  <default><geom contype="0" conaffinity="0"/></default>
  <asset>
    <hfield name="terrain" nrow="5" ncol="7" size="0.8 0.5 0.3 0.1"
      elevation="0 0.1 0.2 0.3 0.2 0.1 0
                 0.1 0.5 0.9 1 0.6 0.2 0.1
                 0.2 0.4 0.7 0.2 0.1 0 0.3
                 0 0.1 0.3 0.5 0.8 0.4 0.2
                 0.3 0.2 0.1 0 0.1 0.2 0.6"/>
    <material name="ghost" rgba="1 1 1 0"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1" pos="0 0 -0.5"/>
    <geom name="ground" type="hfield" hfield="terrain" pos="0.1 -0.2 0" euler="0.2 -0.1 0.4"/>
    <geom name="post" type="cylinder" size="0.1 0.4" pos="1.2 0.3 0.2" group="3"/>
    <geom name="hidden" type="sphere" size="0.3" pos="-1 0 0.2" rgba="1 0 0 0"/>
    <geom name="hidden_by_material" type="box" size="0.2 0.2 0.2" pos="-1 1 0.2" material="ghost"/>
    <body name="ball" pos="0.3 0.1 0.6">
      <freejoint/>
      <geom name="ball" type="sphere" size="0.15"/>
      <geom name="egg" type="ellipsoid" size="0.15 0.25 0.1" pos="0.35 0 0" group="2"/>
    </body>
    <body name="arm" pos="-0.4 -0.3 0.5">
      <joint type="hinge" axis="0 1 0"/>
      <geom name="capsule" type="capsule" size="0.05 0.3" euler="0 1 0"/>
      <geom name="box" type="box" size="0.1 0.15 0.05" pos="0.3 0 0" group="6"/>
    </body>
  </worldbody>
</mujoco>)";

TEST(Ray, HFieldAgreesWithMujoco) {
  auto mj = load_mj_string(kScene);
  ASSERT_TRUE(mj);
  mj_forward(mj->m, mj->d);
  const int g = mj_name2id(mj->m, mjOBJ_GEOM, "ground");
  const Model<double> model = import_model(mj->m);
  const ModelView<double> v = view_of(model);
  const int h = v.geom_dataid[g];
  const ray::HField<double> shape{v.hfield_size + 4 * h, v.hfield_data + v.hfield_adr[h],
                                  v.hfield_nrow[h], v.hfield_ncol[h]};
  std::mt19937_64 rng(11);
  int hits = 0, surface_hits = 0;
  const int rays = 20000;
  for (int i = 0; i < rays; ++i) {
    double pnt[3], vec[3];
    random_ray(rng, mj->d->geom_xpos + 3 * g, 1.2, pnt, vec);
    const double theirs = mj_rayHfield(mj->m, mj->d, g, pnt, vec, nullptr);
    const double mine =
        ray::hfield<double>(shape, mj->d->geom_xpos + 3 * g, mj->d->geom_xmat + 9 * g, pnt, vec);
    expect_same(mine, theirs, "hfield ray " + std::to_string(i));
    if (theirs >= 0) {
      ++hits;
      // A hit above the base box: on the surface or a side.
      double p[3];
      for (int k = 0; k < 3; ++k) p[k] = pnt[k] + theirs * vec[k] - mj->d->geom_xpos[3 * g + k];
      const double* mat = mj->d->geom_xmat + 9 * g;
      surface_hits += mat[2] * p[0] + mat[5] * p[1] + mat[8] * p[2] > 1e-9;
    }
  }
  EXPECT_GT(hits, rays / 10);
  EXPECT_GT(surface_hits, rays / 20);
}

// The scene through mj_ray with random filters (groups, static geoms, an excluded body), at random
// poses of the two moving bodies; float64 to rounding, float32 the same geom where the float64
// hit is not within 1e-4 of another geom's or a miss.
TEST(Ray, SceneAgreesWithMjRay) {
  auto mj = load_mj_string(kScene);
  ASSERT_TRUE(mj);
  const Model<double> model = import_model(mj->m);
  const Model<float> model32 = model.cast<float>();
  const ModelView<double> v = view_of(model);
  const ModelView<float> v32 = view_of(model32);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> bits(0, 63);
  int hits = 0, hit_types[mjNGEOMTYPES] = {}, float_checked = 0;
  const int rays = 20000;
  for (int i = 0; i < rays; ++i) {
    if (i % 50 == 0) {
      for (int k = 0; k < 3; ++k) mj->d->qpos[k] += 0.1 * u(rng);
      for (int k = 3; k < mj->m->nq; ++k) mj->d->qpos[k] += 0.5 * u(rng);
      mj_forward(mj->m, mj->d);
    }
    ray::RayFilter f;
    mjtByte groups[mjNGROUP] = {1, 1, 1, 1, 1, 1};
    if (i % 3 == 1) {
      f.group_mask = static_cast<uint32_t>(bits(rng));
      for (int k = 0; k < mjNGROUP; ++k) groups[k] = (f.group_mask >> k) & 1u;
    }
    f.include_static = i % 4 != 3;
    f.exclude_body = i % 5 == 4 ? 1 + i % 2 : -1;
    const double target[3] = {0, 0, 0.2};
    double pnt[3], vec[3];
    random_ray(rng, target, 1.5, pnt, vec);
    int their_geom = -1, my_geom = -1;
    const double theirs = mj_ray(mj->m, mj->d, pnt, vec, i % 3 == 1 ? groups : nullptr,
                                 f.include_static, f.exclude_body, &their_geom, nullptr);
    const double mine =
        ray::scene<double>(v, mj->d->geom_xpos, mj->d->geom_xmat, pnt, vec, f, &my_geom);
    expect_same(mine, theirs, "scene ray " + std::to_string(i));
    EXPECT_EQ(my_geom, their_geom) << "scene ray " << i;
    if (theirs >= 0) {
      ++hits;
      ++hit_types[mj->m->geom_type[their_geom]];
    }

    // Float32 where the answer is not decided by rounding: the same ray cast a little shorter
    // and a little longer still hits the same geom first.
    float xpos[3 * 64], xmat[9 * 64], p32[3], v32f[3];
    ASSERT_LE(mj->m->ngeom, 64);
    for (int k = 0; k < 3 * mj->m->ngeom; ++k) xpos[k] = static_cast<float>(mj->d->geom_xpos[k]);
    for (int k = 0; k < 9 * mj->m->ngeom; ++k) xmat[k] = static_cast<float>(mj->d->geom_xmat[k]);
    for (int k = 0; k < 3; ++k) {
      p32[k] = static_cast<float>(pnt[k]);
      v32f[k] = static_cast<float>(vec[k]);
    }
    bool robust = true;
    for (double shift : {-1e-3, 1e-3}) {
      double moved[3];
      for (int k = 0; k < 3; ++k) moved[k] = pnt[k] + shift * vec[k];
      int other = -1;
      mj_ray(mj->m, mj->d, moved, vec, i % 3 == 1 ? groups : nullptr, f.include_static,
             f.exclude_body, &other, nullptr);
      double side[3] = {vec[1], -vec[0], vec[2]};
      for (double s : {-1e-3, 1e-3}) {
        for (int k = 0; k < 3; ++k) moved[k] = pnt[k] + s * side[k];
        int beside = -1;
        mj_ray(mj->m, mj->d, moved, vec, i % 3 == 1 ? groups : nullptr, f.include_static,
               f.exclude_body, &beside, nullptr);
        robust = robust && beside == their_geom;
      }
      robust = robust && other == their_geom;
    }
    if (!robust) continue;
    ++float_checked;
    int geom32 = -1;
    const float d32 = ray::scene<float>(v32, xpos, xmat, p32, v32f, f, &geom32);
    EXPECT_EQ(geom32, their_geom) << "float32 scene ray " << i;
    if (theirs >= 0 && geom32 == their_geom) EXPECT_NEAR(d32, theirs, 2e-4 * (1 + theirs));
  }
  EXPECT_GT(hits, rays / 5);
  EXPECT_GT(float_checked, rays / 2);
  for (int type : {mjGEOM_PLANE, mjGEOM_HFIELD, mjGEOM_SPHERE, mjGEOM_CAPSULE, mjGEOM_ELLIPSOID,
                   mjGEOM_CYLINDER, mjGEOM_BOX})
    EXPECT_GT(hit_types[type], 20) << "no ray hit a " << collision::geom_type_name(type);
}

// The batch API: each env's rays against its own poses, as mj_ray casts them at that state; bad
// directions and rays a mesh would stop are refused by name.
TEST(Ray, CastRaysOverTheBatchAgreesWithMjRay) {
  auto mj = load_mj_string(kScene);
  ASSERT_TRUE(mj);
  const Model<double> model = import_model(mj->m);
  const int n = 3, nray = 40;
  Data<double> data(model, n);
  reset_data(model, data);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::vector<double>> qpos(n);
  for (int i = 0; i < n; ++i) {
    EnvData<double> e = data.env(model, i);
    for (int k = 0; k < model.nq; ++k) e.qpos[k] += (k < 3 ? 0.1 : 0.5) * u(rng);
    qpos[i].assign(e.qpos, e.qpos + model.nq);
  }
  forward(model, data);
  std::vector<double> origins(3 * n * nray), dirs(3 * n * nray), dist(n * nray);
  std::vector<int32_t> geoms(n * nray);
  const double target[3] = {0, 0, 0.2};
  for (int k = 0; k < n * nray; ++k) random_ray(rng, target, 1.5, &origins[3 * k], &dirs[3 * k]);
  cast_rays(model, data, origins.data(), dirs.data(), nray, dist.data(), geoms.data(), 0x3f, true,
            1);
  int hits = 0;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < model.nq; ++k) mj->d->qpos[k] = qpos[i][k];
    mj_forward(mj->m, mj->d);
    for (int r = 0; r < nray; ++r) {
      const int k = i * nray + r;
      int theirs_geom = -1;
      const double theirs =
          mj_ray(mj->m, mj->d, &origins[3 * k], &dirs[3 * k], nullptr, 1, 1, &theirs_geom, nullptr);
      expect_same(dist[k], theirs, "env " + std::to_string(i) + " ray " + std::to_string(r));
      EXPECT_EQ(geoms[k], theirs_geom);
      hits += theirs >= 0;
    }
  }
  EXPECT_GT(hits, n * nray / 5);

  dirs[3 * (nray + 2)] = dirs[3 * (nray + 2) + 1] = dirs[3 * (nray + 2) + 2] = 0;
  try {
    cast_rays(model, data, origins.data(), dirs.data(), nray, dist.data());
    ADD_FAILURE() << "a zero direction was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ray 2 of env 1"), std::string::npos) << e.what();
  }
}

TEST(Ray, CastRaysRefusesVisibleMeshes) {
  auto mj = load_mj_string(R"(
<mujoco>
  <asset><mesh name="tet" vertex="0 0 0  0.2 0 0  0 0.2 0  0 0 0.2"/></asset>
  <worldbody>
    <geom type="plane" size="1 1 0.1"/>
    <body pos="0 0 0.5">
      <freejoint/>
      <geom name="shell" type="mesh" mesh="tet" group="2" contype="0" conaffinity="0"/>
      <geom type="sphere" size="0.1"/>
    </body>
  </worldbody>
</mujoco>)");
  ASSERT_TRUE(mj);
  const Model<double> model = import_model(mj->m);
  Data<double> data(model, 1);
  reset_data(model, data);
  forward(model, data);
  const double origin[3] = {0, 0, 2}, dir[3] = {0, 0, -1};
  double dist = 0;
  try {
    cast_rays(model, data, origin, dir, 1, &dist);
    ADD_FAILURE() << "a visible mesh was ray-cast";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'shell' (group 2) passes the filter"), std::string::npos)
        << e.what();
  }
  cast_rays(model, data, origin, dir, 1, &dist, nullptr, 0x3f & ~(1u << 2));
  EXPECT_NEAR(dist, 2 - 0.5 - 0.1, 1e-12);  // the sphere on top, not the hidden mesh group
}

}  // namespace
}  // namespace myriad::physics
