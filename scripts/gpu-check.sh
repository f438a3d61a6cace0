#!/usr/bin/env bash
# The one run that proves the GPU path (issue 31), most valuable first, within 8 minutes:
#   1. build what the checks need: the `myriad` binary, then the Python extension, then the CUDA
#      test binaries;
#   2. CPU/CUDA agreement: every locomotion env through the env framework (resets included, float32
#      and float64), the classic and multi-agent envs, the engine's CUDA tests; compute-sanitizer
#      memcheck and initcheck at 64 envs, synccheck on Ant-v5;
#   3. Ant-v5 and Humanoid-v5 env steps/s at 4,096 and 65,536 envs, with per-stage GPU time (CUDA
#      events around every named launch); the batch's layout, env-major against blocked (the
#      engine alone, then the env step with launch=blocked);
#   4. PPO end to end on CUDA: Ant-v5 env steps/s during training at 4,096 and 65,536 envs, and
#      the host syncs per update; Go1-Velocity-Flat-v0's env steps and training at 4,096 and
#      16,384 envs (issue 35); G1-Velocity-Flat-v0's stage times, float32 and float64, at the
#      default solve storage, and float64 at one that holds its rows;
#   5. NCCL at world size 1, Tag-v0 at 65,536 envs, the Python API on CUDA;
#   6. MuJoCo Warp on the same GPU, if it was carried;
#   7. with the time left: training smoke tests (checkpoint, eval on CUDA and CPU) and the CUDA
#      tests of the whole ctest suite.
# Every figure goes into $OUT/gpu-check.json the moment it is measured (scripts/
# gpu_check_record.py, an atomic rewrite), so a run cut by its time limit keeps what it measured;
# $OUT/gpu-check.log has every command's output. Steps check the time left
# (MYRIAD_GPU_CHECK_BUDGET seconds, default 470) and record "skipped: budget" when it runs low.
#
# Without a GPU every GPU step records "no GPU" and the script exits 0 within seconds.
# MYRIAD_GPU_CHECK_DRY=1 instead runs every step on the CPU at small sizes against an existing
# build (MYRIAD_GPU_BUILD), so the commands are exercised before a GPU is at hand:
#   MYRIAD_GPU_CHECK_DRY=1 MYRIAD_GPU_BUILD=build PYTHON=.venv/bin/python bash scripts/gpu-check.sh
#
# The GPU host has CMake, nvcc and PyTorch but no network: first, here,
#   bash scripts/fetch-gpu-debs.sh     # .debs/: C++ libraries the host lacks
#   bash scripts/fetch-gpu-wheels.sh   # .whl/: Python wheels (gymnasium) and the mujoco wheel
#   bash scripts/gpu-prebuild.sh       # .gpu-prebuilt/: step 1's binaries, built here for sm_90
# then (device tool): carry [".debs", ".whl", ".gpu-prebuilt"], command "bash scripts/gpu-check.sh",
# timeout_s 540. A pack built from these sources against the host's PyTorch (scripts/
# gpu_prebuilt.py) replaces step 1's compile: its binaries run steps 2-4 at once, and what it
# left out (the Python extension always: the host's Python is not this machine's) is built
# after step 4. Without a usable pack, step 1 compiles as before.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
py=${PYTHON:-python3}
out=${OUT:-/tmp/myriad-gpu-check}
runs=/tmp/myriad-gpu-runs
build=${MYRIAD_GPU_BUILD:-/tmp/myriad-gpu-build}
budget=${MYRIAD_GPU_CHECK_BUDGET:-470}
dry=${MYRIAD_GPU_CHECK_DRY:-0}
jobs=$(nproc)
start=$(date +%s)
mkdir -p "$out" "$runs"
log="$out/gpu-check.log"
results="$out/gpu-check.json"
: > "$log"
rm -f "$results"

