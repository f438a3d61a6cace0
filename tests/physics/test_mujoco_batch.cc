// Tests for the libmujoco reference backend and the MJCF models in physics/models.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "myriad/physics/mujoco_messages.h"
#include "physics/mujoco_batch.h"
#include "tests/temp_dir.h"

namespace myriad::physics {
namespace {

namespace fs = std::filesystem;

const char* const kModels[] = {"pendulum",     "double_pendulum", "cartpole",
                               "hopper_chain", "free_body",       "quadruped"};

fs::path ModelsDir() {
  const char* source_dir = std::getenv("MYRIAD_SOURCE_DIR");
  // Without MYRIAD_SOURCE_DIR, find the models relative to this source file.
  const fs::path root = source_dir != nullptr && *source_dir != '\0'
                            ? fs::path(source_dir)
                            : fs::path(__FILE__).parent_path().parent_path().parent_path();
  return root / "physics" / "models";
}

std::string ModelPath(const std::string& name) { return (ModelsDir() / (name + ".xml")).string(); }

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;
using DataPtr = std::unique_ptr<mjData, DataDeleter>;

ModelPtr LoadModel(const std::string& path) {
  char error[1024] = "";
  ModelPtr m(mj_loadXML(path.c_str(), nullptr, error, sizeof(error)));
  EXPECT_TRUE(m != nullptr) << path << ": " << error;
  return m;
}

// A random configuration: qpos0 moved along a random velocity (so quaternions stay unit), and a
// random velocity. `scale` sets how far from qpos0 and how fast.
void RandomState(const mjModel* m, std::mt19937_64& rng, double scale, double* qpos, double* qvel) {
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<double> dir(static_cast<size_t>(m->nv));
  for (double& x : dir) x = u(rng);
  std::copy(m->qpos0, m->qpos0 + m->nq, qpos);
  mj_integratePos(m, qpos, dir.data(), 1.0);
  for (int i = 0; i < m->nv; ++i) qvel[i] = u(rng);
}

// Controls from 1.5x the control range (or [-1.5, 1.5] when unlimited), so clamping is exercised.
void RandomCtrl(const mjModel* m, std::mt19937_64& rng, double* ctrl) {
  for (int k = 0; k < m->nu; ++k) {
    double lo = -1.0, hi = 1.0;
    if (m->actuator_ctrllimited[k]) {
      lo = m->actuator_ctrlrange[2 * k];
      hi = m->actuator_ctrlrange[2 * k + 1];
    }
    const double mid = 0.5 * (lo + hi), half = 0.75 * (hi - lo);
    ctrl[k] = std::uniform_real_distribution<double>(mid - half, mid + half)(rng);
  }
}

TEST(PhysicsModels, DirectoryHoldsTheSixModelsAndEveryFileLoads) {
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(ModelsDir())) {
    if (entry.path().extension() != ".xml") continue;
    found.insert(entry.path().stem().string());
    ModelPtr m = LoadModel(entry.path().string());
    EXPECT_TRUE(m != nullptr) << entry.path();
  }
  for (const char* name : kModels) EXPECT_EQ(found.count(name), 1u) << name;
}

class ModelTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::string name() const { return GetParam(); }
  std::string path() const { return ModelPath(GetParam()); }
};

// Only what the smooth engine supports: no tendons, equalities, sensors, limits or frictionloss,
// contacts disabled, and actuators of the supported kinds on joints.
TEST_P(ModelTest, UsesOnlySmoothFeatures) {
  ModelPtr m = LoadModel(path());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->ntendon, 0);
  EXPECT_EQ(m->neq, 0);
  EXPECT_EQ(m->nsensor, 0);
  EXPECT_GT(m->nu, 0);
  EXPECT_TRUE(m->opt.disableflags & mjDSBL_CONTACT);
  EXPECT_TRUE(m->opt.disableflags & mjDSBL_CONSTRAINT);
  EXPECT_FALSE(m->opt.disableflags & (mjDSBL_GRAVITY | mjDSBL_ACTUATION));
  EXPECT_GE(m->opt.timestep, 0.002);
  EXPECT_LE(m->opt.timestep, 0.01);
  const bool rk4 = name() == "hopper_chain" || name() == "quadruped";
  EXPECT_EQ(m->opt.integrator, rk4 ? mjINT_RK4 : mjINT_EULER);
  for (int j = 0; j < m->njnt; ++j) EXPECT_EQ(m->jnt_limited[j], 0) << "joint " << j;
  for (int i = 0; i < m->nv; ++i) EXPECT_EQ(m->dof_frictionloss[i], 0.0) << "dof " << i;
  for (int k = 0; k < m->nu; ++k) {
    EXPECT_EQ(m->actuator_trntype[k], mjTRN_JOINT) << "actuator " << k;
    EXPECT_EQ(m->actuator_dyntype[k], mjDYN_NONE) << "actuator " << k;
    EXPECT_EQ(m->actuator_gaintype[k], mjGAIN_FIXED) << "actuator " << k;
    EXPECT_TRUE(m->actuator_biastype[k] == mjBIAS_NONE || m->actuator_biastype[k] == mjBIAS_AFFINE)
        << "actuator " << k;
    const int jnt = m->actuator_trnid[2 * k];
    EXPECT_TRUE(m->jnt_type[jnt] == mjJNT_HINGE || m->jnt_type[jnt] == mjJNT_SLIDE)
        << "actuator " << k;
  }
}

