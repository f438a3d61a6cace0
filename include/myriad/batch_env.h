// BatchEnv: N instances of one environment stepped together, buffers on the env's device.
// On CUDA, reset/step/set_state launch on LibTorch's current stream of the env's GPU and return
// without waiting for it: read the buffers on that stream (or synchronize) as with any tensor.
//
// Buffers are torch tensors owned by the env and overwritten in place by every reset/step (a
// caller that keeps one across steps must clone it):
//   obs            [N, obs...] float32  first observation of the next episode where done
//   reward         [N]         float32
//   terminated     [N]         bool     the MDP reached a terminal state
//   truncated      [N]         bool     the episode hit max_episode_steps (may coincide)
//   final_obs      [N, obs...] float32  last observation of the finished episode; valid only
//                                       where terminated | truncated (other rows are stale)
//   episode_return [N]         float32  return of the finished episode, valid where done
//   episode_length [N]         int32    length of the finished episode, valid where done
// Auto-reset is same-step: see the README, "Same-step auto-reset".
//
// Multi-agent envs (spec().num_agents = A > 1, e.g. Tag-v0) add the agent axis after the batch
// axis; episodes still end per env (all agents together):
//   obs            [N, A, D]   float32  D = spec().observation_space.flat_size(); agent i's
//                                       values are its first spec().agent_obs_sizes[i], the
//                                       rest of its row is 0 (padding)
//   reward         [N, A]      float32  each agent's reward of the step
//   terminated     [N]         bool
//   truncated      [N]         bool
//   final_obs      [N, A, D]   float32  valid where terminated | truncated
//   episode_return [N, A]      float32  each agent's return of the finished episode
//   episode_length [N]         int32
// and step takes actions [N, A] integer (Discrete) or [N, A, K] float (Box of K per agent).
// Envs that decide matches (spec().decides_winner, e.g. Sumo-v0) also fill
//   winner         [N]         int32    the team that won the finished episode, -1 for a draw;
//                                       valid where terminated | truncated
// (undefined tensor for every other env).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "myriad/device.h"
#include "myriad/env_spec.h"
#include "myriad/scene.h"

namespace myriad {

struct StepBuffers {
  at::Tensor obs, reward, terminated, truncated, final_obs, episode_return, episode_length;
  at::Tensor winner;  // [N] int32, only where spec().decides_winner
  // Physics envs (envs/locomotion/): Gymnasium's info values of the step, by its key names,
  // [N] float32 (or [N, k] for array values, e.g. Humanoid's tendon_length); empty otherwise.
  std::map<std::string, at::Tensor> info;
};

class BatchEnv {
 public:
  virtual ~BatchEnv() = default;

  virtual const EnvSpec& spec() const = 0;
  virtual int64_t num_envs() const = 0;
  // Where the env runs; every buffer (and the actions step takes) lives there:
  // buffers().obs.device() is torch_device(device_id()) (myriad/torch_device.h).
  virtual DeviceId device_id() const = 0;
  Device device() const { return device_id().kind; }

  // Starts a new episode in every env. With a seed, streams restart from (seed, env, episode 0)
  // and the rollout is bitwise reproducible; without one, every env moves to its next episode.
  virtual void reset(std::optional<uint64_t> seed = std::nullopt) = 0;

  // actions: [N] integer for Discrete, [N, K] float for Box (multi-agent: [N, A] and [N, A, K]),
  // on the env's device; other integer/float dtypes are converted. A wrong shape or device
  // throws std::invalid_argument naming the expected and the given shape.
  virtual void step(const at::Tensor& actions) = 0;

  virtual const StepBuffers& buffers() const = 0;

  // Per-env physical state [N, S] (spec().state_names); set_state writes rows env_ids (all when
  // undefined) and recomputes their observations, so the next step continues from it.
  virtual at::Tensor get_state() const = 0;
  virtual void set_state(const at::Tensor& state, const at::Tensor& env_ids = at::Tensor()) = 0;

  // Episodes ended because the state became non-finite (reset and counted, never returned).
  virtual int64_t diverged_count() const = 0;

  // Everything needed to continue the exact rollout later (state, counters, seed), by name.
  virtual std::map<std::string, at::Tensor> save_rollout_state() const = 0;
  virtual void load_rollout_state(const std::map<std::string, at::Tensor>& saved) = 0;

  // Drawing, for replays: the scene, and the world poses [B, nbody, 7] (x, y, z, qw, qx, qy,
  // qz; float32 on the CPU; body 0 is the world) that observations obs [B, obs...] (any device)
  // put the bodies in. Every env's observation determines its pose, so a terminal frame can be
  // drawn from final_obs after the auto-reset.
  virtual Scene scene() const = 0;
  virtual at::Tensor body_poses(const at::Tensor& obs) const = 0;
  // The poses [N, nbody, 7] of the envs as they are now, and as the episodes that ended in the
  // last step left them (valid where terminated | truncated; non-finite where the state
  // diverged). By default from obs and final_obs; an env whose observation does not hold its
  // pose (a task env's holds no root position) draws them from its state.
  virtual at::Tensor current_body_poses() const { return body_poses(buffers().obs); }
  virtual at::Tensor final_body_poses() const { return body_poses(buffers().final_obs); }
  // Values to plot under the scene (docs/replay-format.md, "Plotted series"): their names, and
  // their values [B, S] (float32, CPU) for observations obs [B, obs...]. Most envs plot none
  // (no names; series() is then not called).
  virtual std::vector<std::string> series_names() const { return {}; }
  virtual at::Tensor series(const at::Tensor& /*obs*/) const { return {}; }
};

// Options accepted by make(): "max_episode_steps" for every env plus each env's own
// (spec().option_names). Unknown names are errors that list the valid ones.
using EnvOptions = std::map<std::string, double>;
// Text options (e.g. MJCF-v0's xml path and physics backend); most envs take none.
using EnvTextOptions = std::map<std::string, std::string>;

}  // namespace myriad