elapsed() { echo $(($(date +%s) - start)); }
left() { echo $((budget - $(elapsed))); }
section() { echo "== $* ($(elapsed) s)" | tee -a "$log"; }
# record KEY VALUE | record KEY --gtest REPORT | record KEY --json-line LOG: one figure, now.
record() { python3 "$root/scripts/gpu_check_record.py" "$results" "$@" || echo "record $1 failed"; }
# run_logged SECONDS CMD...: CMD under a timeout, its output appended to the log; its status.
run_logged() {
  local limit=$1
  shift
  echo "\$ $*" >> "$log"
  timeout --kill-after=10 "$limit" "$@" >> "$log" 2>&1
}
# run_to FILE SECONDS CMD...: the same, its output also kept in FILE.
run_to() {
  local file=$1 limit=$2 rc
  shift 2
  echo "\$ $*" >> "$log"
  timeout --kill-after=10 "$limit" "$@" > "$file" 2>&1
  rc=$?
  cat "$file" >> "$log"
  return $rc
}
# budget_for KEY SECONDS: true when SECONDS are left; else records KEY as skipped.
budget_for() {
  if [ "$(left)" -lt "$2" ]; then
    record "$1" '"skipped: budget"'
    return 1
  fi
}

# What runs where: mode gpu (a GPU answers), dry (MYRIAD_GPU_CHECK_DRY=1: the CPU, small sizes,
# an existing build) or none (every GPU step records "no GPU").
if nvidia-smi -L > /dev/null 2>&1; then
  mode=gpu dev=cuda
elif [ "$dry" = 1 ]; then
  mode=dry dev=cpu
else
  mode=none dev=none
fi
record mode "\"$mode\""
record started "\"$(date -u +%FT%TZ)\""
record commit "\"$(git rev-parse --short HEAD 2> /dev/null || echo unknown)\""
if [ "$mode" = none ]; then
  for step in 1_build 2_agreement 3_env_steps 4_ppo 5_nccl_tag_python 6_mujoco_warp 7_extras; do
    record "$step" '"no GPU"'
  done
  record finished_seconds "$(elapsed)"
  echo "gpu-check: no GPU answers (nvidia-smi); every step recorded \"no GPU\" in $results"
  exit 0
fi
# Sizes: the GPU's, or the dry run's.
if [ "$mode" = gpu ]; then
  sizes=(4096 65536) go1_sizes=(4096 16384) tag_envs=65536 sanitize_envs=64
else
  sizes=(64 256) go1_sizes=(64 128) tag_envs=1024 sanitize_envs=8
fi

