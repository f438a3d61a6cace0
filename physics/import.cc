#include "myriad/physics/import.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <mutex>
#include <regex>
#include <set>
#include <stdexcept>

#include "myriad/physics/mujoco_messages.h"
#include "physics/collision/collide.h"
#include "physics/constraint/make.h"
#include "physics/constraint/solve.h"
#include "physics/model_numbers.h"
#include "physics/model_view.h"
#include "physics/mujoco_compat.h"
#include "physics/scene_edits.h"
#include "physics/sensor.h"

namespace myriad::physics {
namespace {

// The engine's headers include no MuJoCo header (they compile for CUDA too), so they spell the
// option bits they read themselves; these must be the pinned MuJoCo's.
static_assert(constraint::kDisableConstraint == mjDSBL_CONSTRAINT &&
                  constraint::kDisableEquality == mjDSBL_EQUALITY &&
                  constraint::kDisableFrictionLoss == mjDSBL_FRICTIONLOSS &&
                  constraint::kDisableLimit == mjDSBL_LIMIT &&
                  constraint::kDisableContact == mjDSBL_CONTACT &&
                  constraint::kDisableRefSafe == mjDSBL_REFSAFE &&
                  constraint::kDisableWarmstart == mjDSBL_WARMSTART &&
                  constraint::kDisableIsland == mjDSBL_ISLAND &&
                  collision::kDisableConstraint == mjDSBL_CONSTRAINT &&
                  collision::kDisableContact == mjDSBL_CONTACT &&
                  collision::kDisableFilterParent == mjDSBL_FILTERPARENT &&
                  collision::kDisableMidphase == mjDSBL_MIDPHASE &&
                  collision::kEnableOverride == mjENBL_OVERRIDE,
              "option bits differ from MuJoCo's (mjtDisableBit, mjtEnableBit)");

// The sensor types physics/sensor.h computes; the enum's values are mjtSensor's.
static_assert(
    int(kSensTouch) == mjSENS_TOUCH && int(kSensRangefinder) == mjSENS_RANGEFINDER &&
        int(kSensAccelerometer) == mjSENS_ACCELEROMETER &&
        int(kSensVelocimeter) == mjSENS_VELOCIMETER && int(kSensGyro) == mjSENS_GYRO &&
        int(kSensForce) == mjSENS_FORCE && int(kSensTorque) == mjSENS_TORQUE &&
        int(kSensMagnetometer) == mjSENS_MAGNETOMETER && int(kSensJointPos) == mjSENS_JOINTPOS &&
        int(kSensJointVel) == mjSENS_JOINTVEL && int(kSensTendonPos) == mjSENS_TENDONPOS &&
        int(kSensTendonVel) == mjSENS_TENDONVEL && int(kSensActuatorFrc) == mjSENS_ACTUATORFRC &&
        int(kSensJointActFrc) == mjSENS_JOINTACTFRC && int(kSensBallQuat) == mjSENS_BALLQUAT &&
        int(kSensBallAngVel) == mjSENS_BALLANGVEL && int(kSensFramePos) == mjSENS_FRAMEPOS &&
        int(kSensFrameQuat) == mjSENS_FRAMEQUAT && int(kSensFrameXAxis) == mjSENS_FRAMEXAXIS &&
        int(kSensFrameYAxis) == mjSENS_FRAMEYAXIS && int(kSensFrameZAxis) == mjSENS_FRAMEZAXIS &&
        int(kSensFrameLinVel) == mjSENS_FRAMELINVEL &&
        int(kSensFrameAngVel) == mjSENS_FRAMEANGVEL &&
        int(kSensFrameLinAcc) == mjSENS_FRAMELINACC &&
        int(kSensFrameAngAcc) == mjSENS_FRAMEANGACC && int(kSensSubtreeCom) == mjSENS_SUBTREECOM &&
        int(kSensSubtreeLinVel) == mjSENS_SUBTREELINVEL &&
        int(kSensSubtreeAngMom) == mjSENS_SUBTREEANGMOM && int(kSensClock) == mjSENS_CLOCK &&
        int(kObjBody) == mjOBJ_BODY && int(kObjXBody) == mjOBJ_XBODY &&
        int(kObjGeom) == mjOBJ_GEOM && int(kObjSite) == mjOBJ_SITE &&
        int(kDataReal) == mjDATATYPE_REAL && int(kDataPositive) == mjDATATYPE_POSITIVE,
    "sensor enums differ from MuJoCo's (mjtSensor, mjtObj, mjtDataType)");

std::string name_of(const mjModel* m, int adr) {
  const char* s = m->names + adr;
  return *s ? std::string(s) : std::string("<unnamed>");
}

[[noreturn]] void refuse(const std::string& what) {
  throw std::invalid_argument("unsupported model feature: " + what);
}

// MJCF's name of a sensor type (the element that declares it).
std::string sensor_element(int type) {
  switch (type) {
    case mjSENS_TOUCH:
      return "touch";
    case mjSENS_RANGEFINDER:
      return "rangefinder";
    case mjSENS_CAMPROJECTION:
      return "camprojection";
    case mjSENS_ACTUATORPOS:
      return "actuatorpos";
    case mjSENS_ACTUATORVEL:
      return "actuatorvel";
    case mjSENS_TENDONACTFRC:
      return "tendonactuatorfrc";
    case mjSENS_JOINTLIMITPOS:
      return "jointlimitpos";
    case mjSENS_JOINTLIMITVEL:
      return "jointlimitvel";
    case mjSENS_JOINTLIMITFRC:
      return "jointlimitfrc";
    case mjSENS_TENDONLIMITPOS:
      return "tendonlimitpos";
    case mjSENS_TENDONLIMITVEL:
      return "tendonlimitvel";
    case mjSENS_TENDONLIMITFRC:
      return "tendonlimitfrc";
    case mjSENS_INSIDESITE:
      return "insidesite";
    case mjSENS_GEOMDIST:
      return "distance";
    case mjSENS_GEOMNORMAL:
      return "normal";
    case mjSENS_GEOMFROMTO:
      return "fromto";
    case mjSENS_CONTACT:
      return "contact";
    case mjSENS_E_POTENTIAL:
      return "e_potential";
    case mjSENS_E_KINETIC:
      return "e_kinetic";
    case mjSENS_TACTILE:
      return "tactile";
    case mjSENS_PLUGIN:
      return "plugin";
    case mjSENS_USER:
      return "user";
    default:
      return "type " + std::to_string(type);
  }
}

// Whether mj_ray sees geom g: the alpha of its material's colour, or of its own without one, is
// not 0.
bool geom_ray_visible(const mjModel* m, int g) {
  const int mat = m->geom_matid[g];
  return mat >= 0 ? m->mat_rgba[4 * mat + 3] != 0 : m->geom_rgba[4 * g + 3] != 0;
}

// Sensors physics/sensor.h does not compute, or computes differently, are refused by name.
void refuse_unsupported_sensors(const mjModel* m) {
  static const int kSupported[] = {
      mjSENS_TOUCH,       mjSENS_RANGEFINDER, mjSENS_ACCELEROMETER, mjSENS_VELOCIMETER,
      mjSENS_GYRO,        mjSENS_FORCE,       mjSENS_TORQUE,        mjSENS_MAGNETOMETER,
      mjSENS_JOINTPOS,    mjSENS_JOINTVEL,    mjSENS_TENDONPOS,     mjSENS_TENDONVEL,
      mjSENS_ACTUATORFRC, mjSENS_JOINTACTFRC, mjSENS_BALLQUAT,      mjSENS_BALLANGVEL,
      mjSENS_FRAMEPOS,    mjSENS_FRAMEQUAT,   mjSENS_FRAMEXAXIS,    mjSENS_FRAMEYAXIS,
      mjSENS_FRAMEZAXIS,  mjSENS_FRAMELINVEL, mjSENS_FRAMEANGVEL,   mjSENS_FRAMELINACC,
      mjSENS_FRAMEANGACC, mjSENS_SUBTREECOM,  mjSENS_SUBTREELINVEL, mjSENS_SUBTREEANGMOM,
      mjSENS_CLOCK};
  for (int s = 0; s < m->nsensor; ++s) {
    const std::string name = "sensor '" + name_of(m, m->name_sensoradr[s]) + "'";
    const int type = m->sensor_type[s];
    if (std::find(std::begin(kSupported), std::end(kSupported), type) == std::end(kSupported))
      refuse(sensor_element(type) + " sensors (" + name + ")");
    for (int o : {m->sensor_objtype[s], m->sensor_reftype[s]})
      if (o == mjOBJ_CAMERA) refuse("sensors of a camera frame (" + name + ")");
    if (m->sensor_delay[s] > 0 || m->sensor_interval[2 * s] > 0 || m->sensor_history[2 * s] > 0)
      refuse("delayed, sampled or buffered sensors (delay, interval, nsample; " + name + ")");
    // A rangefinder gives the distance (or, from a site, the equal depth) only; it sees every
    // visible geom, and meshes are not ray-cast here (physics/ray.h).
    if (type == mjSENS_RANGEFINDER) {
      const int data = m->sensor_intprm[mjNSENS * s];
      if ((data != (1 << mjRAYDATA_DIST) && data != (1 << mjRAYDATA_DEPTH)) ||
          m->sensor_dim[s] != 1)
        refuse("rangefinder data other than dist or depth (" + name +
               "; its data= asks for direction, origin, point or normal)");
      for (int g = 0; g < m->ngeom; ++g)
        if (m->geom_type[g] == mjGEOM_MESH && geom_ray_visible(m, g) &&
            m->geom_bodyid[g] != m->site_bodyid[m->sensor_objid[s]])
          refuse("rangefinder sensors in a model with visible mesh geoms (" + name + ", geom " +
                 std::to_string(g) + " '" + name_of(m, m->name_geomadr[g]) + "', mesh '" +
                 name_of(m, m->name_meshadr[m->geom_dataid[g]]) +
                 "'; meshes are not ray-cast: hide the mesh from rays with rgba alpha 0, or "
                 "its material's alpha 0 when it has a material)");
    }
  }
}

// The candidate geom pairs (collision::collision_pairs), refusing geoms and condims not
// supported here by name, and the per-env bounds on contacts and constraint rows they imply.
void candidate_pairs(const mjModel* m, Model<double>& r) {
  const collision::CollisionModel<double> cm = collision::collision_model<double>(view_of(r));
  const int n = collision::collision_pairs(cm, nullptr, 0);
  std::vector<collision::CollisionPair> pairs(n);
  collision::collision_pairs(cm, pairs.data(), n);
  const int bad = collision::first_unsupported_pair(cm, pairs.data(), n);
  if (bad >= 0) {
    const int g1 = pairs[bad].geom1, g2 = pairs[bad].geom2;
    const int t1 = m->geom_type[g1], t2 = m->geom_type[g2];
    // Name the geom whose type has no pair function here (of a height-field pair, the other).
    const int g = t1 == mjGEOM_HFIELD || !collision::geom_type_supported(t2) ? g2 : g1;
    const bool with_hfield = t1 == mjGEOM_HFIELD || t2 == mjGEOM_HFIELD;
    refuse(std::string(collision::geom_type_name(m->geom_type[g])) + " collisions (geom '" +
           name_of(m, m->name_geomadr[g]) + "'" +
           (with_hfield ? " with height field '" +
                              name_of(m, m->name_geomadr[t1 == mjGEOM_HFIELD ? g1 : g2]) + "'"
                        : std::string()) +
           "; supported: plane, sphere, capsule, ellipsoid, cylinder and box among themselves and "
           "with a height field; or set its contype and conaffinity to 0)");
  }
  // Pairs through GJK/EPA (height fields, and ellipsoids and cylinders among the convex geoms).
  int ccd_pairs = 0;
  std::string first_ccd;
  for (const collision::CollisionPair& p : pairs) {
    const int t1 = m->geom_type[p.geom1], t2 = m->geom_type[p.geom2];
    if (t1 == mjGEOM_HFIELD || collision::pair_uses_ccd(t1, t2)) {
      if (ccd_pairs++ == 0)
        first_ccd = "geoms '" + name_of(m, m->name_geomadr[p.geom1]) + "' and '" +
                    name_of(m, m->name_geomadr[p.geom2]) + "'";
    }
  }
  if (ccd_pairs > 0 && m->opt.ccd_iterations > collision::ccd::kCcdMaxIterations)
    refuse("ccd_iterations " + std::to_string(m->opt.ccd_iterations) +
           " with GJK/EPA collisions (" + first_ccd + "; at most " +
           std::to_string(collision::ccd::kCcdMaxIterations) +
           ": the GJK/EPA polytope has a fixed size)");
  if (ccd_pairs > 0 && (m->opt.disableflags & mjDSBL_NATIVECCD))
    refuse("option flag nativeccd disabled with GJK/EPA collisions (" + first_ccd +
           "; libccd's MPR is not ported: leave nativeccd enabled)");
  r.nccd_pairs = ccd_pairs;
  int nefc = 0;
  for (int i = 0; i < m->nv; ++i) nefc += r.dof_frictionloss[i] > 0;
  for (int j = 0; j < m->njnt; ++j) nefc += r.jnt_limited[j] ? 2 : 0;
  for (int t = 0; t < m->ntendon; ++t)
    nefc += (r.tendon_frictionloss[t] > 0) + (r.tendon_limited[t] ? 2 : 0);
  for (const collision::CollisionPair& p : pairs) {
    const int condim = collision::pair_params(cm, p).condim;
    if (condim != 1 && condim != 3 && condim != 4 && condim != 6)
      refuse("condim " + std::to_string(condim) + " (geoms '" +
             name_of(m, m->name_geomadr[p.geom1]) + "' and '" +
             name_of(m, m->name_geomadr[p.geom2]) + "'; supported: 1, 3, 4 and 6)");
    nefc += collision::max_pair_contacts(m->geom_type[p.geom1], m->geom_type[p.geom2]) *
            constraint::contact_rows(condim);
  }
  r.ncandidate = n;
  for (const collision::CollisionPair& p : pairs)
    r.candidate_pairs.insert(r.candidate_pairs.end(), {p.geom1, p.geom2, p.pair});
  r.ncon_max = collision::max_contacts(cm, pairs.data(), n);
  r.ncon_scratch = collision::pair_scratch(cm, pairs.data(), n);
  // The staged collision's slots and its kernels' pair lists (collide.h, physics/launch.h): the
  // candidates group by group, each group in candidate order, the pairs without contacts last.
  r.candidate_slot.assign(n, 0);
  collision::candidate_slots(cm, pairs.data(), n, r.candidate_slot.data());
  int in_group[collision::kNumPairGroups] = {};
  for (int g : {int{collision::kPairsPrimitive}, int{collision::kPairsBoxBox},
                int{collision::kPairsCcd}, int{collision::kPairsHfield}, -1})
    for (int i = 0; i < n; ++i)
      if (collision::pair_group(m->geom_type[pairs[i].geom1], m->geom_type[pairs[i].geom2]) == g) {
        r.candidate_grouped.push_back(i);
        if (g >= 0) ++in_group[g];
      }
  r.ncandidate_primitive = in_group[collision::kPairsPrimitive];
  r.ncandidate_box_box = in_group[collision::kPairsBoxBox];
  r.ncandidate_hfield = in_group[collision::kPairsHfield];
  if (in_group[collision::kPairsCcd] + in_group[collision::kPairsHfield] != r.nccd_pairs)
    throw std::logic_error("import: GJK/EPA pairs counted two ways differ");
  r.nefc_max = nefc;
  r.nsolver_scratch = static_cast<int32_t>(constraint::solver_scratch_size(r.nv, nefc));
}

// libmujoco's compile error, after the non-finite number that caused it when the text has one
// (a NaN inertia fails as "mass and inertia of moving bodies must be larger than mjMINVAL").
std::string compile_error(const char* error, const std::function<std::string()>& nonfinite) {
  const std::string found = nonfinite();
  if (found.empty()) return error;
  return found + " (libmujoco: " + error + ")";
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The first non-finite number in an MJCF file or in the files it includes (libmujoco resolves
// <include file> beside the model), e.g. "in 'legs.xml': body 'leg' (line 3): pos = ...".
std::string nonfinite_in_file(const std::string& path) {
  const std::string text = file_text(path);
  std::string found = first_nonfinite_attribute(text);
  if (!found.empty()) return found;
  static const std::regex include(R"(<include\s+file\s*=\s*["']([^"']+)["'])");
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), include);
       it != std::sregex_iterator(); ++it) {
    found = first_nonfinite_attribute(file_text((dir / (*it)[1].str()).string()));
    if (!found.empty()) return "in '" + (*it)[1].str() + "': " + found;
  }
  return "";
}

}  // namespace

