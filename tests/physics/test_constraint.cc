// Constraint rows (physics/constraint/make.h) against libmujoco 2.2.2: for models with contacts,
// joint limits and dof friction loss, at states along libmujoco's own trajectories under random
// controls, the rows Myriad builds from the same qpos and qvel agree with mjData's efc_* arrays
// after mj_forward: count, type, id, Jacobian, position, margin, friction loss, stiffness /
// damping / impedance, R, D and the reference acceleration; and the rows' sparse structure
// (efc_J_colmask) against libmujoco's with the sparse Jacobian (opt.jacobian
// sparse, the same state).
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "myriad/physics/data.h"
#include "myriad/physics/import.h"
#include "physics/pipeline.h"
#include "tests/physics/mj_from_string.h"

namespace myriad::physics {
namespace {

using Loaded = test_support::MjLoaded;
std::unique_ptr<Loaded> load(const std::string& xml) { return test_support::load_mj_string(xml); }

// Myriad's position and velocity stages up to the reference acceleration.
void build_rows(const ModelView<double>& v, EnvData<double>& e) {
  kinematics(v, e);
  com_pos(v, e);
  tendon(v, e);
  crb(v, e);
  collision_stage(v, e);
  constraint::make_rows(v, e);
  constraint::make_impedance(v, e);
  tendon_velocity(v, e);
  com_vel(v, e);
  constraint::reference(v, e);
}

// Row r's column set (make.h's efc_J_colmask), bit k for column k.
constraint::ColumnMask columns_of(const EnvData<double>& e, int r) {
  return constraint::column_set(e.efc_J_colmask + constraint::kColumnWords * r);
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

// Steps libmujoco under random controls and compares the rows every `every` steps; returns the
// number of states compared with at least one row.
int compare_along_trajectory(const std::string& xml, int steps, int every, double qvel_scale,
                             int seed = 1, int* rows_without_dof0 = nullptr) {
  auto L = load(xml);
  if (!L) return 0;
  mjModel* m = L->m;
  mjData* d = L->d;
  EXPECT_FALSE(mj_isSparse(m));
  // The same model with libmujoco's sparse Jacobian, for the rows' structure.
  test_support::MjLoaded sparse;
  sparse.m = mj_copyModel(nullptr, m);
  sparse.m->opt.jacobian = mjJAC_SPARSE;
  sparse.d = mj_makeData(sparse.m);
  EXPECT_TRUE(mj_isSparse(sparse.m));
  const Model<double> model = import_model(m);
  Data<double> data(model, 1);
  EnvData<double> e = data.env(model, 0);
  const ModelView<double> v = view_of(model);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = qvel_scale * u(rng);
  int compared = 0;
  for (int s = 0; s <= steps; ++s) {
    for (int k = 0; k < m->nu; ++k) d->ctrl[k] = u(rng);
    if (s % every == 0) {
      mj_forward(m, d);
      mj_copyData(sparse.d, m, d);
      mj_forward(sparse.m, sparse.d);
      for (int k = 0; k < m->nq; ++k) e.qpos[k] = d->qpos[k];
      for (int k = 0; k < m->nv; ++k) e.qvel[k] = d->qvel[k];
      build_rows(v, e);
      const int nefc = static_cast<int>(e.nefc[0]);
      EXPECT_EQ(nefc, d->nefc) << "step " << s;
      if (nefc != d->nefc) return compared;
      compared += nefc > 0;
      if (rows_without_dof0)
        for (int r = 0; r < nefc; ++r) *rows_without_dof0 += (columns_of(e, r) & 1) == 0;
      for (int r = 0; r < nefc; ++r) {
        SCOPED_TRACE("step " + std::to_string(s) + " row " + std::to_string(r));
        EXPECT_EQ(static_cast<int>(e.efc_type[r]), d->efc_type[r]);
        EXPECT_EQ(static_cast<int>(e.efc_id[r]), d->efc_id[r]);
        for (int i = 0; i < m->nv; ++i)
          EXPECT_LT(rel(e.efc_J[r * m->nv + i], d->efc_J[r * m->nv + i]), 1e-9) << "J col " << i;
        EXPECT_LT(rel(e.efc_pos[r], d->efc_pos[r]), 1e-9);
        EXPECT_LT(rel(e.efc_margin[r], d->efc_margin[r]), 1e-12);
        EXPECT_LT(rel(e.efc_frictionloss[r], d->efc_frictionloss[r]), 1e-12);
        for (int k = 0; k < 3; ++k)
          EXPECT_LT(rel(e.efc_KBIP[4 * r + k], d->efc_KBIP[4 * r + k]), 1e-9) << "KBIP " << k;
        EXPECT_LT(rel(e.efc_R[r], d->efc_R[r]), 1e-9);
        EXPECT_LT(std::fabs(e.efc_D[r] - d->efc_D[r]) / std::fabs(d->efc_D[r]), 1e-9);
        EXPECT_LT(rel(e.efc_aref[r], d->efc_aref[r]), 1e-9);
        if (r >= sparse.d->nefc) continue;  // (the counts are compared below)
        constraint::ColumnMask mujoco = 0;
        for (int k = 0; k < sparse.d->efc_J_rownnz[r]; ++k)
          mujoco |= constraint::ColumnMask{1}
                    << sparse.d->efc_J_colind[sparse.d->efc_J_rowadr[r] + k];
        EXPECT_EQ(columns_of(e, r), mujoco) << "the sparse row's columns (bit k: column k)";
      }
      EXPECT_EQ(sparse.d->nefc, nefc) << "step " << s << ": rows with the sparse Jacobian";
    }
    mj_step(m, d);
  }
  return compared;
}

const char* kSphere = R"(
<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1"/>
  <body name="ball" pos="0 0 0.3"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
</worldbody></mujoco>)";

TEST(ConstraintRows, SphereDroppedOnPlane) {
  EXPECT_GT(compare_along_trajectory(kSphere, 400, 10, 0.5), 10);
}

TEST(ConstraintRows, SlidingBoxWithImpratio) {
  const char* xml = R"(
<mujoco><option impratio="2"/><worldbody><geom type="plane" size="5 5 .1" friction="0.5"/>
  <body pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1" friction="0.5"/>
  </body></worldbody></mujoco>)";
  EXPECT_GT(compare_along_trajectory(xml, 300, 7, 2.0), 10);
}

// Two hinged links of one free body, crossing each other, and the floor: contacts between bodies
// whose chains share the free joint's dofs (the sparse rows' merged chains) and between a chain
// and the world.
TEST(ConstraintRows, SiblingLinksInContactMergeTheirChains) {
  const char* xml = R"(
<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
  <body pos="0 0 0.4"><freejoint/><geom type="box" size="0.12 0.05 0.03" mass="1"/>
    <body pos="0.1 0 0"><joint type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 -0.2 0 -0.25" size="0.03" mass="0.2"/></body>
    <body pos="-0.1 0 0"><joint type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 -0.25" size="0.03" mass="0.2"/></body>
  </body></worldbody></mujoco>)";
  int sibling_rows = 0;  // rows without the free joint's dofs: the links' contacts with each other
  EXPECT_GT(compare_along_trajectory(xml, 300, 5, 1.0, 1, &sibling_rows), 10);
  EXPECT_GT(sibling_rows, 0) << "the links never touched: the common dofs were never skipped";
}