section "0 host"
# C++ libraries from .debs (scripts/fetch-gpu-debs.sh), unpacked aside, never over /.
prefix=/tmp/myriad-debs
mkdir -p "$prefix"
for f in .debs/*.deb; do [ -f "$f" ] && dpkg -x "$f" "$prefix"; done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
# libmujoco and its headers from the pinned mujoco wheel (scripts/fetch-gpu-wheels.sh), unzipped.
mujoco_dir=/tmp/myriad-mujoco
for f in .whl/native/mujoco-*.whl; do
  [ -f "$f" ] && "$py" -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" \
    "$f" "$mujoco_dir"
done
# The task envs' robot folder: this tree's (a prebuilt binary has the tree it was built in).
export MYRIAD_ROBOTS_DIR="$root/envs/robots"
# The Go1 and G1 models' mjlab folders (scripts/fetch-gpu-wheels.sh), for the robot tasks.
if [ -f .whl/assets/mjlab-robots.tar.xz ]; then
  mkdir -p /tmp/myriad-mjlab && tar -xJf .whl/assets/mjlab-robots.tar.xz -C /tmp/myriad-mjlab &&
    export MYRIAD_MJLAB_DIR=/tmp/myriad-mjlab
fi
# zlib1g-dev's libz.so points at Debian's /lib/.../libz.so.1.2.13; use the host's libz.so.1.
libz_dev="$prefix/usr/lib/x86_64-linux-gnu/libz.so"
if [ -L "$libz_dev" ] && [ ! -e "$libz_dev" ]; then
  host_libz=$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
  [ -n "$host_libz" ] && ln -sf "$host_libz" "$libz_dev"
fi
# Python wheels from .whl, into the host's Python (the machine is discarded after), so that
# ctest's pytest runs see them too; a --target folder otherwise.
if compgen -G ".whl/*.whl" > /dev/null; then
  if ! run_logged 120 "$py" -m pip install -q --no-index --find-links .whl --no-cache-dir \
    --disable-pip-version-check .whl/*.whl; then
    run_logged 120 "$py" -m pip install -q --no-index --no-deps --no-cache-dir --target \
      /tmp/myriad-site .whl/*.whl
    export PYTHONPATH="/tmp/myriad-site${PYTHONPATH:+:$PYTHONPATH}"
  fi
fi
record host.gpu "\"$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
  2>&1 | head -1)\""
record host.cpu "\"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores\""
record host.torch "\"$("$py" -c "import torch; print(torch.__version__, 'cuda', torch.version.cuda)" \
  2>&1 | tail -1)\""
torch_prefix=$("$py" -c "import torch; print(torch.utils.cmake_prefix_path)")

section "1 build"
# Without the fused CUDA launches (-DMYRIAD_CUDA_FUSED=OFF): an option no step here runs, and
# their translation units were the slowest nvcc compiles of the build.
configure_build() {
  [ -f "$build/build.ninja" ] && return 0
  if [ "$mode" = dry ]; then
    record 1_build "\"dry run: no build at $build (MYRIAD_GPU_BUILD)\""
    return 1
  fi
  run_logged 180 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMYRIAD_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="${MYRIAD_CUDA_ARCHS:-90}" \
    -DMYRIAD_JS_ROOT="$prefix/usr/share/javascript" \
    -DCMAKE_PREFIX_PATH="$torch_prefix;$prefix/usr;$prefix/usr/lib/x86_64-linux-gnu/cmake" \
    -DMYRIAD_VENV_PYTHON="$(command -v "$py")" -DMYRIAD_PYTHON=ON -DMYRIAD_CUDA_FUSED=OFF \
    -DMYRIAD_MUJOCO_DIR="$mujoco_dir/mujoco" || {
    record 1_build.configure "\"failed: $(grep -m1 -A3 'CMake Error' "$log" | tr '\n"' ' \x27')\""
    return 1
  }
}
# A timed-out build records how far ninja got.
build_failed() {
  local why=$1
  { [ "$why" = 124 ] || [ "$why" = 137 ]; } && why="timed out at $(grep -E '^\[[0-9]+/[0-9]+\]' "$log" | tail -n 1 | cut -d' ' -f1)"
  [ "$why" -lt 124 ] 2> /dev/null && why="failed: $(grep -m1 -E 'error' "$log" | cut -c1-300 | tr '"' "'")"
  echo "$why"
}
# The pack (scripts/gpu-prebuild.sh): used when built from these sources against this PyTorch
# and every library it needs resolves here; its binaries sit in $pre, the host's in $build.
pre=/tmp/myriad-gpu-prebuilt
rm -rf "$pre"
if [ -f .gpu-prebuilt/manifest.json ]; then
  verdict=$("$py" scripts/gpu_prebuilt.py check --pack .gpu-prebuilt --root "$root" --build "$pre" \
    2>> "$log" | tail -n 1)
  record 1_build.prebuilt "${verdict:-\"check failed (see the log)\"}"
  if grep -q '"use": true' <<< "$verdict"; then
    # What the binaries were linked against, where the host has it: PyTorch's libraries and the
    # CUDA ones its wheels bring, the CUDA toolkit's, libmujoco from the carried wheel.
    libs=$("$py" -c "import glob, os, torch; t = os.path.dirname(torch.__file__); \
print(':'.join([os.path.join(t, 'lib')] + sorted(glob.glob(os.path.join(t, '..', 'nvidia', '*', 'lib')))))")
    host_libs=${LD_LIBRARY_PATH:-}
    export LD_LIBRARY_PATH="$libs:$mujoco_dir/mujoco:/usr/local/cuda/lib64:/usr/local/cuda/lib:$host_libs"
    unresolved=$(find "$pre" -type f -exec ldd {} \; 2>&1 | grep 'not found' | sort -u |
      tr -s ' \t\n' ' ' | tr -d '"')
    # On a GPU, one CUDA step too: a driver older than the pack's toolkit fails here.
    probe=(--version)
    [ "$mode" = gpu ] && probe=(bench --env CartPole-v1 --device cuda --num-envs 64 --steps 1)
    if [ -z "$unresolved" ] && run_logged 60 "$pre/tools/myriad" "${probe[@]}"; then
      bin="$pre/tools/myriad"
      record 1_build.myriad '"from the pack"'
    else
      record 1_build.prebuilt_rejected "\"${unresolved:-myriad ${probe[*]} failed (see the log)}\""
      rm -rf "$pre"
      export LD_LIBRARY_PATH="$host_libs"
    fi
  else
    rm -rf "$pre"  # whatever a refused check unpacked
  fi
fi
# binpath REL: REL from the pack where it has it, else from the host's build.
binpath() { if [ -f "$pre/$1" ]; then echo "$pre/$1"; else echo "$build/$1"; fi; }
rest=(myriad_python test_cuda_envs test_staged_randomized test_physics test_learner test_devices)
rest_files=('python/myriad/_core*.so' tests/envs/test_cuda_envs tests/envs/test_staged_randomized
  tests/physics/test_physics tests/learner/test_learner tests/envs/test_devices)
# build_rest KEY: compiles what steps 2-7 need and neither the pack nor an earlier build has
# (-k 0: a target that fails costs only its own checks), within 300 s or the budget.
build_rest() {
  local targets=() i rc t0 limit
  for i in "${!rest[@]}"; do
    compgen -G "$pre/${rest_files[$i]}" > /dev/null || targets+=("${rest[$i]}")
  done
  [ ${#targets[@]} = 0 ] && return 0
  budget_for "$1" 120 || return 1
  configure_build || return 1
  t0=$(date +%s)
  limit=$(($(left) - 60 > 300 ? 300 : $(left) - 60))
  run_logged $((limit > 1 ? limit : 1)) cmake --build "$build" -j "$jobs" \
    --target "${targets[@]}" -- -k 0
  rc=$?
  record "$1" "{\"seconds\": $(($(date +%s) - t0)), \"rc\": $rc, \"targets\": \"${targets[*]}\"}"
  for i in "${!rest[@]}"; do
    compgen -G "$pre/${rest_files[$i]}" > /dev/null || compgen -G "$build/${rest_files[$i]}" \
      > /dev/null || record "$1.missing.${rest_files[$i]##*/}" "\"$(build_failed $rc)\""
  done
}
if [ ! -d "$pre" ]; then
  # No pack: the `myriad` binary first (every step needs it; its limit is what the budget leaves
  # after 90 s of checks), then the rest in one ninja run, so their compiles overlap.
  # (2026-12-04: the 300 s per target this had was too short: physics/engine.cc alone, then one
  # file, compiled for over 5 minutes there.)
  configure_build || exit 1
  bin="$build/tools/myriad"
  t0=$(date +%s)
  run_logged $(($(left) - 90)) cmake --build "$build" -j "$jobs" --target myriad
  rc=$?
  if [ $rc = 0 ]; then
    record 1_build.myriad "{\"seconds\": $(($(date +%s) - t0))}"
  else
    record 1_build.myriad "\"$(build_failed $rc)\""
    exit 1
  fi
  build_rest 1_build.rest
