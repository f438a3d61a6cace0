#include "myriad/physics/check.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>

#include "myriad/physics/engine.h"
#include "myriad/physics/import.h"
#include "physics/collision/contact.h"
#include "physics/mujoco_compat.h"

namespace myriad::physics {
namespace {

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

double rel_error(const std::vector<double>& ours, const std::vector<double>& ref) {
  std::vector<double> dif(ours.size());
  for (size_t k = 0; k < ours.size(); ++k) dif[k] = ours[k] - ref[k];
  return norm(dif) / std::max(norm(ref), 1e-12);
}

double abs_error(const std::vector<double>& ours, const std::vector<double>& ref) {
  double e = 0;
  for (size_t k = 0; k < ours.size(); ++k) e = std::max(e, std::abs(ours[k] - ref[k]));
  return e;
}

// max |ours - ref| / max(max |ref|, 1): the error relative to the largest component.
double rel_to_largest(const double* ours, const double* ref, int64_t n) {
  double e = 0, big = 1;
  for (int64_t k = 0; k < n; ++k) {
    e = std::max(e, std::abs(ours[k] - ref[k]));
    big = std::max(big, std::abs(ref[k]));
  }
  return e / big;
}

// A random state: joint positions around qpos0 (unit quaternions for ball/free), velocities.
void random_state(const mjModel* m, std::mt19937& gen, double* qpos, double* qvel, double* ctrl) {
  std::normal_distribution<double> n01(0.0, 1.0);
  for (int j = 0; j < m->njnt; ++j) {
    const int a = m->jnt_qposadr[j];
    switch (m->jnt_type[j]) {
      case mjJNT_FREE:
        for (int k = 0; k < 3; ++k) qpos[a + k] = m->qpos0[a + k] + 0.5 * n01(gen);
        [[fallthrough]];
      case mjJNT_BALL: {
        const int q = m->jnt_type[j] == mjJNT_FREE ? a + 3 : a;
        double s = 0;
        for (int k = 0; k < 4; ++k) s += (qpos[q + k] = n01(gen)) * qpos[q + k];
        for (int k = 0; k < 4; ++k) qpos[q + k] /= std::sqrt(s);
        break;
      }
      default:
        qpos[a] = m->qpos0[a] + n01(gen);
    }
  }
  for (int i = 0; i < m->nv; ++i) qvel[i] = n01(gen);
  for (int u = 0; u < m->nu; ++u) {
    const double lo = m->actuator_ctrllimited[u] ? m->actuator_ctrlrange[2 * u] : -1.0;
    const double hi = m->actuator_ctrllimited[u] ? m->actuator_ctrlrange[2 * u + 1] : 1.0;
    ctrl[u] = lo + (hi - lo) * std::uniform_real_distribution<double>(0, 1)(gen);
  }
}

template <class T>
std::vector<double> take(Data<T>& d, const Model<T>& m, const char* field, int64_t i) {
  int64_t size = 0;
  const T* p = d.field(m, field, &size) + i * size;
  return std::vector<double>(p, p + size);
}

template <class T>
std::vector<CheckRow> run(const mjModel* mm, const Model<double>& md, const CheckOptions& o) {
  const Model<T> m = md.template cast<T>();
  mjData* ref = mj_makeData(mm);
  std::mt19937 gen(o.seed);
  const bool f32 = std::is_same_v<T, float>;
  const double kin_tol = f32 ? 1e-5 : 1e-9, acc_tol = f32 ? 1e-4 : 1e-9;
  double e_xpos = 0, e_xquat = 0, e_geom = 0, e_bias = 0, e_mass = 0;

  // Both engines solving the constraints with Newton to a tight tolerance (whatever the model
  // asks): where each stops iterating then does not enter the comparison. The line search gets
  // at least 100 evaluations too: one that runs out (the robots ask for 20) ends the solve where
  // it stands, and on an elliptic cone whose 1-D cost bends sharply just past 0 that is far
  // from the optimum (go1_rough, two coincident contacts: libmujoco stopped after 2 iterations
  // with |grad| 3.8, 0.7 of the largest force away from the optimum both engines reach with
  // more evaluations).
  constexpr int kTightLineSearch = 100;
  mjModel* tight = mj_copyModel(nullptr, mm);
  tight->opt.tolerance = 1e-12;
  tight->opt.iterations = 200;
  tight->opt.ls_iterations = std::max(tight->opt.ls_iterations, kTightLineSearch);
  Model<T> mt = m;
  mt.tolerance = static_cast<T>(1e-12);
  mt.iterations = 200;
  mt.ls_iterations = std::max(mt.ls_iterations, kTightLineSearch);
  // The random states: in float64 under the model's own solver settings (where the engine follows
  // libmujoco's iterations step for step); in float32, whose solve cannot follow them, both
  // solved tight, so that where each stops short of the optimum does not enter the comparison.
  const mjModel* mrand = f32 ? tight : mm;
  const Model<T>& mrand_ours = f32 ? mt : m;
  Data<T> d(m, o.samples);
  std::vector<std::vector<double>> states(o.samples);
  for (int s = 0; s < o.samples; ++s) {
    EnvData<T> e = d.env(m, s);
    std::vector<double> qpos(mm->nq), qvel(mm->nv), ctrl(mm->nu);
    random_state(mm, gen, qpos.data(), qvel.data(), ctrl.data());
    for (int k = 0; k < mm->nq; ++k) e.qpos[k] = static_cast<T>(qpos[k]);
    for (int k = 0; k < mm->nv; ++k) e.qvel[k] = static_cast<T>(qvel[k]);
    for (int k = 0; k < mm->nu; ++k) e.ctrl[k] = static_cast<T>(ctrl[k]);
  }
  forward(mrand_ours, d);
  std::mt19937 rand_ulp_gen(o.seed + 3);
  mjData* moved_ref = f32 ? mj_makeData(mm) : nullptr;
  CheckRow qacc_row{"qacc", 0, "relative", acc_tol};
  CheckRow sensor_row{"sensordata", 0, "relative", acc_tol};
  for (int s = 0; s < o.samples; ++s) {
    // The reference gets exactly the engine's (possibly rounded) inputs.
    const auto qpos = take(d, m, "qpos", s), qvel = take(d, m, "qvel", s);
    const auto ctrl = take(d, m, "ctrl", s);
    mj_resetData(mm, ref);
    std::copy(qpos.begin(), qpos.end(), ref->qpos);
    std::copy(qvel.begin(), qvel.end(), ref->qvel);
    std::copy(ctrl.begin(), ctrl.end(), ref->ctrl);
    mj_forward(mrand, ref);
    if (f32) {  // libmujoco's own sensitivity: the state moved one float32 ulp
      mj_copyData(moved_ref, mrand, ref);
      for (int k = 0; k < mm->nq; ++k)
        moved_ref->qpos[k] = std::nextafter(static_cast<float>(ref->qpos[k]),
                                            (rand_ulp_gen() & 1) ? INFINITY : -INFINITY);
      for (int k = 0; k < mm->nv; ++k)
        moved_ref->qvel[k] = std::nextafter(static_cast<float>(ref->qvel[k]),
                                            (rand_ulp_gen() & 1) ? INFINITY : -INFINITY);
      mj_forward(mrand, moved_ref);
    }
    auto cmp = [&](const char* field, const mjtNum* r, int64_t n, bool relative) {
      const std::vector<double> ours = take(d, m, field, s), theirs(r, r + n);
      return relative ? rel_error(ours, theirs) : abs_error(ours, theirs);
    };
    e_xpos = std::max(e_xpos, cmp("xpos", ref->xpos, 3 * mm->nbody, false));
    e_xquat = std::max(e_xquat, cmp("xmat", ref->xmat, 9 * mm->nbody, false));
    e_geom = std::max(e_geom, cmp("geom_xpos", ref->geom_xpos, 3 * mm->ngeom, false));
    // In float32, a state where libmujoco moves itself by more than the tolerance under one
    // float32 ulp is judged against that movement instead (CheckRow::ill_conditioned).
    auto judge = [&](CheckRow& row, double ours, const mjtNum* moved, const mjtNum* r, int n) {
      const double own = f32 ? rel_error({moved, moved + n}, {r, r + n}) : 0.0;
      if (own <= row.tolerance) {
        row.max_error = std::max(row.max_error, ours);
        row.self_error = f32 ? std::max(row.self_error, own) : -1.0;
        return;
      }
      ++row.ill_conditioned;
      if (ours / own > row.ill_conditioned_error / std::max(row.ill_conditioned_self, 1e-300)) {
        row.ill_conditioned_error = ours;
        row.ill_conditioned_self = own;
      }
    };
    judge(qacc_row, cmp("qacc", ref->qacc, mm->nv, true), f32 ? moved_ref->qacc : nullptr,
          ref->qacc, mm->nv);
    judge(sensor_row, cmp("sensordata", ref->sensordata, mm->nsensordata, true),
          f32 ? moved_ref->sensordata : nullptr, ref->sensordata, mm->nsensordata);
    e_bias = std::max(e_bias, cmp("qfrc_bias", ref->qfrc_bias, mm->nv, true));
    // The mass matrix: MuJoCo's sparse qM against our dense tree entries.
    std::vector<double> dense(mm->nv * mm->nv, 0.0), ours = take(d, m, "qM", s);
    full_inertia(mm, ref, dense.data());
    std::vector<double> ours_full(mm->nv * mm->nv, 0.0);
    for (int i = 0; i < mm->nv; ++i)
      for (int j = i; j >= 0; j = mm->dof_parentid[j])
        ours_full[i * mm->nv + j] = ours_full[j * mm->nv + i] = ours[i * mm->nv + j];
    e_mass = std::max(e_mass, rel_error(ours_full, dense));
  }

  // Trajectories from the same state under constant random controls; in float64 with the tight
  // solver (at the model's tolerance two correct solvers may stop apart by up to that tolerance,
  // which a chaotic model carries far), in float32 as the model asks.
  const Model<T>& mtraj = f32 ? m : mt;
  const mjModel* mmtraj = f32 ? mm : tight;
  double e_traj_qpos = 0, e_traj_qvel = 0;
  Data<T> t(mtraj, o.trajectories);
  std::vector<mjData*> refs;
  for (int r = 0; r < o.trajectories; ++r) {
    EnvData<T> e = t.env(m, r);
    std::vector<double> qpos(mm->nq), qvel(mm->nv), ctrl(mm->nu);
    random_state(mm, gen, qpos.data(), qvel.data(), ctrl.data());
    for (auto& v : qvel) v *= 0.3;
    // The model's keyframes (a robot standing in its home pose, its controls holding it) start
    // the first trajectories, at most half of them.
    if (r < mm->nkey && r < o.trajectories / 2) {
      qpos.assign(mm->key_qpos + r * mm->nq, mm->key_qpos + (r + 1) * mm->nq);
      qvel.assign(mm->key_qvel + r * mm->nv, mm->key_qvel + (r + 1) * mm->nv);
      ctrl.assign(mm->key_ctrl + r * mm->nu, mm->key_ctrl + (r + 1) * mm->nu);
    }
    mjData* rd = mj_makeData(mm);
    for (int k = 0; k < mm->nq; ++k) rd->qpos[k] = e.qpos[k] = static_cast<T>(qpos[k]);
    for (int k = 0; k < mm->nv; ++k) rd->qvel[k] = e.qvel[k] = static_cast<T>(qvel[k]);
    for (int k = 0; k < mm->nu; ++k) rd->ctrl[k] = e.ctrl[k] = static_cast<T>(ctrl[k]);
    refs.push_back(rd);
  }
  // libmujoco's own sensitivity to rounding: a twin of each reference trajectory whose qpos,
  // qvel and warm start are moved by one ulp (up or down at random) after every step, which is
  // what a different but equally valid order of floating-point operations does to a state (the
  // warm start: to where a solve that converges only asymptotically, as on the elliptic cone,
  // stops). The engine
  // does not repeat libmujoco's arithmetic operation for operation, so on a chaotic model (a
  // body tumbling over contacts) its trajectory may drift as far as this twin, not further:
  // the float64 trajectory tolerance is max(1e-6, 10 x the twin's largest divergence).
  std::vector<mjData*> twins;
  for (mjData* r : refs) twins.push_back(mj_copyData(nullptr, mmtraj, r));
  // On the elliptic cone the solve converges only asymptotically and where it stops within the
  // tolerance is rounding's choice (improvements of 1e-12 are the cost's own rounding on a
  // robot's stiff contacts): the twin also solves to 10x the tolerance, another valid stop.
  const bool elliptic = mm->opt.cone == mjCONE_ELLIPTIC && !f32;
  mjModel* twin_model = mj_copyModel(nullptr, mmtraj);
  if (elliptic) twin_model->opt.tolerance *= 10;
  std::mt19937 ulp_gen(o.seed + 1);
  auto nudge = [&](mjtNum* v, int n) {
    for (int k = 0; k < n; ++k) v[k] = std::nextafter(v[k], (ulp_gen() & 1) ? INFINITY : -INFINITY);
  };
  double twin_qpos = 0, twin_qvel = 0;
  bool traj_explained = false;
  for (int s = 0; s < o.steps; ++s) {
    step(mtraj, t, 1);
    for (int r = 0; r < o.trajectories; ++r) {
      mj_step(mmtraj, refs[r]);
      mj_step(twin_model, twins[r]);
      nudge(twins[r]->qpos, mm->nq);
      nudge(twins[r]->qvel, mm->nv);
      nudge(twins[r]->qacc_warmstart, mm->nv);
      twin_qpos = std::max(twin_qpos, abs_error({twins[r]->qpos, twins[r]->qpos + mm->nq},
                                                {refs[r]->qpos, refs[r]->qpos + mm->nq}));
      twin_qvel = std::max(twin_qvel, abs_error({twins[r]->qvel, twins[r]->qvel + mm->nv},
                                                {refs[r]->qvel, refs[r]->qvel + mm->nv}));
      if (o.explain && !traj_explained) {
        const auto qv = take(t, m, "qvel", r);
        const double e = abs_error(qv, {refs[r]->qvel, refs[r]->qvel + mm->nv});
        if (e > 0) {
          traj_explained = true;
          const EnvData<T> te = t.env(m, r);
          std::fprintf(stderr,
                       "first trajectory step that differs: trajectory %d, step %d, qvel error "
                       "%.3e; constraint rows ours %d libmujoco %d, solver iterations ours %d "
                       "libmujoco %d\n",
                       r, s, e, static_cast<int>(te.nefc[0]), refs[r]->nefc,
                       static_cast<int>(te.solver_niter[0]), solver_iterations(refs[r]));
        }
      }
      e_traj_qpos = std::max(
          e_traj_qpos, abs_error(take(t, m, "qpos", r), {refs[r]->qpos, refs[r]->qpos + mm->nq}));
      e_traj_qvel = std::max(
          e_traj_qvel, abs_error(take(t, m, "qvel", r), {refs[r]->qvel, refs[r]->qvel + mm->nv}));
    }
  }
  for (mjData* r : refs) mj_deleteData(r);
  for (mjData* r : twins) mj_deleteData(r);
  mj_deleteModel(twin_model);

  // States from libmujoco's own trajectories under random controls (re-drawn every step), both
  // engines solving the constraints with Newton to a tight tolerance (whatever the model asks):
  // the contact set, the constraint rows, their forces, qacc and cfrc_ext.
  mjData* rd = mj_makeData(tight);
  Data<T> c(mt, 1);
  EnvData<T> e = c.env(mt, 0);
  int64_t sampled = 0, with_contacts = 0, contacts_seen = 0, rows_seen = 0, set_mismatch = 0,
          row_mismatch = 0;
  double e_dist = 0, e_cpos = 0, e_frame = 0, e_force = 0, e_cqacc = 0, e_cfrc = 0, e_csensor = 0,
         e_rowdata = 0;
  std::normal_distribution<double> n01(0.0, 1.0);
  // In float32, libmujoco's own sensitivity at each state: the same solve with qpos and qvel
  // moved one float32 ulp (up or down at random), against the unmoved one. A force or qacc that
  // moves far under that is one no float32 engine can be expected to reproduce; it is reported
  // beside the rows (the tolerance stays).
  mjData* sd = f32 ? mj_makeData(tight) : nullptr;
  std::mt19937 f32_ulp_gen(o.seed + 2);
  auto nudge_f32 = [&](mjtNum* v, int n) {
    for (int k = 0; k < n; ++k)
      v[k] = std::nextafter(static_cast<float>(v[k]), (f32_ulp_gen() & 1) ? INFINITY : -INFINITY);
  };
  double s_force = 0, s_qacc = 0, s_cpos = 0, s_frame = 0, s_cfrc = 0, s_dist = 0;
  int worst_nefc = 0, worst_iter = 0, worst_ref_iter = 0;
  for (int r = 0; r < o.trajectories; ++r) {
    mj_resetData(tight, rd);
    for (int k = 0; k < mm->nq; ++k) rd->qpos[k] += 0.1 * n01(gen);
    for (int k = 0; k < mm->nv; ++k) rd->qvel[k] = 0.1 * n01(gen);
    for (int s = 0; s < o.steps; ++s) {
      std::vector<double> qpos(mm->nq), qvel(mm->nv), ctrl(mm->nu);
      random_state(mm, gen, qpos.data(), qvel.data(), ctrl.data());
      std::copy(ctrl.begin(), ctrl.end(), rd->ctrl);
      mj_step(tight, rd);
      if (s % 5 != 4) continue;
      // The engine gets the state rounded to T; so does the reference.
      for (int k = 0; k < mm->nq; ++k) rd->qpos[k] = e.qpos[k] = static_cast<T>(rd->qpos[k]);
      for (int k = 0; k < mm->nv; ++k) rd->qvel[k] = e.qvel[k] = static_cast<T>(rd->qvel[k]);
      for (int k = 0; k < mm->nu; ++k) rd->ctrl[k] = e.ctrl[k] = static_cast<T>(rd->ctrl[k]);
      for (int k = 0; k < mm->nv; ++k) e.qacc_warmstart[k] = static_cast<T>(rd->qacc_warmstart[k]);
      e.time[0] = static_cast<T>(rd->time);  // the clock sensor reads it
      mj_forward(tight, rd);
      mj_rnePostConstraint(tight, rd);
      forward(mt, c);
      ++sampled;
      const int ncon = static_cast<int>(e.ncon[0]);
      const auto* con = reinterpret_cast<const collision::Contact<T>*>(e.contact);
      bool same_set = ncon == rd->ncon;
      for (int k = 0; same_set && k < ncon; ++k)
        same_set = con[k].geom1 == rd->contact[k].geom1 && con[k].geom2 == rd->contact[k].geom2;
      if (!same_set) {
        if (o.explain && set_mismatch == 0) {
          std::fprintf(stderr, "first contact set that differs (trajectory %d, step %d):\n", r, s);
          for (int k = 0; k < std::max(ncon, rd->ncon); ++k) {
            std::fprintf(stderr, "  %2d  ours:", k);
            if (k < ncon)
              std::fprintf(stderr, " geoms %d-%d dist %+.6e", con[k].geom1, con[k].geom2,
                           double(con[k].dist));
            else
              std::fprintf(stderr, " %33s", "-");
            std::fprintf(stderr, "   libmujoco:");
            if (k < rd->ncon)
              std::fprintf(stderr, " geoms %d-%d dist %+.6e", rd->contact[k].geom1,
                           rd->contact[k].geom2, rd->contact[k].dist);
            std::fprintf(stderr, "\n");
          }
        }
        ++set_mismatch;
        continue;
      }
      with_contacts += ncon > 0;
      contacts_seen += ncon;
      for (int k = 0; k < ncon; ++k) {
        const mjContact& rc = rd->contact[k];
        e_dist = std::max(e_dist, std::abs(double(con[k].dist) - rc.dist));
        for (int a = 0; a < 3; ++a)
          e_cpos = std::max(e_cpos, std::abs(double(con[k].pos[a]) - rc.pos[a]));
        for (int a = 0; a < 9; ++a)
          e_frame = std::max(e_frame, std::abs(double(con[k].frame[a]) - rc.frame[a]));
      }
      const int nefc = static_cast<int>(e.nefc[0]);
      bool same_rows = nefc == rd->nefc;
      for (int k = 0; same_rows && k < nefc; ++k)
        same_rows = static_cast<int>(e.efc_type[k]) == rd->efc_type[k];
      if (!same_rows) {
        ++row_mismatch;
        continue;
      }
      rows_seen += nefc;
      if (nefc > 0) {
        const std::vector<double> J(e.efc_J, e.efc_J + int64_t{nefc} * mm->nv);
        const std::vector<double> R(e.efc_R, e.efc_R + nefc), aref(e.efc_aref, e.efc_aref + nefc);
        std::vector<double> rJ(int64_t{nefc} * mm->nv);
        if (mj_isSparse(tight))
          mju_sparse2dense(rJ.data(), rd->efc_J, nefc, mm->nv, rd->efc_J_rownnz, rd->efc_J_rowadr,
                           rd->efc_J_colind);
        else
          rJ.assign(rd->efc_J, rd->efc_J + int64_t{nefc} * mm->nv);
        e_rowdata = std::max({e_rowdata, rel_to_largest(J.data(), rJ.data(), nefc * mm->nv),
                              rel_to_largest(R.data(), rd->efc_R, nefc),
                              rel_to_largest(aref.data(), rd->efc_aref, nefc)});
      }
      const std::vector<double> force(e.efc_force, e.efc_force + nefc);
      if (nefc > 0) {
        const double ef = rel_to_largest(force.data(), rd->efc_force, nefc);
        if (ef > e_force && o.explain) {
          std::fprintf(stderr, "worst efc_force so far (trajectory %d, step %d): %.3e\n", r, s, ef);
          for (int k = 0; k < nefc; ++k)
            std::fprintf(stderr,
                         "  row %d type %d  force ours %+.6e libmujoco %+.6e  aref %+.6e %+.6e  R "
                         "%.6e %.6e\n",
                         k, rd->efc_type[k], double(e.efc_force[k]), rd->efc_force[k],
                         double(e.efc_aref[k]), rd->efc_aref[k], double(e.efc_R[k]), rd->efc_R[k]);
          for (int k = 0; k < ncon; ++k)
            std::fprintf(stderr, "  contact %d geoms %d-%d dim %d dist %+.6e mu %.4g %.4g %.4g\n",
                         k, con[k].geom1, con[k].geom2, int(con[k].dim), double(con[k].dist),
                         double(con[k].friction[0]), double(con[k].friction[2]),
                         double(con[k].friction[3]));
        }
        if (ef > e_force) {
          worst_nefc = nefc;
          worst_iter = static_cast<int>(e.solver_niter[0]);
          worst_ref_iter = solver_iterations(rd);
        }
        e_force = std::max(e_force, ef);
      }
      if (sd && nefc > 0) {
        mj_copyData(sd, tight, rd);
        nudge_f32(sd->qpos, mm->nq);
        nudge_f32(sd->qvel, mm->nv);
        mj_forward(tight, sd);
        mj_rnePostConstraint(tight, sd);
        bool same = sd->nefc == rd->nefc && sd->ncon == rd->ncon;
        for (int k = 0; same && k < nefc; ++k) same = sd->efc_type[k] == rd->efc_type[k];
        if (same) {
          s_force = std::max(s_force, rel_to_largest(sd->efc_force, rd->efc_force, nefc));
          s_qacc = std::max(s_qacc, rel_to_largest(sd->qacc, rd->qacc, mm->nv));
          s_cfrc = std::max(s_cfrc, rel_to_largest(sd->cfrc_ext, rd->cfrc_ext, 6 * mm->nbody));
          for (int k = 0; k < sd->ncon; ++k) {
            s_dist = std::max(s_dist, std::abs(sd->contact[k].dist - rd->contact[k].dist));
            for (int a = 0; a < 9; ++a) {
              if (a < 3)
                s_cpos = std::max(s_cpos, std::abs(sd->contact[k].pos[a] - rd->contact[k].pos[a]));
              s_frame =
                  std::max(s_frame, std::abs(sd->contact[k].frame[a] - rd->contact[k].frame[a]));
            }
          }
        }
      }
      const std::vector<double> qacc(e.qacc, e.qacc + mm->nv);
      e_cqacc = std::max(e_cqacc, rel_to_largest(qacc.data(), rd->qacc, mm->nv));
      const std::vector<double> cfrc(e.cfrc_ext, e.cfrc_ext + 6 * mm->nbody);
      e_cfrc = std::max(e_cfrc, rel_to_largest(cfrc.data(), rd->cfrc_ext, 6 * mm->nbody));
      const std::vector<double> sens(e.sensordata, e.sensordata + mm->nsensordata);
      e_csensor = std::max(e_csensor, rel_to_largest(sens.data(), rd->sensordata, mm->nsensordata));
    }
  }
  mj_deleteData(rd);
  if (sd) mj_deleteData(sd);
  mj_deleteModel(tight);
  mj_deleteData(ref);
  if (moved_ref) mj_deleteData(moved_ref);
  // float32 trajectories drift from float64 libmujoco by rounding alone (chaotically on some
  // models), so they are reported, not judged. In float32 a contact right at the margin can be
  // in one set and not the other: up to 2% of the states may differ.
  // Past 1e-3 libmujoco no longer agrees with itself (the model is chaotic at this length): the
  // trajectories are then reported, not judged, and the row says so.
  const double fixed = o.trajectory_tolerance;
  const bool chaotic = std::max(twin_qpos, twin_qvel) > 1e-3;
  auto traj_tol = [&](double twin) {
    if (f32 || (chaotic && fixed <= 0)) return double(INFINITY);
    return fixed > 0 ? fixed : std::max(1e-6, 10 * twin);
  };
  const double traj_qpos_tol = traj_tol(twin_qpos), traj_qvel_tol = traj_tol(twin_qvel);
  const int from_keys = std::min(static_cast<int>(mm->nkey), o.trajectories / 2);
  char twin_detail[300];
  std::snprintf(twin_detail, sizeof twin_detail,
                "%s%slibmujoco against itself nudged one ulp per step%s: qpos %.2e, qvel %.2e",
                chaotic && !f32 && fixed <= 0 ? "not judged (chaotic at this length): " : "",
                from_keys > 0 ? (std::to_string(from_keys) + " from keyframes; ").c_str() : "",
                elliptic ? " and solving to 10x the tolerance" : "", twin_qpos, twin_qvel);
  const double set_tol = f32 ? std::floor(0.02 * static_cast<double>(sampled)) : 0;
  const double c_tol = f32 ? 1e-3 : 1e-6;
  const std::string on_states = std::to_string(sampled) + " states, " +
                                std::to_string(with_contacts) + " with contacts, " +
                                std::to_string(contacts_seen) + " contacts, " +
                                std::to_string(rows_seen) + " constraint rows";
  std::string force_detail, cqacc_detail, cpos_detail, frame_detail, dist_detail;
  auto moved = [](double v) {
    char buf[120];
    std::snprintf(buf, sizeof buf,
                  "libmujoco against itself, the state moved one float32 ulp: %.2e", v);
    return std::string(buf);
  };
  if (worst_nefc > 0) {
    char buf[300];
    std::snprintf(buf, sizeof buf, "worst state: %d rows, solver iterations ours %d libmujoco %d",
                  worst_nefc, worst_iter, worst_ref_iter);
    force_detail = buf;
  }
  const bool twin = f32 && rows_seen > 0;
  if (twin) {
    force_detail += (force_detail.empty() ? "" : "; ") + moved(s_force);
    cqacc_detail = moved(s_qacc);
    cpos_detail = moved(s_cpos);
    dist_detail = moved(s_dist);
    frame_detail = moved(s_frame);
  }
  // The random-state rows: libmujoco's own movement, and the states left out as ill-conditioned.
  for (CheckRow* row : {&qacc_row, &sensor_row}) {
    if (row == &sensor_row) row->detail = std::to_string(mm->nsensor) + " sensors";
    if (!f32) continue;
    row->detail += (row->detail.empty() ? "" : "; ") + moved(row->self_error);
    if (row->ill_conditioned > 0) {
      char buf[240];
      std::snprintf(buf, sizeof buf,
                    "; %d of %d states left out, libmujoco moving itself more than the "
                    "tolerance there (worst: ours %.2e, libmujoco's own %.2e)",
                    row->ill_conditioned, o.samples, row->ill_conditioned_error,
                    row->ill_conditioned_self);
      row->detail += buf;
    }
  }
  auto self = [&](double v) { return twin ? v : -1.0; };
  return {{"xpos", e_xpos, "absolute", kin_tol},
          {"xmat", e_xquat, "absolute", kin_tol},
          {"geom_xpos", e_geom, "absolute", kin_tol},
          {"qM", e_mass, "relative", acc_tol},
          {"qfrc_bias", e_bias, "relative", acc_tol},
          qacc_row,
          sensor_row,
          {"trajectory qpos (" + std::to_string(o.steps) + " steps)", e_traj_qpos, "absolute",
           traj_qpos_tol, twin_detail},
          {"trajectory qvel (" + std::to_string(o.steps) + " steps)", e_traj_qvel, "absolute",
           traj_qvel_tol, twin_detail},
          {"contact set differs", double(set_mismatch), "states", set_tol, on_states},
          {"contact dist", e_dist, "absolute", kin_tol, dist_detail, self(s_dist)},
          {"contact pos", e_cpos, "absolute", f32 ? 1e-4 : kin_tol, cpos_detail, self(s_cpos)},
          {"contact frame", e_frame, "absolute", f32 ? 1e-4 : kin_tol, frame_detail, self(s_frame)},
          {"constraint rows differ", double(row_mismatch), "states", set_tol},
          {"efc_J, efc_R, efc_aref", e_rowdata, "of largest", f32 ? double(INFINITY) : c_tol},
          {"efc_force", e_force, "of largest", c_tol, force_detail, self(s_force)},
          {"qacc with constraints", e_cqacc, "of largest", c_tol, cqacc_detail, self(s_qacc)},
          {"cfrc_ext", e_cfrc, "of largest", c_tol, twin ? moved(s_cfrc) : "", self(s_cfrc)},
          {"sensordata with constraints", e_csensor, "of largest", c_tol}};
}

}  // namespace
std::vector<CheckRow> check_against_mujoco(const std::string& path, const CheckOptions& o) {
  MjModelHandle handle(path);
  Model<double> md;
  try {
    md = import_model(handle.get());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("'" + path + "': " + e.what());
  }
  // Myriad solves every model with Newton; so does the reference (a PGS or CG model's optimum is
  // the same convex problem, solved to the model's tolerance by another method).
  mjModel* reference = mj_copyModel(nullptr, handle.get());
  reference->opt.solver = mjSOL_NEWTON;
  std::vector<CheckRow> rows;
  try {
    rows = o.float32 ? run<float>(reference, md, o) : run<double>(reference, md, o);
  } catch (...) {
    mj_deleteModel(reference);
    throw;
  }
  mj_deleteModel(reference);
  return rows;
}

std::string mujoco_version() { return mj_versionString(); }

const CheckRow* worst_failure(const std::vector<CheckRow>& rows) {
  const CheckRow* worst = nullptr;
  double worst_ratio = 0;
  for (const CheckRow& r : rows) {
    if (r.ok()) continue;
    double ratio = r.tolerance > 0 ? r.max_error / r.tolerance : INFINITY;
    if (!r.ill_conditioned_ok())  // ours against twice libmujoco's own movement there
      ratio = std::max(ratio, r.ill_conditioned_error / (2 * r.ill_conditioned_self));
    if (!worst || ratio > worst_ratio) {
      worst = &r;
      worst_ratio = ratio;
    }
  }
  return worst;
}

}  // namespace myriad::physics
