// The fused CPU engine's forward pass and step of one env, in double (engine_fused.inl).
#include "physics/engine_fused.inl"

namespace myriad::physics {

template void forward_env(const ModelView<double>&, EnvData<double>&);
template void step_env(const ModelView<double>&, EnvData<double>&);

}  // namespace myriad::physics
