// The physics model's fields, each declared once, as X-macro lists (as MuJoCo's mjxmacro.h
// does). Model<T>'s members (model.h), ModelView<T>'s pointers and for_each_array
// (physics/model_view.h), the float cast (physics/model_cast.cc), the import from mjModel
// (physics/import.cc), the device copy (physics/cuda_batch.cuh) and the collision view
// CollisionModel<T> (physics/collision/filter.h) are all generated from these lists. Names,
// shapes and meaning follow mjmodel.h. docs/architecture.md ("Physics field lists") says how to
// add a field.
//
// Scalars:  X(name, default, from)
// Vectors:  X(name, length, from)          fixed length: T name[length]
// Arrays:   X(name, rows, cols, from)      shape [rows, cols]: rows is a size (a scalar below),
//                                           cols a constant
// Names:    X(name, rows, adr)             one string per row, from mjModel's names + adr[i]
// from:     copy    the import copies mjModel's field of the same name (m->name)
//           opt     the import copies m->opt.name
//           custom  the import computes it by hand (physics/import.cc, named there)
//
// Each kind has two lists: SMOOTH (what only the smooth dynamics read) and COLLISION (what the
// collision stage reads, CollisionModel<T>'s fields, some of which the smooth dynamics read too).
// The MYRIAD_MODEL_* lists are the two together.
#pragma once

#include <cstdint>

namespace myriad::physics {

// mjNREF, mjNIMP: solver reference and impedance parameter counts.
constexpr int kNRef = 2;
constexpr int kNImp = 5;

}  // namespace myriad::physics

// clang-format off

// int32_t scalars. The sizes come first: the import sets them before any array.
#define MYRIAD_SMOOTH_INT_SCALARS(X) \
  X(nq, 0, copy)                     \
  X(nv, 0, copy)                     \
  X(njnt, 0, copy)                   \
  X(nu, 0, copy)                     \
  X(ntendon, 0, copy)                \
  X(nwrap, 0, copy)                  \
  X(nsite, 0, copy)                  /* sites: read by envs and sensors */ \
  X(nsensor, 0, copy)                \
  X(nsensordata, 0, copy)            /* sensordata's length */ \
  X(nsensor_acc, 0, custom)          /* sensors of mj_rnePostConstraint's part (sensor.h) */ \
  X(nsensor_rangefinder, 0, custom)  /* rangefinder sensors */ \
  X(nsensor_touch, 0, custom)        /* touch sensors */ \
  X(integrator, kEuler, custom)      /* Integrator */ \
  X(nbody_implicit_free, 0, custom)  /* free bodies implicitfast solves alone */ \
  X(cone, 0, opt)                    /* mjtCone: 0 pyramidal, 1 elliptic */ \
  X(iterations, 100, opt)            /* Newton iterations at most */ \
  X(ls_iterations, 50, opt)          /* line-search cost evaluations at most */ \
  X(ncandidate, 0, custom)           /* candidate geom pairs (collision_pairs) */ \
  X(ncandidate_primitive, 0, custom) /* of them, analytic pairs but box-box (PairGroup) */ \
  X(ncandidate_box_box, 0, custom)   /* of them, box-box pairs */ \
  X(ncon_max, 0, custom)             /* most contacts one env can have */ \
  X(ncon_scratch, 0, custom)         /* contact room past ncon_max: pair_scratch (filter.h) */ \
  X(nefc_max, 0, custom)             /* most constraint rows one env can have */ \
  X(nsolver_scratch, 0, custom)      /* scratch the Newton solver needs per env */ \
  X(nccd_pairs, 0, custom)           /* candidate pairs through GJK/EPA: height-field, convex */ \
  X(ncandidate_hfield, 0, custom)    /* of them, height-field pairs (PairGroup kPairsHfield) */
#define MYRIAD_COLLISION_INT_SCALARS(X) \
  X(nbody, 0, copy)                     \
  X(ngeom, 0, copy)                     \
  X(npair, 0, copy)                     \
  X(nexclude, 0, copy)                  \
  X(nhfield, 0, copy)                   /* height fields (collision, ray casts) */ \
  X(nhfielddata, 0, copy)               /* their elevations, all together */ \
  X(ccd_iterations, 35, opt)            /* height-field GJK/EPA iterations at most */ \
  X(disableflags, 0, opt)               \
  X(enableflags, 0, opt)                \
  X(collision, 0, custom)               /* 0: all pairs (MuJoCo 3 merges explicit and dynamic) */

