"""Pure-Python model of libmujoco 3.11's height-field vs {sphere, capsule, box}
collision (mjc_ConvexHField -> mjc_penetration -> native GJK/EPA).

Written from an understanding of the algorithm (see README.md); it is meant to
be read next to the README and ported to C++.  All arithmetic is done on
Python floats (IEEE double, no FMA) in the same order as the reference where
that was practical.

Entry point:  hfield_contacts(m, d, g_hfield, g_other, margin) -> list of dicts
  each dict: dist, pos (3), frame (3)   (world frame; frame = normal hfield->geom)
"""
import math

import numpy as np

MINVAL = 1e-15
MINVAL2 = MINVAL * MINVAL
MAXVAL = 1e10
MAXVAL2 = MAXVAL * MAXVAL
MAX_LIMIT = 1.7976931348623157e308  # DBL_MAX
MAXCONPAIR = 50
MAX_EPA_ITERATIONS = 170

# branch coverage counters (diagnostics only)
COUNTS = {}


def _hit(key):
  COUNTS[key] = COUNTS.get(key, 0) + 1


# ---------------------------------------------------------------------------------------------
# Behaviour switches.  The DEFAULTS are the behaviour that matches libmujoco 3.11 (found by
# experiment, see README.md); the alternatives are kept so the experiments can be re-run.
# ---------------------------------------------------------------------------------------------
# GJK duality-gap stop:  x.(x - s) < GJK_EPS(tol)   (0 for discrete pairs)
GJK_EPS = lambda tol: 0.5 * tol * tol
# GJK early stop at the top of an iteration: |x|^2 < GJK_EARLY(tol, eps)  [3.11: tol^2, or
# mjMINVAL^2 for discrete pairs; the stored upstream source has mjMINVAL^2 always]
GJK_EARLY = lambda tol, eps: tol * tol if eps > 0 else MINVAL2
GJK_EARLY_SQUARED = True     # 3.11 reports dist = |x|^2 (not |x|) after that early stop
GJK_DIST_FROM_XK = 'enclosed-only'  # 3.11 (see gjk); upstream: always x_norm of the top
# sphere/capsule core pass counts as "shallow" if dist > SHALLOW_THRESH(tol)
SHALLOW_THRESH = lambda tol: tol
# EPA stop test and upper-bound bookkeeping
EPA_STOP = lambda upper, lower, tol: upper - lower < tol
EPA_UPPER_NOMIN = False
EPA_NOCONTACT_TEST = lambda upper, upper_k, lower: upper < 0
EPA_NEG_UPPER = True         # 3.11(?): upper bound < 0 => origin outside => no contact
#                              (only matters for huge ccd_tolerance; inferred, see README)
# Orientation of face.v (the origin's projection on the face plane): 3.11 behaves as if v is
# turned to point OUT of the polytope (only differs from upstream when the origin lies outside
# a face, which needs a large ccd_tolerance).  Winding sign conventions of this file's vertex
# orders that mean "outward": polytope3 +1, polytope2 -1, polytope4 -sign(det), new EPA faces
# inherit the convention of the polytope they grow from.
P3_ORIENT = True
P2_ORIENT = -1
P4_ORIENT = 'det-'
P4_FACE_ORIENT = 1
EPA_ORIENT = 'inherit'
FACE_ORIENT = 0              # (failed experiment: one global winding convention)
EPA_DIR_ORIENT = 0           # (failed experiment: orient only the support direction)
UPPER_USES_DIR = False
WITNESS_PROJ = False
PRISM_MARGIN = False         # (failed experiment: inflating the prism by margin/2 as well)
# debug traces
EPA_TRACE = None
GJK_TRACE = None

GEOM_HFIELD, GEOM_SPHERE, GEOM_CAPSULE, GEOM_BOX = 1, 2, 3, 6

# EPA status codes (names only used for debugging)
EPA_P2_NONCONVEX = 2
EPA_P3_BAD_NORMAL = 3
EPA_P3_INVALID_V4 = 4
EPA_P3_INVALID_V5 = 5
EPA_P3_MISSING_ORIGIN = 6
EPA_P3_ORIGIN_ON_FACE = 7
EPA_P4_MISSING_ORIGIN = 8


# ----------------------------------------------------------------- small vec helpers
def sub3(a, b):
  return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def dot3(a, b):
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def scl3(a, s):
  return [s * a[0], s * a[1], s * a[2]]


def cross3(a, b):
  return [a[1] * b[2] - a[2] * b[1],
          a[2] * b[0] - a[0] * b[2],
          a[0] * b[1] - a[1] * b[0]]


def norm3(a):
  return math.sqrt(dot3(a, a))


def det3(v1, v2, v3):
  return (v1[0] * (v2[1] * v3[2] - v2[2] * v3[1])
          + v1[1] * (v2[2] * v3[0] - v2[0] * v3[2])
          + v1[2] * (v2[0] * v3[1] - v2[1] * v3[0]))


def equal3(a, b):
  return (abs(a[0] - b[0]) < MINVAL and abs(a[1] - b[1]) < MINVAL
          and abs(a[2] - b[2]) < MINVAL)


def normalize3(v):
  # mju_normalize3: if norm < mjMINVAL -> (1,0,0)
  n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
  if n < MINVAL:
    return [1.0, 0.0, 0.0]
  inv = 1.0 / n
  return [v[0] * inv, v[1] * inv, v[2] * inv]


def matT_vec(mat, v):  # mat row-major 9
  return [mat[0] * v[0] + mat[3] * v[1] + mat[6] * v[2],
          mat[1] * v[0] + mat[4] * v[1] + mat[7] * v[2],
          mat[2] * v[0] + mat[5] * v[1] + mat[8] * v[2]]


def mat_vec(mat, v):
  return [mat[0] * v[0] + mat[1] * v[1] + mat[2] * v[2],
          mat[3] * v[0] + mat[4] * v[1] + mat[5] * v[2],
          mat[6] * v[0] + mat[7] * v[1] + mat[8] * v[2]]


def matT_mat(a, b):  # a^T b, 3x3 row-major
  r = [0.0] * 9
  for i in range(3):
    for j in range(3):
      r[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j]
  return r


