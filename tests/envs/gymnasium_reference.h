// Float64 transcriptions of Gymnasium's classic-control steps
// (gymnasium/envs/classic_control/*.py), the ground truth the env tests compare against.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace myriad::gym_ref {

inline constexpr double kPi = 3.14159265358979323846;

using Vec = std::vector<double>;

// One reference transition: what Gymnasium's step returns from state s under one action.
struct Transition {
  Vec state;  // next physical state
  Vec obs;    // observation of the next state
  double reward = 0;
  bool terminated = false;
  // The float64 reference lies so close to a branch (termination test, wall) that float32 may
  // legitimately take the other side; such rows are skipped.
  bool ambiguous = false;
};

inline bool near_value(double x, double at, double eps) { return std::abs(x - at) < eps; }

// ---------------------------------------------------------------------------------------------
// CartPole-v1: cartpole.py, CartPoleEnv.step with kinematics_integrator "euler".
inline Vec cartpole_observe(const Vec& s) { return s; }

inline Transition cartpole_step(const Vec& s, double action) {
  const double gravity = 9.8, masscart = 1.0, masspole = 0.1;
  const double total_mass = masspole + masscart;
  const double length = 0.5, polemass_length = masspole * length;
  const double force_mag = 10.0, tau = 0.02;
  const double theta_threshold_radians = 12 * 2 * kPi / 360, x_threshold = 2.4;

  double x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
  const double force = action == 1 ? force_mag : -force_mag;
  const double costheta = std::cos(theta), sintheta = std::sin(theta);
  const double temp = (force + polemass_length * theta_dot * theta_dot * sintheta) / total_mass;
  const double thetaacc = (gravity * sintheta - costheta * temp) /
                          (length * (4.0 / 3.0 - masspole * costheta * costheta / total_mass));
  const double xacc = temp - polemass_length * thetaacc * costheta / total_mass;
  x = x + tau * x_dot;
  x_dot = x_dot + tau * xacc;
  theta = theta + tau * theta_dot;
  theta_dot = theta_dot + tau * thetaacc;

  Transition t;
  t.state = {x, x_dot, theta, theta_dot};
  t.obs = cartpole_observe(t.state);
  t.terminated = x < -x_threshold || x > x_threshold || theta < -theta_threshold_radians ||
                 theta > theta_threshold_radians;
  t.reward = 1.0;
  t.ambiguous = near_value(std::abs(x), x_threshold, 1e-5) ||
                near_value(std::abs(theta), theta_threshold_radians, 1e-5);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Pendulum-v1: pendulum.py, PendulumEnv.step and angle_normalize.
inline double angle_normalize(double x) {
  // ((x + pi) % (2 pi)) - pi with Python's floored modulo (result has the divisor's sign).
  const double y = 2 * kPi;
  double m = std::fmod(x + kPi, y);
  if (m < 0) m += y;
  return m - kPi;
}

inline Vec pendulum_observe(const Vec& s) { return {std::cos(s[0]), std::sin(s[0]), s[1]}; }

inline Transition pendulum_step_g(const Vec& s, double action, double g) {
  const double max_speed = 8, max_torque = 2.0, dt = 0.05, m = 1.0, l = 1.0;
  const double th = s[0], thdot = s[1];
  const double u = std::min(std::max(action, -max_torque), max_torque);  // np.clip
  const double an = angle_normalize(th);
  const double costs = an * an + 0.1 * thdot * thdot + 0.001 * (u * u);
  double newthdot = thdot + (3 * g / (2 * l) * std::sin(th) + 3.0 / (m * l * l) * u) * dt;
  newthdot = std::min(std::max(newthdot, -max_speed), max_speed);
  const double newth = th + newthdot * dt;

  Transition t;
  t.state = {newth, newthdot};
  t.obs = pendulum_observe(t.state);
  t.reward = -costs;
  t.terminated = false;
  return t;
}

inline Transition pendulum_step(const Vec& s, double action) {
  return pendulum_step_g(s, action, 10.0);
}

// ---------------------------------------------------------------------------------------------
// Acrobot-v1: acrobot.py, AcrobotEnv.step (book dynamics, no torque noise), rk4, wrap, bound.
struct AcrobotRef {
  static constexpr double dt = 0.2;
  static constexpr double LINK_LENGTH_1 = 1.0, LINK_MASS_1 = 1.0, LINK_MASS_2 = 1.0;
  static constexpr double LINK_COM_POS_1 = 0.5, LINK_COM_POS_2 = 0.5, LINK_MOI = 1.0;
  static constexpr double MAX_VEL_1 = 4 * kPi, MAX_VEL_2 = 9 * kPi;

  // _dsdt on the augmented state (theta1, theta2, dtheta1, dtheta2, torque).
  static std::vector<double> dsdt(const std::vector<double>& s_augmented) {
    const double m1 = LINK_MASS_1, m2 = LINK_MASS_2, l1 = LINK_LENGTH_1;
    const double lc1 = LINK_COM_POS_1, lc2 = LINK_COM_POS_2, I1 = LINK_MOI, I2 = LINK_MOI;
    const double g = 9.8;
    const double a = s_augmented[4];
    const double theta1 = s_augmented[0], theta2 = s_augmented[1];
    const double dtheta1 = s_augmented[2], dtheta2 = s_augmented[3];
    const double d1 =
        m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * std::cos(theta2)) + I1 + I2;
    const double d2 = m2 * (lc2 * lc2 + l1 * lc2 * std::cos(theta2)) + I2;
    const double phi2 = m2 * lc2 * g * std::cos(theta1 + theta2 - kPi / 2.0);
    const double phi1 = -m2 * l1 * lc2 * dtheta2 * dtheta2 * std::sin(theta2) -
                        2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * std::sin(theta2) +
                        (m1 * lc1 + m2 * l1) * g * std::cos(theta1 - kPi / 2) + phi2;
    const double ddtheta2 =
        (a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1 * dtheta1 * std::sin(theta2) - phi2) /
        (m2 * lc2 * lc2 + I2 - d2 * d2 / d1);
    const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    return {dtheta1, dtheta2, ddtheta1, ddtheta2, 0.0};
  }

  // rk4(derivs, y0, [0, dt]): one classical Runge-Kutta step.
  static std::vector<double> rk4(const std::vector<double>& y0) {
    const double h = dt, h2 = dt / 2.0;
    auto axpy = [](const std::vector<double>& y, double a, const std::vector<double>& k) {
      std::vector<double> r(y.size());
      for (size_t i = 0; i < y.size(); ++i) r[i] = y[i] + a * k[i];
      return r;
    };
    const auto k1 = dsdt(y0);
    const auto k2 = dsdt(axpy(y0, h2, k1));
    const auto k3 = dsdt(axpy(y0, h2, k2));
    const auto k4 = dsdt(axpy(y0, h, k3));
    std::vector<double> y(y0.size());
    for (size_t i = 0; i < y.size(); ++i)
      y[i] = y0[i] + h / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    return {y[0], y[1], y[2], y[3]};
  }

  static double wrap(double x, double m, double M) {
    const double diff = M - m;
    while (x > M) x = x - diff;
    while (x < m) x = x + diff;
    return x;
  }
  static double bound(double x, double m, double M) { return std::min(std::max(x, m), M); }
};

