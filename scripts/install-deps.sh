#!/usr/bin/env bash
# Installs what Myriad needs, once: Debian packages (apt-get) and the Python side (PyPI) into
# the project's virtual environment (.venv). Idempotent: does nothing when all is present.
# LibTorch comes from the PyPI `torch` wheel; when MYRIAD_PYTHON names an interpreter that
# already has torch (an offline GPU node), the venv is created on top of it instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${MYRIAD_VENV:-$root/.venv}
torch_version=${MYRIAD_TORCH_VERSION:-2.11.0}
# What to install: "all" (building and running the tests, `make test`) or "train" (only what
# building the `myriad` command needs, `make train`: no test frameworks, browser or peers).
deps=${MYRIAD_DEPS:-all}
case $deps in all | train) ;; *)
  echo "[install-deps] MYRIAD_DEPS=$deps: expected all or train" >&2
  exit 2
  ;;
esac

debs=(build-essential cmake ninja-build pkg-config python3-dev python3-venv
  libboost-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libspdlog-dev libfmt-dev libzstd-dev libprotobuf-dev protobuf-compiler libgtest-dev
  libgmock-dev libbenchmark-dev libomp-dev zlib1g-dev libssl-dev
  libjs-three libjs-chart.js chromium)
if [ "$deps" = train ]; then
  debs=(build-essential cmake ninja-build pkg-config python3-dev python3-venv
    libboost-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
    libspdlog-dev libfmt-dev libzstd-dev libprotobuf-dev protobuf-compiler libomp-dev
    zlib1g-dev libssl-dev libjs-three libjs-chart.js)
fi
# libjs-three and libjs-chart.js are compiled into `myriad view`; chromium runs the viewer's
# browser tests (headless, WebGL through SwiftShader).
if [ "${MYRIAD_SKIP_APT:-0}" != 1 ]; then
  missing=()
  for p in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "[install-deps] apt-get install ${missing[*]}"
    sudo_cmd=""
    [ "$(id -u)" = 0 ] || sudo_cmd=sudo
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
  fi
fi

# The venv's interpreter: Debian's python3 by default, never whichever python3 is first on PATH.
base_python=${MYRIAD_PYTHON:-/usr/bin/python3}
if [ ! -x "$venv/bin/python" ]; then
  echo "[install-deps] creating $venv from $base_python"
  if "$base_python" -c "import torch" 2>/dev/null; then
    "$base_python" -m venv --system-site-packages "$venv"
  else
    "$base_python" -m venv "$venv"
  fi
fi
py="$venv/bin/python"
pip_install() { "$py" -m pip install -q --disable-pip-version-check "$@"; }

if ! "$py" -c "import torch" 2>/dev/null; then
  echo "[install-deps] pip install torch==$torch_version (LibTorch for the C++ build)"
  pip_install "torch==$torch_version"
fi
# mujoco: MuJoCo's PyPI wheel. Its libmujoco and C headers are the MuJoCo the C++ side links
# (cmake/MyriadMujoco.cmake: the reference engine, physics=mujoco, physics-check, the tests), and
# its Python module runs Gymnasium's v5 locomotion envs in tests/python/test_locomotion_parity.py:
# one version for both. Pinned to 3.11.0, the version mjlab (the Go1 and G1 models) pins.
mujoco_version=3.11.0
if [ "$("$py" -c 'import mujoco; print(mujoco.__version__)' 2>/dev/null)" != "$mujoco_version" ]; then
  echo "[install-deps] pip install mujoco==$mujoco_version (libmujoco and headers for the C++ build)"
  pip_install "mujoco==$mujoco_version"
fi
# mjlab: its wheel ships the Unitree Go1 and G1 models (asset_zoo/robots, Apache-2.0, with their
# meshes) that Myriad loads; installed without its dependencies (its simulator, MuJoCo Warp, and
# its trainer are not needed), pinned to the release that pins mujoco 3.11.
mjlab_version=1.6.0
if [ "$("$py" -c 'import importlib.metadata as m; print(m.version("mjlab"))' 2>/dev/null)" != "$mjlab_version" ]; then
  echo "[install-deps] pip install --no-deps mjlab==$mjlab_version (the Go1 and G1 robot models)"
  pip_install --no-deps "mjlab==$mjlab_version"
fi
if [ "$deps" = train ]; then
  # numpy: torch warns at every start without it.
  "$py" -c "import numpy" 2>/dev/null || pip_install numpy
  echo "[install-deps] ready for training: $("$py" -c 'import torch; print("torch", torch.__version__)')"
  exit 0
fi
# mpe2 is PettingZoo's MPE (with pettingzoo): the reference of tests/envs/test_mpe.cc.
# imageio: Gymnasium's MuJoCo renderer imports it.
need=()
# mkdocs builds the documentation site (a test runs mkdocs build --strict); matplotlib draws
# its learning curves (scripts/plot_results.py); scikit_build_core builds the wheel that
# scripts/wheel_check.sh installs.
for mod in numpy pytest pybind11 gymnasium yaml tensorboard playwright stable_baselines3 mpe2 \
  imageio mkdocs matplotlib scikit_build_core; do
  "$py" -c "import $mod" 2>/dev/null || need+=("$mod")
done
if [ ${#need[@]} -gt 0 ]; then
  pkgs=()
  sb3=0
  for m in "${need[@]}"; do
    case $m in
      yaml) pkgs+=(pyyaml) ;;
      scikit_build_core) pkgs+=(scikit-build-core) ;;
      stable_baselines3) sb3=1 ;;
      *) pkgs+=("$m") ;;
    esac
  done
  if [ ${#pkgs[@]} -gt 0 ]; then
    echo "[install-deps] pip install ${pkgs[*]}"
    pip_install "${pkgs[@]}"
  fi
  # Stable-Baselines3 (tests of myriad.sb3) without its dependencies, so that pip never swaps
  # the torch that LibTorch was built from; its other needs (numpy, gymnasium, cloudpickle
  # through gymnasium) are installed above.
  if [ $sb3 = 1 ]; then
    echo "[install-deps] pip install --no-deps stable-baselines3 cloudpickle"
    pip_install --no-deps stable-baselines3 cloudpickle
  fi
fi
echo "[install-deps] ready: $("$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)')"