# ----------------------------------------------------------------- convex objects
class Obj:
  """mjCCDObj analogue.  Geometry is expressed in the hfield frame."""

  def __init__(self, gtype, pos=None, mat=None, size=None, margin=0.0):
    self.gtype = gtype
    self.pos = pos
    self.mat = mat
    self.size = size
    self.margin = margin
    self.vertindex = -1
    self.prism = [[0.0, 0.0, 0.0] for _ in range(6)]
    self.mode = None  # None: full shape; 'point' / 'line' during mjc_ccd core pass

  def center(self):
    if self.gtype == GEOM_HFIELD:
      r = [0.0, 0.0, 0.0]
      for i in range(6):
        p = self.prism[i]
        r = [r[0] + p[0], r[1] + p[1], r[2] + p[2]]
      return scl3(r, 1.0 / 6.0)
    return list(self.pos)

  def support(self, d):
    t = self.gtype
    if t == GEOM_HFIELD:
      istart = 0 if d[2] < 0 else 3
      ibest = istart
      best = dot3(self.prism[istart], d)
      for i in range(istart + 1, istart + 3):
        tmp = dot3(self.prism[i], d)
        if tmp > best:
          ibest, best = i, tmp
      return list(self.prism[ibest])
    mat, pos = self.mat, self.pos
    if self.mode == 'point':
      return list(pos)
    if self.mode == 'line':
      length = self.size[1]
      dt = mat[2] * d[0] + mat[5] * d[1] + mat[8] * d[2]
      s = length if dt >= 0 else -length
      return [mat[2] * s + pos[0], mat[5] * s + pos[1], mat[8] * s + pos[2]]
    if t == GEOM_SPHERE:
      r = self.size[0]
      return [r * d[0] + pos[0], r * d[1] + pos[1], r * d[2] + pos[2]]
    ld = matT_vec(mat, d)
    if t == GEOM_CAPSULE:
      r, length = self.size[0], self.size[1]
      ls = [ld[0] * r, ld[1] * r, ld[2] * r]
      ls[2] += length if ld[2] >= 0 else -length
    elif t == GEOM_BOX:
      s = self.size
      ls = [s[0] if ld[0] >= 0 else -s[0], s[1] if ld[1] >= 0 else -s[1],
            s[2] if ld[2] >= 0 else -s[2]]
      vi = 1 if ls[0] > 0 else 0
      vi |= 2 if ls[1] > 0 else 0
      vi |= 4 if ls[2] > 0 else 0
      self.vertindex = vi
    else:
      raise NotImplementedError(t)
    g = mat_vec(mat, ls)
    return [g[0] + pos[0], g[1] + pos[1], g[2] + pos[2]]


class Vertex:
  __slots__ = ('vert', 'vert1', 'vert2', 'index1', 'index2')

  def __init__(self):
    self.vert = [0.0] * 3
    self.vert1 = [0.0] * 3
    self.vert2 = [0.0] * 3
    self.index1 = -1
    self.index2 = -1

  def copy(self):
    v = Vertex()
    v.vert, v.vert1, v.vert2 = list(self.vert), list(self.vert1), list(self.vert2)
    v.index1, v.index2 = self.index1, self.index2
    return v


class Status:
  def __init__(self):
    self.simplex = [Vertex() for _ in range(4)]
    self.nsimplex = 0
    self.x1 = [0.0] * 3
    self.x2 = [0.0] * 3
    self.dist = 0.0
    self.nx = 0
    self.gjk_iterations = 0
    self.epa_iterations = 0
    self.epa_status = -1
    self.tolerance = 0.0
    self.max_iterations = 0
    self.max_contacts = 1
    self.dist_cutoff = 0.0


def discrete_geoms(o1, o2):
  if o1.margin != 0 or o2.margin != 0:
    return False
  ok = (GEOM_HFIELD, GEOM_BOX)  # (meshes too, not modelled)
  return o1.gtype in ok and o2.gtype in ok


def support(o1, o2, d, dneg):
  v = Vertex()
  v.vert1 = o1.support(d)
  if o1.margin > 0:
    h = 0.5 * o1.margin
    v.vert1 = [v.vert1[0] + d[0] * h, v.vert1[1] + d[1] * h, v.vert1[2] + d[2] * h]
  v.vert2 = o2.support(dneg)
  if o2.margin > 0:
    h = 0.5 * o2.margin
    v.vert2 = [v.vert2[0] + dneg[0] * h, v.vert2[1] + dneg[1] * h,
               v.vert2[2] + dneg[2] * h]
  v.vert = sub3(v.vert1, v.vert2)
  v.index1 = o1.vertindex
  v.index2 = o2.vertindex
  return v


def gjk_support(o1, o2, x_k, x_norm):
  dneg = scl3(x_k, 1 / x_norm)
  d = scl3(dneg, -1)
  return support(o1, o2, d, dneg)


def epa_support(pt, o1, o2, d, dnorm):
  dd, dneg = [1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]
  if dnorm > MINVAL:
    dd = [d[0] / dnorm, d[1] / dnorm, d[2] / dnorm]
    dneg = scl3(dd, -1)
  v = support(o1, o2, dd, dneg)
  pt.verts.append(v)
  return len(pt.verts) - 1


def signed_distance(v1, v2, v3):
  diff1 = sub3(v3.vert, v1.vert)
  diff2 = sub3(v2.vert, v1.vert)
  n = cross3(diff1, diff2)
  n2 = dot3(n, n)
  if n2 > MINVAL2 and n2 < MAXVAL2:
    n = scl3(n, 1 / math.sqrt(n2))
    return dot3(n, v1.vert), n
  return MAX_LIMIT, n


def gjk_intersect(st, o1, o2):
  simplex = [st.simplex[i].copy() for i in range(4)]
  s = [0, 1, 2, 3]
  k, kmax = st.gjk_iterations, st.max_iterations
  while k < kmax:
    d0, n0 = signed_distance(simplex[s[2]], simplex[s[1]], simplex[s[3]])
    d1, n1 = signed_distance(simplex[s[0]], simplex[s[2]], simplex[s[3]])
    d2, n2 = signed_distance(simplex[s[1]], simplex[s[0]], simplex[s[3]])
    d3, n3 = signed_distance(simplex[s[0]], simplex[s[1]], simplex[s[2]])
    dist = [d0, d1, d2, d3]
    normals = [n0, n1, n2, n3]
    if not d3 or not d2 or not d1 or not d0:
      st.gjk_iterations = k
      return -1
    i = 0 if dist[0] < dist[1] else 1
    j = 2 if dist[2] < dist[3] else 3
    index = i if dist[i] < dist[j] else j
    if dist[index] > 0:
      st.nsimplex = 4
      st.simplex = [simplex[s[q]].copy() for q in range(4)]
      st.gjk_iterations = k
      return 1
    nrm = normals[index]
    simplex[s[index]] = support(o1, o2, nrm, [-nrm[0], -nrm[1], -nrm[2]])
    if dot3(nrm, simplex[s[index]].vert) < 0:
      st.nsimplex = 0
      st.gjk_iterations = k
      return 0
    i = (index + 1) & 3
    j = (index + 2) & 3
    s[i], s[j] = s[j], s[i]
    k += 1
  st.gjk_iterations = k
  return -1


