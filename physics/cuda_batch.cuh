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
#include "physics/batch_layout.h"
#include "physics/cuda_fused.cuh"
#include "physics/env_params.h"
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
  BatchLayout layout;                   // where each env's elements are (block 1 or kCudaBlock)
  BatchView<T> data{};                  // env-major: the views of the storage, one of them set
  BatchView<T, kCudaBlock> blocked{};   // blocked
  std::vector<std::vector<T>> staging;  // a blocked batch's host copies, per field
  EnvParamsView<T> params{};            // device pointers, or all null
  std::vector<void*> allocations;
  std::vector<void*> param_allocations;  // params' storage, replaced by set_params

  void free_params() {
    for (void* p : param_allocations) cudaFree(p);
    param_allocations.clear();
    params = EnvParamsView<T>{};
  }

  void* alloc(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
    allocations.push_back(p);
    return p;
  }
};

template <class T>
CudaBatch<T>::CudaBatch(const Model<T>& m, int64_t n, int device, void* stream, int block)
    : impl_(new Impl{m, n, device, static_cast<cudaStream_t>(stream)}) {
  if (block != 1 && block != kCudaBlock)
    throw std::invalid_argument("CudaBatch: block " + std::to_string(block) + " (1: env-major, " +
                                std::to_string(kCudaBlock) + ": blocked)");
  impl_->layout = batch_layout(m, n, block);  // (refuses a bad size before anything is allocated)
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
  // The data: each field's storage as the layout lays it out, zeroed.
  T* bases[kNumDataFields];
  for (int f = 0; f < kNumDataFields; ++f) {
    const size_t bytes = static_cast<size_t>(impl_->layout.elements(f)) * sizeof(T);
    bases[f] = static_cast<T*>(impl_->alloc(bytes));
    check(cudaMemsetAsync(bases[f], 0, bytes, impl_->stream), "cudaMemsetAsync");
  }
  if (block == 1)
    impl_->data = view_of_layout<T, 1>(impl_->layout, bases);
  else
    impl_->blocked = view_of_layout<T, kCudaBlock>(impl_->layout, bases);
  // The model's host arrays outlive this, but a launch on another stream must see the copies.
  check(cudaStreamSynchronize(impl_->stream), "CudaBatch setup");
}

template <class T>
CudaBatch<T>::~CudaBatch() {
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(impl_->device);
  for (void* p : impl_->allocations) cudaFree(p);
  impl_->free_params();
  cudaSetDevice(previous);
}

// A host batch of `host` envs copied to or from a device batch of `device` envs.
static void check_same_envs(const char* what, int64_t host, int64_t device) {
  if (host != device)
    throw std::invalid_argument(std::string("CudaBatch::") + what + ": a host batch of " +
                                std::to_string(host) + " envs, the device's has " +
                                std::to_string(device));
}

// A field's device storage (the view that is set).
template <class T>
static T* field_base(const BatchLayout& l, const BatchView<T>& data,
                     const BatchView<T, kCudaBlock>& blocked, int f) {
  return l.block == 1 ? data.base[f] : blocked.base[f];
}

template <class T>
void CudaBatch<T>::upload(Data<T>& host) {
  const CudaDeviceScope on(impl_->device);
  const BatchLayout& l = impl_->layout;
  check_same_envs("upload", host.num_envs(), impl_->n);
  impl_->staging.resize(l.block == 1 ? 0 : kNumDataFields);
  EnvData<T> rows = host.env(impl_->host_model, 0);
  int f = 0;
  for_each_field(rows, impl_->host_model, [&](const char*, T*& src, int64_t size) {
    T* dst = field_base(l, impl_->data, impl_->blocked, f);
    if (l.block == 1) {
      check(cudaMemcpyAsync(dst, src, size * impl_->n * sizeof(T), cudaMemcpyHostToDevice,
                            impl_->stream),
            "upload");
    } else {  // laid out on the host, then one copy
      std::vector<T>& staged = impl_->staging[f];
      staged.assign(static_cast<size_t>(l.elements(f)), T(0));
      pack_field(l, f, static_cast<const T*>(src), staged.data());
      check(cudaMemcpyAsync(dst, staged.data(), staged.size() * sizeof(T), cudaMemcpyHostToDevice,
                            impl_->stream),
            "upload");
    }
    ++f;
  });
  check(cudaStreamSynchronize(impl_->stream), "upload");
}

template <class T>
void CudaBatch<T>::download(Data<T>& host) {
  const CudaDeviceScope on(impl_->device);
  const BatchLayout& l = impl_->layout;
  check_same_envs("download", host.num_envs(), impl_->n);
  impl_->staging.resize(l.block == 1 ? 0 : kNumDataFields);
  EnvData<T> rows = host.env(impl_->host_model, 0);
  int f = 0;
  for_each_field(rows, impl_->host_model, [&](const char*, T*& dst, int64_t size) {
    const T* src = field_base(l, impl_->data, impl_->blocked, f);
    if (l.block == 1) {
      check(cudaMemcpyAsync(dst, src, size * impl_->n * sizeof(T), cudaMemcpyDeviceToHost,
                            impl_->stream),
            "download");
    } else {
      std::vector<T>& staged = impl_->staging[f];
      staged.resize(static_cast<size_t>(l.elements(f)));
      check(cudaMemcpyAsync(staged.data(), src, staged.size() * sizeof(T), cudaMemcpyDeviceToHost,
                            impl_->stream),
            "download");
    }
    ++f;
  });
  check(cudaStreamSynchronize(impl_->stream), "download");
  if (l.block == 1) return;
  f = 0;
  for_each_field(rows, impl_->host_model, [&](const char*, T*& dst, int64_t) {
    unpack_field(l, f, impl_->staging[f].data(), dst);
    ++f;
  });
}