MjModelHandle::MjModelHandle(const std::string& path) {
  route_mujoco_messages();  // before libmujoco's first call: no MUJOCO_LOG.TXT, no exit()
  MujocoWarningCapture warnings;
  char error[1000] = "";
  // The text with "mjlab:" paths resolved, in the file's own folder so that its other relative
  // paths (meshes, includes beside it) still resolve against it, under a name no file it
  // includes or attaches has (the VFS may match names without their folder).
  const std::filesystem::path absolute = std::filesystem::absolute(path);
  const std::string name =
      (absolute.parent_path() / (".myriad-" + absolute.filename().string())).string();
  const std::string text = with_package_paths(path, file_text(path));
  mjVFS vfs;
  mj_defaultVFS(&vfs);
  const bool exists = std::filesystem::is_regular_file(path);
  if (exists && vfs_add_text(&vfs, name.c_str(), text.data(), static_cast<int>(text.size())) != 0)
    throw std::invalid_argument("cannot load MJCF '" + path + "': the virtual file system is full");
  m_ = mj_loadXML(exists ? name.c_str() : path.c_str(), &vfs, error, sizeof error);
  // Edits of included elements the file declares (physics/scene_edits.h): applied to the parsed
  // model, which is compiled again.
  if (m_ && has_scene_edits(m_)) {
    std::vector<SceneEdit> edits;
    std::string malformed;
    try {
      edits = scene_edits(m_);
    } catch (const std::invalid_argument& e) {
      malformed = e.what();
    }
    mj_deleteModel(m_);
    m_ = nullptr;
    if (malformed.empty())
      m_ = compile_with_edits(name, &vfs, edits, error, sizeof error);
    else
      std::snprintf(error, sizeof error, "%s", malformed.c_str());
  }
  mj_deleteVFS(&vfs);
  const auto nonfinite = [&] { return nonfinite_in_file(path); };
  if (!m_)
    throw std::invalid_argument("cannot load MJCF '" + path +
                                "': " + compile_error(error, nonfinite));
  check_numbers(path, warnings.messages, nonfinite);
}