def lincomb(coef, n, vs):
  r = [0.0, 0.0, 0.0]
  for c in range(3):
    acc = coef[0] * vs[0][c]
    for q in range(1, n):
      acc = acc + coef[q] * vs[q][c]
    r[c] = acc
  return r


def project_origin_plane(v1, v2, v3):
  d21 = sub3(v2, v1)
  d31 = sub3(v3, v1)
  d32 = sub3(v3, v2)
  n = cross3(d32, d21)
  nv = dot3(n, v2)
  nn = dot3(n, n)
  if nn == 0:
    return 1, None
  if nv != 0 and nn > MINVAL:
    return 0, scl3(n, nv / nn)
  n = cross3(d21, d31)
  nv = dot3(n, v1)
  nn = dot3(n, n)
  if nn == 0:
    return 1, None
  if nv != 0 and nn > MINVAL:
    return 0, scl3(n, nv / nn)
  n = cross3(d31, d32)
  nv = dot3(n, v3)
  nn = dot3(n, n)
  return 0, scl3(n, nv / nn)


def cdiv(a, b):
  """C double division (x/0 -> +-inf or nan instead of an exception)."""
  try:
    return a / b
  except ZeroDivisionError:
    if a == 0 or a != a:
      return float('nan')
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def project_origin_line(v1, v2):
  diff = sub3(v2, v1)
  scl = -cdiv(dot3(v2, diff), dot3(diff, diff))
  return [v2[0] + scl * diff[0], v2[1] + scl * diff[1], v2[2] + scl * diff[2]]


def same_sign2(a, b):
  if a > 0 and b > 0:
    return 1
  if a < 0 and b < 0:
    return -1
  return 0


def S1D(s1, s2):
  p = project_origin_line(s1, s2)
  mu = s1[0] - s2[0]
  mu_max = mu
  index = 0
  mu = s1[1] - s2[1]
  if abs(mu) >= abs(mu_max):
    mu_max, index = mu, 1
  mu = s1[2] - s2[2]
  if abs(mu) >= abs(mu_max):
    mu_max, index = mu, 2
  C1 = p[index] - s2[index]
  C2 = s1[index] - p[index]
  same = same_sign2(mu_max, C1) and same_sign2(mu_max, C2)
  return [cdiv(C1, mu_max) if same else 0.0, cdiv(C2, mu_max) if same else 1.0]


def S2D(s1, s2, s3):
  ret, p = project_origin_plane(s1, s2, s3)
  if ret:
    l = S1D(s1, s2)
    return [l[0], l[1], 0.0]
  M14 = (s2[1] * s3[2] - s2[2] * s3[1] - s1[1] * s3[2] + s1[2] * s3[1]
         + s1[1] * s2[2] - s1[2] * s2[1])
  M24 = (s2[0] * s3[2] - s2[2] * s3[0] - s1[0] * s3[2] + s1[2] * s3[0]
         + s1[0] * s2[2] - s1[2] * s2[0])
  M34 = (s2[0] * s3[1] - s2[1] * s3[0] - s1[0] * s3[1] + s1[1] * s3[0]
         + s1[0] * s2[1] - s1[1] * s2[0])
  mu1, mu2, mu3 = abs(M14), abs(M24), abs(M34)
  if mu1 >= mu2 and mu1 >= mu3:
    M_max, x, y = M14, 1, 2
  elif mu2 >= mu3:
    M_max, x, y = M24, 0, 2
  else:
    M_max, x, y = M34, 0, 1
  a = (s1[x], s1[y])
  b = (s2[x], s2[y])
  c = (s3[x], s3[y])
  q = (p[x], p[y])
  C31 = q[0] * b[1] + q[1] * c[0] + b[0] * c[1] - q[0] * c[1] - q[1] * b[0] - c[0] * b[1]
  C32 = q[0] * c[1] + q[1] * a[0] + c[0] * a[1] - q[0] * a[1] - q[1] * c[0] - a[0] * c[1]
  C33 = q[0] * a[1] + q[1] * b[0] + a[0] * b[1] - q[0] * b[1] - q[1] * a[0] - b[0] * a[1]
  comp1, comp2, comp3 = same_sign2(M_max, C31), same_sign2(M_max, C32), same_sign2(M_max, C33)
  if comp1 and comp2 and comp3:
    return [C31 / M_max, C32 / M_max, C33 / M_max]
  lam = [0.0, 0.0, 0.0]
  dmin = MAX_LIMIT
  if not comp1:
    l = S1D(s2, s3)
    xx = lincomb(l, 2, [s2, s3])
    dmin = dot3(xx, xx)
    lam = [0.0, l[0], l[1]]
  if not comp2:
    l = S1D(s1, s3)
    xx = lincomb(l, 2, [s1, s3])
    dd = dot3(xx, xx)
    if dd < dmin:
      lam = [l[0], 0.0, l[1]]
      dmin = dd
  if not comp3:
    l = S1D(s1, s2)
    xx = lincomb(l, 2, [s1, s2])
    dd = dot3(xx, xx)
    if dd < dmin:
      lam = [l[0], l[1], 0.0]
  return lam