template <class T>
const ModelView<T>& CudaBatch<T>::device_model() const {
  return impl_->view;
}

template <class T>
const BatchView<T>& CudaBatch<T>::device_data() const {
  if (impl_->layout.block != 1)
    throw std::logic_error("CudaBatch::device_data: the batch is blocked (device_blocked_data)");
  return impl_->data;
}

template <class T>
const BatchView<T, kCudaBlock>& CudaBatch<T>::device_blocked_data() const {
  if (impl_->layout.block != kCudaBlock)
    throw std::logic_error("CudaBatch::device_blocked_data: the batch is env-major (device_data)");
  return impl_->blocked;
}

template <class T>
const EnvParamsView<T>& CudaBatch<T>::device_params() const {
  return impl_->params;
}

template <class T>
void CudaBatch<T>::set_params(const EnvParams<T>& p) {
  const CudaDeviceScope on(impl_->device);
  if (!p.empty() && p.n != impl_->n)
    throw std::invalid_argument("CudaBatch::set_params: rows for " + std::to_string(p.n) +
                                " envs, the batch has " + std::to_string(impl_->n));
  // Launches in flight (on any stream) may read the old parameters.
  check(cudaDeviceSynchronize(), "set_params");
  impl_->free_params();
  if (p.empty()) return;
  // The host view gives each field's row length; its pointers are replaced by device copies.
  EnvParamsView<T> v = params_view(p, impl_->host_model);
  const auto copy = [&](const std::vector<T>& field, const T*& pointer) {
    if (field.empty()) return;
    const size_t bytes = field.size() * sizeof(T);
    void* d = nullptr;
    check(cudaMalloc(&d, bytes), "cudaMalloc (per-env parameters)");
    impl_->param_allocations.push_back(d);
    check(cudaMemcpyAsync(d, field.data(), bytes, cudaMemcpyHostToDevice, impl_->stream),
          "copy per-env parameters");
    pointer = static_cast<const T*>(d);
  };
#define MYRIAD_X(name, rows, cols) copy(p.name, v.name);
  MYRIAD_ENV_ALL_PARAM_FIELDS(MYRIAD_X)
#undef MYRIAD_X
  copy(p.gravity, v.gravity);
  copy(p.meaninertia, v.meaninertia);
  // Launches on any stream may read them next (as the constructor's copies).
  check(cudaStreamSynchronize(impl_->stream), "copy per-env parameters");
  impl_->params = v;
}

template <class T>
void CudaBatch<T>::forward(bool staged) {
  const DeviceId on{Device::kCuda, impl_->device};
  if (staged && impl_->layout.block == 1)
    launch_forward_staged<Device::kCuda>(impl_->view, impl_->data, impl_->n, on, impl_->stream,
                                         EnvMask{}, impl_->params);
  else if (staged)
    launch_forward_staged<Device::kCuda>(impl_->view, impl_->blocked, impl_->n, on, impl_->stream,
                                         EnvMask{}, impl_->params);
  else if (impl_->layout.block != 1)
    throw std::logic_error("CudaBatch: the fused launch runs env-major batches (block 1)");
  else if (impl_->param_allocations.empty())
    cuda_forward_fused(impl_->view, impl_->data, impl_->n, on, impl_->stream);
  else
    throw std::logic_error("CudaBatch: per-env model parameters run with the staged launch");
  // Synchronous by contract (bench and tests time it); it waits for the batch's stream only.
  const CudaDeviceScope scope(impl_->device);
  check(cudaStreamSynchronize(impl_->stream), "physics.forward");
}

template <class T>
void CudaBatch<T>::step_async(int substeps, bool staged, void* stream) {
  const DeviceId on{Device::kCuda, impl_->device};
  if (staged && impl_->layout.block == 1)
    launch_step_staged<Device::kCuda>(impl_->view, impl_->data, impl_->n, substeps, on, stream,
                                      impl_->params);
  else if (staged)
    launch_step_staged<Device::kCuda>(impl_->view, impl_->blocked, impl_->n, substeps, on, stream,
                                      impl_->params);
  else if (impl_->layout.block != 1)
    throw std::logic_error("CudaBatch: the fused launch runs env-major batches (block 1)");
  else if (impl_->param_allocations.empty())
    cuda_step_fused(impl_->view, impl_->data, impl_->n, substeps, on, stream);
  else
    throw std::logic_error("CudaBatch: per-env model parameters run with the staged launch");
}

template <class T>
void CudaBatch<T>::forward_async(void* stream, const uint8_t* only_a, const uint8_t* only_b) {
  const DeviceId on{Device::kCuda, impl_->device};
  if (impl_->layout.block == 1)
    launch_forward_staged<Device::kCuda>(impl_->view, impl_->data, impl_->n, on, stream,
                                         EnvMask{only_a, only_b}, impl_->params);
  else
    launch_forward_staged<Device::kCuda>(impl_->view, impl_->blocked, impl_->n, on, stream,
                                         EnvMask{only_a, only_b}, impl_->params);
}

template <class T>
int cuda_solve_storage_bytes(int device, int block) {
  return block == 1 ? detail::solve_storage_bytes<T, 1>(device)
                    : detail::solve_storage_bytes<T, kCudaBlock>(device);
}

template <class T>
void CudaBatch<T>::step(int substeps, bool staged) {
  step_async(substeps, staged, impl_->stream);
  const CudaDeviceScope scope(impl_->device);
  check(cudaStreamSynchronize(impl_->stream), "physics.step");
}

}  // namespace myriad::physics