// nefc == 0 from random states, both as loaded and with the constraint solver re-enabled: the
// latter shows contacts, limits and frictionloss are off on their own.
TEST_P(ModelTest, NoConstraintRowsFromRandomStates) {
  ModelPtr m = LoadModel(path());
  ASSERT_TRUE(m);
  ModelPtr enabled(mj_copyModel(nullptr, m.get()));
  ASSERT_TRUE(enabled);
  enabled->opt.disableflags &= ~mjDSBL_CONSTRAINT;
  std::mt19937_64 rng(1234);
  for (const mjModel* model :
       {static_cast<const mjModel*>(m.get()), static_cast<const mjModel*>(enabled.get())}) {
    DataPtr d(mj_makeData(model));
    ASSERT_TRUE(d);
    for (int trial = 0; trial < 20; ++trial) {
      RandomState(model, rng, 3.0, d->qpos, d->qvel);
      RandomCtrl(model, rng, d->ctrl);
      mj_forward(model, d.get());
      EXPECT_EQ(d->nefc, 0) << name() << " trial " << trial;
      EXPECT_EQ(d->ncon, 0) << name() << " trial " << trial;
      for (int i = 0; i < model->nv; ++i) ASSERT_TRUE(std::isfinite(d->qacc[i]));
    }
  }
}

// The batch stepped in parallel agrees bit for bit with each env stepped on its own mjData.
TEST_P(ModelTest, BatchMatchesSerialStepping) {
  constexpr int64_t kEnvs = 8;
  constexpr int kCalls = 20, kSubsteps = 5;
  MujocoBatch batch(path(), kEnvs);
  const mjModel* m = batch.model();
  const size_t nq = m->nq, nv = m->nv, nu = m->nu;
  std::mt19937_64 rng(42);
  std::vector<double> qpos(kEnvs * nq), qvel(kEnvs * nv), time(kEnvs), ctrl(kEnvs * nu);
  for (int64_t i = 0; i < kEnvs; ++i) {
    RandomState(m, rng, 0.5, &qpos[i * nq], &qvel[i * nv]);
    RandomCtrl(m, rng, &ctrl[i * nu]);
    time[i] = 0.25 * static_cast<double>(i);
  }
  batch.set_state(qpos.data(), qvel.data(), time.data());
  batch.set_ctrl(ctrl.data());

  // get_state returns what set_state put in.
  std::vector<double> qpos_out(qpos.size()), qvel_out(qvel.size()), time_out(time.size());
  batch.get_state(qpos_out.data(), qvel_out.data(), time_out.data());
  EXPECT_EQ(qpos_out, qpos);
  EXPECT_EQ(qvel_out, qvel);
  EXPECT_EQ(time_out, time);

  // Serial reference: one mjData per env, same inputs.
  std::vector<DataPtr> serial;
  for (int64_t i = 0; i < kEnvs; ++i) {
    serial.emplace_back(mj_makeData(m));
    mjData* d = serial.back().get();
    std::copy(&qpos[i * nq], &qpos[i * nq] + nq, d->qpos);
    std::copy(&qvel[i * nv], &qvel[i * nv] + nv, d->qvel);
    std::copy(&ctrl[i * nu], &ctrl[i * nu] + nu, d->ctrl);
    d->time = time[i];
  }

  for (int call = 0; call < kCalls; ++call) {
    batch.step(kSubsteps);
    for (int64_t i = 0; i < kEnvs; ++i) {
      for (int s = 0; s < kSubsteps; ++s) mj_step(m, serial[i].get());
    }
  }
  batch.forward();
  std::vector<double> qacc(kEnvs * nv);
  batch.get_qacc(qacc.data());
  batch.get_state(qpos_out.data(), qvel_out.data(), time_out.data());
  for (int64_t i = 0; i < kEnvs; ++i) {
    mjData* d = serial[i].get();
    mj_forward(m, d);
    EXPECT_NEAR(time_out[i], time[i] + kCalls * kSubsteps * m->opt.timestep, 1e-9);
    EXPECT_EQ(time_out[i], d->time) << name() << " env " << i;
    for (size_t k = 0; k < nq; ++k) {
      EXPECT_EQ(qpos_out[i * nq + k], d->qpos[k]) << name() << " env " << i << " qpos " << k;
    }
    for (size_t k = 0; k < nv; ++k) {
      EXPECT_EQ(qvel_out[i * nv + k], d->qvel[k]) << name() << " env " << i << " qvel " << k;
      EXPECT_EQ(qacc[i * nv + k], d->qacc[k]) << name() << " env " << i << " qacc " << k;
      ASSERT_TRUE(std::isfinite(qvel_out[i * nv + k]));
    }
    for (int b = 0; b < 3 * m->nbody; ++b) EXPECT_EQ(batch.data(i)->xpos[b], d->xpos[b]);
  }
  // The envs really moved, and differently.
  EXPECT_NE(std::vector<double>(qpos_out.begin(), qpos_out.begin() + nq),
            std::vector<double>(qpos.begin(), qpos.begin() + nq));
  EXPECT_NE(std::vector<double>(qpos_out.begin(), qpos_out.begin() + nq),
            std::vector<double>(qpos_out.begin() + nq, qpos_out.begin() + 2 * nq));
}

