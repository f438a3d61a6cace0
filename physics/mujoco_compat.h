#pragma once
// The few libmujoco calls whose spelling changed between 2.2.2 (Debian's package) and MuJoCo 3
// (the pinned PyPI wheel), in one place while the project moves from the first to the second.
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cstring>

namespace myriad::physics {

// How contact margins combine (CollisionModel::margin_rule): MuJoCo 2 takes the larger of two
// geoms' margins and gaps, MuJoCo 3 their sums (and reads gap as a band beyond the margin).
constexpr int kMujocoMarginRule = mjVERSION_HEADER >= 3000000 ? 1 : 0;

// Adds a file named `name` holding `size` bytes of `text` to vfs; 0 on success.
inline int vfs_add_text(mjVFS* vfs, const char* name, const char* text, int size) {
#if mjVERSION_HEADER >= 3000000
  return mj_addBufferVFS(vfs, name, text, size);
#else
  if (mj_makeEmptyFileVFS(vfs, name, size) != 0) return 1;
  std::memcpy(vfs->filedata[mj_findFileVFS(vfs, name)], text, size);
  return 0;
#endif
}

// The dense nv x nv inertia matrix of d's last mj_forward (or mj_fwdPosition) into dst.
inline void full_inertia(const mjModel* m, const mjData* d, mjtNum* dst) {
#if mjVERSION_HEADER >= 3000000
  mj_fullM(m, d, dst);
#else
  mj_fullM(m, dst, d->qM);
#endif
}

// opt.collision of 2.2.2 (all, explicit pairs only, dynamic only); MuJoCo 3 always merges both.
inline int collision_option(const mjModel* m) {
#if mjVERSION_HEADER >= 3000000
  (void)m;
  return 0;
#else
  return m->opt.collision;
#endif
}

// Newton (or CG) iterations of d's last constraint solve; with constraint islands (MuJoCo 3),
// the most any island took.
inline int solver_iterations(const mjData* d) {
#if mjVERSION_HEADER >= 3000000
  const int n = d->nisland < 1 ? 1 : (d->nisland < mjNISLAND ? d->nisland : mjNISLAND);
  return *std::max_element(d->solver_niter, d->solver_niter + n);
#else
  return d->solver_iter;
#endif
}

}  // namespace myriad::physics
