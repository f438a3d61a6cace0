// The fused CPU engine's forward pass over the batch, in double (engine_fused.inl).
#include "physics/engine_fused.inl"

namespace myriad::physics {

template void forward(const Model<double>&, Data<double>&);

}  // namespace myriad::physics
