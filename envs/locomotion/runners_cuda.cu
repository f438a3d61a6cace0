// The physics envs' runner on CUDA: the engine in float32 or float64, one thread per env, the data
// in the GPU's memory (physics::CudaBatch), for every env of envs/locomotion/env_list.h.
#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "envs/locomotion/env_list.h"
#include "envs/physics_launch.inl"
#include "myriad/physics/cuda_batch.h"
#include "physics/batch_view.h"

namespace myriad::envs {
namespace {

template <class Env, class T>
class CudaRunner final : public SimRunner<Device::kCuda, Env, MyriadSim<T>> {
 public:
  CudaRunner(const physics::Model<double>& model, int64_t n, int device, bool staged)
      : SimRunner<Device::kCuda, Env, MyriadSim<T>>(DeviceId{Device::kCuda, device}),
        model_(model.cast<T>()),
        batch_(model_, n, device) {
    this->sim_.model = batch_.device_model();
    this->sim_.data = batch_.device_data();
    this->staged_ = staged;
    if (staged) {
      const CudaDeviceScope on(device);
      const size_t bytes = sizeof(T) * static_cast<size_t>(n) * kBeforeWidth<Env>;
      void* p = nullptr;
      if (cudaMalloc(&p, bytes) != cudaSuccess)
        throw std::runtime_error("physics env on cuda:" + std::to_string(device) +
                                 ": cudaMalloc of " + std::to_string(bytes) + " bytes failed");
      before_store_.reset(static_cast<T*>(p));
      this->before_ = before_store_.get();
    }
  }

 private:
  struct CudaFree {
    void operator()(T* p) const { cudaFree(p); }
  };
  void step_substeps_staged(int substeps, void* stream) override {
    batch_.step_async(substeps, /*staged=*/true, stream);
  }

  physics::Model<T> model_;
  physics::CudaBatch<T> batch_;
  std::unique_ptr<T, CudaFree> before_store_;  // the staged step's `before` values
};

}  // namespace

template <class Env>
std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner(const physics::Model<double>& model, int64_t n,
                                                     int device, bool staged, int precision) {
  if (precision == 64) return std::make_unique<CudaRunner<Env, double>>(model, n, device, staged);
  return std::make_unique<CudaRunner<Env, float>>(model, n, device, staged);
}

#define MYRIAD_X(Env)                                                 \
  template std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner<Env>( \
      const physics::Model<double>&, int64_t, int, bool, int);
MYRIAD_PHYSICS_ENV_TYPES(MYRIAD_X)
#undef MYRIAD_X

}  // namespace myriad::envs
