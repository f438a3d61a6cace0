// The fused CPU engine's forward pass over the batch, in float (engine_fused.inl).
#include "physics/engine_fused.inl"

namespace myriad::physics {

template void forward(const Model<float>&, Data<float>&);

}  // namespace myriad::physics
