// The fused CPU engine's step over the batch, in float (engine_fused.inl).
#include "physics/engine_fused.inl"

namespace myriad::physics {

template void step(const Model<float>&, Data<float>&, int);

}  // namespace myriad::physics