inline Vec acrobot_observe(const Vec& s) {
  return {std::cos(s[0]), std::sin(s[0]), std::cos(s[1]), std::sin(s[1]), s[2], s[3]};
}

inline Transition acrobot_step(const Vec& s, double action) {
  const double AVAIL_TORQUE[3] = {-1.0, 0.0, +1};
  const double torque = AVAIL_TORQUE[static_cast<int>(action)];
  auto ns = AcrobotRef::rk4({s[0], s[1], s[2], s[3], torque});
  ns[0] = AcrobotRef::wrap(ns[0], -kPi, kPi);
  ns[1] = AcrobotRef::wrap(ns[1], -kPi, kPi);
  ns[2] = AcrobotRef::bound(ns[2], -AcrobotRef::MAX_VEL_1, AcrobotRef::MAX_VEL_1);
  ns[3] = AcrobotRef::bound(ns[3], -AcrobotRef::MAX_VEL_2, AcrobotRef::MAX_VEL_2);
  Transition t;
  t.state = ns;
  t.obs = acrobot_observe(ns);
  const double height = -std::cos(ns[0]) - std::cos(ns[1] + ns[0]);
  t.terminated = height > 1.0;
  t.reward = t.terminated ? 0.0 : -1.0;
  t.ambiguous = near_value(height, 1.0, 1e-4);
  return t;
}

// ---------------------------------------------------------------------------------------------
// MountainCar-v0: mountain_car.py, MountainCarEnv.step (goal_velocity 0).
inline Vec mountain_car_observe(const Vec& s) { return s; }

inline Transition mountain_car_step(const Vec& s, double action) {
  const double min_position = -1.2, max_position = 0.6, max_speed = 0.07;
  const double goal_position = 0.5, goal_velocity = 0, force = 0.001, gravity = 0.0025;
  double position = s[0], velocity = s[1];
  velocity += (action - 1) * force + std::cos(3 * position) * (-gravity);
  velocity = std::min(std::max(velocity, -max_speed), max_speed);
  position += velocity;
  Transition t;
  t.ambiguous = near_value(position, min_position, 1e-5);
  position = std::min(std::max(position, min_position), max_position);
  if (position == min_position && velocity < 0) velocity = 0;
  t.terminated = position >= goal_position && velocity >= goal_velocity;
  t.ambiguous = t.ambiguous || near_value(position, goal_position, 1e-6) ||
                (position > goal_position - 1e-5 && std::abs(velocity) < 1e-7);
  t.reward = -1.0;
  t.state = {position, velocity};
  t.obs = mountain_car_observe(t.state);
  return t;
}

// MountainCarContinuous-v0: continuous_mountain_car.py, Continuous_MountainCarEnv.step.
inline Transition mountain_car_continuous_step(const Vec& s, double action) {
  const double min_action = -1.0, max_action = 1.0;
  const double min_position = -1.2, max_position = 0.6, max_speed = 0.07;
  const double goal_position = 0.45, goal_velocity = 0, power = 0.0015;
  double position = s[0], velocity = s[1];
  const double force = std::min(std::max(action, min_action), max_action);
  velocity += force * power - 0.0025 * std::cos(3 * position);
  if (velocity > max_speed) velocity = max_speed;
  if (velocity < -max_speed) velocity = -max_speed;
  position += velocity;
  Transition t;
  t.ambiguous = near_value(position, min_position, 1e-5);
  if (position > max_position) position = max_position;
  if (position < min_position) position = min_position;
  if (position == min_position && velocity < 0) velocity = 0;
  t.terminated = position >= goal_position && velocity >= goal_velocity;
  t.ambiguous = t.ambiguous || near_value(position, goal_position, 1e-6) ||
                (position > goal_position - 1e-5 && std::abs(velocity) < 1e-7);
  double reward = 0;
  if (t.terminated) reward = 100.0;
  reward -= std::pow(action, 2) * 0.1;  // the unclipped action
  t.reward = reward;
  t.state = {position, velocity};
  t.obs = mountain_car_observe(t.state);
  return t;
}

}  // namespace myriad::gym_ref
