// The physics envs' runner on CUDA: the engine in float32 or float64, the data in the GPU's memory
// (physics::CudaBatch), the env step staged and replayed as one CUDA graph, for every env of
// envs/locomotion/env_list.h, the task envs included (their staged step: envs/physics_launch.inl).
// The batch env-major (launch=staged) or in blocks of a warp's envs (launch=blocked:
// physics/batch_layout.h, the layout the CPU's launch=blocked checks bit for bit). Compiled once
// per precision (runners_cuda_f32.cu, runners_cuda_f64.cu: float64 without FMA contraction, as
// the engine's float64 units), which make_cuda_runner (runners_cuda.cu) picks from.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "envs/locomotion/env_list.h"
#include "envs/locomotion/runners_cuda.h"
#include "envs/physics_launch.inl"
#include "myriad/physics/cuda_batch.h"
#include "physics/batch_view.h"

namespace myriad::envs {
namespace cuda_runner {

// Two pushes with the same settings (a captured graph launches the push's kernel or not, and
// its kernels hold the settings by value).
inline bool same_push(const PushEvent& a, const PushEvent& b) {
  bool same = a.enabled == b.enabled && a.qpos_adr == b.qpos_adr && a.qvel_adr == b.qvel_adr &&
              a.dt == b.dt;
  for (int k = 0; k < 2; ++k) same = same && a.interval[k] == b.interval[k];
  for (int k = 0; k < 6; ++k) same = same && a.lo[k] == b.lo[k] && a.hi[k] == b.hi[k];
  return same;
}

// Two frames that point at the same buffers with the same sizes and the same push (a captured
// graph's arguments).
inline bool same_frame(const PhysicsFrame& a, const PhysicsFrame& b) {
  return a.n == b.n && a.seed == b.seed && a.max_steps == b.max_steps &&
         a.frame_skip == b.frame_skip && a.obs_dim == b.obs_dim && a.action_dim == b.action_dim &&
         a.action == b.action && a.obs == b.obs && a.final_obs == b.final_obs &&
         a.reward == b.reward && a.terminated == b.terminated && a.truncated == b.truncated &&
         a.elapsed == b.elapsed && a.episode == b.episode && a.running_return == b.running_return &&
         a.episode_return == b.episode_return && a.episode_length == b.episode_length &&
         a.diverged == b.diverged && a.info == b.info && a.task == b.task &&
         a.task_dim == b.task_dim && a.final_qpos == b.final_qpos && same_push(a.push, b.push);
}

// Block: the batch's layout, 1 (env-major) or physics::kCudaBlock (blocked).
template <class Env, class T, int Block>
class CudaRunner final : public SimRunner<Device::kCuda, Env, MyriadSim<T, Block>> {
  using Base = SimRunner<Device::kCuda, Env, MyriadSim<T, Block>>;
  using Params = typename Env::Params;

 public:
  CudaRunner(const physics::Model<double>& model, int64_t n, int device, bool graph)
      : Base(DeviceId{Device::kCuda, device}),
        model_(model.cast<T>()),
        batch_(model_, n, device, /*stream=*/nullptr, Block),
        device_(device),
        // MYRIAD_CUDA_CHECK=1 waits after every launch, which a graph cannot: no graph then.
        use_graph_(graph && !myriad::detail::cuda_check_each_stage()) {
    this->sim_.model = batch_.device_model();
    if constexpr (Block == 1)
      this->sim_.data = batch_.device_data();
    else
      this->sim_.data = batch_.device_blocked_data();
    this->staged_ = true;
    this->reset_launch_ = true;
    const CudaDeviceScope on(device);
    before_store_.reset(static_cast<T*>(
        device_alloc(sizeof(T) * static_cast<size_t>(n) * kBeforeWidth<Env>, "before")));
    this->before_ = before_store_.get();
    forward_store_.reset(static_cast<uint8_t*>(device_alloc(static_cast<size_t>(n), "forward")));
    this->forward_ = forward_store_.get();
    if (use_graph_) {
      actions_.reset(static_cast<float*>(
          device_alloc(sizeof(float) * static_cast<size_t>(n) * model_.nu + 1, "actions")));
      if (cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking) != cudaSuccess)
        throw std::runtime_error("physics env on cuda:" + std::to_string(device) +
                                 ": cannot create the graph's capture stream");
    }
  }
  ~CudaRunner() override {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    if (capture_stream_ != nullptr) cudaStreamDestroy(capture_stream_);
  }

  // Per-env model parameters: copied to the GPU (CudaBatch::set_params), read by the staged
  // launch's kernels and the env's. A captured graph holds the old pointers: captured anew.
  void set_params(const physics::EnvParams<double>& p) override {
    // Nothing may point at the old rows, which set_params frees, should it throw midway.
    drop_graph();
    this->sim_.params = physics::EnvParamsView<T>{};
    this->sim_.per_env_params = false;
    batch_.set_params(p.cast<T>());
    this->sim_.params = batch_.device_params();
    this->sim_.per_env_params = !p.empty();
  }

