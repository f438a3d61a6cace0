// The batched engine: forward dynamics and steps for N envs on the CPU (OpenMP; the per-env
// stages are MYRIAD_HD code in physics/pipeline.h).
#pragma once

#include <cstdint>

#include "myriad/physics/data.h"
#include "myriad/physics/model.h"

namespace myriad::physics {

template <class T>
struct EnvParams;  // physics/env_params.h: per-env model parameters

// Derived quantities and qacc for the current state of every env (mj_forward).
template <class T>
void forward(const Model<T>& m, Data<T>& d);

// `substeps` steps of the model's integrator for every env (mj_step).
template <class T>
void step(const Model<T>& m, Data<T>& d, int substeps = 1);

// The same steps, launched stage by stage over the batch (one loop per named stage, as CUDA
// runs them: physics/launch.h). The same bits as step(); slower on the CPU, where the fused
// step keeps each env's data in cache. For tests, physics-bench --staged and the task envs.
// params: per-env model parameters, [N] rows (null or empty: every env reads m).
template <class T>
void step_staged(const Model<T>& m, Data<T>& d, int substeps = 1,
                 const EnvParams<T>* params = nullptr);

// forward(), launched stage by stage, over the envs where only_a[i] or only_b[i] is set (every
// env when only_a is null): the staged auto-reset's forward pass (envs/physics_launch.inl).
template <class T>
void forward_staged(const Model<T>& m, Data<T>& d, const uint8_t* only_a = nullptr,
                    const uint8_t* only_b = nullptr, const EnvParams<T>* params = nullptr);

// The same steps with envs in tiles of 8: the smooth stages run once per tile with one env per
// SIMD lane, the constraint stages per env (physics/tile.h). The same bits as step(). For tests
// and physics-bench --launch tiled.
template <class T>
void step_tiled(const Model<T>& m, Data<T>& d, int substeps = 1);

// Rays against every env's scene as its last forward left it (geom poses), as libmujoco's mj_ray
// casts them (physics/ray.h): env i's ray r starts at origins[(i * nray + r) * 3] and goes along
// dirs[...] (any length above 1e-15; distances are in units of it). Writes dist [N, nray] (-1: no
// hit) and, if given, geom [N, nray] (-1: none). A geom sees the ray if its group is in
// group_mask (bit k: group k, groups above 5 as 5), if it is not on exclude_body (-1: none), if
// include_static or its body moves, and if its colour's alpha is not 0. Throws
// std::invalid_argument for a direction of length 0 (naming the env and ray) and when a visible
// mesh geom passes the filter (meshes are not ray-cast).
template <class T>
void cast_rays(const Model<T>& m, Data<T>& d, const T* origins, const T* dirs, int nray, T* dist,
               int32_t* geom = nullptr, uint32_t group_mask = 0x3f, bool include_static = true,
               int exclude_body = -1);

// Sets every env to qpos0, zero velocity, zero controls, time 0.
template <class T>
void reset_data(const Model<T>& m, Data<T>& d);

}  // namespace myriad::physics
