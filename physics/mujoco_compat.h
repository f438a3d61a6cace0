#pragma once
// Thin wrappers over the libmujoco calls the reference side makes in several places, spelled
// once (the pinned MuJoCo 3 wheel's API).
#include <mujoco/mujoco.h>

#include <algorithm>

namespace myriad::physics {

// Adds a file named `name` holding `size` bytes of `text` to vfs; 0 on success.
inline int vfs_add_text(mjVFS* vfs, const char* name, const char* text, int size) {
  return mj_addBufferVFS(vfs, name, text, size);
}

// The dense nv x nv inertia matrix of d's last mj_forward (or mj_fwdPosition) into dst.
inline void full_inertia(const mjModel* m, const mjData* d, mjtNum* dst) { mj_fullM(m, d, dst); }

// Newton (or CG) iterations of d's last constraint solve: with constraint islands, the most any
// island took.
inline int solver_iterations(const mjData* d) {
  const int n = d->nisland < 1 ? 1 : (d->nisland < mjNISLAND ? d->nisland : mjNISLAND);
  return *std::max_element(d->solver_niter, d->solver_niter + n);
}

}  // namespace myriad::physics