fi

section "2 agreement"
export MYRIAD_SOURCE_DIR="$root"
# agreement SPEC...: each "KEY BINARY DIR FILTER CHECK [KIB]" whose binary is at hand (the pack's
# or the build's) runs now; the others wait in `deferred` for the rest of the build (after step
# 4). CHECK=1: MYRIAD_CUDA_CHECK=1, a faulting kernel names its stage (include/myriad/
# parallel_for.h); it launches plainly, so the CUDA graph's own check runs without it. KIB: the
# warp solve's shared memory, MYRIAD_SOLVE_STORAGE_KIB (physics/launch.h).
deferred=()
agreement() {
  local spec key name dir filter check kib exe
  for spec in "$@"; do
    read -r key name dir filter check kib <<< "$spec"
    exe=$(binpath "tests/$dir/$name")
    if [ ! -x "$exe" ]; then
      deferred+=("$spec")
      continue
    fi
    budget_for "2_agreement.$key" 60 || continue
    if [ "$check" = 1 ]; then export MYRIAD_CUDA_CHECK=1; else unset MYRIAD_CUDA_CHECK; fi
    if [ -n "$kib" ]; then export MYRIAD_SOLVE_STORAGE_KIB=$kib; else unset MYRIAD_SOLVE_STORAGE_KIB; fi
    run_to "$runs/$key.log" 240 "$exe" --gtest_filter="$filter" --gtest_output="json:$runs/$key.json"
    record "2_agreement.$key" --gtest "$runs/$key.json"
  done
  unset MYRIAD_CUDA_CHECK MYRIAD_SOLVE_STORAGE_KIB
}
# The checks still waiting for a binary that was not built: recorded as such.
record_unbuilt() {
  local spec key rest
  for spec in "${deferred[@]}"; do
    read -r key rest <<< "$spec"
    record "2_agreement.$key" '"not built"'
  done
  deferred=()
}
# solve_global: the engine's float64 CUDA tests (against the CPU to round-off, and the blocked
# layout's bits against the env-major one's) with no solve storage, so every solve reads its
# Hessian, scratch and rows from global memory (the path a G1 whose rows outgrow the storage
# takes), and CudaSolveStorage checks that the solve took the 0 KiB it was given; solve_large:
# the same at 64 KiB, past the 48 KiB a kernel takes without opting in (parallel_for.h's
# allow_shared), every solve's arrays in shared memory. The last: the same envs' step replayed as one CUDA graph against plain launches,
# through a task's Params changing (its command curriculum).
agreement "test_cuda_envs test_cuda_envs envs * 1" \
  "test_staged_randomized test_staged_randomized envs *Cuda* 1" \
  "test_physics test_physics physics *Cuda* 1" "test_devices test_devices envs * 1" \
  "solve_global test_physics physics *CudaPhysics.*Float64*:CudaSolveStorage.* 1 0" \
  "solve_large test_physics physics *CudaPhysics.Float64MatchesCpu/*:CudaSolveStorage.* 1 64" \
  "cuda_graph test_staged_randomized envs *Graph* 0"
