// The physics launch: one templated loop per entry point (forward, step), written once and
// instantiated for the CPU (OpenMP, physics/engine.cc) and for CUDA (physics/cuda_batch.cuh), as
// the envs are launched (envs/batch_launch.inl). The per-env work is physics/pipeline.h's.
//
// Two shapes of the same work: fused (launch_forward, launch_step: one pass per env through
// every stage, which keeps an env's data in cache on the CPU) and staged (launch_*_staged: one
// launch per named stage over the whole batch; on CUDA one kernel per stage, each with its own
// register count and an NVTX range of the stage's name, so a profile shows where the time goes
// and a light stage is not held to the occupancy of the solver's). Both give the same bits.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "myriad/parallel_for.h"
#include "physics/batch_view.h"
#include "physics/constraint/solve_group.h"
#include "physics/env_params.h"
#include "physics/pipeline.h"

namespace myriad::physics {

// Which envs a launch works on: every env (a == nullptr), or those whose a[i] or b[i] is set
// (the physics envs' terminated and truncated flags: the auto-reset's forward pass). The other
// envs' threads return at once, so a masked launch costs what its envs cost.
struct EnvMask {
  const uint8_t* a = nullptr;
  const uint8_t* b = nullptr;
  MYRIAD_HD bool skips(int64_t i) const {
    return a != nullptr && !(a[i] != 0 || (b != nullptr && b[i] != 0));
  }
};

// The fused launches' per-env work: every stage of a forward pass (or of `substeps` steps) in one
// pass per env. Named functors, so that the CUDA kernels carry "fused" in their names.
template <class T>
struct ForwardFused {
  ModelView<T> m;
  BatchView<T> b;
  MYRIAD_HD void operator()(int64_t i) const {
    EnvData<T> e = b.env(i);
    physics::forward(m, e);
  }
};
template <class T>
struct StepFused {
  ModelView<T> m;
  BatchView<T> b;
  int substeps;
  MYRIAD_HD void operator()(int64_t i) const {
    EnvData<T> e = b.env(i);
    for (int s = 0; s < substeps; ++s) physics::step(m, e);
  }
};

// mj_forward on n envs.
template <Device D, class T>
void launch_forward(const ModelView<T>& m, const BatchView<T>& b, int64_t n, DeviceId device,
                    void* stream = nullptr) {
  parallel_for(DeviceId{D, device.index}, "physics.forward", n, ForwardFused<T>{m, b}, stream,
               /*min_parallel=*/2);
}

// `substeps` mj_step on n envs.
template <Device D, class T>
void launch_step(const ModelView<T>& m, const BatchView<T>& b, int64_t n, int substeps,
                 DeviceId device, void* stream = nullptr) {
  parallel_for(DeviceId{D, device.index}, "physics.step", n, StepFused<T>{m, b, substeps}, stream,
               /*min_parallel=*/2);
}

// The named stages of the staged launch.
enum class Stage {
  kPosition,
  kCollisionGather,
  kConstraintRows,
  kVelocity,
  kActuation,
  kAcceleration,
  kConstraintSolve,
  kBodyForces,
  kSensors,
  kSensorsAcc,
  kSensorsRangefinder,
  kSensorsTouch,
  kEuler,
  kImplicitFast,
  kImplicitFreeBodies,
  kImplicitFastFinish,
  kRk4Begin,
  kRk4StageBegin,
  kRk4StageEnd,
  kRk4Finish,
};

namespace detail {

// Stage S of pipeline.h for one env. rk_stage: RK4's stage index (1..3) for kRk4Stage*.
template <Stage S, class T, int Block>
MYRIAD_HD void run_stage(const ModelView<T>& m, EnvData<T, Block>& e, int rk_stage) {
  (void)rk_stage;
  if constexpr (S == Stage::kPosition) forward_position(m, e);
  if constexpr (S == Stage::kCollisionGather) collision_gather(m, e);
  if constexpr (S == Stage::kConstraintRows) forward_constraint_rows(m, e);
  if constexpr (S == Stage::kVelocity) forward_velocity(m, e);
  if constexpr (S == Stage::kActuation) actuation(m, e);
  if constexpr (S == Stage::kAcceleration) forward_acceleration(m, e);
  // The lane group's solve (a warp per env on CUDA, SolveByWarp; one lane here): the same bits.
  if constexpr (S == Stage::kConstraintSolve) constraint::solve(constraint::SerialGroup{}, m, e);
  // post_constraint in two launches: each keeps its own (smaller) stack frame.
  if constexpr (S == Stage::kBodyForces) constraint::body_forces(m, e);
  // The sensors in parts (physics/sensor.h): the plain ones, mj_rnePostConstraint's, the rays.
  if constexpr (S == Stage::kSensors) sensors<T, SensorPart::kPlain>(m, e);
  if constexpr (S == Stage::kSensorsAcc) sensors<T, SensorPart::kAcc>(m, e);
  if constexpr (S == Stage::kSensorsRangefinder) sensors<T, SensorPart::kRangefinder>(m, e);
  if constexpr (S == Stage::kSensorsTouch) sensors<T, SensorPart::kTouch>(m, e);
  if constexpr (S == Stage::kEuler) euler_semi_implicit(m, e);
  if constexpr (S == Stage::kImplicitFast) implicit_fast_solve(m, e);
  if constexpr (S == Stage::kImplicitFreeBodies) implicit_free_bodies(m, e);
  if constexpr (S == Stage::kImplicitFastFinish) implicit_fast_finish(m, e);
  if constexpr (S == Stage::kRk4Begin) rk4_begin(m, e);
  if constexpr (S == Stage::kRk4StageBegin) rk4_stage_begin(m, e, rk_stage);
  if constexpr (S == Stage::kRk4StageEnd) rk4_stage_end(m, e, rk_stage);
  if constexpr (S == Stage::kRk4Finish) rk4_finish(m, e);
}

// Stage S for env i of the batch: the kernel of a staged launch (a named functor, not a lambda,
// so that each stage is its own kernel type on CUDA; its name carries the stage's number in
// Stage). Env i reads its own model: m with its per-env parameters' rows (env_params.h; none:
// m as it is).
template <Stage S, class T, int Block>
struct StageKernel {
  BatchView<T, Block> b;
  ModelView<T> m;
  EnvParamsView<T> params;
  int rk_stage;
  EnvMask only;
  MYRIAD_HD void operator()(int64_t i) const {
    if (only.skips(i)) return;
    auto e = b.env(i);
    run_stage<S>(env_model(m, params, i), e, rk_stage);
  }
};

// Collision over (env, candidate pair): thread t collides pair candidate_grouped[first + t %
// count] of env t / count into its slot (pipeline.h's collision_pair); a kernel per PairGroup, so
// each carries only its own pair functions' registers and stack.
template <int kGroup, class T, int Block>
struct CollidePairs {
  BatchView<T, Block> b;
  ModelView<T> m;
  EnvParamsView<T> params;
  int first, count;
  EnvMask only;
  MYRIAD_HD void operator()(int64_t t) const {
    const int64_t i = t / count;
    if (only.skips(i)) return;
    auto e = b.env(i);
    collision_pair<T, kGroup>(env_model(m, params, i), e,
                              m.candidate_grouped[first + static_cast<int>(t % count)]);
  }
};

#if defined(__CUDACC__)
// GJK/EPA's pairs on CUDA (PairGroup kPairsCcd, kPairsHfield): a group of ccd_lanes(kGroup) lanes
// per (env, pair), several pairs per 32-thread block (a cooperative kernel: its block size is
// kCcdBlock). The height field's lanes take its pair's prisms (hfield.h's hfield_convex_group),
// two geoms' lanes the four multi-CCD perturbations (convex.h's convex_convex_group). The block's
// lanes take in turn one EPA polytope in its shared memory (ccd.h's WarpPolytope, about 28 KB,
// where a thread's stack held it before), and each group has its round of results there too.
// 8 lanes for a height field: a Go1 foot over 0.1 m cells covers 2-8 prisms (1-2 cells a side);
// 4 for two geoms, one per perturbation. Unmeasured on a GPU.
constexpr int kCcdBlock = 32;
constexpr int ccd_lanes(int group) { return group == collision::kPairsHfield ? 8 : 4; }
// Each group's room in the block's shared round: a result per lane for a height field, the five
// of convex_convex_group for two geoms.
constexpr int ccd_round(int group) {
  return group == collision::kPairsHfield ? ccd_lanes(group) : collision::kConvexRound;
}
static_assert(kCcdBlock == 32, "CollideCcdByLanes' lane mask and shared rounds are one warp's");
template <int kGroup, class T, int Block>
struct CollideCcdByLanes {
  static constexpr int kLanes = ccd_lanes(kGroup);
  BatchView<T, Block> b;
  ModelView<T> m;
  EnvParamsView<T> params;
  int first, count;
  EnvMask only;
  int64_t threads;  // of the launch: the last block's lanes past it do not run
  MYRIAD_HD void operator()(int64_t t) const {
#if defined(__CUDA_ARCH__)
    __shared__ collision::ccd::Polytope<double> polytope;
    __shared__ int taken;
    constexpr int kRound = ccd_round(kGroup);
    __shared__ collision::ContactValues<double> rounds[kCcdBlock / kLanes * kRound];
    const int64_t block_left = threads - (t - (t & (kCcdBlock - 1)));
    const unsigned lanes = block_left >= kCcdBlock ? 0xffffffffu : (1u << block_left) - 1u;
    auto arena = collision::ccd::WarpPolytope<double>::open(&polytope, &taken, lanes);
    const constraint::SubWarpGroup<kLanes> group;
    const int64_t pair = t / kLanes;
    const int64_t i = pair / count;
    if (only.skips(i)) return;
    auto e = b.env(i);
    collision_ccd_group<kGroup>(group, env_model(m, params, i), e,
                                m.candidate_grouped[first + static_cast<int>(pair % count)],
                                rounds + group.first_lane() / kLanes * kRound, arena);
#else
    (void)t;
#endif
  }
};

// The constraint solve on CUDA: env t / 32 by the warp of thread t (physics/constraint/
// solve_group.h splits each stage over its lanes), one env per 32-thread block: a block retires
// when its env converges, so a slow env holds back no other env's resources. The block's dynamic
// shared memory (`storage` scalars, solve_storage_bytes) is the warp's GroupStorage
// (solve_group.h): the env's Hessian and its factor, then the rest of the Newton scratch, then a
// copy of its rows (J dense, or packed where only that fits), as far as they fit for the step's
// nefc.
constexpr int kSolveBlock = 32;
template <class T, int Block>
struct SolveByWarp {
  BatchView<T, Block> b;
  ModelView<T> m;
  EnvParamsView<T> params;
  EnvMask only;
  int64_t storage = 0;  // scalars of shared memory a block
  MYRIAD_HD void operator()(int64_t t) const {
    const int64_t i = t / constraint::WarpGroup::kLanes;
    if (only.skips(i)) return;
    auto e = b.env(i);
#if defined(__CUDA_ARCH__)
    // One env per block (kSolveBlock = a warp): the block's shared memory is its env's.
    extern __shared__ __align__(16) unsigned char solve_shared[];
    constraint::solve(constraint::WarpGroup{}, env_model(m, params, i), e,
                      constraint::GroupStorage<T>{reinterpret_cast<T*>(solve_shared), storage});
#else
    constraint::solve(constraint::WarpGroup{}, env_model(m, params, i), e);
#endif
  }
};
static_assert(kSolveBlock == constraint::WarpGroup::kLanes,
              "SolveByWarp's shared storage is its block's one env's");
#endif

// MYRIAD_SOLVE_STORAGE_KIB in bytes, or -1 where it is unset; refused past `most` bytes (the
// device's most shared memory a block). Host code: the CPU tests check it.
inline int solve_storage_override(int most) {
  const char* v = std::getenv("MYRIAD_SOLVE_STORAGE_KIB");
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  const long kib = std::strtol(v, &end, 10);
  if (*end != '\0' || kib < 0 || kib > most / 1024)
    throw std::invalid_argument(std::string("MYRIAD_SOLVE_STORAGE_KIB=") + v +
                                ": expected whole KiB from 0 to " + std::to_string(most / 1024) +
                                " (this GPU's most shared memory a block)");
  return static_cast<int>(kib * 1024);
}

#if defined(__CUDACC__)

// The shared memory SolveByWarp<T, Block> takes a block on GPU `device`, in bytes, found at the
// first solve there and kept: constraint::warp_solve_storage_bytes of the device's shared memory
// an SM, for the one-warp blocks an SM the kernel's registers allow (the runtime's occupancy with
// no shared memory), so the storage never costs a block. On an H100 or H200 (228 KiB an SM) at
// this build's registers (133 in float32, 180 in float64, allocated per quarter of the SM: 12
// and 8 blocks; scripts/ptxas-table.py) that is 18 and 27 KiB; on an A100 (164 KiB) 12 and 19.
// What fits at 18 / 27 KiB: Ant (nv 14) the rows up to nefc 124 / 91 dense, Humanoid (nv 23)
// 90 / 63, Go1 (nv 18) 107 / 78, G1 (nv 35) 57 / 36 dense and about 94 / 60 packed; any nv <= 67
// (float32) or 58 (float64) keeps at least its Hessian there. MYRIAD_SOLVE_STORAGE_KIB=K takes K
// KiB instead (0 to the device's most a block): fewer blocks an SM for a model whose rows outgrow
// the default (gpu-check times G1 both ways); the same results, the solve's bits do not depend on
// where its arrays live (tests/physics/test_solve_group.cc).
template <class T, int Block>
int solve_storage_bytes(int device) {
  static std::atomic<int> found[64];  // bytes + 1 per device ordinal; 0 until found
  const bool kept = device >= 0 && device < 64;
  if (kept) {
    const int known = found[device].load(std::memory_order_acquire);
    if (known > 0) return known - 1;
  }
  const CudaDeviceScope scope(device);
  int per_sm = 0, reserved = 0, most = 0, blocks = 0;
  cudaError_t err =
      cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (err == cudaSuccess)
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, parallel_for_kernel<SolveByWarp<T, Block>>, kSolveBlock, 0);
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("CUDA: cannot size the constraint solve's shared "
                                         "memory on cuda:") +
                             std::to_string(device) + ": " + cudaGetErrorString(err));
  const int chosen = solve_storage_override(most);
  const int bytes =
      chosen >= 0
          ? chosen
          : static_cast<int>(constraint::warp_solve_storage_bytes(per_sm, blocks, reserved, most));
  if (kept) found[device].store(bytes + 1, std::memory_order_release);
  return bytes;
}
#endif