def S3D(s1, s2, s3, s4):
  C41 = -det3(s2, s3, s4)
  C42 = det3(s1, s3, s4)
  C43 = -det3(s1, s2, s4)
  C44 = det3(s1, s2, s3)
  m_det = C41 + C42 + C43 + C44
  c1, c2, c3, c4 = (same_sign2(m_det, C41), same_sign2(m_det, C42),
                    same_sign2(m_det, C43), same_sign2(m_det, C44))
  if c1 and c2 and c3 and c4:
    return [C41 / m_det, C42 / m_det, C43 / m_det, C44 / m_det]
  lam = [0.0, 0.0, 0.0, 0.0]
  dmin = MAX_LIMIT
  if not c1:
    l = S2D(s2, s3, s4)
    xx = lincomb(l, 3, [s2, s3, s4])
    dmin = dot3(xx, xx)
    lam = [0.0, l[0], l[1], l[2]]
  if not c2:
    l = S2D(s1, s3, s4)
    xx = lincomb(l, 3, [s1, s3, s4])
    dd = dot3(xx, xx)
    if dd < dmin:
      lam = [l[0], 0.0, l[1], l[2]]
      dmin = dd
  if not c3:
    l = S2D(s1, s2, s4)
    xx = lincomb(l, 3, [s1, s2, s4])
    dd = dot3(xx, xx)
    if dd < dmin:
      lam = [l[0], l[1], 0.0, l[2]]
      dmin = dd
  if not c4:
    l = S2D(s1, s2, s3)
    xx = lincomb(l, 3, [s1, s2, s3])
    dd = dot3(xx, xx)
    if dd < dmin:
      # NB: the reference leaves lambda[3] as set by an earlier branch here
      lam = [l[0], l[1], l[2], lam[3]]
  return lam


def subdistance(n, simplex):
  s = [v.vert for v in simplex]
  if n == 4:
    return S3D(s[0], s[1], s[2], s[3])
  if n == 3:
    return S2D(s[0], s[1], s[2]) + [0.0]
  if n == 2:
    return S1D(s[0], s[1]) + [0.0, 0.0]
  return [1.0, 0.0, 0.0, 0.0]


def gjk(st, o1, o2):
  get_dist = st.dist_cutoff > 0
  backup_gjk = not get_dist
  simplex = st.simplex
  n = 0
  k = 0
  kmax = st.max_iterations
  x_k = sub3(st.x1, st.x2)
  lam = [1.0, 0.0, 0.0, 0.0]
  cutoff2 = st.dist_cutoff * st.dist_cutoff
  epsilon = 0.0 if discrete_geoms(o1, o2) else GJK_EPS(st.tolerance)
  x_norm = 0.0
  early_thresh = GJK_EARLY(st.tolerance, epsilon)
  early = False
  enclosed = False
  while k < kmax:
    x_norm = dot3(x_k, x_k)
    if x_norm < early_thresh:
      early = True
      break
    x_norm = math.sqrt(x_norm)
    simplex[n] = gjk_support(o1, o2, x_k, x_norm)
    s_k = simplex[n].vert
    diff = sub3(x_k, s_k)
    if GJK_TRACE is not None:
      GJK_TRACE.append((k, n, x_norm, dot3(x_k, diff), epsilon, get_dist))
    if dot3(x_k, diff) < epsilon:
      if not k:
        n = 1
      break
    if not get_dist:
      if dot3(x_k, s_k) > 0:
        st.gjk_iterations, st.nsimplex, st.nx, st.dist = k, 0, 0, MAX_LIMIT
        return
    elif st.dist_cutoff < MAX_LIMIT:
      vs, vv = dot3(x_k, s_k), dot3(x_k, x_k)
      if vs > 0 and (vs * vs / vv) >= cutoff2:
        st.gjk_iterations, st.nsimplex, st.nx, st.dist = k, 0, 0, MAX_LIMIT
        return
    if n == 3 and backup_gjk:
      st.gjk_iterations = k
      ret = gjk_intersect(st, o1, o2)
      _hit('gjkIntersect=%d' % ret)
      if ret != -1:
        st.nx = 0
        st.dist = 0.0 if ret > 0 else MAX_LIMIT
        return
      k = st.gjk_iterations
      backup_gjk = False
    lam = subdistance(n + 1, simplex)
    n = 0
    for i in range(4):
      if not lam[i]:
        continue
      simplex[n] = simplex[i]
      lam[n] = lam[i]
      n += 1
    if n < 1:
      st.gjk_iterations, st.nsimplex, st.nx, st.dist = k, 0, 0, MAX_LIMIT
      return
    x_next = lincomb(lam, n, [v.vert for v in simplex[:n]])
    if equal3(x_next, x_k):
      break
    x_k = x_next
    if n == 4:
      enclosed = True
      break
    k += 1
  if n > 0:  # (n == 0 only if the very first x_k is ~0: witnesses stay the centers)
    st.x1 = lincomb(lam, n, [v.vert1 for v in simplex[:n]])
    st.x2 = lincomb(lam, n, [v.vert2 for v in simplex[:n]])
  st.nx = 1
  st.gjk_iterations = k
  st.nsimplex = n
  if early:
    st.dist = x_norm if GJK_EARLY_SQUARED else math.sqrt(x_norm)
  else:
    if GJK_DIST_FROM_XK == 'enclosed-only':
      # 3.11: |x| from the top of the last iteration, except when the origin was enclosed
      # by a tetrahedron (then ~0: the norm of the final, ~zero, iterate)
      st.dist = norm3(x_k) if enclosed else x_norm
    else:
      st.dist = norm3(x_k) if GJK_DIST_FROM_XK else x_norm


# ----------------------------------------------------------------- EPA
class Face:
  __slots__ = ('verts', 'adj', 'v', 'dist2', 'index', 'vproj')

  def __init__(self):
    self.verts = [0, 0, 0]
    self.adj = [0, 0, 0]
    self.v = [0.0, 0.0, 0.0]
    self.dist2 = 0.0
    self.index = -1
    self.vproj = None


class Polytope:
  def __init__(self, maxfaces):
    self.verts = []
    self.faces = []
    self.map = []  # list of face indices
    self.maxfaces = maxfaces
    self.hor_idx = []
    self.hor_edge = []
    self.w = None
    self.orient = 0  # winding sign convention of the initial polytope (see orient_face)


class EPAFail(Exception):
  pass


def orient_face(pt, f, s):
  """flip f.v when s*dot(cross(P2-P1, P3-P1), v) < 0 (s = winding convention)"""
  if s and f.vproj is not None:
    P1, P2, P3 = (pt.verts[q].vert for q in f.verts)
    if s * dot3(cross3(sub3(P2, P1), sub3(P3, P1)), f.v) < 0:
      f.v = [-f.v[0], -f.v[1], -f.v[2]]


def attach_face(pt, v1, v2, v3, a1, a2, a3):
  f = Face()
  pt.faces.append(f)
  f.verts = [v1, v2, v3]
  f.adj = [a1, a2, a3]
  ret, v = project_origin_plane(pt.verts[v3].vert, pt.verts[v2].vert, pt.verts[v1].vert)
  if ret:
    return 0.0
  f.vproj = v
  if FACE_ORIENT:
    P1, P2, P3 = pt.verts[v1].vert, pt.verts[v2].vert, pt.verts[v3].vert
    nrm = cross3(sub3(P2, P1), sub3(P3, P1))
    if FACE_ORIENT * dot3(nrm, v) < 0:
      v = [-v[0], -v[1], -v[2]]
  f.v = v
  f.dist2 = dot3(v, v)
  f.index = -1
  return f.dist2


