// The project's own MJCF models (envs/locomotion/models/*.xml) against Gymnasium's published
// MuJoCo v5 assets, both compiled with libmujoco 2.2.2: the compiled mjModels must agree in every
// size, every physics option, every numeric array that affects dynamics or observations (to 1e-12
// relative; integers exactly), the model statistics, and the names of bodies, joints, geoms,
// sites, tendons and actuators. Visual-only data (lights, cameras, textures, materials, colours)
// is not compared: our files leave it out. Each model must also load from its text alone, through
// an otherwise empty virtual file system, since the engine embeds the models in its binary.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>

#include "physics/mujoco_compat.h"

namespace {

struct ModelPair {
  const char* ours;  // file in envs/locomotion/models/
  const char* gym;   // file in gymnasium/envs/mujoco/assets/
};

const ModelPair kModels[] = {
    {"hopper.xml", "hopper.xml"},
    {"half_cheetah.xml", "half_cheetah.xml"},
    {"walker2d.xml", "walker2d_v5.xml"},
    {"ant.xml", "ant.xml"},
    {"humanoid.xml", "humanoid.xml"},
    {"inverted_pendulum.xml", "inverted_pendulum.xml"},
    {"inverted_double_pendulum.xml", "inverted_double_pendulum.xml"},
    {"reacher.xml", "reacher.xml"},
};

// gtest names the parameter by the files rather than by its bytes.
void PrintTo(const ModelPair& p, std::ostream* os) { *os << p.ours << " vs Gymnasium's " << p.gym; }

constexpr double kRelTol = 1e-12;

// Sizes that decide the layout of the model and of mjData. (nnames, nbuffer, ncam, nlight,
// ntex, nmat... count visual objects and their names, which our files leave out.)
#define MYRIAD_MODEL_SIZES(X) \
  X(nq)                       \
  X(nv)                       \
  X(nu)                       \
  X(na)                       \
  X(nbody)                    \
  X(njnt)                     \
  X(ngeom)                    \
  X(nsite)                    \
  X(nmesh)                    \
  X(nmeshvert)                \
  X(nhfield)                  \
  X(nskin)                    \
  X(npair)                    \
  X(nexclude)                 \
  X(neq)                      \
  X(ntendon)                  \
  X(nwrap)                    \
  X(nsensor)                  \
  X(nnumeric)                 \
  X(nnumericdata)             \
  X(ntext)                    \
  X(ntextdata)                \
  X(ntuple)                   \
  X(ntupledata)               \
  X(nkey)                     \
  X(nmocap)                   \
  X(nuser_body)               \
  X(nuser_jnt)                \
  X(nuser_geom)               \
  X(nuser_site)               \
  X(nuser_tendon)             \
  X(nuser_actuator)           \
  X(nuser_sensor)             \
  X(nM)                       \
  X(nD)                       \
  X(nemax)                    \
  X(njmax)                    \
  X(nconmax)                  \
  X(narena)                   \
  X(nuserdata)                \
  X(nsensordata)

// Physics options: X(field, count) for m.opt.field[0..count) (count 1: a scalar).
#define MYRIAD_MODEL_OPTIONS_OF_VERSION(X) \
  X(ccd_tolerance, 1)                      \
  X(ccd_iterations, 1)                     \
  X(ls_tolerance, 1)                       \
  X(ls_iterations, 1)
#define MYRIAD_MODEL_OPTIONS(X)      \
  MYRIAD_MODEL_OPTIONS_OF_VERSION(X) \
  X(timestep, 1)                     \
  X(impratio, 1)                     \
  X(tolerance, 1)                    \
  X(noslip_tolerance, 1)             \
  X(gravity, 3)                      \
  X(wind, 3)                         \
  X(magnetic, 3)                     \
  X(density, 1)                      \
  X(viscosity, 1)                    \
  X(o_margin, 1)                     \
  X(o_solref, mjNREF)                \
  X(o_solimp, mjNIMP)                \
  X(integrator, 1)                   \
  X(cone, 1)                         \
  X(jacobian, 1)                     \
  X(solver, 1)                       \
  X(iterations, 1)                   \
  X(noslip_iterations, 1)            \
  X(disableflags, 1)                 \
  X(enableflags, 1)

// Model statistics (used by the solver's scaling and by the viewer's framing).
#define MYRIAD_MODEL_STATS(X) \
  X(meaninertia, 1)           \
  X(meanmass, 1)              \
  X(meansize, 1)              \
  X(extent, 1)                \
  X(center, 3)

// Arrays: X(field, rows, columns), the array m.field holding m.rows x (columns) numbers; columns
// is an expression in m.
#define MYRIAD_MODEL_ARRAYS(X)            \
  X(qpos0, nq, 1)                         \
  X(qpos_spring, nq, 1)                   \
  X(body_parentid, nbody, 1)              \
  X(body_rootid, nbody, 1)                \
  X(body_weldid, nbody, 1)                \
  X(body_mocapid, nbody, 1)               \
  X(body_jntnum, nbody, 1)                \
  X(body_jntadr, nbody, 1)                \
  X(body_dofnum, nbody, 1)                \
  X(body_dofadr, nbody, 1)                \
  X(body_geomnum, nbody, 1)               \
  X(body_geomadr, nbody, 1)               \
  X(body_simple, nbody, 1)                \
  X(body_sameframe, nbody, 1)             \
  X(body_pos, nbody, 3)                   \
  X(body_quat, nbody, 4)                  \
  X(body_ipos, nbody, 3)                  \
  X(body_iquat, nbody, 4)                 \
  X(body_mass, nbody, 1)                  \
  X(body_subtreemass, nbody, 1)           \
  X(body_inertia, nbody, 3)               \
  X(body_invweight0, nbody, 2)            \
  X(body_user, nbody, m.nuser_body)       \
  X(jnt_type, njnt, 1)                    \
  X(jnt_qposadr, njnt, 1)                 \
  X(jnt_dofadr, njnt, 1)                  \
  X(jnt_bodyid, njnt, 1)                  \
  X(jnt_limited, njnt, 1)                 \
  X(jnt_solref, njnt, mjNREF)             \
  X(jnt_solimp, njnt, mjNIMP)             \
  X(jnt_pos, njnt, 3)                     \
  X(jnt_axis, njnt, 3)                    \
  X(jnt_stiffness, njnt, 1)               \
  X(jnt_range, njnt, 2)                   \
  X(jnt_margin, njnt, 1)                  \
  X(jnt_user, njnt, m.nuser_jnt)          \
  X(dof_bodyid, nv, 1)                    \
  X(dof_jntid, nv, 1)                     \
  X(dof_parentid, nv, 1)                  \
  X(dof_Madr, nv, 1)                      \
  X(dof_simplenum, nv, 1)                 \
  X(dof_solref, nv, mjNREF)               \
  X(dof_solimp, nv, mjNIMP)               \
  X(dof_frictionloss, nv, 1)              \
  X(dof_armature, nv, 1)                  \
  X(dof_damping, nv, 1)                   \
  X(dof_invweight0, nv, 1)                \
  X(dof_M0, nv, 1)                        \
  X(geom_type, ngeom, 1)                  \
  X(geom_contype, ngeom, 1)               \
  X(geom_conaffinity, ngeom, 1)           \
  X(geom_condim, ngeom, 1)                \
  X(geom_bodyid, ngeom, 1)                \
  X(geom_dataid, ngeom, 1)                \
  X(geom_priority, ngeom, 1)              \
  X(geom_sameframe, ngeom, 1)             \
  X(geom_solmix, ngeom, 1)                \
  X(geom_solref, ngeom, mjNREF)           \
  X(geom_solimp, ngeom, mjNIMP)           \
  X(geom_size, ngeom, 3)                  \
  X(geom_rbound, ngeom, 1)                \
  X(geom_pos, ngeom, 3)                   \
  X(geom_quat, ngeom, 4)                  \
  X(geom_friction, ngeom, 3)              \
  X(geom_margin, ngeom, 1)                \
  X(geom_gap, ngeom, 1)                   \
  X(geom_fluid, ngeom, mjNFLUID)          \
  X(geom_user, ngeom, m.nuser_geom)       \
  X(site_type, nsite, 1)                  \
  X(site_bodyid, nsite, 1)                \
  X(site_sameframe, nsite, 1)             \
  X(site_size, nsite, 3)                  \
  X(site_pos, nsite, 3)                   \
  X(site_quat, nsite, 4)                  \
  X(site_user, nsite, m.nuser_site)       \
  X(pair_dim, npair, 1)                   \
  X(pair_geom1, npair, 1)                 \
  X(pair_geom2, npair, 1)                 \
  X(pair_solref, npair, mjNREF)           \
  X(pair_solimp, npair, mjNIMP)           \
  X(pair_margin, npair, 1)                \
  X(pair_gap, npair, 1)                   \
  X(pair_friction, npair, 5)              \
  X(exclude_signature, nexclude, 1)       \
  X(eq_type, neq, 1)                      \
  X(eq_obj1id, neq, 1)                    \
  X(eq_obj2id, neq, 1)                    \
  X(eq_active0, neq, 1)                   \
  X(eq_solref, neq, mjNREF)               \
  X(eq_solimp, neq, mjNIMP)               \
  X(eq_data, neq, mjNEQDATA)              \
  X(tendon_adr, ntendon, 1)               \
  X(tendon_num, ntendon, 1)               \
  X(tendon_limited, ntendon, 1)           \
  X(tendon_solref_lim, ntendon, mjNREF)   \
  X(tendon_solimp_lim, ntendon, mjNIMP)   \
  X(tendon_solref_fri, ntendon, mjNREF)   \
  X(tendon_solimp_fri, ntendon, mjNIMP)   \
  X(tendon_range, ntendon, 2)             \
  X(tendon_margin, ntendon, 1)            \
  X(tendon_stiffness, ntendon, 1)         \
  X(tendon_damping, ntendon, 1)           \
  X(tendon_frictionloss, ntendon, 1)      \
  X(tendon_lengthspring, ntendon, 1)      \
  X(tendon_length0, ntendon, 1)           \
  X(tendon_invweight0, ntendon, 1)        \
  X(tendon_user, ntendon, m.nuser_tendon) \
  X(wrap_type, nwrap, 1)                  \
  X(wrap_objid, nwrap, 1)                 \
  X(wrap_prm, nwrap, 1)                   \
  X(actuator_trntype, nu, 1)              \
  X(actuator_dyntype, nu, 1)              \
  X(actuator_gaintype, nu, 1)             \
  X(actuator_biastype, nu, 1)             \
  X(actuator_trnid, nu, 2)                \
  X(actuator_ctrllimited, nu, 1)          \
  X(actuator_forcelimited, nu, 1)         \
  X(actuator_actlimited, nu, 1)           \
  X(actuator_dynprm, nu, mjNDYN)          \
  X(actuator_gainprm, nu, mjNGAIN)        \
  X(actuator_biasprm, nu, mjNBIAS)        \
  X(actuator_ctrlrange, nu, 2)            \
  X(actuator_forcerange, nu, 2)           \
  X(actuator_actrange, nu, 2)             \
  X(actuator_gear, nu, 6)                 \
  X(actuator_cranklength, nu, 1)          \
  X(actuator_acc0, nu, 1)                 \
  X(actuator_length0, nu, 1)              \
  X(actuator_lengthrange, nu, 2)          \
  X(actuator_user, nu, m.nuser_actuator)  \
  X(sensor_type, nsensor, 1)              \
  X(sensor_objtype, nsensor, 1)           \
  X(sensor_objid, nsensor, 1)             \
  X(sensor_dim, nsensor, 1)               \
  X(sensor_adr, nsensor, 1)               \
  X(sensor_cutoff, nsensor, 1)            \
  X(sensor_noise, nsensor, 1)             \
  X(numeric_adr, nnumeric, 1)             \
  X(numeric_size, nnumeric, 1)            \
  X(numeric_data, nnumericdata, 1)        \
  X(key_time, nkey, 1)                    \
  X(key_qpos, nkey, m.nq)                 \
  X(key_qvel, nkey, m.nv)                 \
  X(key_act, nkey, m.na)                  \
  X(key_ctrl, nkey, m.nu)

// Named objects whose names the environments look up or report.
#define MYRIAD_MODEL_NAMES(X) \
  X(mjOBJ_BODY, nbody)        \
  X(mjOBJ_JOINT, njnt)        \
  X(mjOBJ_GEOM, ngeom)        \
  X(mjOBJ_SITE, nsite)        \
  X(mjOBJ_TENDON, ntendon)    \
  X(mjOBJ_ACTUATOR, nu)       \
  X(mjOBJ_NUMERIC, nnumeric)

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;

std::string source_dir() {
  if (const char* env = std::getenv("MYRIAD_SOURCE_DIR")) return env;
  return MYRIAD_SOURCE_DIR_DEFAULT;
}

std::string our_path(const ModelPair& p) {
  return source_dir() + "/envs/locomotion/models/" + p.ours;
}

std::string gym_path(const ModelPair& p) { return std::string(MYRIAD_GYM_ASSETS) + "/" + p.gym; }

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ModelPtr load(const std::string& path, std::string* error) {
  char err[1024] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, err, sizeof err);
  *error = err;
  return ModelPtr(m);
}

