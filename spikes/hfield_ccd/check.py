"""Compare hfield_ccd.py against libmujoco 3.11 (mujoco.mj_forward) contacts.

usage: .venv/bin/python spikes/hfield_ccd/check.py [--trials N] [--seed S] [--margin M]
                                                   [--fixnormal] [--verbose]
"""
import argparse
import os
import sys

import mujoco
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hfield_ccd  # noqa: E402


def make_xml(rng, nrow, ncol, margin, tilt, size, option='', elev=None,
             boxsize='0.2 0.15 0.1'):
  if elev is None:
    elev = rng.uniform(0.0, 1.0, size=(nrow, ncol))
    # some structure + noise
    yy, xx = np.mgrid[0:nrow, 0:ncol]
    elev = 0.5 * elev + 0.5 * (0.5 + 0.5 * np.sin(xx / 2.0) * np.cos(yy / 3.0))
  etxt = ' '.join(f'{v:.6f}' for v in elev.ravel())
  sx, sy, sz, sb = size
  return f"""
<mujoco>
  <option timestep="0.002" {option}/>
  <asset>
    <hfield name="hf" nrow="{nrow}" ncol="{ncol}" size="{sx} {sy} {sz} {sb}" elevation="{etxt}"/>
  </asset>
  <worldbody>
    <body name="terrain" pos="0.1 -0.2 0.05" euler="{tilt[0]} {tilt[1]} {tilt[2]}">
      <geom name="hf" type="hfield" hfield="hf" contype="1" conaffinity="2" margin="{margin}"/>
    </body>
    <body name="ball"><freejoint/>
      <geom name="sphere" type="sphere" size="0.23" contype="2" conaffinity="1" margin="{margin}"/></body>
    <body name="cap"><freejoint/>
      <geom name="capsule" type="capsule" size="0.12 0.3" contype="2" conaffinity="1" margin="{margin}"/></body>
    <body name="box"><freejoint/>
      <geom name="box" type="box" size="{boxsize}" contype="2" conaffinity="1" margin="{margin}"/></body>
  </worldbody>
</mujoco>"""


def rand_quat(rng):
  q = rng.normal(size=4)
  return q / np.linalg.norm(q)


def place(m, d, rng, hf_gid):
  """Random pose for each free body near the surface (some penetrating, some not)."""
  hpos = d.geom_xpos[hf_gid].copy()
  hmat = d.geom_xmat[hf_gid].reshape(3, 3).copy()
  hid = m.geom_dataid[hf_gid]
  sx, sy, sz, sb = m.hfield_size[hid]
  nrow, ncol = m.hfield_nrow[hid], m.hfield_ncol[hid]
  data = m.hfield_data[m.hfield_adr[hid]:m.hfield_adr[hid] + nrow * ncol].reshape(nrow, ncol)
  for j in range(3):
    lx = rng.uniform(-1.1 * sx, 1.1 * sx)
    ly = rng.uniform(-1.1 * sy, 1.1 * sy)
    c = int(np.clip(round((lx + sx) / (2 * sx) * (ncol - 1)), 0, ncol - 1))
    r = int(np.clip(round((ly + sy) / (2 * sy) * (nrow - 1)), 0, nrow - 1))
    h = data[r, c] * sz
    lz = h + rng.uniform(-0.25, 0.35)
    if rng.uniform() < 0.1:
      lz = h + rng.uniform(-0.6, -0.3)  # deep
    wpos = hpos + hmat @ np.array([lx, ly, lz])
    adr = m.jnt_qposadr[j]
    d.qpos[adr:adr + 3] = wpos
    d.qpos[adr + 3:adr + 7] = rand_quat(rng)


def compare(m, d, hf, stats, tag, verbose, fixnormal):
  for name in ('sphere', 'capsule', 'box'):
    g = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, name)
    mj = [c for c in d.contact[:d.ncon] if {c.geom1, c.geom2} == {hf, g}]
    for c in mj:
      assert c.geom1 == hf and c.geom2 == g, (c.geom1, c.geom2)
    py = hfield_ccd.hfield_contacts(m, d, hf, g, fixnormal=fixnormal)
    S = stats[name]
    S['pairs'] += 1
    S['ncon_mj'] += len(mj)
    S['ncon_py'] += len(py)
    S['maxcon'] = max(S['maxcon'], len(mj))
    if len(mj) != len(py):
      S['count_mismatch'] += 1
      if verbose:
        print(f'{tag} {name}: count mj={len(mj)} py={len(py)}')
        for c in mj:
          print('   mj', c.dist, c.pos, c.frame[:3])
        for c in py:
          print('   py', c['dist'], c['pos'], c['frame'], c['cell'])
      continue
    for cm, cp in zip(mj, py):
      ed = abs(cm.dist - cp['dist'])
      ep = np.max(np.abs(cm.pos - np.array(cp['pos'])))
      ef = np.max(np.abs(cm.frame[:3] - np.array(cp['frame'])))
      if max(ed, ep, ef) > max(S['dist'], S['pos'], S['frame']):
        S['worst'] = (tag, ed, float(ep), float(ef))
      S['dist'] = max(S['dist'], ed)
      S['pos'] = max(S['pos'], ep)
      S['frame'] = max(S['frame'], ef)
      if verbose and max(ed, ep, ef) > 1e-9:
        print(f'{tag} {name} cell {cp["cell"]}: dist {cm.dist:.12g} vs {cp["dist"]:.12g}'
              f'  dpos {ep:.2e} dframe {ef:.2e}')