def same_side(p0, p1, p2, p3):
  n = cross3(sub3(p1, p0), sub3(p2, p0))
  dot1 = dot3(n, sub3(p3, p0))
  dot2 = dot3(n, scl3(p0, -1))
  if dot1 > 0 and dot2 > 0:
    return 1
  if dot1 < 0 and dot2 < 0:
    return 1
  return 0


def test_tetra(p0, p1, p2, p3):
  return (same_side(p0, p1, p2, p3) and same_side(p1, p2, p3, p0)
          and same_side(p2, p3, p0, p1) and same_side(p3, p0, p1, p2))


def rotmat(axis):
  n = norm3(axis)
  u1, u2, u3 = axis[0] / n, axis[1] / n, axis[2] / n
  sn = 0.86602540378
  cs = -0.5
  return [cs + u1 * u1 * (1 - cs), u1 * u2 * (1 - cs) - u3 * sn, u1 * u3 * (1 - cs) + u2 * sn,
          u2 * u1 * (1 - cs) + u3 * sn, cs + u2 * u2 * (1 - cs), u2 * u3 * (1 - cs) - u1 * sn,
          u1 * u3 * (1 - cs) - u2 * sn, u2 * u3 * (1 - cs) + u1 * sn, cs + u3 * u3 * (1 - cs)]


def ray_triangle(v1, v2, v3, v4, v5):
  d12, d13, d14, d15 = sub3(v2, v1), sub3(v3, v1), sub3(v4, v1), sub3(v5, v1)
  vol1 = det3(d13, d14, d12)
  vol2 = det3(d14, d15, d12)
  vol3 = det3(d15, d13, d12)
  if vol1 >= 0 and vol2 >= 0 and vol3 >= 0:
    return 1
  if vol1 <= 0 and vol2 <= 0 and vol3 <= 0:
    return -1
  return 0


def replace_simplex3(pt, st, a, b, c):
  _hit('polytope%d -> polytope3 (origin on face)' % (4 if len(pt.verts) == 4 else 2))
  st.nsimplex = 3
  st.simplex = [pt.verts[a].copy(), pt.verts[b].copy(), pt.verts[c].copy(), Vertex()]
  pt.faces = []
  pt.verts = []
  pt.map = []


def insert_vertex(pt, v):
  pt.verts.append(v.copy())
  return len(pt.verts) - 1


def _populate_map(pt, n):
  pt.map = list(range(n))
  for i in range(n):
    pt.faces[i].index = i


def polytope2(pt, st, o1, o2):
  v1, v2 = st.simplex[0].vert, st.simplex[1].vert
  diff = sub3(v2, v1)
  value, index = MAX_LIMIT, 0
  for i in range(3):
    if abs(diff[i]) < value:
      value, index = abs(diff[i]), i
  e = [0.0, 0.0, 0.0]
  e[index] = 1.0
  d1 = cross3(e, diff)
  R = rotmat(diff)
  d2 = mat_vec(R, d1)
  d3 = mat_vec(R, d2)
  v1i = insert_vertex(pt, st.simplex[0])
  v2i = insert_vertex(pt, st.simplex[1])
  v3i = epa_support(pt, o1, o2, d1, norm3(d1))
  v4i = epa_support(pt, o1, o2, d2, norm3(d2))
  v5i = epa_support(pt, o1, o2, d3, norm3(d3))
  v3, v4, v5 = pt.verts[v3i].vert, pt.verts[v4i].vert, pt.verts[v5i].vert
  for (a, b, c, x, y, z) in ((v1i, v3i, v4i, 1, 3, 2), (v1i, v5i, v3i, 2, 4, 0),
                             (v1i, v4i, v5i, 0, 5, 1), (v2i, v4i, v3i, 5, 0, 4),
                             (v2i, v3i, v5i, 3, 1, 5), (v2i, v5i, v4i, 4, 2, 3)):
    if attach_face(pt, a, b, c, x, y, z) < MINVAL2:
      replace_simplex3(pt, st, a, b, c)
      return polytope3(pt, st, o1, o2)
    orient_face(pt, pt.faces[-1], P2_ORIENT)
    pt.orient = P2_ORIENT
  if not ray_triangle(v1, v2, v3, v4, v5):
    return EPA_P2_NONCONVEX
  _populate_map(pt, 6)
  return 0


def tri_affine_coord(v1, v2, v3, p):
  M14 = (v2[1] * v3[2] - v2[2] * v3[1] - v1[1] * v3[2] + v1[2] * v3[1]
         + v1[1] * v2[2] - v1[2] * v2[1])
  M24 = (v2[0] * v3[2] - v2[2] * v3[0] - v1[0] * v3[2] + v1[2] * v3[0]
         + v1[0] * v2[2] - v1[2] * v2[0])
  M34 = (v2[0] * v3[1] - v2[1] * v3[0] - v1[0] * v3[1] + v1[1] * v3[0]
         + v1[0] * v2[1] - v1[1] * v2[0])
  mu1, mu2, mu3 = abs(M14), abs(M24), abs(M34)
  if mu1 >= mu2 and mu1 >= mu3:
    M_max, x, y = M14, 1, 2
  elif mu2 >= mu3:
    M_max, x, y = M24, 0, 2
  else:
    M_max, x, y = M34, 0, 1
  C31 = p[x] * v2[y] + p[y] * v3[x] + v2[x] * v3[y] - p[x] * v3[y] - p[y] * v2[x] - v3[x] * v2[y]
  C32 = p[x] * v3[y] + p[y] * v1[x] + v3[x] * v1[y] - p[x] * v1[y] - p[y] * v3[x] - v1[x] * v3[y]
  C33 = p[x] * v1[y] + p[y] * v2[x] + v1[x] * v2[y] - p[x] * v2[y] - p[y] * v1[x] - v2[x] * v1[y]
  return [C31 / M_max, C32 / M_max, C33 / M_max]


def tri_point_intersect(v1, v2, v3, p):
  l = tri_affine_coord(v1, v2, v3, p)
  if l[0] < 0 or l[1] < 0 or l[2] < 0:
    return 0
  pr = [v1[c] * l[0] + v2[c] * l[1] + v3[c] * l[2] for c in range(3)]
  return norm3(sub3(pr, p)) < MINVAL


