// The fused CPU engine's step over the batch, in double (engine_fused.inl).
#include "physics/engine_fused.inl"

namespace myriad::physics {

template void step(const Model<double>&, Data<double>&, int);

}  // namespace myriad::physics
