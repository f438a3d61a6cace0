#!/usr/bin/env bash
# Builds here, without a GPU, what scripts/gpu-check.sh runs first (the `myriad` binary and the
# CUDA test binaries, for sm_90 and without the fused kernels, as gpu-check builds them; no
# Python extension) and packs it into .gpu-prebuilt/
# (ignored by git), so that a GPU lease spends its minutes measuring rather than compiling. The
# pack is carried with .debs/ and .whl/ (device tool: carry [".debs", ".whl", ".gpu-prebuilt"]);
# gpu-check uses it only when its manifest matches the host and the sources it was built from
# (scripts/gpu_prebuilt.py), and builds from source otherwise.
#
#   bash scripts/fetch-gpu-debs.sh && bash scripts/fetch-gpu-wheels.sh   # first: the rest of the carry
#   bash scripts/gpu-prebuild.sh       # configures build-gpu/ once, then builds incrementally
#
# The binaries go in priority order (gpu-check's order of value) until the carry's 64 MiB
# (.debs/ and .whl/ included) would be exceeded; those left out are built on the host.
# The Python extension is not packed: the host's Python (3.12) is not this machine's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=${PYTHON:-$root/.venv/bin/python}
build=${MYRIAD_GPU_PREBUILD_DIR:-$root/build-gpu}
pack=$root/.gpu-prebuilt
limit_mib=${MYRIAD_GPU_CARRY_MIB:-62}  # the device tool carries 64 MiB; 2 kept in hand
jobs=${JOBS:-$(nproc)}
# In order of value per byte carried: every step's `myriad`, the envs' agreement (the largest
# check), the engine's (the smallest binary), the task envs' and the graph's, then the rest.
targets=(myriad test_cuda_envs test_physics test_staged_randomized test_devices test_learner)
files=(tools/myriad tests/envs/test_cuda_envs tests/physics/test_physics
  tests/envs/test_staged_randomized tests/envs/test_devices tests/learner/test_learner)

command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] || {
  echo "gpu-prebuild: no nvcc (expected on PATH or in /usr/local/cuda/bin)" >&2
  exit 1
}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMYRIAD_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DMYRIAD_CUDA_FUSED=OFF -DMYRIAD_PYTHON=OFF -DMYRIAD_TESTS=ON \
    -DCMAKE_PREFIX_PATH="$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')" \
    -DPython_EXECUTABLE="$py" -DMYRIAD_VENV_PYTHON="$py"
fi
grep -q '^MYRIAD_CUDA_FUSED:BOOL=OFF' "$build/CMakeCache.txt" &&
  grep -q '^CMAKE_CUDA_ARCHITECTURES:.*=90$' "$build/CMakeCache.txt" || {
  echo "gpu-prebuild: $build was configured otherwise (wanted CUDA for 90, MYRIAD_CUDA_FUSED=OFF)" >&2
  exit 1
}
# The sources' hash before the build: a file edited during it makes the pack stale, not wrong.
hash=$("$py" scripts/gpu_prebuilt.py hash "$root")
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
"$py" scripts/gpu_prebuilt.py pack --build "$build" --out "$pack" --hash "$hash" \
  --limit-mib "$limit_mib" --carry "$root/.debs" --carry "$root/.whl" "${files[@]}"