// Stage S over the batch (the envs `only` keeps), as one launch named `name`.
template <Device D, Stage S, class T, int Block>
void launch_stage(const char* name, const ModelView<T>& m, const EnvParamsView<T>& params,
                  const BatchView<T, Block>& b, int64_t n, DeviceId device, void* stream,
                  int rk_stage = 0, EnvMask only = {}) {
  parallel_for(DeviceId{D, device.index}, name, n,
               StageKernel<S, T, Block>{b, m, params, rk_stage, only}, stream,
               /*min_parallel=*/2);
}

// The collision stage as its launches: a kernel per pair group the model has, then the gather.
template <Device D, class T, int Block>
void launch_collision(const ModelView<T>& m, const EnvParamsView<T>& params,
                      const BatchView<T, Block>& b, int64_t n, DeviceId device, void* stream,
                      EnvMask only) {
  using collision::kPairsBoxBox;
  using collision::kPairsCcd;
  using collision::kPairsHfield;
  using collision::kPairsPrimitive;
  const DeviceId dev{D, device.index};
  const int primitive = m.ncandidate_primitive, box_box = m.ncandidate_box_box;
  const int hfield = m.ncandidate_hfield, ccd = m.nccd_pairs - hfield;
  if (primitive > 0)
    parallel_for(dev, "physics.collision_primitive", n * primitive,
                 CollidePairs<kPairsPrimitive, T, Block>{b, m, params, 0, primitive, only}, stream,
                 2);
  if (box_box > 0)
    parallel_for(dev, "physics.collision_box_box", n * box_box,
                 CollidePairs<kPairsBoxBox, T, Block>{b, m, params, primitive, box_box, only},
                 stream, 2);
  // GJK/EPA's groups: on CUDA by lane groups (CollideCcdByLanes).
  const int first_ccd = primitive + box_box, first_hfield = first_ccd + ccd;
#if defined(__CUDACC__)
  if constexpr (D == Device::kCuda) {
    const int64_t ccd_threads = n * ccd * ccd_lanes(kPairsCcd);
    const int64_t hfield_threads = n * hfield * ccd_lanes(kPairsHfield);
    if (ccd > 0)
      parallel_for(
          dev, "physics.collision_ccd", ccd_threads,
          CollideCcdByLanes<kPairsCcd, T, Block>{b, m, params, first_ccd, ccd, only, ccd_threads},
          stream, 2, kCcdBlock);
    if (hfield > 0)
      parallel_for(dev, "physics.collision_hfield", hfield_threads,
                   CollideCcdByLanes<kPairsHfield, T, Block>{b, m, params, first_hfield, hfield,
                                                             only, hfield_threads},
                   stream, 2, kCcdBlock);
  } else
#endif
  {
    if (ccd > 0)
      parallel_for(dev, "physics.collision_ccd", n * ccd,
                   CollidePairs<kPairsCcd, T, Block>{b, m, params, first_ccd, ccd, only}, stream,
                   2);
    if (hfield > 0)
      parallel_for(dev, "physics.collision_hfield", n * hfield,
                   CollidePairs<kPairsHfield, T, Block>{b, m, params, first_hfield, hfield, only},
                   stream, 2);
  }
  launch_stage<D, Stage::kCollisionGather>("physics.collision_gather", m, params, b, n, device,
                                           stream, 0, only);
}

}  // namespace detail

