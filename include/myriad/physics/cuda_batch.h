// The engine on a CUDA GPU: the same per-env stages (physics/pipeline.h), one thread per env,
// model and data in device memory. Host code needs no CUDA headers. In a build without nvcc
// every method throws.
#pragma once

#include <memory>

#include "myriad/physics/data.h"
#include "myriad/physics/model.h"

namespace myriad::physics {

template <class T>
class CudaBatch {
 public:
  CudaBatch(const Model<T>& m, int64_t num_envs);
  ~CudaBatch();
  CudaBatch(const CudaBatch&) = delete;
  CudaBatch& operator=(const CudaBatch&) = delete;

  void upload(Data<T>& host);    // host batch -> device (every field)
  void download(Data<T>& host);  // device -> host batch (every field)
  void forward();
  void step(int substeps = 1);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace myriad::physics
