// The terms of mjlab's velocity-tracking task (mjlab 1.6.0, tasks/velocity/ and envs/mdp/; the
// transcription is envs/legged/mjlab-velocity-reference.md), one env at a time, as MYRIAD_HD
// functions of plain values: the task (and the test against mjlab's own functions,
// tests/envs/test_velocity_terms.cc) calls them with what its sensors and the physics data give.
// Rewards are before their weight and mjlab's scaling by step_dt. Frames: _b the root body's
// frame, _w the world's. The "command speed" of the gates is |c_xy| + |c_z|.
#pragma once

#include <cmath>

#include "myriad/hd.h"
#include "physics/value.h"

namespace myriad::envs::legged {

// |c_xy| + |c_z| of a twist command [vx, vy, wz].
template <class T>
MYRIAD_HD T command_speed(const T c[3]) {
  return sqrt(c[0] * c[0] + c[1] * c[1]) + fabs(c[2]);
}

// ---- Rewards -------------------------------------------------------------------------------

// track_linear_velocity: exp(-(|c_xy - v_xy|^2 + v_z^2) / std^2), v the root's linear velocity
// in its own frame.
template <class T>
MYRIAD_HD T track_linear_velocity(const T c[3], const T v_b[3], T std) {
  const T ex = c[0] - v_b[0], ey = c[1] - v_b[1];
  return exp(-((ex * ex + ey * ey) + v_b[2] * v_b[2]) / (std * std));
}

// track_angular_velocity: exp(-((c_z - w_z)^2 + w_x^2 + w_y^2) / std^2), w in the root's frame.
template <class T>
MYRIAD_HD T track_angular_velocity(const T c[3], const T w_b[3], T std) {
  const T ez = c[2] - w_b[2];
  return exp(-(ez * ez + (w_b[0] * w_b[0] + w_b[1] * w_b[1])) / (std * std));
}

// upright on flat ground: exp(-(g_x^2 + g_y^2) / std^2), g the unit gravity direction (0, 0, -1)
// in the reward body's frame.
template <class T>
MYRIAD_HD T upright(const T g_body[3], T std) {
  return exp(-(g_body[0] * g_body[0] + g_body[1] * g_body[1]) / (std * std));
}

// The joint terms below are sums over joints of a per-joint part; the task (velocity_task.h)
// sums the parts itself in one loop over its joints, reading each joint's values where they lie,
// so that a GPU thread keeps no [joints] arrays on its stack. The same parts, the same order.
//
// variable_posture: exp(-mean_j((q_j - q0_j)^2 / std_j^2)), std_j the standing, walking or running
// value by the command speed s: standing below walking_threshold, running from
// running_threshold on (posture_gait: 0, 1 or 2).
template <class T>
MYRIAD_HD int posture_gait(T speed, T walking_threshold, T running_threshold) {
  return speed < walking_threshold ? 0 : speed < running_threshold ? 1 : 2;
}
template <class T>
MYRIAD_HD T posture_part(T q, T q0, T std) {
  const T e = q - q0;
  return e * e / (std * std);
}
template <class T>
MYRIAD_HD T posture_of(T sum, int n) {
  return exp(-(sum / T(n)));
}
template <class T>
MYRIAD_HD T variable_posture(const T* q, const T* q0, const T* std_standing, const T* std_walking,
                             const T* std_running, int n, T speed, T walking_threshold,
                             T running_threshold) {
  const int gait = posture_gait(speed, walking_threshold, running_threshold);
  const T* std = gait == 0 ? std_standing : gait == 1 ? std_walking : std_running;
  T sum = 0;
  for (int j = 0; j < n; ++j) sum += posture_part(q[j], q0[j], std[j]);
  return posture_of(sum, n);
}

// joint_pos_limits: sum_j max(0, lo_j - q_j) + max(0, q_j - hi_j) over the soft limits.
template <class T>
MYRIAD_HD T limits_part(T q, T soft_lo, T soft_hi) {
  const T below = soft_lo - q, above = q - soft_hi;
  return (below > 0 ? below : T(0)) + (above > 0 ? above : T(0));
}
template <class T>
MYRIAD_HD T joint_pos_limits(const T* q, const T* soft_lo, const T* soft_hi, int n) {
  T sum = 0;
  for (int j = 0; j < n; ++j) sum += limits_part(q[j], soft_lo[j], soft_hi[j]);
  return sum;
}

// action_rate_l2: sum_k (a_k - a_prev_k)^2 over the raw policy outputs.
template <class T>
MYRIAD_HD T rate_part(T a, T a_prev) {
  const T d = a - a_prev;
  return d * d;
}
template <class T>
MYRIAD_HD T action_rate_l2(const T* a, const T* a_prev, int n) {
  T sum = 0;
  for (int k = 0; k < n; ++k) sum += rate_part(a[k], a_prev[k]);
  return sum;
}

// feet_air_time: the number of feet whose current air time lies strictly inside
// (threshold_min, threshold_max), times [speed > command_threshold].
template <class T>
MYRIAD_HD T feet_air_time(const T* air_time, int feet, T threshold_min, T threshold_max, T speed,
                          T command_threshold) {
  T count = 0;
  for (int f = 0; f < feet; ++f)
    count += (air_time[f] > threshold_min && air_time[f] < threshold_max) ? T(1) : T(0);
  return speed > command_threshold ? count : T(0);
}

// feet_clearance: sum_f |h_f - target| * |v_f,xy|, times [speed > command_threshold]; h the foot's
// clearance above the terrain, v_f,xy [F, 2] the foot site's world-frame xy velocity.
template <class T>
MYRIAD_HD T feet_clearance(const T* height, const T* vel_xy, int feet, T target, T speed,
                           T command_threshold) {
  T cost = 0;
  for (int f = 0; f < feet; ++f) {
    const T vx = vel_xy[2 * f], vy = vel_xy[2 * f + 1];
    cost += fabs(height[f] - target) * sqrt(vx * vx + vy * vy);
  }
  return speed > command_threshold ? cost : T(0);
}

// First contact in the last policy step: 0 < contact time < step_dt + 1e-6.
template <class T>
MYRIAD_HD bool first_contact(T contact_time, T step_dt) {
  return contact_time > 0 && contact_time < step_dt + T(1e-6);
}

// feet_swing_height, stateful per env and foot: while a foot is in the air its peak clearance
// rises (peak = max(peak, h)); at its first contact the cost is (peak / target - 1)^2 and the
// peak returns to 0. Returns sum_f of the costs times [speed > command_threshold]; the peaks are
// updated whatever the gate (and, as in mjlab, not cleared when an episode ends).
template <class T>
MYRIAD_HD T feet_swing_height(T* peak, const T* height, const bool* in_contact,
                              const T* contact_time, int feet, T target, T step_dt, T speed,
                              T command_threshold) {
  T cost = 0;
  for (int f = 0; f < feet; ++f) {
    if (!in_contact[f]) peak[f] = peak[f] > height[f] ? peak[f] : height[f];
    if (first_contact(contact_time[f], step_dt)) {
      const T e = peak[f] / target - T(1);
      cost += e * e;
      peak[f] = 0;
    }
  }
  return speed > command_threshold ? cost : T(0);
}

// feet_slip: sum_f |v_f,xy|^2 over the feet in contact, times [speed > command_threshold].
template <class T>
MYRIAD_HD T feet_slip(const T* vel_xy, const bool* in_contact, int feet, T speed,
                      T command_threshold) {
  T cost = 0;
  for (int f = 0; f < feet; ++f) {
    const T vx = vel_xy[2 * f], vy = vel_xy[2 * f + 1];
    cost += in_contact[f] ? vx * vx + vy * vy : T(0);
  }
  return speed > command_threshold ? cost : T(0);
}

// soft_landing: sum_f |F_f| over the feet at their first contact, times
// [speed > command_threshold]; F [F, 3] the net contact force on the foot.
template <class T>
MYRIAD_HD T soft_landing(const T* force, const T* contact_time, int feet, T step_dt, T speed,
                         T command_threshold) {
  T cost = 0;
  for (int f = 0; f < feet; ++f) {
    const T* F = force + 3 * f;
    if (first_contact(contact_time[f], step_dt))
      cost += sqrt(F[0] * F[0] + F[1] * F[1] + F[2] * F[2]);
  }
  return speed > command_threshold ? cost : T(0);
}

// self_collision_cost: over the last `history` substeps, how many saw any of the `primaries`
// contact forces above the threshold. force_history [primaries, history, 3].
template <class T>
MYRIAD_HD T self_collision_cost(const T* force_history, int primaries, int history, T threshold) {
  T count = 0;
  for (int h = 0; h < history; ++h) {
    bool hit = false;
    for (int p = 0; p < primaries; ++p) {
      const T* F = force_history + 3 * (p * history + h);
      hit = hit || sqrt(F[0] * F[0] + F[1] * F[1] + F[2] * F[2]) > threshold;
    }
    count += hit ? T(1) : T(0);
  }
  return count;
}

// body_angular_velocity_penalty: w_x^2 + w_y^2 of the body's world-frame angular velocity.
// (w_w: an array, or an env's lane of a blocked batch; so are the pointers of the terms below.)
template <class P>
MYRIAD_HD physics::element_of<P> body_angular_velocity_penalty(P w_w) {
  return w_w[0] * w_w[0] + w_w[1] * w_w[1];
}

// angular_momentum_penalty: |L|^2 of the subtree angular momentum sensor.
template <class P>
MYRIAD_HD physics::element_of<P> angular_momentum_penalty(P L) {
  return L[0] * L[0] + L[1] * L[1] + L[2] * L[2];
}

// ---- Observations and terminations -----------------------------------------------------------

// projected_gravity: R^T (0, 0, -1) for the body's orientation quaternion q = (w, x, y, z).
template <class T>
MYRIAD_HD void projected_gravity(const T q[4], T out[3]) {
  // The third row of R (R^T e_z is R's last row), negated.
  const T w = q[0], x = q[1], y = q[2], z = q[3];
  out[0] = -(T(2) * (x * z - w * y));
  out[1] = -(T(2) * (y * z + w * x));
  out[2] = -(T(1) - T(2) * (x * x + y * y));
}

// bad_orientation: the angle between the body's up and the world's up above limit_angle,
// acos(clamp(-g_z, -1, 1)) > limit, g the projected gravity.
template <class T>
MYRIAD_HD bool bad_orientation(const T g_b[3], T limit_angle) {
  T c = -g_b[2];
  c = c < T(-1) ? T(-1) : (c > T(1) ? T(1) : c);
  return acos(c) > limit_angle;
}

// joint_pos_rel: q + bias - q0 (the actor's encoder-biased joints; bias null for the critic's
// true ones).
template <class T>
MYRIAD_HD void joint_pos_rel(const T* q, const T* q0, const T* bias, int n, T* out) {
  for (int j = 0; j < n; ++j) out[j] = (bias != nullptr ? q[j] + bias[j] : q[j]) - q0[j];
}

// height_scan, one ray: the frame's height above the hit point less the offset, or miss_value
// when the ray missed (distance < 0).
template <class T>
MYRIAD_HD T height_scan_ray(T frame_z, T hit_z, T distance, T offset, T miss_value) {
  return distance < 0 ? miss_value : frame_z - hit_z - offset;
}

// foot_contact_forces observation: sign(f) * log1p(|f|) per component.
template <class T>
MYRIAD_HD T signed_log1p(T f) {
  return f > 0 ? log1p(f) : (f < 0 ? -log1p(-f) : T(0));
}

// ---- The twist command -----------------------------------------------------------------------

// wrap_to_pi: an angle in [-pi, pi]; odd positive multiples of pi give pi, odd negative ones -pi.
template <class T>
MYRIAD_HD T wrap_to_pi(T a) {
  const T pi = T(3.141592653589793), two_pi = T(6.283185307179586);
  T r = fmod(a + pi, two_pi);
  if (r < 0) r += two_pi;
  return (r == 0 && a > 0) ? pi : r - pi;
}

// The command's per-env state: [vx, vy, wz] in the root's frame, the heading target and the
// env's kind, and the time to the next resample.
template <class T>
struct TwistCommand {
  T vel[3] = {0, 0, 0};
  T heading = 0;
  bool heading_env = false;
  bool standing_env = false;
  T time_left = 0;
};

// The command's ranges (the curriculum widens lin_vel_x and ang_vel_z).
struct TwistRanges {
  double lin_vel_x[2] = {-1.0, 1.0};
  double lin_vel_y[2] = {-1.0, 1.0};
  double ang_vel_z[2] = {-0.5, 0.5};
  double heading[2] = {-3.141592653589793, 3.141592653589793};
  double resampling_time[2] = {3.0, 8.0};
  double rel_standing_envs = 0.1;
  double rel_heading_envs = 0.3;
  double rel_forward_envs = 0.2;
  double heading_control_stiffness = 0.5;
  bool heading_command = true;
};

// The draws of _resample_command, in mjlab's order.
enum TwistDraw {
  kDrawVx,
  kDrawVy,
  kDrawWz,
  kDrawHeading,
  kDrawIsHeading,
  kDrawIsStanding,
  kDrawIsWorld,
  kDrawIsForward,
  kTwistDraws
};

// _resample_command from uniform draws u[kTwistDraws] in [0, 1) (mjlab's order; is_world is drawn
// and unused: mjlab's rel_world_envs is 0, which only u == 0 would meet), and the time to the next
// resample from u_time (mjlab draws it first). The kind draws compare in float32, as mjlab's
// float32 tensors do. A forward env gets vx = max(|vx|, 0.3) and no lateral or turning command.
template <class T>
MYRIAD_HD void resample_twist(TwistCommand<T>& c, const TwistRanges& r, const float u[kTwistDraws],
                              float u_time) {
  auto lerp = [](const double range[2], float x) {
    return T(range[0]) + (T(range[1]) - T(range[0])) * T(x);
  };
  c.vel[0] = lerp(r.lin_vel_x, u[kDrawVx]);
  c.vel[1] = lerp(r.lin_vel_y, u[kDrawVy]);
  c.vel[2] = lerp(r.ang_vel_z, u[kDrawWz]);
  if (r.heading_command) {
    c.heading = lerp(r.heading, u[kDrawHeading]);
    c.heading_env = u[kDrawIsHeading] <= static_cast<float>(r.rel_heading_envs);
  }
  c.standing_env = u[kDrawIsStanding] <= static_cast<float>(r.rel_standing_envs);
  if (u[kDrawIsForward] <= static_cast<float>(r.rel_forward_envs)) {
    c.vel[0] = fabs(c.vel[0]) > T(0.3) ? fabs(c.vel[0]) : T(0.3);
    c.vel[1] = 0;
    c.vel[2] = 0;
  }
  c.time_left = lerp(r.resampling_time, u_time);
}

// heading_w: the yaw of the root's forward axis, atan2 of R (1, 0, 0)'s y and x, q = (w, x, y, z).
template <class P>
MYRIAD_HD physics::element_of<P> heading_of(P q) {
  using T = physics::element_of<P>;
  const T w = q[0], x = q[1], y = q[2], z = q[3];
  return atan2(T(2) * (x * y + w * z), T(1) - T(2) * (y * y + z * z));
}

// _update_command: heading envs turn toward their target, wz = clip(stiffness * wrap(heading -
// heading_w), ang_vel_z); standing envs get a zero command (last, so it wins).
template <class T>
MYRIAD_HD void update_twist(TwistCommand<T>& c, const TwistRanges& r, T heading_w) {
  if (r.heading_command && c.heading_env) {
    const T wz = T(r.heading_control_stiffness) * wrap_to_pi(c.heading - heading_w);
    const T lo = T(r.ang_vel_z[0]), hi = T(r.ang_vel_z[1]);
    c.vel[2] = wz < lo ? lo : (wz > hi ? hi : wz);
  }
  if (c.standing_env) c.vel[0] = c.vel[1] = c.vel[2] = 0;
}

// ---- Curriculum -------------------------------------------------------------------------------

// One stage of mjlab's commands_vel curriculum: from policy step `step` on (the env's count of
// steps since it was made, mjlab's common_step_counter), the command ranges it sets; a range it
// leaves unset (has_* false) keeps the one in force before it.
struct TwistStage {
  double step = 0;
  bool has_lin_vel_x = false, has_lin_vel_y = false, has_ang_vel_z = false;
  double lin_vel_x[2] = {0, 0}, lin_vel_y[2] = {0, 0}, ang_vel_z[2] = {0, 0};
};

// mjlab's command_vel stages after its first (which, at step 0, writes the command's own
// ranges again) in all four velocity tasks (velocity_env_cfg.py): the tasks' defaults.
inline constexpr double kCommandStage1Step = 5000 * 24, kCommandStage2Step = 10000 * 24;
inline constexpr double kCommandStage1LinVelX[2] = {-1.5, 2.0};
inline constexpr double kCommandStage1AngVelZ[2] = {-0.7, 0.7};
inline constexpr double kCommandStage2LinVelX[2] = {-2.0, 3.0};

// Two stages from their steps and ranges: lin_vel_x and ang_vel_z from step1, lin_vel_x from
// step2 (the shape of mjlab's list). (steps, ranges) => stages[2]
inline void twist_stages(double step1, const double lin_vel_x1[2], const double ang_vel_z1[2],
                         double step2, const double lin_vel_x2[2], TwistStage stages[2]) {
  stages[0] = TwistStage{};
  stages[0].step = step1;
  stages[0].has_lin_vel_x = stages[0].has_ang_vel_z = true;
  stages[1] = TwistStage{};
  stages[1].step = step2;
  stages[1].has_lin_vel_x = true;
  for (int k = 0; k < 2; ++k) {
    stages[0].lin_vel_x[k] = lin_vel_x1[k];
    stages[0].ang_vel_z[k] = ang_vel_z1[k];
    stages[1].lin_vel_x[k] = lin_vel_x2[k];
  }
}

// commands_vel: each stage whose step has been reached, in order, written over the ranges (so
// a later stage wins where both set a range). (r, stages[n], step) => r
inline void apply_twist_stages(TwistRanges& r, const TwistStage* stages, int n, int64_t step) {
  auto copy = [](double to[2], const double from[2]) {
    to[0] = from[0];
    to[1] = from[1];
  };
  for (int s = 0; s < n; ++s) {
    const TwistStage& stage = stages[s];
    if (static_cast<double>(step) < stage.step) continue;
    if (stage.has_lin_vel_x) copy(r.lin_vel_x, stage.lin_vel_x);
    if (stage.has_lin_vel_y) copy(r.lin_vel_y, stage.lin_vel_y);
    if (stage.has_ang_vel_z) copy(r.ang_vel_z, stage.ang_vel_z);
  }
}

// ---- Events -----------------------------------------------------------------------------------

// reset_root_state_uniform on a floating base: the root at its default pose q0 = (p, quat) moved
// by s = (x, y, z, roll, pitch, yaw), drawn from pose_range, and by the env's origin; turned by
// quat_from_euler_xyz(roll, pitch, yaw) on the right. (q0[7], origin[3], s[6]) => q[7]. With
// roll = pitch = 0 the product reduces exactly to q0 (x) (cos yaw/2, 0, 0, sin yaw/2).
template <class T>
MYRIAD_HD void reset_root_pose(const T q0[7], const T origin[3], const T s[6], T q[7]) {
  for (int k = 0; k < 3; ++k) q[k] = q0[k] + s[k] + origin[k];
  const T cr = cos(s[3] * T(0.5)), sr = sin(s[3] * T(0.5));
  const T cp = cos(s[4] * T(0.5)), sp = sin(s[4] * T(0.5));
  const T cy = cos(s[5] * T(0.5)), sy = sin(s[5] * T(0.5));
  const T dw = cy * cr * cp + sy * sr * sp, dx = cy * sr * cp - sy * cr * sp;
  const T dy = cy * cr * sp + sy * sr * cp, dz = sy * cr * cp - cy * sr * sp;
  const T w = q0[3], x = q0[4], y = q0[5], z = q0[6];
  q[3] = w * dw - x * dx - y * dy - z * dz;
  q[4] = w * dx + x * dw + y * dz - z * dy;
  q[5] = w * dy - x * dz + y * dw + z * dx;
  q[6] = w * dz + x * dy - y * dx + z * dw;
}

}  // namespace myriad::envs::legged