// bool scalars: the option flags the smooth dynamics read, from opt.disableflags.
#define MYRIAD_SMOOTH_FLAGS(X)        \
  X(gravity_enabled, true, custom)    \
  X(spring_enabled, true, custom)     \
  X(damper_enabled, true, custom)     \
  X(euler_damping, true, custom)      /* Euler integrates dof damping implicitly */ \
  X(actuation_enabled, true, custom)  \
  X(clamp_ctrl, true, custom)
#define MYRIAD_COLLISION_FLAGS(X)

// T scalars and fixed-length vectors.
#define MYRIAD_SMOOTH_REAL_SCALARS(X) \
  X(timestep, 0, opt)                \
  X(impratio, 1, opt)                \
  X(tolerance, 1e-8, opt)            \
  X(ls_tolerance, 0.01, opt)         /* line-search gradient tolerance, times tolerance */ \
  X(meaninertia, 1, custom)          /* m->stat.meaninertia: the solver's scale */
#define MYRIAD_COLLISION_REAL_SCALARS(X) \
  X(o_margin, 0, opt)                    /* override margin (enableflags override) */ \
  X(ccd_tolerance, 1e-6, opt)            /* height-field GJK/EPA stopping tolerance */
#define MYRIAD_SMOOTH_REAL_VECTORS(X) \
  X(gravity, 3, opt)                  \
  X(magnetic, 3, opt)
#define MYRIAD_COLLISION_REAL_VECTORS(X) \
  X(o_solref, kNRef, opt)                \
  X(o_solimp, kNImp, opt)                \
  X(o_friction, 5, opt)

// int32_t arrays.
#define MYRIAD_SMOOTH_INT_ARRAYS(X)          \
  X(body_rootid, nbody, 1, copy)             \
  X(site_bodyid, nsite, 1, copy)             \
  X(site_type, nsite, 1, copy)               /* mjtGeom: a touch sensor's zone */ \
  X(geom_group, ngeom, 1, copy)              /* ray casts filter by group */ \
  X(sensor_type, nsensor, 1, copy)           /* physics/sensor.h's SensorType */ \
  X(sensor_datatype, nsensor, 1, copy)       \
  X(sensor_objtype, nsensor, 1, copy)        \
  X(sensor_objid, nsensor, 1, copy)          \
  X(sensor_reftype, nsensor, 1, copy)        \
  X(sensor_refid, nsensor, 1, copy)          \
  X(sensor_dim, nsensor, 1, copy)            \
  X(sensor_adr, nsensor, 1, copy)            \
  X(body_jntnum, nbody, 1, copy)             \
  X(body_jntadr, nbody, 1, copy)             \
  X(body_dofnum, nbody, 1, copy)             \
  X(body_dofadr, nbody, 1, copy)             \
  X(jnt_type, njnt, 1, copy)                 /* JointType */ \
  X(jnt_qposadr, njnt, 1, copy)              \
  X(jnt_dofadr, njnt, 1, copy)               \
  X(jnt_bodyid, njnt, 1, copy)               \
  X(dof_bodyid, nv, 1, copy)                 \
  X(dof_jntid, nv, 1, copy)                  \
  X(dof_parentid, nv, 1, copy)               \
  X(actuator_trnid, nu, 1, custom)           /* joint or tendon: mjModel's actuator_trnid[u, 0] */ \
  X(actuator_trntype, nu, 1, copy)           /* mjtTrn: 0 joint, 3 tendon */ \
  X(tendon_adr, ntendon, 1, copy)            \
  X(tendon_num, ntendon, 1, copy)            \
  X(wrap_objid, nwrap, 1, copy)              /* the joint of a fixed tendon's entry */ \
  X(actuator_gaintype, nu, 1, custom)        /* GainType */ \
  X(actuator_biastype, nu, 1, custom)        /* BiasType */ \
  X(candidate_pairs, ncandidate, 3, custom)  /* collision::CollisionPair: geom1, geom2, pair */ \
  X(candidate_slot, ncandidate, 1, custom)   /* the staged collision's slot (candidate_slots) */ \
  X(candidate_grouped, ncandidate, 1, custom) /* candidates by PairGroup: primitive, box-box, ccd, hfield */