[ -d "$pre" ] || record_unbuilt  # without a pack, nothing more is built for them
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
# synccheck: the constraint solve's warps (__syncwarp between phases) reach every barrier whole.
# racecheck: no shared-memory hazard in the warp solve (its Hessian, scratch and rows' copy in
# shared memory: Humanoid's rows dense; G1's, packed where a standing G1's rows outgrow the dense
# copy, the leader's offsets read by every lane) and in GJK/EPA's lane groups (their shared
# polytope and rounds: Go1 on a height field). Each "TOOL ENV LAUNCH": the default launch
# (staged), and the blocked layout's env step (launch=blocked: its padded blocks) under memcheck
# on Ant-v5.
for spec in "memcheck Ant-v5 staged" "memcheck Humanoid-v5 staged" "initcheck Ant-v5 staged" \
  "initcheck Humanoid-v5 staged" "synccheck Ant-v5 staged" "racecheck Humanoid-v5 staged" \
  "racecheck Go1-Velocity-Rough-v0 staged" "racecheck G1-Velocity-Flat-v0 staged" \
  "memcheck Ant-v5 blocked"; do
  read -r tool env launch <<< "$spec"
  key="2_agreement.sanitizer.$tool.$env"
  [ "$launch" = staged ] || key="$key.$launch"
  if [ "$mode" != gpu ]; then
    record "$key" '"not on the CPU"'
    continue
  fi
  [ -x "$sanitizer" ] || { record "$key" '"compute-sanitizer not found"'; continue; }
  budget_for "$key" 60 || continue
  # racecheck runs far slower than the other tools: 8 envs, one step.
  san_envs=$sanitize_envs san_steps=3 san_limit=150
  [ "$tool" = racecheck ] && san_envs=8 san_steps=1 san_limit=90
  run_to "$runs/sanitizer.log" "$san_limit" "$sanitizer" --tool "$tool" --print-limit 5 "$bin" bench \
    --env "$env" --device cuda --num-envs "$san_envs" --steps "$san_steps" --launch "$launch"
  record "$key" "\"rc=$? $(grep -m1 'ERROR SUMMARY' "$runs/sanitizer.log" | tr -d '"=')\""
done