  // The env step as one CUDA graph: pre-step, every substep's stages, post-step and the
  // auto-reset's launches, captured once (at the second step: the first runs plainly, so each
  // kernel's stack is reserved outside a capture) and replayed on the caller's stream, the
  // actions copied first into a buffer the graph reads. Frames that point elsewhere are captured
  // anew. A failed capture falls back to plain launches, with a warning, for good.
  void step(const PhysicsFrame& f, const Params& p, void* stream) override {
    if (!use_graph_ || graph_failed_ || myriad::detail::stage_events().on)
      return Base::step(f, p, stream);
    const CudaDeviceScope on(device_);
    const auto s = static_cast<cudaStream_t>(stream);
    PhysicsFrame g = f;
    g.action = actions_.get();
    const size_t bytes = sizeof(float) * static_cast<size_t>(f.n) * f.action_dim;
    if (cudaMemcpyAsync(actions_.get(), f.action, bytes, cudaMemcpyDeviceToDevice, s) !=
        cudaSuccess)
      throw std::runtime_error(std::string(Env::kId) + " on cuda: copying the actions failed: " +
                               cudaGetErrorString(cudaGetLastError()));
    // The graph holds the frame's pointers and the env's parameters (a task's curriculum moves
    // its command ranges) as they were at capture.
    if (exec_ == nullptr || !same_frame(g, captured_) || !same_params(p)) {
      if (plain_steps_++ == 0) return Base::step(g, p, stream);
      capture(g, p);
      if (graph_failed_) return Base::step(g, p, stream);
    }
    const cudaError_t err = cudaGraphLaunch(exec_, s);
    if (err != cudaSuccess)
      throw std::runtime_error(std::string(Env::kId) +
                               " on cuda: graph launch failed: " + cudaGetErrorString(err));
  }

 private:
  struct CudaFree {
    void operator()(void* p) const { cudaFree(p); }
  };
  void* device_alloc(size_t bytes, const char* what) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess)
      throw std::runtime_error("physics env on cuda:" + std::to_string(device_) +
                               ": cudaMalloc of " + std::to_string(bytes) + " bytes (" + what +
                               ") failed");
    return p;
  }
  static_assert(std::is_trivially_copyable_v<Params>, "an env's Params are kernel arguments");
  bool same_params(const Params& p) const {
    return std::memcmp(&p, &captured_params_, sizeof(Params)) == 0;
  }
  void drop_graph() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }
  void capture(const PhysicsFrame& g, const Params& p) {
    drop_graph();
    std::string why;
    cudaError_t err = cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeThreadLocal);
    if (err == cudaSuccess) {
      try {
        Base::step(g, p, capture_stream_);
      } catch (const std::exception& e) {
        why = e.what();
      }
      cudaGraph_t graph = nullptr;
      err = cudaStreamEndCapture(capture_stream_, &graph);
      if (err == cudaSuccess && why.empty()) err = cudaGraphInstantiate(&exec_, graph, 0);
      if (graph != nullptr) cudaGraphDestroy(graph);
    }
    if (err != cudaSuccess || !why.empty() || exec_ == nullptr) {
      if (why.empty()) why = cudaGetErrorString(err);
      cudaGetLastError();  // a failed capture leaves its error: clear it
      graph_failed_ = true;
      exec_ = nullptr;
      std::fprintf(stderr,
                   "myriad: %s on cuda: the env step's CUDA graph failed (%s); stepping "
                   "with plain launches\n",
                   Env::kId, why.c_str());
      return;
    }
    captured_ = g;
    std::memcpy(&captured_params_, &p, sizeof(Params));
  }
  void step_substeps_staged(int substeps, void* stream) override {
    batch_.step_async(substeps, /*staged=*/true, stream);
  }
  void forward_staged(physics::EnvMask only, void* stream) override {
    batch_.forward_async(stream, only.a, only.b);
  }

  physics::Model<T> model_;
  physics::CudaBatch<T> batch_;
  int device_;
  bool use_graph_;
  std::unique_ptr<T, CudaFree> before_store_;         // the staged step's `before` values
  std::unique_ptr<uint8_t, CudaFree> forward_store_;  // a task env's finite flags [N]
  std::unique_ptr<float, CudaFree> actions_;          // [N, nu]: what the graph reads
  cudaStream_t capture_stream_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  PhysicsFrame captured_{};
  Params captured_params_{};
  int64_t plain_steps_ = 0;
  bool graph_failed_ = false;
};

}  // namespace cuda_runner

template <class Env, class T>
std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner_of(const physics::Model<double>& model,
                                                        int64_t n, int device, bool blocked,
                                                        bool graph) {
  using cuda_runner::CudaRunner;
  if (blocked)
    return std::make_unique<CudaRunner<Env, T, physics::kCudaBlock>>(model, n, device, graph);
  return std::make_unique<CudaRunner<Env, T, 1>>(model, n, device, graph);
}

}  // namespace myriad::envs
