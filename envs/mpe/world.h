// The particle world of PettingZoo's multi-particle environments (the `mpe2` package,
// mpe2/_mpe_utils/core.py, World.step): disc entities in the plane, agents pushed by their
// actions and by soft contact forces.
//
// One step, as mpe2 1.1.1 orders it for every movable entity e:
//   force_e  = action force (agents) + sum over colliding pairs of the contact force
//   pos_e   += vel_e * dt                       (the old velocity)
//   vel_e    = vel_e * (1 - damping) + force_e / mass_e * dt
//   vel_e    = vel_e / |vel_e| * max_speed_e     when |vel_e| > max_speed_e
// The contact force between entities a and b (both colliding, at least one movable) is
//   contact_force * (pos_a - pos_b) / dist * softplus(-(dist - size_a - size_b) / margin) * margin
// on a, and its opposite on b. Immovable entities (landmarks, obstacles) never move.
//
// Written once for CPU and CUDA: fixed sizes, float32, no library containers.
#pragma once

#include <cmath>

#include "myriad/hd.h"
#include "myriad/rng.h"

namespace myriad::envs::mpe {

// mpe2's World defaults, used by every scenario here.
inline constexpr float kDt = 0.1f;
inline constexpr float kDamping = 0.25f;
inline constexpr float kContactForce = 1e2f;
inline constexpr float kContactMargin = 1e-3f;
// An agent's action force is its unit direction times this unless the scenario sets `accel`.
inline constexpr float kDefaultAccel = 5.0f;

// The fixed properties of one entity. A scenario declares them per entity index.
struct EntityProps {
  float size = 0.05f;      // radius
  float mass = 1.0f;       // mpe2's initial_mass
  float accel = 0.0f;      // action sensitivity (agents only)
  float max_speed = 0.0f;  // speed clamp; 0 means none (mpe2's None)
  bool movable = false;
  bool collide = true;
};

// The mutable state of one env's world: position and velocity of each entity, agents first
// (indices [0, A)), then landmarks, in mpe2's `world.entities` order. Immovable entities keep
// zero velocity. Flat in a batch's state row as pos [E, 2] then vel [E, 2].
template <int kEntities>
struct World {
  static constexpr int kStateDim = 4 * kEntities;
  float pos[kEntities][2];
  float vel[kEntities][2];

  MYRIAD_HD void load(const float* s) {
    MYRIAD_UNROLL
    for (int e = 0; e < kEntities; ++e) {
      pos[e][0] = s[2 * e];
      pos[e][1] = s[2 * e + 1];
      vel[e][0] = s[2 * kEntities + 2 * e];
      vel[e][1] = s[2 * kEntities + 2 * e + 1];
    }
  }
  MYRIAD_HD void store(float* s) const {
    MYRIAD_UNROLL
    for (int e = 0; e < kEntities; ++e) {
      s[2 * e] = pos[e][0];
      s[2 * e + 1] = pos[e][1];
      s[2 * kEntities + 2 * e] = vel[e][0];
      s[2 * kEntities + 2 * e + 1] = vel[e][1];
    }
  }
};

// log(1 + exp(x)) without overflow (numpy's logaddexp(0, x)).
MYRIAD_HD float softplus(float x) { return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)); }

MYRIAD_HD float distance(const float* a, const float* b) {
  const float dx = a[0] - b[0], dy = a[1] - b[1];
  return sqrtf(dx * dx + dy * dy);
}

// Whether two discs overlap (the scenarios' is_collision: dist < size_a + size_b).
MYRIAD_HD bool overlapping(const float* a, const float* b, float size_a, float size_b) {
  return distance(a, b) < size_a + size_b;
}

// Advances world w by one step of dt under the agents' action forces u [A][2] (already scaled by
// accel). `Scenario` provides kAgents, kEntities and `props(e)` for each entity index.
template <class Scenario>
MYRIAD_HD void step_world(World<Scenario::kEntities>& w, const float (*u)[2]) {
  constexpr int A = Scenario::kAgents, E = Scenario::kEntities;
  float force[E][2];
  MYRIAD_UNROLL
  for (int e = 0; e < E; ++e) {
    force[e][0] = e < A ? u[e][0] : 0.0f;
    force[e][1] = e < A ? u[e][1] : 0.0f;
  }
  // Contact forces over pairs a < b, accumulated in mpe2's loop order.
  MYRIAD_UNROLL
  for (int a = 0; a < E; ++a) {
    const EntityProps pa = Scenario::props(a);
    MYRIAD_UNROLL
    for (int b = a + 1; b < E; ++b) {
      const EntityProps pb = Scenario::props(b);
      if (!pa.collide || !pb.collide || (!pa.movable && !pb.movable)) continue;
      const float dx = w.pos[a][0] - w.pos[b][0], dy = w.pos[a][1] - w.pos[b][1];
      const float dist = sqrtf(dx * dx + dy * dy);
      const float penetration =
          softplus(-(dist - (pa.size + pb.size)) / kContactMargin) * kContactMargin;
      const float fx = kContactForce * dx / dist * penetration;
      const float fy = kContactForce * dy / dist * penetration;
      if (pa.movable) force[a][0] += fx, force[a][1] += fy;
      if (pb.movable) force[b][0] -= fx, force[b][1] -= fy;
    }
  }
  MYRIAD_UNROLL
  for (int e = 0; e < E; ++e) {
    const EntityProps p = Scenario::props(e);
    if (!p.movable) continue;
    w.pos[e][0] += w.vel[e][0] * kDt;
    w.pos[e][1] += w.vel[e][1] * kDt;
    float vx = w.vel[e][0] * (1.0f - kDamping) + force[e][0] / p.mass * kDt;
    float vy = w.vel[e][1] * (1.0f - kDamping) + force[e][1] / p.mass * kDt;
    if (p.max_speed > 0.0f) {
      const float speed = sqrtf(vx * vx + vy * vy);
      if (speed > p.max_speed) {
        vx = vx / speed * p.max_speed;
        vy = vy / speed * p.max_speed;
      }
    }
    w.vel[e][0] = vx;
    w.vel[e][1] = vy;
  }
}

}  // namespace myriad::envs::mpe