section "3 env steps/s"
# record_graph_failure KEY LOG: KEY.graph_failed with the runner's warning, when the env step's
# CUDA graph failed and the run fell back to plain launches.
record_graph_failure() {
  if grep -q "CUDA graph failed" "$2"; then
    record "$1.graph_failed" "\"$(grep -m1 "CUDA graph failed" "$2" | tr -d '"')\""
  fi
}
# graph: the env step replayed as one CUDA graph (the default); no_graph: the same launches one
# by one, with each stage's GPU time (CUDA events, a second run; the graph has none).
for env in Ant-v5 Humanoid-v5; do
  for n in "${sizes[@]}"; do
    key="3_env_steps.$env.n$n"
    budget_for "$key" 40 || continue
    run_to "$runs/bench.json" 120 "$bin" bench --json --env "$env" --device "$dev" \
      --num-envs "$n" --steps 100
    record "$key.graph" --json-line "$runs/bench.json"
    record_graph_failure "$key" "$runs/bench.json"
    run_to "$runs/bench.json" 120 "$bin" bench --json --stage-times --no-cuda-graph --env "$env" \
      --device "$dev" --num-envs "$n" --steps 50
    record "$key.no_graph" --json-line "$runs/bench.json"
  done
done

# The batch's layout, the engine alone: blocks of 32 envs against env-major rows (the default),
# the same model, steps and GPU (physics-bench --layout).
# CUDA only (the CPU engine keeps env-major rows; a dry run records so), at 65,536 envs.
for model in ant humanoid; do
  for layout in blocked env-major; do
    key="3_layout.$model.n65536.$layout"
    if [ "$mode" != gpu ]; then
      record "$key" '"not in a dry run: physics-bench --layout is for CUDA"'
      continue
    fi
    budget_for "$key" 30 || continue
    run_to "$runs/physics.json" 90 "$bin" physics-bench "$root/envs/locomotion/models/$model.xml" \
      --device "$dev" --num-envs 65536 --warmup 5 --steps 50 --layout "$layout"
    record "$key" --json-line "$runs/physics.json"
  done
done
# The same through the env framework: the env step on the blocked layout (launch=blocked, one
# CUDA graph) at the largest size, against 3_env_steps' graph row (env-major, the default).
for env in Ant-v5 Humanoid-v5; do
  n=${sizes[-1]}
  key="3_layout.$env.n$n.env_blocked"
  budget_for "$key" 30 || continue
  run_to "$runs/bench.json" 90 "$bin" bench --json --env "$env" --device "$dev" --num-envs "$n" \
    --steps 100 --launch blocked
  record "$key" --json-line "$runs/bench.json"
  record_graph_failure "$key" "$runs/bench.json"
done

section "4 PPO on CUDA"
# record_training KEY DIR: a training run's env steps/s from its summary, or why it failed.
record_training() {
  record "$1" "$("$py" -c "import json; s = json.load(open('$2/summary.json')); \
print(json.dumps({'env_steps': s['env_steps'], 'wall_seconds': s['wall_seconds'], \
'env_steps_per_second': s['env_steps'] / s['wall_seconds']}))" 2> /dev/null ||
    echo "\"failed: $(grep -v '^\s*$' "$runs/train.log" | tail -n 1 | tr '"' "'")\"")"
}
# measure_syncs: LibTorch warns at every synchronising CUDA call (sync debug mode); the
# difference between a 6- and a 2-update run, over 4, is the loop's syncs per update.
measure_syncs() {
  if [ "$mode" != gpu ]; then
    record 4_ppo.syncs_per_update '"not on the CPU"'
    return
  fi
  budget_for 4_ppo.syncs_per_update 60 || return
  local updates a b
  for updates in 2 6; do
    rm -rf "$runs/syncs-$updates"
    PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" timeout 120 "$py" -c "
import torch, myriad
torch.cuda.set_sync_debug_mode('warn')
myriad.train('configs/ant_ppo.yaml', out='$runs/syncs-$updates', env__device='cuda',
             env__num_envs=4096, run__total_env_steps=4096 * $ppo_steps * $updates,
             run__eval_episodes=0, run__checkpoint_every=0, eval__record=False)
" > "$runs/syncs-$updates.log" 2>&1
    echo "syncs $updates updates: rc=$? $(grep -c 'synchroniz' "$runs/syncs-$updates.log")" >> "$log"
  done
  a=$(grep -c 'synchroniz' "$runs/syncs-2.log") b=$(grep -c 'synchroniz' "$runs/syncs-6.log")
  record 4_ppo.syncs_per_update "{\"warnings_2_updates\": $a, \"warnings_6_updates\": $b, \
\"per_update\": $(((b - a) / 4))}"
}
ppo_steps=$("$py" -c "import yaml; print(yaml.safe_load(open('configs/ant_ppo.yaml'))['ppo']['num_steps'])")
for n in "${sizes[@]}"; do
  key="4_ppo.Ant-v5.n$n"
  budget_for "$key" 60 || continue
  dir="$runs/ppo-$n"
  rm -rf "$dir"  # a run folder is never overwritten
  run_to "$runs/train.log" 150 "$bin" train configs/ant_ppo.yaml --out "$dir" "env.device=$dev" \
    "env.num_envs=$n" "run.total_env_steps=$((n * ppo_steps * 4))" run.checkpoint_every=0 \
    run.eval_episodes=0 eval.record=false
  record_training "$key" "$dir"
