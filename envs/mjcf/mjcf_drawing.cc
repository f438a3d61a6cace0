#include "envs/mjcf/mjcf_drawing.h"

#include <ATen/ATen.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>

#include "myriad/physics/data.h"
#include "physics/model_view.h"
#include "physics/pipeline.h"

namespace myriad::envs {
namespace {

// MuJoCo's mjtGeom order (later types, e.g. SDF, are not drawn; a warning names them).
const char* const kGeomTypes[] = {"plane",     "hfield",   "sphere", "capsule",
                                  "ellipsoid", "cylinder", "box",    "mesh"};

// The mean colour of material mat's base-colour texture (in [0, 1]), or false without one: the
// viewer draws no textures, so a textured material (a terrain's checker) takes its mean.
bool texture_mean(const mjModel* mj, int mat, float rgb[3]) {
  const int tex = mj->mat_texid[mat * mjNTEXROLE + mjTEXROLE_RGB];
  if (tex < 0 || mj->tex_nchannel[tex] < 3) return false;
  const int64_t pixels = static_cast<int64_t>(mj->tex_width[tex]) * mj->tex_height[tex];
  if (pixels <= 0) return false;
  const int channels = mj->tex_nchannel[tex];
  const mjtByte* data = mj->tex_data + mj->tex_adr[tex];
  double sum[3] = {0, 0, 0};
  for (int64_t p = 0; p < pixels; ++p)
    for (int k = 0; k < 3; ++k) sum[k] += data[p * channels + k];
  for (int k = 0; k < 3; ++k) rgb[k] = static_cast<float>(sum[k] / (255.0 * pixels));
  return true;
}

}  // namespace

Scene mjcf_scene(const physics::Model<double>& m, const mjModel* mj, double frame_dt) {
  Scene s;
  s.bodies = m.body_names;
  s.bodies.resize(m.nbody);
  if (!s.bodies.empty() && s.bodies[0].empty()) s.bodies[0] = "world";
  // The initial pose: where bodies welded to the world stay, and where the camera starts.
  physics::Data<double> d(m, 1);
  physics::EnvData<double> e = d.env(m, 0);
  std::copy(m.qpos0.begin(), m.qpos0.end(), e.qpos);
  physics::kinematics(physics::view_of(m), e);
  std::vector<int> mesh_index(mj->nmesh, -1);  // model mesh -> scene mesh, added when used
  std::vector<int> hfield_index(mj->nhfield, -1);
  bool terrain = false;
  for (int g = 0; g < mj->ngeom; ++g) {
    const int type = mj->geom_type[g];
    if (type < 0 || type >= 8) {
      std::cerr << "replay: geom " << g << " has MuJoCo type " << type
                << ", which the viewer does not draw yet\n";
      continue;
    }
    SceneGeom geom;
    const int name = mj->name_geomadr[g];
    geom.name = mj->names[name] ? std::string(mj->names + name) : "geom" + std::to_string(g);
    geom.type = kGeomTypes[type];
    geom.body = mj->geom_bodyid[g];
    for (int k = 0; k < 3; ++k) geom.size[k] = static_cast<float>(mj->geom_size[3 * g + k]);
    double pos[3], quat[4];
    std::copy(mj->geom_pos + 3 * g, mj->geom_pos + 3 * g + 3, pos);
    std::copy(mj->geom_quat + 4 * g, mj->geom_quat + 4 * g + 4, quat);
    if (geom.body != 0 && mj->body_weldid[geom.body] == 0) {
      // Welded to the world: drawn as the world's, in world coordinates.
      const double* xpos = e.xpos + 3 * geom.body;
      const double* xquat = e.xquat + 4 * geom.body;
      double world_pos[3], world_quat[4];
      mju_rotVecQuat(world_pos, pos, xquat);
      for (int k = 0; k < 3; ++k) pos[k] = world_pos[k] + xpos[k];
      mju_mulQuat(world_quat, xquat, quat);
      std::copy(world_quat, world_quat + 4, quat);
      geom.body = 0;
    }
    for (int k = 0; k < 3; ++k) geom.pos[k] = static_cast<float>(pos[k]);
    for (int k = 0; k < 4; ++k) geom.quat[k] = static_cast<float>(quat[k]);
    const float* rgba = mj->geom_rgba + 4 * g;
    const bool default_rgba = rgba[0] == 0.5f && rgba[1] == 0.5f && rgba[2] == 0.5f && rgba[3] == 1;
    const int mat = mj->geom_matid[g];
    if (mat >= 0 && default_rgba) rgba = mj->mat_rgba + 4 * mat;
    for (int k = 0; k < 4; ++k) geom.rgba[k] = rgba[k];
    float mean[3];
    if (mat >= 0 && default_rgba && texture_mean(mj, mat, mean))
      for (int k = 0; k < 3; ++k) geom.rgba[k] *= mean[k];
    if (type == mjGEOM_MESH) {
      const int id = mj->geom_dataid[g];
      if (mesh_index[id] < 0) {
        SceneMesh mesh;
        const int mname = mj->name_meshadr[id];
        mesh.name = std::string(mj->names + mname);
        const int vadr = mj->mesh_vertadr[id], vnum = mj->mesh_vertnum[id];
        const int fadr = mj->mesh_faceadr[id], fnum = mj->mesh_facenum[id];
        mesh.vertices.assign(mj->mesh_vert + 3 * vadr, mj->mesh_vert + 3 * (vadr + vnum));
        mesh.faces.assign(mj->mesh_face + 3 * fadr, mj->mesh_face + 3 * (fadr + fnum));
        mesh_index[id] = static_cast<int>(s.meshes.size());
        s.meshes.push_back(std::move(mesh));
      }
      geom.mesh = mesh_index[id];
    }
    if (type == mjGEOM_HFIELD) {
      const int id = mj->geom_dataid[g];
      if (hfield_index[id] < 0) {
        SceneHeightField field;
        field.name = std::string(mj->names + mj->name_hfieldadr[id]);
        field.nrow = mj->hfield_nrow[id];
        field.ncol = mj->hfield_ncol[id];
        for (int k = 0; k < 4; ++k) field.size[k] = static_cast<float>(mj->hfield_size[4 * id + k]);
        const float* data = mj->hfield_data + mj->hfield_adr[id];
        field.elevation.assign(data, data + static_cast<size_t>(field.nrow) * field.ncol);
        hfield_index[id] = static_cast<int>(s.hfields.size());
        s.hfields.push_back(std::move(field));
      }
      geom.hfield = hfield_index[id];
      terrain = terrain || geom.body == 0;
    }
    s.geoms.push_back(geom);
  }
  // A terrain is its own ground: no grid at z = 0 cutting through it.
  if (!terrain) s.ground_z = 0;
  s.frame_dt = frame_dt;
  // Start looking at the first moving body in its initial pose, from a few times its reach
  // (planes and height fields, the ground, left out).
  int root = 0;  // the first body that moves
  while (root < m.nbody && mj->body_weldid[root] == 0) ++root;
  if (root == m.nbody) root = 0;
  double reach = 0.5;
  for (int g = 0; g < m.ngeom; ++g) {
    if (m.geom_type[g] == mjGEOM_PLANE || m.geom_type[g] == mjGEOM_HFIELD) continue;
    double dist = 0;
    for (int k = 0; k < 3; ++k) dist += std::pow(e.geom_xpos[3 * g + k] - e.xpos[3 * root + k], 2);
    reach = std::max(reach, std::sqrt(dist) + m.geom_size[3 * g] + m.geom_size[3 * g + 1]);
  }
  for (int k = 0; k < 3; ++k) s.camera_target[k] = static_cast<float>(e.xpos[3 * root + k]);
  s.camera_distance = static_cast<float>(3 * reach);
  return s;
}

at::Tensor mjcf_body_poses(const physics::Model<double>& m, const at::Tensor& obs) {
  const int64_t rows = obs.size(0), width = obs.size(1);
  at::Tensor poses = at::empty({rows, m.nbody, 7}, at::kFloat);
  physics::Data<double> d(m, 1);
  physics::EnvData<double> e = d.env(m, 0);
  const physics::ModelView<double> v = physics::view_of(m);
  const float* src = obs.data_ptr<float>();
  float* dst = poses.data_ptr<float>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int k = 0; k < m.nq; ++k) e.qpos[k] = src[i * width + k];
    physics::kinematics(v, e);
    for (int b = 0; b < m.nbody; ++b) {
      float* p = dst + (i * m.nbody + b) * 7;
      for (int k = 0; k < 3; ++k) p[k] = static_cast<float>(e.xpos[3 * b + k]);
      for (int k = 0; k < 4; ++k) p[3 + k] = static_cast<float>(e.xquat[4 * b + k]);
    }
  }
  return poses;
}

}  // namespace myriad::envs
