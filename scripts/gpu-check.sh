#!/usr/bin/env bash
# GPU host check: builds against the host's PyTorch (CUDA), runs the test suite (CUDA tests
# included), checks CPU and CUDA rollouts agree, and prints CartPole steps/s on the GPU.
# Debian packages the host lacks travel as .deb files in .debs/ (scripts/fetch-gpu-debs.sh
# downloads them here).
# Usage (device tool): carry [".debs"], command "bash scripts/gpu-check.sh".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=${PYTHON:-python3}
out=${OUT:-/tmp/myriad-gpu-check}
mkdir -p "$out"
prefix=/tmp/myriad-debs
mkdir -p "$prefix"
for f in .debs/*.deb; do [ -f "$f" ] && dpkg -x "$f" "$prefix"; done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
# zlib1g-dev's libz.so points at Debian's /lib/.../libz.so.1.2.13; use the host's libz.so.1.
libz_dev="$prefix/usr/lib/x86_64-linux-gnu/libz.so"
if [ -L "$libz_dev" ] && [ ! -e "$libz_dev" ]; then
  host_libz=$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
  [ -n "$host_libz" ] && ln -sf "$host_libz" "$libz_dev"
fi
torch_prefix=$("$py" -c "import torch; print(torch.utils.cmake_prefix_path)")
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
"$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available())"

build=/tmp/myriad-gpu-build
t0=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMYRIAD_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DMYRIAD_JS_ROOT="$prefix/usr/share/javascript" \
  -DCMAKE_PREFIX_PATH="$torch_prefix;$prefix/usr;$prefix/usr/lib/x86_64-linux-gnu/cmake" \
  -DMYRIAD_VENV_PYTHON="$(command -v "$py")" -DMYRIAD_PYTHON=ON > "$out/configure.log" 2>&1 || {
  tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"

(cd "$build" && ctest -j 8 --output-on-failure > "$out/ctest.log" 2>&1)
echo "ctest: $(grep -E 'tests passed|tests failed' "$out/ctest.log")"
"$build/tests/envs/test_cuda_envs" > "$out/cuda_agreement.log" 2>&1
echo "CPU/CUDA agreement: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/cuda_agreement.log" | tr '\n' ' ')"

bench() { "$build/tools/myriad" bench --json "$@" 2>&1 | tail -1; }
echo
printf "%-28s %-6s %10s %16s\n" env device num_envs "steps/s"
for spec in "CartPole-v1 cuda 1048576 200" "CartPole-v1 cuda 65536 500" \
            "Pendulum-v1 cuda 1048576 200" "CartPole-v1 cpu 65536 200"; do
  set -- $spec
  line=$(bench --env "$1" --device "$2" --num-envs "$3" --steps "$4")
  echo "$line" >> "$out/bench.jsonl"
  sps=$(echo "$line" | "$py" -c "import json,sys; print('%.3e' % json.load(sys.stdin)['steps_per_second'])" 2>/dev/null || echo "error: $line")
  printf "%-28s %-6s %10s %16s\n" "$1" "$2" "$3" "$sps"
done
# Rigid-body engine on CUDA: agreement with the CPU engine, and the quadruped at 64K envs.
MYRIAD_SOURCE_DIR="$root" "$build/tests/physics/test_physics" --gtest_filter='*CudaPhysics*' \
  > "$out/physics_cuda.log" 2>&1
echo "Physics CPU/CUDA agreement: $(grep -E '^\[  (PASSED|FAILED)' "$out/physics_cuda.log" | tr '\n' ' ')"
for prec in "" "--float64"; do
  line=$("$build/tools/myriad" physics-bench physics/models/quadruped.xml --device cuda \
    --num-envs 65536 --steps 200 $prec 2>&1 | tail -1)
  echo "$line" >> "$out/bench.jsonl"
  echo "quadruped physics-bench cuda 65536 ${prec:-float32}: $line"
done
"$build/tools/myriad" train configs/cartpole_ppo.yaml --out "$out/cartpole-cuda" env.device=cuda \
  > "$out/train_cuda.log" 2>&1
echo; echo "CartPole PPO on CUDA: $(grep -E '^(evaluation|trained)' "$out/train_cuda.log" | tr '\n' ' ')"
# Its eval.replay was recorded from CUDA envs; the reader checks it.
PYTHONPATH="$build/python" "$py" -c "import myriad; print('replay from CUDA envs:', \
  myriad.load_replay('$out/cartpole-cuda/eval.replay'))" 2>&1 | tail -1
# The Python API on CUDA (DLPack tensors), with the host's Python.
PYTHONPATH="$build/python" "$py" -m pytest -q -p no:cacheprovider \
  tests/python/test_spaces_and_cuda.py > "$out/pytest_cuda.log" 2>&1
echo "Python CUDA tests: $(tail -n 1 "$out/pytest_cuda.log")"