def polytope3(pt, st, o1, o2):
  v1, v2, v3 = st.simplex[0].vert, st.simplex[1].vert, st.simplex[2].vert
  n = cross3(sub3(v2, v1), sub3(v3, v1))
  n_norm = norm3(n)
  if n_norm < MINVAL:
    return EPA_P3_BAD_NORMAL
  n_neg = scl3(n, -1)
  v1i = insert_vertex(pt, st.simplex[0])
  v2i = insert_vertex(pt, st.simplex[1])
  v3i = insert_vertex(pt, st.simplex[2])
  v5i = epa_support(pt, o1, o2, n_neg, n_norm)
  v4i = epa_support(pt, o1, o2, n, n_norm)
  v4, v5 = pt.verts[v4i].vert, pt.verts[v5i].vert
  if tri_point_intersect(v1, v2, v3, v4):
    return EPA_P3_INVALID_V4
  if tri_point_intersect(v1, v2, v3, v5):
    return EPA_P3_INVALID_V5
  if st.dist > 10 * MINVAL and not test_tetra(v1, v2, v3, v4) and not test_tetra(v1, v2, v3, v5):
    return EPA_P3_MISSING_ORIGIN
  for (a, b, c, x, y, z) in ((v4i, v1i, v2i, 1, 3, 2), (v4i, v3i, v1i, 2, 4, 0),
                             (v4i, v2i, v3i, 0, 5, 1), (v5i, v2i, v1i, 5, 0, 4),
                             (v5i, v1i, v3i, 3, 1, 5), (v5i, v3i, v2i, 4, 2, 3)):
    if attach_face(pt, a, b, c, x, y, z) < MINVAL2:
      return EPA_P3_ORIGIN_ON_FACE
    pt.orient = 1 if P3_ORIENT else 0
    if P3_ORIENT:
      f = pt.faces[-1]
      P1, P2, P3 = (pt.verts[q].vert for q in f.verts)
      if dot3(cross3(sub3(P2, P1), sub3(P3, P1)), f.v) < 0:
        f.v = [-f.v[0], -f.v[1], -f.v[2]]
  _populate_map(pt, 6)
  return 0


def polytope4(pt, st, o1, o2):
  v1 = insert_vertex(pt, st.simplex[0])
  v2 = insert_vertex(pt, st.simplex[1])
  v3 = insert_vertex(pt, st.simplex[2])
  v4 = insert_vertex(pt, st.simplex[3])
  for (a, b, c, x, y, z) in ((v1, v2, v3, 1, 3, 2), (v1, v4, v2, 2, 3, 0),
                             (v1, v3, v4, 0, 3, 1), (v4, v3, v2, 2, 0, 1)):
    if attach_face(pt, a, b, c, x, y, z) < MINVAL2:
      replace_simplex3(pt, st, a, b, c)
      return polytope3(pt, st, o1, o2)
    if P4_ORIENT in ('det+', 'det-'):
      V = [pt.verts[q].vert for q in (v1, v2, v3, v4)]
      dd = det3(sub3(V[1], V[0]), sub3(V[2], V[0]), sub3(V[3], V[0]))
      sg = (1 if dd > 0 else -1) * (1 if P4_ORIENT == 'det+' else -1)
      orient_face(pt, pt.faces[-1], sg if P4_FACE_ORIENT else 0)
      pt.orient = sg
    else:
      orient_face(pt, pt.faces[-1], P4_FACE_ORIENT)
      pt.orient = P4_ORIENT
  if not test_tetra(pt.verts[v1].vert, pt.verts[v2].vert, pt.verts[v3].vert, pt.verts[v4].vert):
    return EPA_P4_MISSING_ORIGIN
  _populate_map(pt, 4)
  return 0


def delete_face(pt, fi):
  f = pt.faces[fi]
  if f.index >= 0:
    last = pt.map.pop()
    if f.index < len(pt.map):
      pt.map[f.index] = last
      pt.faces[last].index = f.index
  f.index = -2


def get_edge(face, vertex):
  if face.verts[0] == vertex:
    return 0
  if face.verts[1] == vertex:
    return 1
  return 2


def horizon_rec(pt, fi, e):
  face = pt.faces[fi]
  if EPA_TRACE is not None:
    EPA_TRACE.append(('hrec', fi, e, dot3(face.v, pt.w) - face.dist2))
  if dot3(face.v, pt.w) - face.dist2 > MINVAL:
    delete_face(pt, fi)
    for k in (1, 2):
      i = (e + k) % 3
      ai = face.adj[i]
      adj = pt.faces[ai]
      if adj.index > -2:
        adj_edge = get_edge(adj, face.verts[(i + 1) % 3])
        if not horizon_rec(pt, ai, adj_edge):
          pt.hor_idx.append(ai)
          pt.hor_edge.append(adj_edge)
    return 1
  return 0


def horizon(pt, fi):
  face = pt.faces[fi]
  delete_face(pt, fi)
  ai = face.adj[0]
  adj_edge = get_edge(pt.faces[ai], face.verts[1])
  if not horizon_rec(pt, ai, adj_edge):
    pt.hor_idx.append(ai)
    pt.hor_edge.append(adj_edge)
  ai = face.adj[1]
  adj_edge = get_edge(pt.faces[ai], face.verts[2])
  if pt.faces[ai].index > -2 and not horizon_rec(pt, ai, adj_edge):
    pt.hor_idx.append(ai)
    pt.hor_edge.append(adj_edge)
  ai = face.adj[2]
  adj_edge = get_edge(pt.faces[ai], face.verts[0])
  if pt.faces[ai].index > -2 and not horizon_rec(pt, ai, adj_edge):
    pt.hor_idx.append(ai)
    pt.hor_edge.append(adj_edge)


def epa_witness(pt, face):
  a, b, c = (pt.verts[i] for i in face.verts)
  l = tri_affine_coord(a.vert, b.vert, c.vert, face.vproj if WITNESS_PROJ else face.v)
  x1 = [a.vert1[q] * l[0] + b.vert1[q] * l[1] + c.vert1[q] * l[2] for q in range(3)]
  x2 = [a.vert2[q] * l[0] + b.vert2[q] * l[1] + c.vert2[q] * l[2] for q in range(3)]
  return x1, x2


