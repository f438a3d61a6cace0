// A physics env's batch on one sim and device, behind a torch-free interface: the torch side
// (envs/physics_batch_env.h) owns the framework's buffers and passes them as a PhysicsFrame; a
// runner owns the physics data and launches envs/physics_kernels.h over it. Runners are made in
// envs/locomotion/runners_cpu.cc (the engine in float32 or float64, and libmujoco) and
// envs/locomotion/runners_cuda.cuh (the engine on a GPU).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>

#include "envs/physics_frame.h"
#include "myriad/physics/model.h"
#include "physics/env_params.h"

struct mjModel_;
typedef struct mjModel_ mjModel;

namespace myriad::envs {

enum class PhysicsSim { kMyriad32, kMyriad64, kMujoco };

template <class Env>
class PhysicsRunner {
 public:
  using Params = typename Env::Params;
  virtual ~PhysicsRunner() = default;
  // Every call launches over the batch (on CUDA on `stream`, LibTorch's current stream of the
  // env's GPU) and returns without waiting for a GPU.
  virtual void reset(const PhysicsFrame& f, const Params& p, void* stream) = 0;
  virtual void step(const PhysicsFrame& f, const Params& p, void* stream) = 0;
  // state [N, 1 + nq + nv] float64 on the runner's device: (time, qpos, qvel) per env.
  virtual void read_state(const PhysicsFrame& f, const Params& p, double* state, void* stream) = 0;
  // Writes rows [rows, 1 + nq + nv] into envs ids [rows] (distinct, in range), then runs the
  // forward pass and observes them. written [N]: 1 for the envs in ids, on the runner's device.
  virtual void write_state(const PhysicsFrame& f, const Params& p, const double* state,
                           const int64_t* ids, int64_t rows, const uint8_t* written,
                           void* stream) = 0;
  // Snapshots [N, snapshot_width()] float64 on the runner's device (envs/physics_kernels.h): what
  // continues every env exactly where it was.
  virtual int64_t snapshot_width() const = 0;
  virtual void save_snapshot(const PhysicsFrame& f, const Params& p, double* out, void* stream) = 0;
  virtual void load_snapshot(const PhysicsFrame& f, const Params& p, const double* in,
                             void* stream) = 0;
  // Per-env model parameters (physics/env_params.h, [N, ...] rows in float64; empty: every env
  // reads the model), from the next launch on. The engine's runners take them (CPU: the fused
  // and staged launches, not tiled; CUDA), and libmujoco's; the others refuse non-empty ones.
  virtual void set_params(const physics::EnvParams<double>& p) {
    if (!p.empty())
      throw std::invalid_argument("per-env model parameters are not supported by this runner");
  }
};

// How the engine's env step runs: one fused pass per env (pre-step, substeps, post-step; CPU);
// or pre-step and post-step per env around the physics substeps over the whole batch, either one
// launch per stage (staged) or in tiles of 8 envs whose smooth stages run in SIMD lanes (tiled:
// physics/tile.h; CPU); or staged on a batch stored in blocks of a warp's envs (blocked:
// physics/batch_layout.h; CUDA's coalesced layout, and on the CPU its check). On the CPU, the
// same bits every way.
enum class PhysicsLaunch { kFused, kStaged, kTiled, kBlocked };

// sim kMyriad32/kMyriad64: the engine on the model, launched as `launch` says; kMujoco: libmujoco
// on a copy of mj (whose import `model` is), one env at a time (launch ignored).
template <class Env>
std::unique_ptr<PhysicsRunner<Env>> make_cpu_runner(PhysicsSim sim,
                                                    const physics::Model<double>& model,
                                                    const mjModel* mj, int64_t n,
                                                    PhysicsLaunch launch);
// The engine on GPU `device`, in float32 (precision 32) or float64 (64), launched kStaged (an
// env-major batch) or kBlocked (a batch in blocks of a warp's envs); graph: the env step captured
// once as a CUDA graph and replayed (envs/locomotion/runners_cuda.cuh).
template <class Env>
std::unique_ptr<PhysicsRunner<Env>> make_cuda_runner(const physics::Model<double>& model, int64_t n,
                                                     int device, PhysicsLaunch launch,
                                                     int precision, bool graph);

}  // namespace myriad::envs
