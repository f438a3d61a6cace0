#include "envs/async_stepper.h"

#include <ATen/ATen.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace myriad::envs {

void check_action_dtype(const EnvSpec& spec, const at::Tensor& actions) {
  const std::string given(c10::toString(actions.scalar_type()));
  if (spec.action_space.is_discrete()) {
    if (actions.is_floating_point() || actions.is_complex() || actions.scalar_type() == at::kBool)
      throw ActionTypeError(spec.id + " has Discrete actions: expected integers, got " + given);
  } else if (!actions.is_floating_point()) {
    throw ActionTypeError(spec.id + " has Box actions: expected floats, got " + given);
  }
}

AsyncStepper::AsyncStepper(std::unique_ptr<BatchEnv> env, int threads)
    : env_(std::move(env)), threads_(threads) {
  done_ = at::empty({env_->num_envs()}, env_->buffers().terminated.options());
  refresh_done();
}

AsyncStepper::~AsyncStepper() {
  if (!worker_.joinable()) return;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [this] { return !in_flight_; });
    stopping_ = true;
  }
  wake_.notify_one();
  worker_.join();
}

void AsyncStepper::reset(std::optional<uint64_t> seed) {
  refuse_if_pending("reset()");
  env_->reset(seed);
  refresh_done();
}

void AsyncStepper::step(const at::Tensor& actions) {
  refuse_if_pending("step()");
  check_action_dtype(env_->spec(), actions);
  step_now(actions);
}

void AsyncStepper::step_async(const at::Tensor& actions) {
  refuse_if_pending("step_async()");
  check_action_dtype(env_->spec(), actions);
  // The worker owns a copy, so the caller may reuse its array or tensor at once.
  at::Tensor owned = actions.clone(at::MemoryFormat::Contiguous);
  std::optional<c10::Stream> stream;
  if (owned.is_cuda())  // the worker steps on the stream the caller is on (its copy's too)
    stream = c10::impl::getDeviceGuardImpl(owned.device().type())->getStream(owned.device());
  if (!worker_.joinable()) worker_ = std::thread([this] { run_worker(); });
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = std::move(owned);
    stream_ = stream;
    in_flight_ = true;
    error_ = nullptr;
  }
  awaiting_wait_ = true;
  wake_.notify_one();
}

void AsyncStepper::step_wait() {
  if (!awaiting_wait_) throw std::logic_error("step_wait() called with no step_async() pending");
  awaiting_wait_ = false;
  finish();
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

BatchEnv& AsyncStepper::env() {
  finish();
  return *env_;
}

void AsyncStepper::refresh_done() {
  const StepBuffers& b = env_->buffers();
  if (done_.is_cuda()) {
    at::logical_or_out(done_, b.terminated, b.truncated);  // on the current stream
    return;
  }
  // On the CPU a plain loop (vectorized; a few microseconds at 65,536 envs): ATen's operator
  // would fork its OpenMP team on every step for so few bytes.
  const bool* terminated = b.terminated.data_ptr<bool>();
  const bool* truncated = b.truncated.data_ptr<bool>();
  bool* done = done_.data_ptr<bool>();
  const int64_t n = done_.numel();
  for (int64_t i = 0; i < n; ++i) done[i] = terminated[i] | truncated[i];
}

void AsyncStepper::step_now(const at::Tensor& actions) {
  env_->step(actions);
  refresh_done();
}

void AsyncStepper::refuse_if_pending(const char* call) {
  if (awaiting_wait_)
    throw std::logic_error(std::string(call) +
                           " called while a step_async() is pending: call step_wait() first "
                           "(its step has run or is running; its results would be lost)");
  finish();
  error_ = nullptr;
}

void AsyncStepper::finish() {
  if (!worker_.joinable()) return;
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [this] { return !in_flight_; });
}

void AsyncStepper::run_worker() {
  set_cpu_threads(threads_);  // OpenMP settings are per thread
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return job_.defined() || stopping_; });
    if (stopping_) return;
    const at::Tensor actions = std::exchange(job_, at::Tensor());
    const std::optional<c10::Stream> stream = stream_;
    lock.unlock();
    std::exception_ptr error;
    try {
      std::optional<c10::StreamGuard> on_stream;
      if (stream) on_stream.emplace(*stream);
      step_now(actions);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    in_flight_ = false;
    finished_.notify_all();
  }
}

}  // namespace myriad::envs