// Compiles an MJCF text through a virtual file system that holds nothing but it.
ModelPtr load_from_string(const std::string& text, std::string* error) {
  auto vfs = std::make_unique<mjVFS>();  // large (fixed name table): keep it off the stack
  mj_defaultVFS(vfs.get());
  const char* name = "myriad_embedded_model.xml";
  if (myriad::physics::vfs_add_text(vfs.get(), name, text.data(), static_cast<int>(text.size())) !=
      0) {
    *error = "adding the model to the virtual file system failed";
    return nullptr;
  }
  char err[1024] = "";
  mjModel* m = mj_loadXML(name, vfs.get(), err, sizeof err);
  mj_deleteVFS(vfs.get());
  *error = err;
  return ModelPtr(m);
}

bool agree(double a, double b) {
  if (a == b) return true;
  if (!std::isfinite(a) || !std::isfinite(b)) return false;
  return std::fabs(a - b) <= kRelTol * std::max(std::fabs(a), std::fabs(b));
}

// Compares n numbers; on a difference, one failure naming model, field, index and both values.
template <typename T>
void expect_same(const std::string& model, const char* field, const T* ours, const T* gym, int n) {
  for (int i = 0; i < n; ++i) {
    const double a = static_cast<double>(ours[i]);
    const double b = static_cast<double>(gym[i]);
    if (!agree(a, b)) {
      std::ostringstream msg;
      msg.precision(17);
      msg << model << ": " << field << "[" << i << "] is " << a << " (ours) vs " << b
          << " (Gymnasium); difference " << a - b << " (of " << n << " values)";
      ADD_FAILURE() << msg.str();
      return;
    }
  }
}

