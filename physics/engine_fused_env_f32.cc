// The fused CPU engine's forward pass and step of one env, in float (engine_fused.inl).
#include "physics/engine_fused.inl"

namespace myriad::physics {

template void forward_env(const ModelView<float>&, EnvData<float>&);
template void step_env(const ModelView<float>&, EnvData<float>&);

}  // namespace myriad::physics
