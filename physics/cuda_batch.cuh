// CudaBatch: the device mirror of a batch, stepped by physics/launch.h's loops on the GPU. Included
// by physics/cuda_batch_f32.cu and physics/cuda_batch_f64.cu, one precision each, so that only the
// float64 engine is compiled without FMA contraction (physics/CMakeLists.txt). The fused launches
// (one thread through a whole step) are physics/cuda_fused.cuh's, in translation units of their
// own: their kernels are the slowest ptxas work of the build, which then runs beside the staged
// kernels'.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "myriad/parallel_for.h"
#include "myriad/physics/cuda_batch.h"
#include "physics/cuda_fused.cuh"
#include "physics/launch.h"

namespace myriad::physics {
namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(err));
}

}  // namespace

template <class T>
struct CudaBatch<T>::Impl {
  const Model<T>& host_model;
  int64_t n;
  int device;           // GPU ordinal: every allocation, copy and launch is made with it current
  cudaStream_t stream;  // every copy, memset and synchronous launch of the batch
  ModelView<T> view{};
  BatchView<T> data{};
  std::vector<void*> allocations;

  void* alloc(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
    allocations.push_back(p);
    return p;
  }
};

template <class T>
CudaBatch<T>::CudaBatch(const Model<T>& m, int64_t n, int device, void* stream)
    : impl_(new Impl{m, n, device, static_cast<cudaStream_t>(stream)}) {
  if (impl_->device < 0) check(cudaGetDevice(&impl_->device), "cudaGetDevice");
  const CudaDeviceScope on(impl_->device);
  static_assert(sizeof(EnvData<T>) % sizeof(T*) == 0, "EnvData must hold only pointers");
  impl_->view = view_of(m);
  // The model's arrays, copied once; the view then points at the copies.
  for_each_array(m, impl_->view, [&](const auto& array, auto& pointer) {
    using Elem = typename std::decay_t<decltype(array)>::value_type;
    const size_t bytes = array.size() * sizeof(Elem);
    void* p = impl_->alloc(bytes);
    check(cudaMemcpyAsync(p, array.data(), bytes, cudaMemcpyHostToDevice, impl_->stream),
          "copy model");
    pointer = static_cast<const Elem*>(p);
  });
  EnvData<T> probe{};
  int f = 0;
  for_each_field(probe, m, [&](const char*, T*&, int64_t size) {
    impl_->data.base[f] = static_cast<T*>(impl_->alloc(size * n * sizeof(T)));
    check(cudaMemsetAsync(impl_->data.base[f], 0, size * n * sizeof(T), impl_->stream),
          "cudaMemsetAsync");
    impl_->data.size[f] = size;
    ++f;
  });
  if (f != kNumDataFields) throw std::logic_error("EnvData and for_each_field disagree");
  // The model's host arrays outlive this, but a launch on another stream must see the copies.
  check(cudaStreamSynchronize(impl_->stream), "CudaBatch setup");
}

template <class T>
CudaBatch<T>::~CudaBatch() {
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(impl_->device);
  for (void* p : impl_->allocations) cudaFree(p);
  cudaSetDevice(previous);
}

template <class T>
void CudaBatch<T>::upload(Data<T>& host) {
  const CudaDeviceScope on(impl_->device);
  EnvData<T> probe{};
  int f = 0;
  for_each_field(probe, impl_->host_model, [&](const char* name, T*&, int64_t size) {
    const T* src = host.field(impl_->host_model, name);
    check(cudaMemcpyAsync(impl_->data.base[f], src, size * impl_->n * sizeof(T),
                          cudaMemcpyHostToDevice, impl_->stream),
          "upload");
    ++f;
  });
  check(cudaStreamSynchronize(impl_->stream), "upload");
}

template <class T>
void CudaBatch<T>::download(Data<T>& host) {
  const CudaDeviceScope on(impl_->device);
  EnvData<T> probe{};
  int f = 0;
  for_each_field(probe, impl_->host_model, [&](const char* name, T*&, int64_t size) {
    T* dst = host.field(impl_->host_model, name);
    check(cudaMemcpyAsync(dst, impl_->data.base[f], size * impl_->n * sizeof(T),
                          cudaMemcpyDeviceToHost, impl_->stream),
          "download");
    ++f;
  });
  check(cudaStreamSynchronize(impl_->stream), "download");
}

template <class T>
const ModelView<T>& CudaBatch<T>::device_model() const {
  return impl_->view;
}

template <class T>
const BatchView<T>& CudaBatch<T>::device_data() const {
  return impl_->data;
}

template <class T>
void CudaBatch<T>::forward(bool staged) {
  const DeviceId on{Device::kCuda, impl_->device};
  if (staged)
    launch_forward_staged<Device::kCuda>(impl_->view, impl_->data, impl_->n, on, impl_->stream);
  else
    cuda_forward_fused(impl_->view, impl_->data, impl_->n, on, impl_->stream);
  // Synchronous by contract (bench and tests time it); it waits for the batch's stream only.
  const CudaDeviceScope scope(impl_->device);
  check(cudaStreamSynchronize(impl_->stream), "physics.forward");
}

template <class T>
void CudaBatch<T>::step_async(int substeps, bool staged, void* stream) {
  const DeviceId on{Device::kCuda, impl_->device};
  if (staged)
    launch_step_staged<Device::kCuda>(impl_->view, impl_->data, impl_->n, substeps, on, stream);
  else
    cuda_step_fused(impl_->view, impl_->data, impl_->n, substeps, on, stream);
}

template <class T>
void CudaBatch<T>::forward_async(void* stream, const uint8_t* only_a, const uint8_t* only_b) {
  launch_forward_staged<Device::kCuda>(impl_->view, impl_->data, impl_->n,
                                       DeviceId{Device::kCuda, impl_->device}, stream,
                                       EnvMask{only_a, only_b});
}

template <class T>
void CudaBatch<T>::step(int substeps, bool staged) {
  step_async(substeps, staged, impl_->stream);
  const CudaDeviceScope scope(impl_->device);
  check(cudaStreamSynchronize(impl_->stream), "physics.step");
}

}  // namespace myriad::physics