// The numbers of an option or statistic, scalar or array alike.
template <typename T>
const T* numbers(const T& x) {
  return &x;
}
template <typename T, std::size_t N>
const T* numbers(const T (&x)[N]) {
  return x;
}

std::string name_or_unnamed(const mjModel& m, mjtObj type, int id) {
  const char* name = mj_id2name(&m, type, id);
  return name ? "\"" + std::string(name) + "\"" : "(unnamed)";
}

// Everything the file comment lists. Sizes are checked first: arrays are compared only when the
// sizes that shape them agree.
void expect_same_model(const std::string& label, const mjModel& m, const mjModel& g) {
  bool sizes_agree = true;
#define MYRIAD_CHECK_SIZE(f)                                                     \
  if (m.f != g.f) {                                                              \
    sizes_agree = false;                                                         \
    ADD_FAILURE() << label << ": size " #f " is " << m.f << " (ours) vs " << g.f \
                  << " (Gymnasium)";                                             \
  }
  MYRIAD_MODEL_SIZES(MYRIAD_CHECK_SIZE)
#undef MYRIAD_CHECK_SIZE
  if (!sizes_agree) return;

#define MYRIAD_CHECK_OPTION(f, n) \
  expect_same(label, "opt." #f, numbers(m.opt.f), numbers(g.opt.f), n);
  MYRIAD_MODEL_OPTIONS(MYRIAD_CHECK_OPTION)
#undef MYRIAD_CHECK_OPTION

#define MYRIAD_CHECK_STAT(f, n) \
  expect_same(label, "stat." #f, numbers(m.stat.f), numbers(g.stat.f), n);
  MYRIAD_MODEL_STATS(MYRIAD_CHECK_STAT)
#undef MYRIAD_CHECK_STAT

#define MYRIAD_CHECK_ARRAY(f, rows, cols) expect_same(label, #f, m.f, g.f, m.rows*(cols));
  MYRIAD_MODEL_ARRAYS(MYRIAD_CHECK_ARRAY)
#undef MYRIAD_CHECK_ARRAY

#define MYRIAD_CHECK_NAMES(type, count)                                                        \
  for (int i = 0; i < m.count; ++i) {                                                          \
    const std::string a = name_or_unnamed(m, type, i), b = name_or_unnamed(g, type, i);        \
    if (a != b) {                                                                              \
      ADD_FAILURE() << label << ": " #type " " << i << " is named " << a << " (ours) vs " << b \
                    << " (Gymnasium)";                                                         \
      break;                                                                                   \
    }                                                                                          \
  }
  MYRIAD_MODEL_NAMES(MYRIAD_CHECK_NAMES)
#undef MYRIAD_CHECK_NAMES
}

class LocomotionModel : public testing::TestWithParam<ModelPair> {};

std::string param_name(const testing::TestParamInfo<ModelPair>& info) {
  std::string s = info.param.ours;
  return s.substr(0, s.find('.'));
}

TEST_P(LocomotionModel, CompilesToGymnasiumsModel) {
  const ModelPair& p = GetParam();
  const std::string gym_file = gym_path(p);
  if (!file_exists(gym_file))
    GTEST_SKIP() << "Gymnasium's asset not found: " << gym_file
                 << " (install gymnasium in the project's venv)";
  std::string error;
  const ModelPtr ours = load(our_path(p), &error);
  ASSERT_TRUE(ours) << our_path(p) << ": " << error;
  const ModelPtr gym = load(gym_file, &error);
  ASSERT_TRUE(gym) << gym_file << ": " << error;
  expect_same_model(p.ours, *ours, *gym);
}

TEST_P(LocomotionModel, LoadsFromItsTextAlone) {
  const ModelPair& p = GetParam();
  const std::string text = read_file(our_path(p));
  ASSERT_FALSE(text.empty()) << our_path(p);
  // No asset files (meshes, textures, heightfields, includes) to carry along.
  EXPECT_EQ(text.find("file="), std::string::npos) << p.ours << " references a file";
  EXPECT_EQ(text.find("<include"), std::string::npos) << p.ours << " includes a file";
  std::string error;
  const ModelPtr from_text = load_from_string(text, &error);
  ASSERT_TRUE(from_text) << p.ours << " from its text alone: " << error;
  const ModelPtr from_file = load(our_path(p), &error);
  ASSERT_TRUE(from_file) << our_path(p) << ": " << error;
  expect_same_model(std::string(p.ours) + " (from text)", *from_text, *from_file);
}

INSTANTIATE_TEST_SUITE_P(Gymnasium, LocomotionModel, testing::ValuesIn(kModels), param_name);

}  // namespace
