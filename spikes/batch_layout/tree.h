// The spike's model and inputs (host code): an Ant-like tree, and per env a random qpos and a
// symmetric positive definite nv x nv matrix, env-major, the same for every program and layout.
#pragma once

#include <random>
#include <vector>

#include "stages.h"

namespace spike {

// Where element k of env i of a field of `size` elements lies: env-major for width 1, else in
// the blocked layout [N / width][size][width].
inline size_t layout_index(int width, int size, int i, int k) {
  if (width == 1) return static_cast<size_t>(i) * size + k;
  return (static_cast<size_t>(i / width) * size + k) * width + i % width;
}

inline TreeModel ant_like_tree() {
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

// Inputs per env: a random pose and joint angles, and an SPD matrix B B^T + n I.
struct Inputs {
  int num_envs;
  TreeModel model = ant_like_tree();
  int n = model.nv;
  std::vector<float> qpos, a;  // env-major [N, nq], [N, nv * nv]
  explicit Inputs(int num_envs_) : num_envs(num_envs_) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    qpos.resize(static_cast<size_t>(num_envs) * model.nq);
    a.resize(static_cast<size_t>(num_envs) * n * n);
    for (int i = 0; i < num_envs; ++i) {
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

}  // namespace spike
