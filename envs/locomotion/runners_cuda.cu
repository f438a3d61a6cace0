// The physics envs' runner on CUDA: the engine in float32, one thread per env, the data in the
// GPU's memory (physics::CudaBatch), for every env of envs/locomotion/env_list.h.
#include <memory>

#include "envs/locomotion/env_list.h"
#include "envs/physics_launch.inl"
#include "myriad/physics/cuda_batch.h"
#include "physics/batch_view.h"

namespace myriad::envs {
namespace {

template <class Env>
class CudaRunner final : public SimRunner<Device::kCuda, Env, MyriadSim<float>> {
 public:
  CudaRunner(const physics::Model<double>& model, int64_t n, int device)
      : SimRunner<Device::kCuda, Env, MyriadSim<float>>(DeviceId{Device::kCuda, device}),
        model_(model.cast<float>()),
        batch_(model_, n, device) {
    this->sim_.model = batch_.device_model();
    this->sim_.data = batch_.device_data();
  }

 private:
  physics::Model<float> model_;
  physics::CudaBatch<float> batch_;
};

}  // namespace

template <class Env>
std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner(const physics::Model<double>& model, int64_t n,
                                                     int device) {
  return std::make_unique<CudaRunner<Env>>(model, n, device);
}

#define MYRIAD_X(Env)                                                 \
  template std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner<Env>( \
      const physics::Model<double>&, int64_t, int);
MYRIAD_PHYSICS_ENV_TYPES(MYRIAD_X)
#undef MYRIAD_X

}  // namespace myriad::envs