MjModelHandle::MjModelHandle(const std::string& name, const std::string& text) {
  route_mujoco_messages();
  mjVFS vfs;
  mj_defaultVFS(&vfs);
  const std::string file = "model.xml";
  if (vfs_add_text(&vfs, file.c_str(), text.data(), static_cast<int>(text.size())) != 0)
    throw std::invalid_argument("cannot load MJCF '" + name + "': the virtual file system is full");
  char error[1000] = "";
  MujocoWarningCapture warnings;
  m_ = mj_loadXML(file.c_str(), &vfs, error, sizeof error);
  mj_deleteVFS(&vfs);
  const auto nonfinite = [&] { return first_nonfinite_attribute(text); };
  if (!m_)
    throw std::invalid_argument("cannot load MJCF '" + name +
                                "': " + compile_error(error, nonfinite));
  check_numbers(name, warnings.messages, nonfinite);
}

void MjModelHandle::set_height_fields(const double* data, int count) {
  if (count != m_->nhfielddata)
    throw std::invalid_argument("height fields: " + std::to_string(count) +
                                " elevations given, the model has " +
                                std::to_string(m_->nhfielddata));
  for (int k = 0; k < count; ++k)
    if (!(data[k] >= 0.0 && data[k] <= 1.0))
      throw std::invalid_argument("height fields: elevation " + std::to_string(k) + " is " +
                                  std::to_string(data[k]) + ", outside [0, 1]");
  for (int k = 0; k < count; ++k) m_->hfield_data[k] = static_cast<float>(data[k]);
}

