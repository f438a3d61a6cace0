#!/usr/bin/env bash
# Downloads the Python wheels that scripts/gpu-check.sh installs offline on a GPU host into
# .whl/ (ignored by git; carry it to the host next to .debs/). The host's image has PyTorch,
# numpy, pytest, pybind11, pyyaml, cloudpickle, typing-extensions and tensorboard, but not
# gymnasium (tests/python compare Myriad's spaces with Gymnasium's) and its one missing need;
# and the mujoco wheel whose libmujoco the C++ side links (.whl/native/).
# Only pure-Python wheels are fetched, so they install under any Python 3 version there.
# Usage: bash scripts/fetch-gpu-wheels.sh [NAME==VERSION ...]   (default: the list below)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-$root/.venv/bin/python}
[ -x "$py" ] || py=python3
wheels=("$@")
if [ ${#wheels[@]} -eq 0 ]; then
  # The versions the project's .venv runs the tests with.
  wheels=(gymnasium==1.4.0 farama-notifications==0.0.6)
fi
mkdir -p "$root/.whl"
# --no-deps: each need is named above; --only-binary: wheels only (no builds there).
"$py" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version 3.12 --implementation py --abi none --platform any \
  -d "$root/.whl" "${wheels[@]}"
# One version of each name, or the offline install refuses the set.
dupes=$(find "$root/.whl" -name '*.whl' -printf '%f\n' | cut -d- -f1 | tr 'A-Z-' 'a-z_' | sort |
  uniq -d)
if [ -n "$dupes" ]; then
  echo "fetch-gpu-wheels: more than one version of: $dupes (remove the old ones from .whl/)" >&2
  exit 1
fi
# libmujoco and its headers: the pinned mujoco wheel (any CPython's: the C library is the same),
# which gpu-check.sh unzips and builds against; kept apart, as it is not installed.
mujoco_version=$(sed -n 's/^mujoco_version=//p' "$root/scripts/install-deps.sh")
mkdir -p "$root/.whl/native"
"$py" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version 3.12 --platform manylinux_2_28_x86_64 -d "$root/.whl/native" \
  "mujoco==$mujoco_version"
# The Go1 and G1 robot models ("mjlab:" paths in envs/robots/models), from the mjlab package
# install-deps.sh put in the venv: only their xmls/ folders (8 MB packed; the wheel is 30 MB).
# gpu-check.sh unpacks them and points MYRIAD_MJLAB_DIR there.
mkdir -p "$root/.whl/assets"
"$py" - "$root/.whl/assets/mjlab-robots.tar.xz" << 'PY'
import importlib.util, os, sys, tarfile
spec = importlib.util.find_spec("mjlab")  # found, not imported (its imports need more than it)
if spec is None:
    sys.exit("fetch-gpu-wheels: mjlab is not installed (bash scripts/install-deps.sh installs it)")
base = os.path.dirname(spec.origin)
with tarfile.open(sys.argv[1], "w:xz") as tar:
    for robot in ("unitree_go1", "unitree_g1"):
        tar.add(os.path.join(base, "asset_zoo/robots", robot, "xmls"),
                arcname=f"asset_zoo/robots/{robot}/xmls")
PY
ls -l "$root/.whl" "$root/.whl/native" "$root/.whl/assets"