// mj_forward on n envs (those `only` keeps), stage by stage (pipeline.h's forward, in its order).
template <Device D, class T, int Block>
void launch_forward_staged(const ModelView<T>& m, const BatchView<T, Block>& b, int64_t n,
                           DeviceId device, void* stream = nullptr, EnvMask only = {},
                           const EnvParamsView<T>& params = EnvParamsView<T>{}) {
  using detail::launch_stage;
  launch_stage<D, Stage::kPosition>("physics.position", m, params, b, n, device, stream, 0, only);
  // Collision over (env, pair), a kernel per group of pair functions, then a gather per env.
  detail::launch_collision<D>(m, params, b, n, device, stream, only);
  launch_stage<D, Stage::kConstraintRows>("physics.constraint_rows", m, params, b, n, device,
                                          stream, 0, only);
  launch_stage<D, Stage::kVelocity>("physics.velocity", m, params, b, n, device, stream, 0, only);
  launch_stage<D, Stage::kActuation>("physics.actuation", m, params, b, n, device, stream, 0, only);
  launch_stage<D, Stage::kAcceleration>("physics.acceleration", m, params, b, n, device, stream, 0,
                                        only);
#if defined(__CUDACC__)
  if constexpr (D == Device::kCuda) {
    const int bytes = detail::solve_storage_bytes<T, Block>(device.index);
    parallel_for(
        DeviceId{D, device.index}, "physics.constraint_solve", n * constraint::WarpGroup::kLanes,
        detail::SolveByWarp<T, Block>{b, m, params, only, bytes / static_cast<int64_t>(sizeof(T))},
        stream, /*min_parallel=*/2, detail::kSolveBlock, bytes);
  } else
#endif
    launch_stage<D, Stage::kConstraintSolve>("physics.constraint_solve", m, params, b, n, device,
                                             stream, 0, only);
  launch_stage<D, Stage::kBodyForces>("physics.body_forces", m, params, b, n, device, stream, 0,
                                      only);
  // The sensors' parts, each launched for a model that has such a sensor.
  if (m.nsensor > m.nsensor_acc + m.nsensor_rangefinder + m.nsensor_touch)
    launch_stage<D, Stage::kSensors>("physics.sensors", m, params, b, n, device, stream, 0, only);
  if (m.nsensor_acc > 0)
    launch_stage<D, Stage::kSensorsAcc>("physics.sensors_acc", m, params, b, n, device, stream, 0,
                                        only);
  if (m.nsensor_rangefinder > 0)
    launch_stage<D, Stage::kSensorsRangefinder>("physics.sensors_rangefinder", m, params, b, n,
                                                device, stream, 0, only);
  if (m.nsensor_touch > 0)
    launch_stage<D, Stage::kSensorsTouch>("physics.sensors_touch", m, params, b, n, device, stream,
                                          0, only);
}