def epa(st, pt, o1, o2):
  upper = MAX_LIMIT
  upper2 = MAX_LIMIT
  face = None
  tolerance = st.tolerance
  discrete = discrete_geoms(o1, o2)
  if discrete:
    tolerance = MINVAL
  kmax = st.max_iterations
  k = 0
  while k < kmax:
    pface = face
    lower2 = MAX_LIMIT
    for fi in pt.map:
      if pt.faces[fi].dist2 < lower2:
        face = fi
        lower2 = pt.faces[fi].dist2
    if lower2 > upper2 or face is None:
      _hit('epa:lower>upper stop')
      face = pface
      break
    if lower2 <= 0:
      break
    F = pt.faces[face]
    lower = math.sqrt(lower2)
    sdir = F.v
    if EPA_DIR_ORIENT:
      P1, P2, P3 = (pt.verts[q].vert for q in F.verts)
      nrm = cross3(sub3(P2, P1), sub3(P3, P1))
      if EPA_DIR_ORIENT * dot3(nrm, F.v) < 0:
        sdir = [-F.v[0], -F.v[1], -F.v[2]]
    wi = epa_support(pt, o1, o2, sdir, lower)
    w = pt.verts[wi]
    upper_k = dot3(sdir if UPPER_USES_DIR else F.v, w.vert) / lower
    if EPA_TRACE is not None:
      EPA_TRACE.append(('it', k, lower, upper_k, upper, len(pt.map), F.v, w.vert, w.vert1, w.vert2))
    if upper_k < upper or EPA_UPPER_NOMIN:
      upper = upper_k
      upper2 = upper * upper
    if EPA_NEG_UPPER and EPA_NOCONTACT_TEST(upper, upper_k, lower):
      _hit('epa:negative upper bound -> no contact')
      face = None
      break
    if EPA_STOP(upper, lower, tolerance):
      _hit('epa:tolerance stop')
      break
    if discrete:
      nverts = len(pt.verts) - 1
      i = 0
      while i < nverts:
        if w.index1 == pt.verts[i].index1 and w.index2 == pt.verts[i].index2:
          break
        i += 1
      if i != nverts:
        _hit('epa:repeated-vertex stop')
        break
    pt.w = w.vert
    pt.hor_idx, pt.hor_edge = [], []
    horizon(pt, face)
    if len(pt.hor_idx) < 3:
      face = None
      break
    nfaces, nedges = len(pt.faces), len(pt.hor_idx)
    if nedges > pt.maxfaces - nfaces:
      break  # out of memory warning
    failed = False
    for i in range(nedges):
      cur = nfaces + i
      prev = nfaces + nedges - 1 if i == 0 else cur - 1
      nxt = nfaces + (i + 1) % nedges
      hi, he = pt.hor_idx[i], pt.hor_edge[i]
      hf = pt.faces[hi]
      a = hf.verts[he]
      b = hf.verts[(he + 1) % 3]
      hf.adj[he] = cur
      dist2 = attach_face(pt, wi, b, a, prev, hi, nxt)
      orient_face(pt, pt.faces[-1], pt.orient if EPA_ORIENT == 'inherit' else EPA_ORIENT)
      if dist2 == 0:
        face = None
        failed = True
        break
      if EPA_TRACE is not None:
        EPA_TRACE.append(('face', k, math.sqrt(dist2) if dist2 > 0 else dist2, lower, upper))
      if dist2 >= lower2 and dist2 <= upper2:
        pt.map.append(len(pt.faces) - 1)
        pt.faces[-1].index = len(pt.map) - 1
    pt.hor_idx, pt.hor_edge = [], []
    if failed or not pt.map or face is None:
      break
    k += 1
  st.epa_iterations = k
  if k == kmax:
    _hit('epa:max iterations')
  if face is None:
    _hit('epa:no face')
  if face is not None:
    st.x1, st.x2 = epa_witness(pt, pt.faces[face])
    st.nx = 1
    st.dist = -math.sqrt(pt.faces[face].dist2)
  else:
    st.nx = 0
    st.dist = 0.0
  return face


def inflate(st, m1, m2):
  n = normalize3(sub3(st.x2, st.x1))
  if m1:
    st.x1 = [st.x1[q] + m1 * n[q] for q in range(3)]
  if m2:
    st.x2 = [st.x2[q] - m2 * n[q] for q in range(3)]
  st.dist -= (m1 + m2)


def ccd(o1, o2, tolerance, max_iterations, max_contacts=1, dist_cutoff=0.0):
  """mjc_ccd; returns (dist, status)."""
  st = Status()
  st.x1 = o1.center()
  st.x2 = o2.center()
  st.tolerance = tolerance
  st.max_iterations = max_iterations
  st.max_contacts = max_contacts
  st.dist_cutoff = dist_cutoff
  st.epa_status = -1

  if o2.gtype in (GEOM_SPHERE, GEOM_CAPSULE):  # (obj1 is the prism here)
    margin2 = o2.margin
    full2 = o2.size[0] + 0.5 * margin2
    o2.mode = 'point' if o2.gtype == GEOM_SPHERE else 'line'
    o2.margin = 0.0
    st.dist_cutoff += 0.0 + full2
    gjk(st, o1, o2)
    st.dist_cutoff = dist_cutoff
    o2.margin = margin2
    o2.mode = None
    if st.dist > SHALLOW_THRESH(st.tolerance):
      _hit('core:shallow(inflate)' if st.dist < MAX_LIMIT else 'core:separated')
      inflate(st, 0.0, full2)
      if st.dist > st.dist_cutoff:
        st.dist = MAX_LIMIT
      return st.dist, st
    _hit('core:deep->full GJK+EPA')
    st.gjk_iterations = 0
    st.x1 = o1.center()
    st.x2 = o2.center()
  gjk(st, o1, o2)
  if st.dist <= tolerance and st.nsimplex > 1:
    st.dist = 0.0
    pt = Polytope(6 * MAX_EPA_ITERATIONS if max_iterations <= MAX_EPA_ITERATIONS
                  else 6 * max_iterations)
    if st.nsimplex == 2:
      ret = polytope2(pt, st, o1, o2)
    elif st.nsimplex == 3:
      ret = polytope3(pt, st, o1, o2)
    else:
      ret = polytope4(pt, st, o1, o2)
    st.epa_status = ret
    _hit('polytope%d ret=%d' % (st.nsimplex, ret))
    if not ret:
      epa(st, pt, o1, o2)
  return st.dist, st