TEST(ConstraintRows, HingeLimitWithMargin) {
  const char* xml = R"(
<mujoco><worldbody><body><joint name="hinge" type="hinge" axis="0 1 0" limited="true"
  range="-30 30" margin="0.01"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"
  contype="0" conaffinity="0"/></body></worldbody></mujoco>)";
  EXPECT_GT(compare_along_trajectory(xml, 500, 5, 3.0), 10);
}

// A planar hopper: slide and hinge roots, limited hinges with damping and friction loss, a
// direct-format solref on one geom, priority on the floor, condim 1 on the foot, an explicit
// <pair>, solimp with a non-trivial width and power, motors.
const char* kHopper = R"(
<mujoco><option timestep="0.002"/>
  <default><joint damping="0.5" armature="0.01"/><geom friction="0.9 0.1 0.1"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="20 20 .1" priority="1" friction="1.1 0.1 0.1"
          solref="0.01 1"/>
    <body name="torso" pos="0 0 1.25">
      <joint name="rootx" type="slide" axis="1 0 0" damping="0" armature="0"/>
      <joint name="rootz" type="slide" axis="0 0 1" damping="0" armature="0"/>
      <joint name="rooty" type="hinge" axis="0 1 0" damping="0" armature="0" frictionloss="0.1"/>
      <geom name="torso" type="capsule" fromto="0 0 0.2 0 0 -0.2" size="0.05"/>
      <body name="thigh" pos="0 0 -0.2">
        <joint name="thigh" type="hinge" axis="0 -1 0" range="-150 0" limited="true"/>
        <geom name="thigh" type="capsule" fromto="0 0 0 0 0 -0.45" size="0.05"
              solimp="0.8 0.95 0.02 0.4 3"/>
        <body name="leg" pos="0 0 -0.45">
          <joint name="leg" type="hinge" axis="0 -1 0" range="-150 0" limited="true"
                 margin="0.02" frictionloss="0.05"/>
          <geom name="leg" type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" solref="-2000 -40"/>
          <body name="foot" pos="0 0 -0.5">
            <joint name="foot" type="hinge" axis="0 -1 0" range="-45 45" limited="true"/>
            <geom name="foot" type="capsule" fromto="-0.13 0 0 0.26 0 0" size="0.06" condim="1"/>
          </body>
        </body>
      </body>
    </body>
    <body name="block" pos="1 0 0.1"><freejoint/><geom name="block" type="box" size="0.1 0.1 0.1"/>
    </body>
  </worldbody>
  <contact><pair geom1="block" geom2="floor" friction="0.7 0.7 0.1 0.1 0.1" solref="0.03 0.8"/>
  </contact>
  <actuator>
    <motor joint="thigh" gear="200" ctrlrange="-1 1" ctrllimited="true"/>
    <motor joint="leg" gear="200" ctrlrange="-1 1" ctrllimited="true"/>
    <motor joint="foot" gear="200" ctrlrange="-1 1" ctrllimited="true"/>
  </actuator>