void MjModelHandle::check_numbers(const std::string& name, const std::vector<std::string>& warnings,
                                  const std::function<std::string()>& nonfinite) {
  std::string what;
  // A NaN libmujoco read as absent (it warned and compiled a default): found in the text.
  for (const std::string& w : warnings)
    if (what.empty() && w.find("NaN") != std::string::npos) {
      what = nonfinite();
      if (what.empty()) what = "libmujoco read a NaN in it and ignored it (its warning: " + w + ")";
      what += " (libmujoco 2.2.2 would ignore the value and use its default)";
    }
  if (what.empty()) {
    try {
      check_model_numbers(m_);
    } catch (const std::invalid_argument& e) {
      what = e.what();
    }
  }
  if (what.empty()) return;
  mj_deleteModel(m_);
  m_ = nullptr;
  throw std::invalid_argument("cannot load MJCF '" + name + "': " + what);
}

MjModelHandle::~MjModelHandle() {
  if (m_) mj_deleteModel(m_);
}

namespace {

Model<double> import_named(const MjModelHandle& handle, const std::string& path) {
  Model<double> m;
  try {
    m = import_model(handle.get());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("'" + path + "': " + e.what());
  }
  // What the import changed in the model's meaning, said once per file and process.
  static std::mutex mutex;
  static std::set<std::string> said;
  const std::lock_guard<std::mutex> lock(mutex);
  for (const std::string& note : m.import_notes)
    if (said.insert(path + "\n" + note).second)
      std::cerr << "myriad: note: '" << path << "': " << note << std::endl;
  return m;
}

}  // namespace