#define MYRIAD_COLLISION_INT_ARRAYS(X)       \
  X(body_parentid, nbody, 1, copy)           \
  X(body_weldid, nbody, 1, copy)             \
  X(body_geomadr, nbody, 1, copy)            \
  X(body_geomnum, nbody, 1, copy)            \
  X(geom_type, ngeom, 1, copy)               /* mjtGeom */ \
  X(geom_contype, ngeom, 1, copy)            \
  X(geom_conaffinity, ngeom, 1, copy)        \
  X(geom_condim, ngeom, 1, copy)             \
  X(geom_bodyid, ngeom, 1, copy)             \
  X(geom_priority, ngeom, 1, copy)           \
  X(geom_dataid, ngeom, 1, copy)             /* an hfield's height field, a mesh's mesh, else -1 */ \
  X(hfield_nrow, nhfield, 1, copy)           \
  X(hfield_ncol, nhfield, 1, copy)           \
  X(hfield_adr, nhfield, 1, copy)            /* first elevation in hfield_data */ \
  X(pair_dim, npair, 1, copy)                \
  X(pair_geom1, npair, 1, copy)              \
  X(pair_geom2, npair, 1, copy)              \
  X(pair_signature, npair, 1, copy)          /* (body1+1)<<16 + body2+1, sorted */ \
  X(exclude_signature, nexclude, 1, copy)

// T arrays (converted from mjtNum, or float for geom_rgba).
#define MYRIAD_SMOOTH_REAL_ARRAYS(X)         \
  X(body_pos, nbody, 3, copy)                \
  X(site_pos, nsite, 3, copy)                \
  X(site_quat, nsite, 4, copy)               \
  X(site_size, nsite, 3, copy)               \
  X(sensor_cutoff, nsensor, 1, copy)         \
  X(body_ipos, nbody, 3, copy)               \
  X(body_quat, nbody, 4, copy)               \
  X(body_iquat, nbody, 4, copy)              \
  X(body_mass, nbody, 1, copy)               \
  X(body_subtreemass, nbody, 1, copy)        \
  X(body_inertia, nbody, 3, copy)            /* principal */ \
  X(jnt_pos, njnt, 3, copy)                  \
  X(jnt_axis, njnt, 3, copy)                 \
  X(jnt_stiffness, njnt, 1, copy)            \
  X(dof_armature, nv, 1, copy)               \
  X(dof_damping, nv, 1, copy)                \
  X(geom_pos, ngeom, 3, copy)                \
  X(geom_quat, ngeom, 4, copy)               \
  X(geom_rgba, ngeom, 4, copy)               /* for drawing */ \
  X(actuator_gear, nu, 1, custom)            /* mjModel's actuator_gear[u, 0] */ \
  X(actuator_ctrlrange, nu, 2, copy)         \
  X(actuator_forcerange, nu, 2, copy)        \
  X(actuator_gainprm, nu, 3, custom)         /* mjModel's actuator_gainprm[u, 0:3] */ \
  X(actuator_biasprm, nu, 3, custom)         /* mjModel's actuator_biasprm[u, 0:3] */ \
  X(qpos0, nq, 1, copy)                      \
  X(qpos_spring, nq, 1, copy)                \
  X(qpos_init, nq, 1, custom)                /* an episode's start: qpos0 or a keyframe's */ \
  X(qvel_init, nv, 1, custom)                /* zeros or a keyframe's qvel */ \
  X(jnt_range, njnt, 2, copy)                \
  X(jnt_actfrcrange, njnt, 2, copy)          /* range of the joint's total actuator force */ \
  X(jnt_margin, njnt, 1, copy)               \
  X(jnt_solref, njnt, kNRef, copy)           /* limit */ \
  X(jnt_solimp, njnt, kNImp, copy)           \
  X(dof_frictionloss, nv, 1, copy)           \
  X(dof_solref, nv, kNRef, copy)             /* frictionloss */ \
  X(dof_solimp, nv, kNImp, copy)             \
  X(dof_invweight0, nv, 1, copy)             \
  X(body_invweight0, nbody, 2, copy)         /* translation, rotation */ \
  X(wrap_prm, nwrap, 1, copy)                /* a fixed tendon's coefficient */ \
  X(tendon_range, ntendon, 2, copy)          \
  X(tendon_margin, ntendon, 1, copy)         \
  X(tendon_stiffness, ntendon, 1, copy)      \
  X(tendon_damping, ntendon, 1, copy)        \
  X(tendon_frictionloss, ntendon, 1, copy)   \
  X(tendon_lengthspring, ntendon, 1, copy)   \
  X(tendon_invweight0, ntendon, 1, copy)     \
  X(tendon_solref_lim, ntendon, kNRef, copy) \
  X(tendon_solimp_lim, ntendon, kNImp, copy) \
  X(tendon_solref_fri, ntendon, kNRef, copy) \
  X(tendon_solimp_fri, ntendon, kNImp, copy)