</mujoco>)";

TEST(ConstraintRows, HopperWithLimitsFrictionLossAndContacts) {
  EXPECT_GT(compare_along_trajectory(kHopper, 1500, 10, 1.0), 100);
}

TEST(ConstraintRows, HopperOtherSeed) {
  EXPECT_GT(compare_along_trajectory(kHopper, 1000, 13, 2.0, 7), 50);
}

// Fixed tendons: limits with a margin, friction loss, a spring-damper and a tendon actuator,
// coupling two hinges of an arm and a slide.
TEST(ConstraintRows, FixedTendonsLimitsFrictionSpringsAndActuator) {
  const char* xml = R"(
<mujoco><worldbody>
  <body><joint name="a" type="hinge" axis="0 1 0" damping="0.1"/>
    <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04" contype="0" conaffinity="0"/>
    <body pos="0.4 0 0"><joint name="b" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04" contype="0" conaffinity="0"/>
      <body pos="0.4 0 0"><joint name="c" type="slide" axis="1 0 0"/>
        <geom type="sphere" size="0.05" contype="0" conaffinity="0"/></body></body></body>
</worldbody>
<tendon>
  <fixed name="ab" limited="true" range="-0.4 0.3" margin="0.02" frictionloss="0.05"
         stiffness="2" damping="0.3" springlength="0.1">
    <joint joint="a" coef="1"/><joint joint="b" coef="-0.5"/></fixed>
  <fixed name="bc" limited="true" range="-0.2 0.2" solreflimit="0.03 0.9">
    <joint joint="b" coef="0.7"/><joint joint="c" coef="2"/></fixed>
</tendon>
<actuator><motor tendon="ab" gear="3" ctrlrange="-1 1" ctrllimited="true"/>
  <motor joint="c" gear="1"/></actuator>
</mujoco>)";
  EXPECT_GT(compare_along_trajectory(xml, 800, 4, 3.0), 50);
  // And the trajectory: qpos after 800 steps under the same controls as libmujoco.
  auto L = load(xml);
  const Model<double> model = import_model(L->m);
  Data<double> data(model, 1);
  EnvData<double> e = data.env(model, 0);
  const ModelView<double> v = view_of(model);
  for (int s = 0; s < 800; ++s) {
    e.ctrl[0] = L->d->ctrl[0] = std::sin(0.01 * s);
    e.ctrl[1] = L->d->ctrl[1] = std::cos(0.013 * s);
    mj_step(L->m, L->d);
    step(v, e);
  }
  for (int k = 0; k < L->m->nq; ++k) EXPECT_NEAR(e.qpos[k], L->d->qpos[k], 1e-8) << k;
}

// The notes' reference values: a sphere of radius 0.1 and mass 1 resting on a plane (mu = 1) has
// d = 0.91348 and R = 0.37885 on each of its 4 pyramid edges.
TEST(ConstraintRows, SphereRestReferenceValues) {
  auto L = load(kSphere);
  for (int s = 0; s < 2000; ++s) mj_step(L->m, L->d);
  mj_forward(L->m, L->d);
  const Model<double> model = import_model(L->m);
  Data<double> data(model, 1);
  EnvData<double> e = data.env(model, 0);
  for (int k = 0; k < L->m->nq; ++k) e.qpos[k] = L->d->qpos[k];
  for (int k = 0; k < L->m->nv; ++k) e.qvel[k] = L->d->qvel[k];
  build_rows(view_of(model), e);
  ASSERT_EQ(static_cast<int>(e.nefc[0]), 4);
  for (int r = 0; r < 4; ++r) {
    EXPECT_NEAR(e.efc_KBIP[4 * r + 2], 0.91348, 5e-5);
    EXPECT_NEAR(e.efc_R[r], 0.37885, 5e-5);
  }
}

}  // namespace
}  // namespace myriad::physics