def random_scenes(args, rng):
  """Random poses on 4 hfield variants (non-square grids, tilted frames)."""
  variants = []
  for k in range(4):
    nrow, ncol = [(7, 11), (12, 9), (5, 16), (9, 6)][k]
    tilt = [(0, 0, 0), (8, -5, 30), (-12, 4, 75), (3, 10, -20)][k]
    size = [(1.5, 1.0, 0.4, 0.3), (1.0, 1.3, 0.5, 0.2), (2.0, 0.8, 0.3, 0.5),
            (0.9, 1.1, 0.6, 0.25)][k]
    variants.append((nrow, ncol, tilt, size))
  for trial in range(args.trials):
    nrow, ncol, tilt, size = variants[trial % len(variants)]
    margin = args.margin if args.margin is not None else (0.0 if (trial // 4) % 2 == 0 else 0.02)
    option = ''
    if trial % 16 >= 12:  # non-default ccd settings
      option = 'ccd_iterations="12" ccd_tolerance="1e-3"'
    xml = make_xml(np.random.default_rng(1000 + trial % 8), nrow, ncol, margin, tilt, size,
                   option=option)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    hf = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, 'hf')
    mujoco.mj_kinematics(m, d)
    place(m, d, rng, hf)
    yield f'rand{trial}', m, d, hf


def degenerate_scenes(args, rng):
  """Axis-aligned poses, plateaus, exact touching, grid-node positions."""
  nrow, ncol = 6, 9
  elev = np.full((nrow, ncol), 0.5)
  elev[0, 0] = 0.0
  elev[nrow - 1, ncol - 1] = 1.0
  elev[2:4, 5:7] = 0.8  # a raised block (vertical-ish walls)
  size = (1.6, 1.0, 0.4, 0.3)
  quats = [np.array([1.0, 0, 0, 0]), np.array([np.sqrt(0.5), np.sqrt(0.5), 0, 0]),
           np.array([np.sqrt(0.5), 0, np.sqrt(0.5), 0]),
           np.array([np.cos(np.pi / 8), 0, 0, np.sin(np.pi / 8)])]
  for trial in range(args.trials):
    margin = [0.0, 0.0, 0.01][trial % 3]
    tilt = (0, 0, 0) if trial % 2 == 0 else (0, 0, 90)
    xml = make_xml(None, nrow, ncol, margin, tilt, size, elev=elev)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    hf = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, 'hf')
    mujoco.mj_kinematics(m, d)
    hpos = d.geom_xpos[hf].copy()
    hmat = d.geom_xmat[hf].reshape(3, 3).copy()
    hid = m.geom_dataid[hf]
    sz = m.hfield_size[hid]
    data = m.hfield_data[m.hfield_adr[hid]:m.hfield_adr[hid] + nrow * ncol].reshape(nrow, ncol)
    dx, dy = 2 * sz[0] / (ncol - 1), 2 * sz[1] / (nrow - 1)
    for j in range(3):
      c = int(rng.integers(0, ncol))
      r = int(rng.integers(0, nrow))
      lx = -sz[0] + c * dx + rng.choice([0.0, 0.5 * dx, 0.25 * dx])
      ly = -sz[1] + r * dy + rng.choice([0.0, 0.5 * dy])
      h = float(data[r, c]) * sz[2]
      q = quats[int(rng.integers(0, len(quats)))]
      # half-extent along hfield z of the geom for q (exact for axis-aligned)
      R = np.zeros(9)
      mujoco.mju_quat2Mat(R, q)
      R = R.reshape(3, 3)
      gid = m.body_geomadr[j + 1]
      gs = m.geom_size[gid]
      if m.geom_type[gid] == mujoco.mjtGeom.mjGEOM_SPHERE:
        ext = gs[0]
      elif m.geom_type[gid] == mujoco.mjtGeom.mjGEOM_CAPSULE:
        ext = gs[0] + gs[1] * abs(R[2, 2])
      else:
        ext = np.abs(R[2, :]) @ gs
      lz = h + ext + rng.choice([0.0, -1e-9, -0.01, -0.05, margin, -ext, -ext - 0.02])
      wpos = hpos + hmat @ np.array([lx, ly, lz])
      adr = m.jnt_qposadr[j]
      d.qpos[adr:adr + 3] = wpos
      d.qpos[adr + 3:adr + 7] = q
    yield f'degen{trial}', m, d, hf