done
# Host syncs per update (needs the Python extension: with a pack, after the rest of the build).
if compgen -G "$build/python/myriad/_core*.so" > /dev/null; then
  measure_syncs
else
  record 4_ppo.syncs_per_update '"after the rest of the build (step 4b)"'
fi
# Go1-Velocity-Flat-v0 (issue 35): the task env's staged step on CUDA (the robot's randomization,
# pushes, noise) in env steps/s, then PPO with its shipped recipe at mjlab's sizes.
go1=Go1-Velocity-Flat-v0
go1_steps=$("$py" -c "import yaml; print(yaml.safe_load(open('configs/go1_velocity_flat_ppo.yaml'))['ppo']['num_steps'])")
for n in "${go1_sizes[@]}"; do
  key="4_ppo.$go1.n$n"
  budget_for "$key.env_step" 30 || continue
  run_to "$runs/bench.json" 90 "$bin" bench --json --env "$go1" --device "$dev" --num-envs "$n" \
    --steps 50
  record "$key.env_step" --json-line "$runs/bench.json"
  budget_for "$key.train" 60 || continue
  dir="$runs/go1-$n"
  rm -rf "$dir"
  run_to "$runs/train.log" 150 "$bin" train configs/go1_velocity_flat_ppo.yaml --out "$dir" \
    "env.device=$dev" "env.num_envs=$n" "run.total_env_steps=$((n * go1_steps * 4))" \
    run.checkpoint_every=0 run.eval_episodes=0 eval.record=false
  record_training "$key.train" "$dir"
done

# G1-Velocity-Flat-v0's env step, each stage's GPU time: a standing G1's solve has 61 rows at the
# median (solve_bench's g1.xml#knees_bent states); the warp's default storage (18 / 27 KiB on
# sm_90) holds them in 96% of its float32 states but 50% of its float64 ones, which then read
# their rows from global memory. Then float64 again at the smallest storage that holds every
# sampled state's rows (MYRIAD_SOLVE_STORAGE_KIB, physics/launch.h; solve_bench --storage-kib: 43
# KiB, 5 blocks an SM where the default runs 8): the solve's time both ways says whether such a
# model should take a larger storage. Each run records the storage it used (solve_storage_bytes).
for run in "32 default" "64 default" "64 43"; do
  read -r precision storage <<< "$run"
  key="4_ppo.G1-Velocity-Flat-v0.n${go1_sizes[0]}.f$precision"
  [ "$storage" = default ] || key="${key}_storage_${storage}k"  # a sibling of the default's
  budget_for "$key" 30 || continue
  flag=()
  [ "$precision" = 64 ] && flag=(--float64)
  kib=()
  [ "$storage" = default ] || kib=(env "MYRIAD_SOLVE_STORAGE_KIB=$storage")
  run_to "$runs/bench.json" 90 "${kib[@]}" "$bin" bench --json --stage-times --no-cuda-graph \
    --env G1-Velocity-Flat-v0 --device "$dev" --num-envs "${go1_sizes[0]}" --steps 20 "${flag[@]}"
  record "$key" --json-line "$runs/bench.json"
done