#define MYRIAD_COLLISION_REAL_ARRAYS(X)      \
  X(geom_size, ngeom, 3, copy)               \
  X(geom_rbound, ngeom, 1, copy)             /* 0: no bounding sphere (planes) */ \
  X(geom_margin, ngeom, 1, copy)             \
  X(geom_gap, ngeom, 1, copy)                \
  X(geom_solmix, ngeom, 1, copy)             \
  X(geom_friction, ngeom, 3, copy)           \
  X(geom_solref, ngeom, kNRef, copy)         \
  X(geom_solimp, ngeom, kNImp, copy)         \
  X(pair_margin, npair, 1, copy)             \
  X(pair_gap, npair, 1, copy)                \
  X(pair_friction, npair, 5, copy)           \
  X(pair_solref, npair, kNRef, copy)         \
  X(pair_solimp, npair, kNImp, copy)         \
  X(hfield_size, nhfield, 4, copy)           /* x, y half-extents, top height, base depth */ \
  X(hfield_data, nhfielddata, 1, copy)       /* elevations in [0, 1], [nrow, ncol] row-major */

// uint8_t arrays (mjtByte).
#define MYRIAD_SMOOTH_BYTE_ARRAYS(X)         \
  X(actuator_ctrllimited, nu, 1, copy)       \
  X(actuator_forcelimited, nu, 1, copy)      \
  X(jnt_limited, njnt, 1, copy)              \
  X(jnt_actfrclimited, njnt, 1, copy)        \
  X(tendon_limited, ntendon, 1, copy)         \
  X(body_implicit_free, nbody, 1, custom)    /* implicitfast solves this free body alone */ \
  X(geom_rayvisible, ngeom, 1, custom)       /* alpha of its rgba (or material) not 0 */
#define MYRIAD_COLLISION_BYTE_ARRAYS(X)

// Names (host only: not in ModelView).
#define MYRIAD_MODEL_NAMES(X)                \
  X(body_names, nbody, name_bodyadr)         \
  X(geom_names, ngeom, name_geomadr)         \
  X(joint_names, njnt, name_jntadr)          \
  X(actuator_names, nu, name_actuatoradr)   \
  X(site_names, nsite, name_siteadr)

// The whole model: smooth and collision fields.
#define MYRIAD_MODEL_INT_SCALARS(X) MYRIAD_SMOOTH_INT_SCALARS(X) MYRIAD_COLLISION_INT_SCALARS(X)
#define MYRIAD_MODEL_FLAGS(X) MYRIAD_SMOOTH_FLAGS(X) MYRIAD_COLLISION_FLAGS(X)
#define MYRIAD_MODEL_REAL_SCALARS(X) MYRIAD_SMOOTH_REAL_SCALARS(X) MYRIAD_COLLISION_REAL_SCALARS(X)
#define MYRIAD_MODEL_REAL_VECTORS(X) MYRIAD_SMOOTH_REAL_VECTORS(X) MYRIAD_COLLISION_REAL_VECTORS(X)
#define MYRIAD_MODEL_INT_ARRAYS(X) MYRIAD_SMOOTH_INT_ARRAYS(X) MYRIAD_COLLISION_INT_ARRAYS(X)
#define MYRIAD_MODEL_REAL_ARRAYS(X) MYRIAD_SMOOTH_REAL_ARRAYS(X) MYRIAD_COLLISION_REAL_ARRAYS(X)
#define MYRIAD_MODEL_BYTE_ARRAYS(X) MYRIAD_SMOOTH_BYTE_ARRAYS(X) MYRIAD_COLLISION_BYTE_ARRAYS(X)

// clang-format on