// `substeps` mj_step on n envs, stage by stage: forward's stages, then the integrator's
// (Euler or implicitfast in one stage; RK4's parts with forward's stages between them).
template <Device D, class T, int Block>
void launch_step_staged(const ModelView<T>& m, const BatchView<T, Block>& b, int64_t n,
                        int substeps, DeviceId device, void* stream = nullptr,
                        const EnvParamsView<T>& params = EnvParamsView<T>{}) {
  using detail::launch_stage;
  for (int sub = 0; sub < substeps; ++sub) {
    launch_forward_staged<D>(m, b, n, device, stream, EnvMask{}, params);
    if (m.integrator == kImplicitFast) {
      launch_stage<D, Stage::kImplicitFast>("physics.implicit_fast", m, params, b, n, device,
                                            stream);
      if (m.nbody_implicit_free > 0)
        launch_stage<D, Stage::kImplicitFreeBodies>("physics.implicit_free_bodies", m, params, b, n,
                                                    device, stream);
      launch_stage<D, Stage::kImplicitFastFinish>("physics.implicit_fast_finish", m, params, b, n,
                                                  device, stream);
      continue;
    }
    if (m.integrator != kRK4) {
      launch_stage<D, Stage::kEuler>("physics.euler", m, params, b, n, device, stream);
      continue;
    }
    launch_stage<D, Stage::kRk4Begin>("physics.rk4_begin", m, params, b, n, device, stream);
    for (int s = 1; s < 4; ++s) {
      launch_stage<D, Stage::kRk4StageBegin>("physics.rk4_stage_begin", m, params, b, n, device,
                                             stream, s);
      launch_forward_staged<D>(m, b, n, device, stream, EnvMask{}, params);
      launch_stage<D, Stage::kRk4StageEnd>("physics.rk4_stage_end", m, params, b, n, device, stream,
                                           s);
    }
    launch_stage<D, Stage::kRk4Finish>("physics.rk4_finish", m, params, b, n, device, stream);
  }
}

}  // namespace myriad::physics
