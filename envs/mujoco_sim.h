// libmujoco as a physics env's sim (CPU only): env i's mjData seen as physics::EnvData<double>,
// so the envs' observation and reward code (envs/physics_kernels.h) reads the same fields on
// both sims.
#pragma once

#include <mujoco/mujoco.h>

#include <cstdint>

#include "myriad/physics/data.h"
#include "physics/env_params.h"
#include "physics/model_view.h"

namespace myriad::envs {

struct MujocoSim {
  // mjData's arrays are pointers, its time a scalar.
  static double* field(double* array) { return array; }
  static double* field(double& scalar) { return &scalar; }

  using Scalar = double;
  static constexpr int kBlock = 1;   // env-major (an env's EnvData points into its mjData)
  physics::ModelView<double> model;  // of the engine's import of mj (for the env code)
  const mjModel* mj = nullptr;
  mjData* const* datas = nullptr;  // [N]
  // Per-env model parameters: each env's own mjModel (a copy of mj with its values and
  // mj_setConst's constants) and, for the env code, the same values over `model`; null: mj.
  mjModel* const* models = nullptr;  // [N]
  physics::EnvParamsView<double> params;
  bool per_env_params = false;

  const mjModel* mj_of(int64_t i) const { return models != nullptr ? models[i] : mj; }
  physics::ModelView<double> model_of(int64_t i) const {
    physics::ModelView<double> m = model;
    if (per_env_params) params.apply(m, i);
    return m;
  }

  // The fields of kind `env` (myriad/physics/data.h) point into env i's mjData; the rest are
  // null.
  physics::EnvData<double> env(int64_t i) const {
    mjData* d = datas[i];
    physics::EnvData<double> e{};
#define MYRIAD_MJ_env(name) e.name = field(d->name);
#define MYRIAD_MJ_internal(name)
#define MYRIAD_X(name, size, kind) MYRIAD_MJ_##kind(name)
    MYRIAD_DATA_FIELDS(MYRIAD_X)
#undef MYRIAD_X
#undef MYRIAD_MJ_internal
#undef MYRIAD_MJ_env
    return e;
  }
  void clear(physics::EnvData<double>&, int64_t i) const { mj_resetData(mj_of(i), datas[i]); }
  void step(physics::EnvData<double>&, int64_t i) const { mj_step(mj_of(i), datas[i]); }
  // Gymnasium's step ends with mj_rnePostConstraint (cfrc_ext). False when libmujoco found a
  // bad qpos, qvel or qacc during the step and reset the data itself (its warnings count them).
  bool after_steps(physics::EnvData<double>&, int64_t i) const {
    mjData* d = datas[i];
    mj_rnePostConstraint(mj_of(i), d);
    bool ok = true;
    for (int w : {mjWARN_BADQPOS, mjWARN_BADQVEL, mjWARN_BADQACC}) {
      ok = ok && d->warning[w].number == 0;
      d->warning[w].number = 0;
    }
    return ok;
  }
  void forward(physics::EnvData<double>&, int64_t i) const {
    mj_forward(mj_of(i), datas[i]);
    mj_rnePostConstraint(mj_of(i), datas[i]);
  }
  // fn(geom1, geom2, frame [9], force [6]) for every contact with constraint rows, as MyriadSim's.
  template <class Fn>
  void for_each_contact(const physics::EnvData<double>&, int64_t i, Fn&& fn) const {
    const mjData* d = datas[i];
    for (int c = 0; c < d->ncon; ++c) {
      const mjContact& k = d->contact[c];
      if (k.efc_address < 0) continue;
      mjtNum local[6];
      mj_contactForce(mj_of(i), d, c, local);
      fn(k.geom[0], k.geom[1], k.frame, local);
    }
  }
};

}  // namespace myriad::envs
