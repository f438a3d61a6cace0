// AsyncStepper: a BatchEnv stepped now or in the background, for callers that overlap their own
// work with a step (Python's step_async / step_wait, EnvPool's send / recv). It also keeps the
// done mask in a buffer of its own, so that callers need not compute it every step:
//   done  [N] bool  terminated | truncated of the last step (all false after a reset)
//
// One caller thread at a time. The background step runs on one worker thread that the stepper
// starts on first use and keeps, so its OpenMP pool lives across steps. Nothing here takes
// Python's GIL: a binding releases it around every call.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Stream.h>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "myriad/batch_env.h"

namespace myriad::envs {

// Actions of the wrong kind: floats (or bools) for a Discrete space, integers for a Box. Python
// raises it as TypeError; C++ callers may catch it as std::invalid_argument.
struct ActionTypeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Throws ActionTypeError naming the env, its action space kind and the given dtype when actions
// cannot be the actions of spec's env (shapes are checked by BatchEnv::step).
void check_action_dtype(const EnvSpec& spec, const at::Tensor& actions);

class AsyncStepper {
 public:
  // threads: OpenMP threads of CPU batches on the worker (0: the OpenMP default).
  explicit AsyncStepper(std::unique_ptr<BatchEnv> env, int threads = 0);
  ~AsyncStepper();  // finishes the step in flight and stops the worker
  AsyncStepper(const AsyncStepper&) = delete;
  AsyncStepper& operator=(const AsyncStepper&) = delete;

  // A reset, step or step_async while a step_async() awaits its step_wait() throws
  // std::logic_error (as Gymnasium's AlreadyPendingCallError): that step's results would be lost.
  void reset(std::optional<uint64_t> seed = std::nullopt);
  void step(const at::Tensor& actions);  // actions as BatchEnv::step takes them

  // Starts a step on the worker with a copy of actions (the caller may reuse its own at once);
  // a wrong dtype throws here, every other error of the step at step_wait().
  void step_async(const at::Tensor& actions);
  // Waits for the step_async() step; throws its error, or std::logic_error with none pending.
  void step_wait();

  // The env, once the step in flight (if any) has finished; that step's error stays for
  // step_wait(). For get_state, set_state and anything else that reads or writes the env.
  BatchEnv& env();
  // After set_state or anything else that changed terminated/truncated outside step().
  void refresh_done();

  // Fixed at construction, so readable while a step is in flight.
  const EnvSpec& spec() const { return env_->spec(); }
  int64_t num_envs() const { return env_->num_envs(); }
  Device device() const { return env_->device(); }
  const StepBuffers& buffers() const { return env_->buffers(); }
  const at::Tensor& done() const { return done_; }
  bool awaiting_wait() const { return awaiting_wait_; }

 private:
  void step_now(const at::Tensor& actions);
  void refuse_if_pending(const char* call);
  void finish();  // waits for the step in flight, keeping its error in error_
  void run_worker();

  std::unique_ptr<BatchEnv> env_;
  int threads_;
  at::Tensor done_;             // [N] bool, on the env's device
  bool awaiting_wait_ = false;  // a step_async() whose results step_wait() has not returned

  // Worker state, guarded by mutex_.
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  at::Tensor job_;                     // the actions of the step to run next
  std::optional<c10::Stream> stream_;  // the caller's current stream for a CUDA env
  bool in_flight_ = false, stopping_ = false;
  std::exception_ptr error_;  // of the last background step
  std::thread worker_;
};

}  // namespace myriad::envs
