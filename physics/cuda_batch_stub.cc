// Build without nvcc: CudaBatch says so.
#include <cstdint>
#include <stdexcept>

#include "myriad/physics/cuda_batch.h"

namespace myriad::physics {

template <class T>
struct CudaBatch<T>::Impl {};

[[noreturn]] static void no_cuda() {
  throw std::runtime_error("this Myriad build has no CUDA backend (nvcc was not found)");
}

template <class T>
CudaBatch<T>::CudaBatch(const Model<T>&, int64_t, int, void*, int) {
  no_cuda();
}
template <class T>
CudaBatch<T>::~CudaBatch() = default;
template <class T>
void CudaBatch<T>::upload(Data<T>&) {
  no_cuda();
}
template <class T>
void CudaBatch<T>::download(Data<T>&) {
  no_cuda();
}
template <class T>
void CudaBatch<T>::forward(bool) {
  no_cuda();
}
template <class T>
void CudaBatch<T>::step(int, bool) {
  no_cuda();
}
template <class T>
void CudaBatch<T>::forward_async(void*, const uint8_t*, const uint8_t*) {
  no_cuda();
}
template <class T>
void CudaBatch<T>::step_async(int, bool, void*) {
  no_cuda();
}

template <class T>
const ModelView<T>& CudaBatch<T>::device_model() const {
  no_cuda();
}
template <class T>
const BatchView<T, 1>& CudaBatch<T>::device_data() const {
  no_cuda();
}
template <class T>
const BatchView<T, kCudaBlock>& CudaBatch<T>::device_blocked_data() const {
  no_cuda();
}
template <class T>
const EnvParamsView<T>& CudaBatch<T>::device_params() const {
  no_cuda();
}
template <class T>
void CudaBatch<T>::set_params(const EnvParams<T>&) {
  no_cuda();
}

template <class T>
int cuda_solve_storage_bytes(int, int) {
  no_cuda();
}

template class CudaBatch<float>;
template class CudaBatch<double>;
template int cuda_solve_storage_bytes<float>(int, int);
template int cuda_solve_storage_bytes<double>(int, int);

}  // namespace myriad::physics