def maxcon_scenes(args, rng):
  """Fine grid + large deep box/capsule/sphere: more than mjMAXCONPAIR prisms collide."""
  nrow, ncol = 31, 27
  for trial in range(max(4, args.trials // 20)):
    xml = make_xml(np.random.default_rng(77 + trial), nrow, ncol, 0.0,
                   (0, 0, 0) if trial % 2 == 0 else (5, 3, 10), (1.0, 1.2, 0.1, 0.3),
                   boxsize='0.6 0.5 0.2')
    xml = xml.replace('size="0.23"', 'size="0.5"').replace('size="0.12 0.3"', 'size="0.3 0.6"')
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    hf = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, 'hf')
    mujoco.mj_kinematics(m, d)
    hpos = d.geom_xpos[hf].copy()
    hmat = d.geom_xmat[hf].reshape(3, 3).copy()
    for j in range(3):
      lp = np.array([rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3), rng.uniform(0.15, 0.35)])
      adr = m.jnt_qposadr[j]
      d.qpos[adr:adr + 3] = hpos + hmat @ lp
      d.qpos[adr + 3:adr + 7] = rand_quat(rng) if trial % 2 else [1, 0, 0, 0]
    yield f'maxcon{trial}', m, d, hf


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument('--trials', type=int, default=200)
  ap.add_argument('--seed', type=int, default=0)
  ap.add_argument('--margin', type=float, default=None,
                  help='fixed geom margin for the random scenes; default alternates 0 / 0.02')
  ap.add_argument('--scenes', default='random,degenerate,maxcon')
  ap.add_argument('--fixnormal', action='store_true',
                  help='apply mjc_fixNormal (expected to DISAGREE with 3.11 native ccd)')
  ap.add_argument('--tol', type=float, default=None,
                  help='override opt.ccd_tolerance in every scene (default: model value)')
  ap.add_argument('--iters', type=int, default=None,
                  help='override opt.ccd_iterations in every scene (default: model value)')
  ap.add_argument('--verbose', action='store_true')
  args = ap.parse_args()

  ok = True
  for kind in args.scenes.split(','):
    rng = np.random.default_rng(args.seed)
    hfield_ccd.COUNTS.clear()
    stats = {t: dict(pairs=0, ncon_mj=0, ncon_py=0, count_mismatch=0, dist=0.0, pos=0.0,
                     frame=0.0, worst=None, maxcon=0) for t in ('sphere', 'capsule', 'box')}
    gen = {'random': random_scenes, 'degenerate': degenerate_scenes,
           'maxcon': maxcon_scenes}[kind]
    for tag, m, d, hf in gen(args, rng):
      if args.tol is not None:
        m.opt.ccd_tolerance = args.tol
      if args.iters is not None:
        m.opt.ccd_iterations = args.iters
      mujoco.mj_forward(m, d)
      compare(m, d, hf, stats, tag, args.verbose, args.fixnormal)
    print(f'== scenes={kind} mujoco {mujoco.__version__}, trials={args.trials}, seed={args.seed}, '
          f'margin={"alt 0/0.02" if args.margin is None else args.margin}, '
          f'fixnormal={args.fixnormal}, ccd_tolerance override={args.tol}, '
          f'ccd_iterations override={args.iters}')
    for name, S in stats.items():
      print(f'{name:8s} pairs={S["pairs"]:4d} contacts mj={S["ncon_mj"]:5d} py={S["ncon_py"]:5d} '
            f'(max/pair {S["maxcon"]:2d}) count_mismatch={S["count_mismatch"]:3d}  '
            f'max|ddist|={S["dist"]:.3e} max|dpos|={S["pos"]:.3e} max|dframe|={S["frame"]:.3e}'
            f'  worst={S["worst"]}')
      ok &= S['count_mismatch'] == 0 and max(S['dist'], S['pos'], S['frame']) < 1e-9
    print('branch coverage:', dict(sorted(hfield_ccd.COUNTS.items())))
  print('OVERALL: AGREE (contact count exact, dist/pos/frame < 1e-9)' if ok else 'OVERALL: DISAGREE')


if __name__ == '__main__':
  main()