void use_keyframe(Model<double>& m, const std::string& key) {
  for (size_t k = 0; k < m.key_names.size(); ++k)
    if (m.key_names[k] == key) {
      for (int i = 0; i < m.nq; ++i) m.qpos_init[i] = m.key_qpos[k * m.nq + i];
      for (int i = 0; i < m.nv; ++i) m.qvel_init[i] = m.key_qvel[k * m.nv + i];
      return;
    }
  std::string valid;
  for (const std::string& n : m.key_names) valid += (valid.empty() ? "" : ", ") + n;
  throw std::invalid_argument("no keyframe '" + key + "' in the model (" +
                              (valid.empty() ? std::string("it has none") : "valid: " + valid) +
                              ")");
}

Model<double> load_mjcf(const std::string& path) { return import_named(MjModelHandle(path), path); }

Model<double> load_mjcf_text(const std::string& name, const std::string& text) {
  return import_named(MjModelHandle(name, text), name);
}

Model<double> import_model(const mjModel* m) {
  check_model_numbers(m);  // a model not compiled by MjModelHandle (tests, tools) too
  const int flags = m->opt.disableflags;
  const bool constraints_off = flags & mjDSBL_CONSTRAINT;
  // Features of later physics issues (collision, limits, solver) and ones not supported yet.
  for (int t = 0; t < m->ntendon; ++t)
    for (int k = m->tendon_adr[t]; k < m->tendon_adr[t] + m->tendon_num[t]; ++k)
      if (m->wrap_type[k] != mjWRAP_JOINT)
        refuse("spatial tendons (tendon '" + name_of(m, m->name_tendonadr[t]) +
               "'; fixed tendons are supported)");
  if (m->neq > 0 && !constraints_off && !(flags & mjDSBL_EQUALITY))
    refuse("equality constraints (" + std::to_string(m->neq) + " in the model)");
  if (m->nmocap > 0) refuse("mocap bodies");
  if (m->opt.integrator == mjINT_IMPLICIT)
    refuse("the implicit integrator (use implicitfast, Euler or RK4)");
  if (m->opt.integrator != mjINT_EULER && m->opt.integrator != mjINT_RK4 &&
      m->opt.integrator != mjINT_IMPLICITFAST)
    refuse("integrator " + std::to_string(m->opt.integrator) + " (use Euler, RK4 or implicitfast)");
  if (m->opt.disableactuator != 0 && m->nu > 0)
    refuse("disabled actuator groups (option actuatorgroupdisable)");
  if (m->ngravcomp > 0) refuse("gravity compensation (body gravcomp)");
  if (m->opt.enableflags & mjENBL_SLEEP) refuse("sleeping bodies (option flag sleep)");
  if (m->nflex > 0) refuse("flexible bodies (flex, " + std::to_string(m->nflex) + " in the model)");
  if (m->nplugin > 0) refuse("engine plugins (" + std::to_string(m->nplugin) + " in the model)");
  if (m->opt.noslip_iterations > 0) refuse("the noslip solver (option noslip_iterations)");
  for (int g = 0; g < m->ngeom; ++g)
    if (m->geom_fluid[mjNFLUID * g] != 0)
      refuse("the ellipsoid fluid model (geom '" + name_of(m, m->name_geomadr[g]) +
             "' has fluidshape)");
  for (int j = 0; j < m->njnt; ++j)
    if (m->jnt_actfrclimited[j] && m->jnt_type[j] != mjJNT_HINGE && m->jnt_type[j] != mjJNT_SLIDE)
      refuse("actuatorfrcrange on a ball or free joint (joint '" + name_of(m, m->name_jntadr[j]) +
             "')");
  for (int t = 0; t < m->ntendon; ++t)
    if (m->tendon_actfrclimited[t])
      refuse("tendon actuatorfrcrange (tendon '" + name_of(m, m->name_tendonadr[t]) + "')");
  for (int j = 0; j < m->njnt; ++j)
    for (int k = 0; k < mjNPOLY; ++k)
      if (m->jnt_stiffnesspoly[mjNPOLY * j + k] != 0)
        refuse("polynomial joint stiffness (joint '" + name_of(m, m->name_jntadr[j]) + "')");
  for (int i = 0; i < m->nv; ++i)
    for (int k = 0; k < mjNPOLY; ++k)
      if (m->dof_dampingpoly[mjNPOLY * i + k] != 0)
        refuse("polynomial joint damping (joint '" + name_of(m, m->name_jntadr[m->dof_jntid[i]]) +
               "')");
  if (m->opt.density > 0 || m->opt.viscosity > 0) refuse("fluid forces (density/viscosity)");
  if (m->na > 0) refuse("actuator activation states (na > 0)");
  if (m->nv > 64) refuse("more than 64 degrees of freedom (nv = " + std::to_string(m->nv) + ")");
  if (!constraints_off && !(flags & mjDSBL_LIMIT))
    for (int j = 0; j < m->njnt; ++j)
      if (m->jnt_limited[j] && (m->jnt_type[j] == mjJNT_BALL || m->jnt_type[j] == mjJNT_FREE))
        refuse("ball joint limits (joint '" + name_of(m, m->name_jntadr[j]) + "' is limited)");
  if (m->opt.cone == mjCONE_ELLIPTIC)
    for (int p = 0; p < m->npair; ++p)
      if (m->pair_solreffriction[mjNREF * p] != 0 || m->pair_solreffriction[mjNREF * p + 1] != 0)
        refuse("solreffriction on an elliptic cone (contact pair " + std::to_string(p) + ")");
  for (int i = 1; i < m->nbody; ++i)
    if (m->body_jntnum[i] > 1)
      for (int k = 0; k < m->body_jntnum[i]; ++k)
        if (m->jnt_type[m->body_jntadr[i] + k] == mjJNT_FREE)
          refuse("a free joint sharing body '" + name_of(m, m->name_bodyadr[i]) +
                 "' with other joints");
  for (int u = 0; u < m->nu; ++u) {
    const std::string act = "actuator '" + name_of(m, m->name_actuatoradr[u]) + "'";
    if (m->actuator_trntype[u] != mjTRN_JOINT && m->actuator_trntype[u] != mjTRN_TENDON)
      refuse("transmission other than joint or tendon (" + act + ")");
    if (m->actuator_trntype[u] == mjTRN_JOINT) {
      const int jt = m->jnt_type[m->actuator_trnid[2 * u]];
      if (jt != mjJNT_HINGE && jt != mjJNT_SLIDE)
        refuse("joint transmission on a ball or free joint (" + act + ")");
    }
    if (m->actuator_dyntype[u] != mjDYN_NONE) refuse("activation dynamics (" + act + ")");
    if (m->actuator_damping[u] != 0 || m->actuator_dampingpoly[mjNPOLY * u] != 0 ||
        m->actuator_dampingpoly[mjNPOLY * u + 1] != 0)
      refuse("actuator damping (" + act + "; set the joint's damping instead)");
    if (m->actuator_armature[u] != 0)
      refuse("actuator armature (" + act + "; set the joint's armature instead)");
    if (m->actuator_gaintype[u] != mjGAIN_FIXED && m->actuator_gaintype[u] != mjGAIN_AFFINE)
      refuse("gain type other than fixed/affine (" + act + ")");
    if (m->actuator_biastype[u] != mjBIAS_NONE && m->actuator_biastype[u] != mjBIAS_AFFINE)
      refuse("bias type other than none/affine (" + act + ")");
  }
  for (int h = 0; h < m->nhfield; ++h)
    if (m->hfield_nrow[h] < 2 || m->hfield_ncol[h] < 2)
      refuse("a height field of fewer than 2 rows or columns (hfield '" +
             name_of(m, m->name_hfieldadr[h]) + "' is " + std::to_string(m->hfield_nrow[h]) +
             " x " + std::to_string(m->hfield_ncol[h]) + ")");
  refuse_unsupported_sensors(m);

  Model<double> r;
  // The plain copies (from copy or opt in myriad/physics/model_fields.h), sizes first.
#define MYRIAD_IMPORT_copy(name) r.name = m->name;
#define MYRIAD_IMPORT_opt(name) r.name = m->opt.name;
#define MYRIAD_IMPORT_custom(name)
#define MYRIAD_X(name, init, from) MYRIAD_IMPORT_##from(name)
  MYRIAD_MODEL_INT_SCALARS(MYRIAD_X)
  MYRIAD_MODEL_FLAGS(MYRIAD_X)
  MYRIAD_MODEL_REAL_SCALARS(MYRIAD_X)
#undef MYRIAD_X
#undef MYRIAD_IMPORT_copy
#undef MYRIAD_IMPORT_opt
#undef MYRIAD_IMPORT_custom
#define MYRIAD_IMPORT_copy(name, length) \
  for (int k = 0; k < (length); ++k) r.name[k] = m->name[k];
#define MYRIAD_IMPORT_opt(name, length) \
  for (int k = 0; k < (length); ++k) r.name[k] = m->opt.name[k];
#define MYRIAD_IMPORT_custom(name, length)
#define MYRIAD_X(name, length, from) MYRIAD_IMPORT_##from(name, length)
  MYRIAD_MODEL_REAL_VECTORS(MYRIAD_X)
#undef MYRIAD_X
#undef MYRIAD_IMPORT_copy
#undef MYRIAD_IMPORT_opt
#undef MYRIAD_IMPORT_custom
#define MYRIAD_IMPORT_copy(name, size) r.name.assign(m->name, m->name + (size));
#define MYRIAD_IMPORT_custom(name, size)
#define MYRIAD_X(name, rows, cols, from) MYRIAD_IMPORT_##from(name, int64_t{r.rows} * (cols))
  MYRIAD_MODEL_INT_ARRAYS(MYRIAD_X)
  MYRIAD_MODEL_REAL_ARRAYS(MYRIAD_X)
  MYRIAD_MODEL_BYTE_ARRAYS(MYRIAD_X)
#undef MYRIAD_X
#undef MYRIAD_IMPORT_copy
#undef MYRIAD_IMPORT_custom
#define MYRIAD_X(name, rows, adr) \
  for (int i = 0; i < r.rows; ++i) r.name.push_back(name_of(m, m->adr[i]));
  MYRIAD_MODEL_NAMES(MYRIAD_X)
#undef MYRIAD_X

  // The custom fields.
  r.integrator = m->opt.integrator == mjINT_RK4            ? kRK4
                 : m->opt.integrator == mjINT_IMPLICITFAST ? kImplicitFast
                                                           : kEuler;
  // implicitfast's free bodies solved alone: a free joint alone on a body whose tree has no
  // other dofs and no mass below it (MuJoCo compares the subtree mass with the body's exactly).
  r.body_implicit_free.assign(m->nbody, 0);
  for (int b = 1; b < m->nbody; ++b)
    if (m->body_jntnum[b] == 1 && m->jnt_type[m->body_jntadr[b]] == mjJNT_FREE &&
        m->tree_dofnum[m->dof_treeid[m->jnt_dofadr[m->body_jntadr[b]]]] == 6 &&
        m->body_subtreemass[b] == m->body_mass[b])
      r.body_implicit_free[b] = 1;
  for (int b = 0; b < m->nbody; ++b) r.nbody_implicit_free += r.body_implicit_free[b];
  for (int g = 0; g < m->ngeom; ++g) r.geom_rayvisible.push_back(geom_ray_visible(m, g) ? 1 : 0);
  // The sensors' parts, each a kernel of its own in the staged launch (physics/sensor.h).
  for (int s = 0; s < m->nsensor; ++s) {
    const SensorPart part = sensor_part(m->sensor_type[s]);
    r.nsensor_acc += part == SensorPart::kAcc;
    r.nsensor_rangefinder += part == SensorPart::kRangefinder;
    r.nsensor_touch += part == SensorPart::kTouch;
  }
  r.collision = 0;  // MuJoCo 3: explicit and dynamic pairs, merged
  r.gravity_enabled = !(flags & mjDSBL_GRAVITY);
  r.spring_enabled = !(flags & mjDSBL_SPRING);
  r.damper_enabled = !(flags & mjDSBL_DAMPER);
  r.euler_damping = !(flags & (mjDSBL_EULERDAMP | mjDSBL_DAMPER));
  r.actuation_enabled = !(flags & mjDSBL_ACTUATION);
  r.clamp_ctrl = !(flags & mjDSBL_CLAMPCTRL);
  for (int u = 0; u < m->nu; ++u) {
    r.actuator_trnid.push_back(m->actuator_trnid[2 * u]);
    r.actuator_gaintype.push_back(m->actuator_gaintype[u] == mjGAIN_FIXED ? kGainFixed
                                                                          : kGainAffine);
    r.actuator_biastype.push_back(m->actuator_biastype[u] == mjBIAS_NONE ? kBiasNone : kBiasAffine);
    r.actuator_gear.push_back(m->actuator_gear[6 * u]);
    for (int k = 0; k < 3; ++k) {
      r.actuator_gainprm.push_back(m->actuator_gainprm[mjNGAIN * u + k]);
      r.actuator_biasprm.push_back(m->actuator_biasprm[mjNBIAS * u + k]);
    }
  }
  r.meaninertia = m->stat.meaninertia;
  r.qpos_init.assign(m->qpos0, m->qpos0 + m->nq);
  r.qvel_init.assign(m->nv, 0.0);
  for (int k = 0; k < m->nkey; ++k) {
    r.key_names.push_back(m->names[m->name_keyadr[k]] ? name_of(m, m->name_keyadr[k])
                                                      : "#" + std::to_string(k));
    r.key_qpos.insert(r.key_qpos.end(), m->key_qpos + k * m->nq, m->key_qpos + (k + 1) * m->nq);
    r.key_qvel.insert(r.key_qvel.end(), m->key_qvel + k * m->nv, m->key_qvel + (k + 1) * m->nv);
  }
  if (m->opt.solver != mjSOL_NEWTON && !constraints_off)
    r.import_notes.push_back(std::string("the model asks for the ") +
                             (m->opt.solver == mjSOL_PGS ? "PGS" : "CG") +
                             " solver; Myriad solves the same convex problem with Newton");
  if (constraints_off) r.iterations = 0;
  candidate_pairs(m, r);
  return r;
}

}  // namespace myriad::physics
