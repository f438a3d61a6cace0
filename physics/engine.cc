// The CPU engine's ray casts and reset, in float and double; the steps and forward passes are in
// engine_fused_*.cc, engine_staged.cc and engine_tiled.cc.
#include "myriad/physics/engine.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "myriad/parallel_for.h"
#include "physics/batch_view.h"
#include "physics/model_view.h"
#include "physics/ray.h"

namespace myriad::physics {

template <class T>
void cast_rays(const Model<T>& m, Data<T>& d, const T* origins, const T* dirs, int nray, T* dist,
               int32_t* geom, uint32_t group_mask, bool include_static, int exclude_body) {
  ray::RayFilter filter;
  filter.group_mask = group_mask;
  filter.include_static = include_static;
  filter.exclude_body = exclude_body;
  for (int g = 0; g < m.ngeom; ++g)
    if (m.geom_type[g] == collision::kMesh && ray::sees(m, g, filter))
      throw std::invalid_argument(
          "cast_rays: mesh geom " + std::to_string(g) + " '" + m.geom_names[g] + "' (group " +
          std::to_string(ray::ray_group(m, g)) +
          ") passes the filter, and meshes are not ray-cast; leave its group out of group_mask");
  const int64_t n = d.num_envs();
  for (int64_t i = 0; i < n * nray; ++i) {
    const T* v = dirs + 3 * i;
    const bool finite = std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
    if (!finite || !(std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) >= T(collision::kMinVal)))
      throw std::invalid_argument("cast_rays: ray " + std::to_string(i % nray) + " of env " +
                                  std::to_string(i / nray) +
                                  " has a direction of length 0 or not finite");
  }
  const ModelView<T> mv = view_of(m);
  const BatchView<T> bv = batch_view(m, d);
  parallel_for({Device::kCpu, 0}, "physics.cast_rays", n, [=](int64_t i) {
    const EnvData<T> e = bv.env(i);
    for (int r = 0; r < nray; ++r) {
      const int64_t k = i * nray + r;
      int hit = -1;
      dist[k] =
          ray::scene(mv, e.geom_xpos, e.geom_xmat, origins + 3 * k, dirs + 3 * k, filter, &hit);
      if (geom) geom[k] = hit;
    }
  });
}

template <class T>
void reset_data(const Model<T>& m, Data<T>& d) {
  for (int64_t i = 0; i < d.num_envs(); ++i) {
    EnvData<T> e = d.env(m, i);
    for (int k = 0; k < m.nq; ++k) e.qpos[k] = m.qpos0[k];
    for (int k = 0; k < m.nv; ++k) e.qvel[k] = e.qacc_warmstart[k] = 0;
    for (int k = 0; k < m.nu; ++k) e.ctrl[k] = 0;
    e.time[0] = 0;
  }
}

template void cast_rays(const Model<float>&, Data<float>&, const float*, const float*, int, float*,
                        int32_t*, uint32_t, bool, int);
template void cast_rays(const Model<double>&, Data<double>&, const double*, const double*, int,
                        double*, int32_t*, uint32_t, bool, int);
template void reset_data(const Model<float>&, Data<float>&);
template void reset_data(const Model<double>&, Data<double>&);

}  // namespace myriad::physics
