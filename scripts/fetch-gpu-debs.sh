#!/usr/bin/env bash
# Downloads the Debian packages scripts/gpu-check.sh unpacks on a GPU host (which has CMake,
# nvcc and PyTorch but not these libraries) into .debs/ (ignored by git; carry it to the host).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/.debs"
cd "$root/.debs"
apt-get download libyaml-cpp-dev libyaml-cpp0.7 libcli11-dev nlohmann-json3-dev libfmt-dev \
  libfmt9 libgtest-dev googletest libboost1.74-dev zlib1g-dev libjs-three libjs-chart.js \
  libgl-dev libglx-dev libopengl-dev libgl1 libglx0 libopengl0 libglvnd0
ls "$root/.debs"