TEST_P(ModelTest, ResetRestoresInitialState) {
  MujocoBatch batch(path(), 3);
  const mjModel* m = batch.model();
  std::vector<double> ctrl(3 * m->nu, 0.3);
  batch.set_ctrl(ctrl.data());
  batch.step(10);
  EXPECT_GT(batch.data(2)->time, 0.0);
  batch.reset();
  for (int64_t i = 0; i < batch.num_envs(); ++i) {
    const mjData* d = batch.data(i);
    EXPECT_EQ(d->time, 0.0);
    for (int k = 0; k < m->nq; ++k) EXPECT_EQ(d->qpos[k], m->qpos0[k]);
    for (int k = 0; k < m->nv; ++k) EXPECT_EQ(d->qvel[k], 0.0);
    for (int k = 0; k < m->nu; ++k) EXPECT_EQ(d->ctrl[k], 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(AllModels, ModelTest, ::testing::ValuesIn(kModels),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

TEST(MujocoBatch, BadPathThrowsNamingFile) {
  const std::string path = "/nonexistent/myriad/no_such_model.xml";
  try {
    MujocoBatch batch(path, 2);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(MujocoBatch, MalformedModelThrowsWithLibmujocoMessage) {
  testing_util::TempDir dir("mujoco_batch");
  const std::string path = dir.file("broken.xml");
  std::ofstream(path) << "<mujoco><worldbody><body><joint type=\"nonsense\"/></body>"
                         "</worldbody></mujoco>\n";
  try {
    MujocoBatch batch(path, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("nonsense"), std::string::npos) << what;  // from mj_loadXML's buffer
  }
}

TEST(MujocoBatch, RejectsEmptyBatchAndOutOfRangeIndex) {
  EXPECT_THROW(MujocoBatch(ModelPath("pendulum"), 0), std::invalid_argument);
  MujocoBatch batch(ModelPath("pendulum"), 2);
  EXPECT_EQ(batch.num_envs(), 2);
  EXPECT_THROW(batch.data(2), std::out_of_range);
  EXPECT_THROW(batch.data(-1), std::out_of_range);
}

// A diverging libmujoco simulation warns ("Nan, Inf or huge value in QACC"); unrouted, that
// warning appends to MUJOCO_LOG.TXT in the working directory. Routed, it reaches stderr only.
TEST(MujocoBatch, WarningsLeaveNoLogFileInTheWorkingDirectory) {
  testing_util::TempDir dir("mujoco_log");
  const std::string model = ModelPath("pendulum");  // before the working directory changes
  char* old_cwd = getcwd(nullptr, 0);
  ASSERT_EQ(chdir(dir.path().c_str()), 0);
  const int64_t before = mujoco_warning_count();
  {
    MujocoBatch batch(model, 2);
    const mjModel* m = batch.model();
    std::vector<double> qpos(2 * m->nq, 0.0), qvel(2 * m->nv, 1e300), time(2, 0.0);
    batch.set_state(qpos.data(), qvel.data(), time.data());
    batch.step(5);
  }
  const bool log_written = std::ifstream("MUJOCO_LOG.TXT").good();
  ASSERT_EQ(chdir(old_cwd), 0);
  std::free(old_cwd);
  EXPECT_GT(mujoco_warning_count(), before);  // libmujoco did warn
  EXPECT_FALSE(log_written);
}

}  // namespace
}  // namespace myriad::physics