# ----------------------------------------------------------------- fixNormal
def fix_normal(gtype2, size2, xpos2, xmat2, con_pos, frame):
  """mjc_fixNormal for g1 = hfield (not processable) and g2 sphere/capsule."""
  if gtype2 not in (GEOM_SPHERE, GEOM_CAPSULE):
    return frame
  nrm_in = [-frame[0], -frame[1], -frame[2]]
  dif = sub3(con_pos, xpos2)
  pos = matT_vec(xmat2, dif)
  nrm = matT_vec(xmat2, nrm_in)
  if gtype2 == GEOM_SPHERE:
    nrm = list(pos)
  else:
    if pos[2] < -size2[1]:
      nrm[2] = pos[2] + size2[1]
    elif pos[2] > size2[1]:
      nrm[2] = pos[2] - size2[1]
    else:
      nrm[2] = 0.0
    nrm[0], nrm[1] = pos[0], pos[1]
  nrm = normalize3(nrm)
  n2 = mat_vec(xmat2, nrm)
  return [-n2[0], -n2[1], -n2[2]]


# ----------------------------------------------------------------- hfield driver
def hfield_contacts(m, d, g1, g2, margin=None, fixnormal=False, trace=None):
  """Contacts of hfield geom g1 with sphere/capsule/box geom g2 (mjc_ConvexHField)."""
  if margin is None:
    # observed in 3.11 (contact.includemargin): pair margin = sum of the geom margins
    margin = float(m.geom_margin[g1]) + float(m.geom_margin[g2])
  pos1 = [float(x) for x in d.geom_xpos[g1]]
  mat1 = [float(x) for x in d.geom_xmat[g1]]
  pos2 = [float(x) for x in d.geom_xpos[g2]]
  mat2 = [float(x) for x in d.geom_xmat[g2]]
  hid = int(m.geom_dataid[g1])
  nrow, ncol = int(m.hfield_nrow[hid]), int(m.hfield_ncol[hid])
  s0, s1, s2, s3 = (float(x) for x in m.hfield_size[hid])
  adr = int(m.hfield_adr[hid])
  data = m.hfield_data[adr:adr + nrow * ncol]

  # box-sphere early-out
  pos = matT_vec(mat1, sub3(pos2, pos1))
  radius = float(m.geom_rbound[g2]) + margin
  if ((s0 < pos[0] - radius) or (-s0 > pos[0] + radius) or
      (s1 < pos[1] - radius) or (-s1 > pos[1] + radius) or
      (s2 < pos[2] - radius) or (-s3 > pos[2] + radius)):
    return []

  gtype2 = int(m.geom_type[g2])
  mat = matT_mat(mat1, mat2)
  size2 = [float(x) for x in m.geom_size[g2]]
  o1 = Obj(GEOM_HFIELD)
  o2 = Obj(gtype2, pos=pos, mat=mat, size=size2, margin=0.0)

  # AABB of geom2 in hfield frame (support without margin)
  xmax = o2.support([1.0, 0.0, 0.0])[0]
  xmin = o2.support([-1.0, 0.0, 0.0])[0]
  ymax = o2.support([0.0, 1.0, 0.0])[1]
  ymin = o2.support([0.0, -1.0, 0.0])[1]
  zmax = o2.support([0.0, 0.0, 1.0])[2]
  zmin = o2.support([0.0, 0.0, -1.0])[2]
  if ((xmin - margin > s0) or (xmax + margin < -s0) or
      (ymin - margin > s1) or (ymax + margin < -s1) or
      (zmin - margin > s2) or (zmax + margin < -s3)):
    return []

  cmin = int(math.floor((xmin + s0) / (2.0 * s0) * (ncol - 1)))
  cmax = int(math.ceil((xmax + s0) / (2.0 * s0) * (ncol - 1)))
  rmin = int(math.floor((ymin + s1) / (2.0 * s1) * (nrow - 1)))
  rmax = int(math.ceil((ymax + s1) / (2.0 * s1) * (nrow - 1)))
  cmin = max(0, cmin)
  cmax = min(ncol - 1, cmax)
  rmin = max(0, rmin)
  rmax = min(nrow - 1, rmax)

  o2.margin = margin
  if PRISM_MARGIN:
    o1.margin = margin
  o2.vertindex = -1
  tol = float(m.opt.ccd_tolerance)
  iters = int(m.opt.ccd_iterations)
  dx = (2.0 * s0) / (ncol - 1)
  dy = (2.0 * s1) / (nrow - 1)
  P = o1.prism
  P[0][2] = P[1][2] = P[2][2] = -s3

  def push(r, c, i):
    P[0] = list(P[1]); P[1] = list(P[2])
    P[3] = list(P[4]); P[4] = list(P[5])
    dr = 1 - i
    x = dx * c - s0
    y = dy * (r + dr) - s1
    P[2] = [x, y, P[2][2]]
    z = float(data[(r + dr) * ncol + c]) * s2
    P[5] = [x, y, z + margin]

  out = []
  for r in range(rmin, rmax):
    push(r, cmin, 0)
    push(r, cmin, 1)
    for c in range(cmin + 1, cmax + 1):
      for i in range(2):
        push(r, c, i)
        if P[3][2] < zmin and P[4][2] < zmin and P[5][2] < zmin:
          continue
        dist, st = ccd(o1, o2, tol, iters)
        if trace is not None:
          trace.append((r, c, i, dist, st.nsimplex, st.epa_status))
        if dist < 0:
          depth = -dist
          dirv = normalize3(sub3(st.x1, st.x2))
          if dirv == [0.0, 0.0, 0.0]:
            continue
          p = [0.5 * (st.x1[q] + st.x2[q]) for q in range(3)]
          frame = mat_vec(mat1, dirv)
          wp = mat_vec(mat1, p)
          wp = [wp[0] + pos1[0], wp[1] + pos1[1], wp[2] + pos1[2]]
          out.append({'dist': -depth, 'pos': wp, 'frame': frame, 'cell': (r, c, i)})
          if len(out) >= MAXCONPAIR:
            _hit('MAXCONPAIR reached')
            return _finish(out, fixnormal, gtype2, size2, pos2, mat2)
  return _finish(out, fixnormal, gtype2, size2, pos2, mat2)


def _finish(out, fixnormal, gtype2, size2, pos2, mat2):
  if fixnormal:
    for c in out:
      c['frame'] = fix_normal(gtype2, size2, pos2, mat2, c['pos'], c['frame'])
  return out
