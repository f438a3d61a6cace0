// The tiled step on the CPU (SIMD lanes over a tile of envs).
#include <cstdint>

#include "myriad/parallel_for.h"
#include "myriad/physics/engine.h"
#include "physics/env_step.h"
#include "physics/launch.h"
#include "physics/tile.h"

namespace myriad::physics {

template <class T>
void step_tiled(const Model<T>& m, Data<T>& d, int substeps) {
  launch_step_tiled(view_of(m), batch_view(m, d), d.num_envs(), substeps);
}

template void step_tiled(const Model<float>&, Data<float>&, int);
template void step_tiled(const Model<double>&, Data<double>&, int);

}  // namespace myriad::physics