if [ -d "$pre" ]; then
  section "4b the rest of the build (what the pack left out), then its agreement checks"
  build_rest 4b_build_rest
  waiting=("${deferred[@]}")
  deferred=()
  [ ${#waiting[@]} -gt 0 ] && agreement "${waiting[@]}"
  record_unbuilt
  compgen -G "$build/python/myriad/_core*.so" > /dev/null && measure_syncs
fi

section "5 NCCL, Tag-v0, Python API"
if budget_for 5_nccl_tag_python.nccl 30; then
  run_to "$runs/test_learner.log" 120 "$(binpath tests/learner/test_learner)" \
    --gtest_filter='OneRankGroup.*:RankDevice.*' --gtest_output="json:$runs/test_learner.json"
  record 5_nccl_tag_python.nccl --gtest "$runs/test_learner.json"
fi
if budget_for 5_nccl_tag_python.tag 30; then
  run_to "$runs/bench.json" 60 "$bin" bench --json --env Tag-v0 --device "$dev" \
    --num-envs "$tag_envs" --steps 200
  record "5_nccl_tag_python.tag_n$tag_envs" --json-line "$runs/bench.json"
fi
if budget_for 5_nccl_tag_python.python 60; then
  run_to "$runs/pytest_cuda.log" 150 env MYRIAD_BUILD_DIR="$build" \
    PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" "$py" -m pytest -q -p no:cacheprovider \
    tests/python/test_spaces_and_cuda.py
  record 5_nccl_tag_python.python "\"rc=$? $(tail -n 1 "$runs/pytest_cuda.log" | tr -d '"')\""
fi

section "6 MuJoCo Warp"
# Its wheels do not fit a run's carry (64 MiB): warp-lang 1.19.0 is 149 MB and mujoco-warp 4.0.0
# needs MuJoCo 4 beside the pinned 3.11. Used where the host already has them.
if "$py" -c "import mujoco_warp, warp" > /dev/null 2>&1 && [ "$mode" = gpu ]; then
  for model in ant humanoid; do
    budget_for "6_mujoco_warp.$model" 60 || continue
    xml=$("$py" -c "import gymnasium, os; print(os.path.join(os.path.dirname(gymnasium.__file__), \
'envs/mujoco/assets/$model.xml'))")
    run_to "$runs/warp.log" 120 "$py" -m mujoco_warp.testspeed --function=step \
      --mjcf="$xml" --nworld=65536 --nstep=200
    record "6_mujoco_warp.$model" "\"$(grep -iE 'steps per second|step/s' "$runs/warp.log" |
      tail -n 1 | tr -d '"')\""
  done
else
  record 6_mujoco_warp '"not on the host and not carried: warp-lang 1.19.0 is a 149 MB wheel (a run carries 64 MiB); mujoco-warp 4.0.0 needs MuJoCo 4"'
fi

section "7 extras"
if budget_for 7_extras.smoke 60; then
  for cfg in cartpole_ppo pendulum_ppo; do
    steps=$("$py" -c "import yaml; c = yaml.safe_load(open('configs/$cfg.yaml')); \
print(c['env']['num_envs'] * c['ppo']['num_steps'])")
    dir="$runs/smoke-$cfg"
    rm -rf "$dir"
    run_to "$runs/train.log" 90 "$bin" train "configs/$cfg.yaml" --out "$dir" "env.device=$dev" \
      "run.total_env_steps=$steps" run.checkpoint_every=1 run.eval_episodes=8
    rc=$?
    ev=""
    for eval_dev in "$dev" cpu; do
      run_to "$runs/eval.json" 60 "$bin" eval "$dir/checkpoints/last.pt" --episodes 8 \
        --device "$eval_dev" --json
      ev="$ev eval_$eval_dev=rc$?"
    done
    record "7_extras.smoke.$cfg" "\"train rc=$rc;$ev\""
  done
fi
if [ "$mode" != gpu ]; then
  record 7_extras.ctest '"not in a dry run (make test runs the suite on the CPU)"'
elif [ "$(left)" -gt 90 ]; then
  run_logged $(($(left) - 60)) cmake --build "$build" -j "$jobs"
  (cd "$build" && timeout --kill-after=10 $(($(left) - 15)) ctest -j 8 --timeout 120 \
    --output-on-failure > "$out/ctest.log" 2>&1)
  record 7_extras.ctest "\"rc=$? $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tr -d '"')\""
else
  record 7_extras.ctest '"skipped: budget"'
fi
record finished_seconds "$(elapsed)"
echo "gpu-check done in $(elapsed) s: $results"
cat "$results"
