#!/usr/bin/env bash
# GPU host check (issue 15, "Ready for the first GPU run"), in this order:
#   1. build against the host's PyTorch (CUDA) only what the checks need, in parallel;
#   2. the CUDA checks, with CUDA_LAUNCH_BLOCKING=1 so a faulting kernel names itself: devices
#      and streams, CPU/CUDA env agreement, the physics engine on CUDA, the Python API on CUDA;
#   3. the architectures compiled into the binary (cuobjdump: sm_90 machine code, not PTX JIT);
#   4. one-update CUDA training smoke tests, a discrete (CartPole) and a continuous (Pendulum)
#      config, each writing a checkpoint that `myriad eval` then evaluates on CUDA and on CPU;
#   5. env and engine steps/s (the engine staged and fused), Ant-v5 env steps/s at 64K envs and
#      PPO on Ant-v5 to a return of 6,000, end-to-end PPO training steps/s (CartPole, CUDA,
#      4,096 and 65,536 envs, from summary.json's env_steps / wall_seconds), and the batch
#      layout spike (env-major against tiles of 32 envs);
#   6. with the time left, the rest of the build and the whole ctest suite.
# It must finish within 10 minutes on a 16-core H200 host: every step has a timeout, and the
# optional ones are skipped when the budget (MYRIAD_GPU_CHECK_BUDGET s, default 560) runs low.
#
# The host has CMake, nvcc and PyTorch (python3) but no network: first, here,
#   bash scripts/fetch-gpu-debs.sh     # .debs/: C++ libraries the host lacks
#   bash scripts/fetch-gpu-wheels.sh   # .whl/: Python wheels the tests need (gymnasium)
# then (device tool): carry [".debs", ".whl"], command "bash scripts/gpu-check.sh",
# timeout_s 600. Logs land in $OUT (at most 8 files come back from there); runs in /tmp.
# Dry run without a GPU (the same steps on the CPU, small sizes):
#   MYRIAD_GPU_BUILD=build-gpu PYTHON=.venv/bin/python MYRIAD_GPU_CHECK_DEVICE=cpu \
#   MYRIAD_GPU_CHECK_SPS_ENVS="64 256" bash scripts/gpu-check.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
py=${PYTHON:-python3}
out=${OUT:-/tmp/myriad-gpu-check}
runs=/tmp/myriad-gpu-runs
build=${MYRIAD_GPU_BUILD:-/tmp/myriad-gpu-build}
budget=${MYRIAD_GPU_CHECK_BUDGET:-560}
dev=${MYRIAD_GPU_CHECK_DEVICE:-cuda}  # where the training and benchmark steps run
read -r -a sps_envs <<< "${MYRIAD_GPU_CHECK_SPS_ENVS:-4096 65536}"
jobs=$(nproc)
start=$(date +%s)
mkdir -p "$out" "$runs"
log="$out/gpu-check.log"  # every command's output; stdout gets the summary lines
: > "$log"

elapsed() { echo $(($(date +%s) - start)); }
left() { echo $((budget - $(elapsed))); }
section() { echo; echo "== $* ($(elapsed) s)"; echo "== $*" >> "$log"; }
# run_logged SECONDS CMD...: runs CMD with a timeout, its output appended to the log.
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
summary_field() {  # summary_field FILE KEY: one field of a whole JSON file
  "$py" -c "import json; print(json.load(open('$1'))['$2'])" 2>/dev/null || echo "error"
}
gtest_result() {  # a gtest binary's counts (passed, failed, skipped) and failed tests' names
  local counts failed
  counts=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$1" | sed -E 's/^\[ +//;
    s/ +\] / /; s/ tests?[.,].*//' | tr '\n' ' ')
  failed=$(grep -E '^\[  FAILED  \] [A-Za-z]' "$1" | sed -E 's/^\[  FAILED  \] //; s/ \(.*//' |
    sort -u | head -8 | tr '\n' ' ')
  echo "${counts:-no gtest summary}${failed:+; failed: $failed}"
}
json_field() {  # json_field FILE KEY: one field of a JSON file (the last line of FILE)
  tail -n 1 "$1" 2>/dev/null | "$py" -c "import json, sys; v = json.load(sys.stdin)['$2']; \
print('%.3e' % v if isinstance(v, float) else v)" 2>/dev/null || echo "error"
}

section "host"
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
# zlib1g-dev's libz.so points at Debian's /lib/.../libz.so.1.2.13; use the host's libz.so.1.
libz_dev="$prefix/usr/lib/x86_64-linux-gnu/libz.so"
if [ -L "$libz_dev" ] && [ ! -e "$libz_dev" ]; then
  host_libz=$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
  [ -n "$host_libz" ] && ln -sf "$host_libz" "$libz_dev"
fi
# Python wheels from .whl (scripts/fetch-gpu-wheels.sh), into the host's Python (the machine
# is discarded after), so that ctest's pytest runs see them too; a --target dir otherwise.
if compgen -G ".whl/*.whl" > /dev/null; then
  if ! run_logged 120 "$py" -m pip install -q --no-index --find-links .whl --no-cache-dir \
    --disable-pip-version-check .whl/*.whl; then
    run_logged 120 "$py" -m pip install -q --no-index --no-deps --no-cache-dir --target \
      /tmp/myriad-site .whl/*.whl
    export PYTHONPATH="/tmp/myriad-site${PYTHONPATH:+:$PYTHONPATH}"
  fi
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -4
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, \
$(grep -m1 -o 'avx512f' /proc/cpuinfo || echo 'no avx512f'); $(ldd --version | head -n 1)"
"$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, \
'gpus', torch.cuda.device_count())" 2>&1 | tail -1
"$py" -c "import gymnasium, pytest, numpy, yaml; print('python: gymnasium', \
gymnasium.__version__, 'pytest', pytest.__version__, 'numpy', numpy.__version__)" 2>&1 | tail -1
torch_prefix=$("$py" -c "import torch; print(torch.utils.cmake_prefix_path)")

section "build (CUDA for sm_90, the targets the checks need, -j $jobs)"
if [ ! -f "$build/build.ninja" ]; then
  run_logged 180 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMYRIAD_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="${MYRIAD_CUDA_ARCHS:-90}" \
    -DMYRIAD_JS_ROOT="$prefix/usr/share/javascript" \
    -DCMAKE_PREFIX_PATH="$torch_prefix;$prefix/usr;$prefix/usr/lib/x86_64-linux-gnu/cmake" \
    -DMYRIAD_VENV_PYTHON="$(command -v "$py")" -DMYRIAD_PYTHON=ON \
    -DMYRIAD_MUJOCO_DIR="$mujoco_dir/mujoco" ||
    { echo "configure failed:"; grep -A5 -E "CMake Error" "$log" | head -30; exit 1; }
fi
grep -E "Myriad CUDA (backend|architectures)" "$log" | sed 's/^-- //'
check_targets=(myriad test_devices test_cuda_envs test_physics test_learner myriad_python)
run_logged 330 cmake --build "$build" -j "$jobs" --target "${check_targets[@]}" ||
  { echo "build failed:"; grep -B2 -A12 -E "FAILED|error:" "$log" | head -60; exit 1; }
echo "built ${check_targets[*]} in $(elapsed) s"
bin="$build/tools/myriad"

section "CUDA checks (CUDA_LAUNCH_BLOCKING=1)"
export CUDA_LAUNCH_BLOCKING=1
export MYRIAD_SOURCE_DIR="$root"
# test_learner: the NCCL process group of a one-rank job on GPU 0 (issue 10's world size 1).
for t in envs/test_devices envs/test_cuda_envs physics/test_physics learner/test_learner; do
  name=${t##*/}
  filter='*'
  [ "$name" = test_physics ] && filter='*Cuda*'
  [ "$name" = test_learner ] && filter='OneRankGroup.*:RankDevice.*'
  run_to "$runs/$name.log" 120 "$build/tests/$t" --gtest_filter="$filter"
  echo "$name: rc=$? $(gtest_result "$runs/$name.log")"
done
run_to "$runs/pytest_cuda.log" 180 env MYRIAD_BUILD_DIR="$build" \
  PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" "$py" -m pytest -q -p no:cacheprovider tests/python/test_spaces_and_cuda.py
echo "Python API on CUDA: rc=$? $(tail -n 1 "$runs/pytest_cuda.log")"
unset CUDA_LAUNCH_BLOCKING

section "compiled architectures"
cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
if [ -x "$cuobjdump" ]; then
  # Listed once into variables: `grep -q` on a live pipe ends it early, and under pipefail the
  # writer's SIGPIPE read as "not found" (the first GPU run warned beside 4 sm_90 ELF images).
  elf=$("$cuobjdump" --list-elf "$bin" 2>&1)
  ptx=$("$cuobjdump" --list-ptx "$bin" 2>&1)
  echo "machine code (ELF): $(grep -o 'sm_[0-9]*[a-z]*' <<< "$elf" | sort | uniq -c | tr -s ' ' |
    tr '\n' ' ')"
  echo "PTX: $(grep -o 'sm_[0-9]*[a-z]*' <<< "$ptx" | sort | uniq -c | tr -s ' ' | tr '\n' ' ')"
  grep -q sm_90 <<< "$elf" || echo "WARNING: no sm_90 machine code"
else
  echo "cuobjdump not found"
fi

section "training smoke tests on CUDA (one update, checkpoint, eval on CUDA and CPU)"
export CUDA_LAUNCH_BLOCKING=1
for cfg in cartpole_ppo pendulum_ppo; do
  # One update is num_envs * num_steps env steps of that config.
  steps=$("$py" -c "import yaml; c = yaml.safe_load(open('configs/$cfg.yaml')); \
print(c['env']['num_envs'] * c['ppo']['num_steps'])")
  dir="$runs/smoke-$cfg"
  rm -rf "$dir"
  run_to "$runs/train.log" 120 "$bin" train "configs/$cfg.yaml" --out "$dir" "env.device=$dev" \
    "run.total_env_steps=$steps" run.checkpoint_every=1 run.eval_episodes=8
  rc=$?
  ckpt="$dir/checkpoints/last.pt"
  echo "$cfg: train rc=$rc, $steps env steps, checkpoint $([ -f "$ckpt" ] && echo written ||
    echo MISSING), summary env_steps=$(summary_field "$dir/summary.json" env_steps)"
  [ $rc -eq 0 ] || echo "  $(grep -v '^\s*$' "$runs/train.log" | tail -n 1)"
  for eval_dev in "$dev" cpu; do
    run_to "$runs/eval.json" 120 "$bin" eval "$ckpt" --episodes 8 --device "$eval_dev" --json
    echo "  eval on $eval_dev: rc=$? $(tail -n 1 "$runs/eval.json")"
  done
done
# The CartPole smoke run recorded its eval.replay from CUDA envs; the Python reader checks it.
PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" "$py" -c "import myriad; print('replay \
from CUDA envs:', myriad.load_replay('$runs/smoke-cartpole_ppo/eval.replay'))" 2>&1 | tail -n 1
unset CUDA_LAUNCH_BLOCKING

section "host synchronisations per PPO update on CUDA (torch sync debug mode)"
# LibTorch warns at every synchronising CUDA call; the difference between a 15- and a 5-update
# run, over 10, is the loop's syncs per update (the design allows one: the update's metrics).
for updates in 5 15; do
  rm -rf "$runs/syncs-$updates"  # a run folder is never overwritten: a rerun starts afresh
  PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" timeout 120 "$py" -c "
import torch, myriad
torch.cuda.set_sync_debug_mode('warn')
myriad.train('configs/cartpole_ppo.yaml', out='$runs/syncs-$updates', env__device='$dev',
             run__total_env_steps=64 * 32 * $updates, run__eval_episodes=0,
             run__checkpoint_every=0, eval__record=False)
" > "$runs/syncs-$updates.log" 2>&1
  echo "$updates updates: rc=$? $(grep -c 'synchroniz' "$runs/syncs-$updates.log") sync warnings"
done

section "same seed on another machine (CPU training, pinned math)"
# The command of tests/tools/test_reproducible.py; the development machine (AMD EPYC, GCC 12,
# glibc 2.36) printed policy_loss -0.00586098 for update 1 (docs/lab-notebook.md).
rm -rf "$runs/repro"
run_logged 120 "$bin" train configs/cartpole_ppo.yaml --out "$runs/repro" env.device=cpu \
  run.total_env_steps=40000 run.eval_episodes=0 eval.record=false
"$py" -c "import csv; r = next(csv.DictReader(open('$runs/repro/metrics.csv'))); print('update 1:', \
' '.join(k + '=' + r[k] for k in ('charts/episode_return', 'losses/policy_loss', \
'losses/value_loss', 'losses/approx_kl', 'losses/entropy')), '(dev machine: policy_loss=-0.00586098)')" \
  2>&1 | tail -n 1

section "env and engine steps/s"
printf "%-14s %-7s %9s %12s\n" env device num_envs "steps/s"
big=1048576 bodies=65536
[ "$dev" = cpu ] && big=65536 bodies=1024  # a dry run's sizes
# Tag-v0 at 65,536 envs: issue 11's GPU figure (WarpDrive reports 2.9M env steps/s for Tag).
for spec in "CartPole-v1 $dev $big 200" "CartPole-v1 $dev 65536 500" \
  "Pendulum-v1 $dev $big 200" "CartPole-v1 cpu 65536 200" "Tag-v0 $dev 65536 200" \
  "Spread-v0 $dev 65536 200"; do
  read -r env bench_dev n steps <<< "$spec"
  timeout 60 "$bin" bench --json --env "$env" --device "$bench_dev" --num-envs "$n" --steps "$steps" \
    > "$runs/bench.json" 2>> "$log" || tail -n 1 "$log" | sed 's/^/  /'
  tail -n 1 "$runs/bench.json" >> "$out/bench.jsonl"
  printf "%-14s %-7s %9s %12s\n" "$env" "$bench_dev" "$n" \
    "$(json_field "$runs/bench.json" steps_per_second)"
done
for prec in float32 float64; do
  flag=()
  [ "$prec" = float64 ] && flag=(--float64)
  timeout 90 "$bin" physics-bench physics/models/quadruped.xml --device "$dev" --num-envs "$bodies" \
    --steps 200 "${flag[@]}" > "$runs/physics.json" 2>> "$log"
  tail -n 1 "$runs/physics.json" >> "$out/bench.jsonl"
  echo "quadruped physics-bench $dev $bodies $prec: $(json_field "$runs/physics.json" steps_per_second) steps/s"
  # With contacts and limits (issue 9: aim above 50M physics steps/s at 64K envs on one H200).
  timeout 120 "$bin" physics-bench physics/models/ant_contacts.xml --device "$dev" \
    --num-envs 65536 --steps 200 --warmup 100 "${flag[@]}" > "$runs/physics.json" 2>> "$log"
  tail -n 1 "$runs/physics.json" >> "$out/bench.jsonl"
  echo "ant_contacts physics-bench $dev 65536 $prec: $(json_field "$runs/physics.json" steps_per_second) steps/s, $(json_field "$runs/physics.json" mean_contacts) contacts/env"
done

# The engine's two launch shapes on the GPU: one kernel per named stage (the default) against
# one fused kernel per step (registers and occupancy per kernel: docs/lab-notebook.md).
timeout 120 "$bin" physics-bench physics/models/ant_contacts.xml --device "$dev" \
  --num-envs "$bodies" --steps 200 --warmup 100 --launch fused > "$runs/physics.json" 2>> "$log"
tail -n 1 "$runs/physics.json" >> "$out/bench.jsonl"
echo "ant_contacts physics-bench $dev $bodies float32, fused kernel: $(json_field "$runs/physics.json" steps_per_second) steps/s"

section "locomotion on CUDA (issue 14: Ant-v5 env steps/s at 64K envs; PPO to an Ant-v5 return of 6,000)"
ant_envs=65536
[ "$dev" = cpu ] && ant_envs=256
timeout 120 "$bin" bench --json --env Ant-v5 --device "$dev" --num-envs "$ant_envs" --steps 50 \
  > "$runs/bench.json" 2>> "$log" || tail -n 1 "$log" | sed 's/^/  /'
tail -n 1 "$runs/bench.json" >> "$out/bench.jsonl"
echo "Ant-v5 $dev num_envs=$ant_envs: $(json_field "$runs/bench.json" steps_per_second) env steps/s (aim: above 1e7)"
# The same with the env step fused into one kernel per env step (the default on CUDA is staged).
timeout 120 "$bin" bench --json --env Ant-v5 --device "$dev" --num-envs "$ant_envs" --steps 50 \
  --launch fused > "$runs/bench.json" 2>> "$log" || tail -n 1 "$log" | sed 's/^/  /'
tail -n 1 "$runs/bench.json" >> "$out/bench.jsonl"
echo "Ant-v5 $dev num_envs=$ant_envs, fused env step: $(json_field "$runs/bench.json" steps_per_second) env steps/s"
if [ "$(left)" -gt 240 ]; then
  # The config's GPU settings; stops when the last 100 training episodes average 6,000
  # (Gymnasium's threshold), or at the timeout: then the last logged return is the result.
  rm -rf "$runs/ant"
  run_to "$runs/ant.log" 180 "$bin" train configs/ant_ppo.yaml --out "$runs/ant" \
    "env.device=$dev" env.num_envs=4096 ppo.num_steps=32 ppo.num_minibatches=4 \
    run.total_env_steps=400000000 run.stop_when_solved=true run.eval_episodes=10 \
    eval.record=false run.checkpoint_every=0
  echo "Ant-v5 PPO $dev: rc=$? solved_seconds=$(summary_field "$runs/ant/summary.json" solved_seconds) \
eval=$(summary_field "$runs/ant/summary.json" eval_return_mean) (aim: 6,000 in under 60 s); last log: \
$("$py" -c "import csv; r = list(csv.DictReader(open('$runs/ant/metrics.csv')))[-1]; \
print('%s env steps, return %s, %s s' % (r['env_steps'], r['charts/episode_return'], \
r['charts/wall_seconds']))" 2>/dev/null || echo none)"
else
  echo "Ant-v5 PPO skipped: budget"
fi

section "PPO training throughput (CartPole, CUDA; env steps / wall s from summary.json)"
# Placeholder for issue 15's before/after figures: five updates at each size.
for n in "${sps_envs[@]}"; do
  if [ "$(left)" -lt 150 ]; then echo "skipped $n envs: budget"; continue; fi
  dir="$runs/sps-$n"
  rm -rf "$dir"
  run_to "$runs/train.log" 120 "$bin" train configs/cartpole_ppo.yaml --out "$dir" \
    "env.device=$dev" "env.num_envs=$n" "run.total_env_steps=$((n * 64 * 5))" \
    run.checkpoint_every=0 run.eval_episodes=8 eval.record=false
  rc=$?
  [ $rc -eq 0 ] || echo "  $(grep -v '^\s*$' "$runs/train.log" | tail -n 1)"
  sps=$("$py" -c "import json; s = json.load(open('$dir/summary.json')); \
print('%.3g env steps/s (%d steps in %.2f s)' % (s['env_steps'] / s['wall_seconds'], \
s['env_steps'], s['wall_seconds']))" 2>/dev/null || echo "no summary")
  echo "CartPole PPO $dev num_envs=$n: rc=$rc $sps"
done

section "batch layout spike on the GPU (issue 9: env-major against tiles of 32 envs)"
# Two engine stages, one thread per env, over today's layout and the blocked one
# (spikes/batch_layout/layout_gpu.cu): bitwise agreement, then ms per launch and the ratio.
nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ "$dev" = cpu ]; then
  echo "skipped: no GPU (MYRIAD_GPU_CHECK_DEVICE=cpu)"
elif [ "$(left)" -lt 150 ]; then
  echo "skipped: budget"
else
  run_logged 90 "$nvcc_bin" -std=c++17 -O3 -arch=sm_90 --fmad=false -Xcompiler -ffp-contract=off \
    -o "$runs/layout_gpu" spikes/batch_layout/layout_gpu.cu
  for n in 65536 1048576; do
    timeout 60 "$runs/layout_gpu" "$n" 50 2>&1 | tee -a "$log" | tail -n 3
  done
fi

section "the rest of the build, then ctest (with the time left)"
if [ "$(left)" -gt 120 ]; then
  run_logged $(($(left) - 60)) cmake --build "$build" -j "$jobs"
  echo "full build rc=$?"
fi
if [ "$(left)" -gt 60 ]; then
  (cd "$build" && timeout --kill-after=10 $(($(left) - 15)) ctest -j 8 --timeout 240 \
    --output-on-failure > "$out/ctest.log" 2>&1)
  echo "ctest rc=$?: $(grep -E 'tests passed|tests failed' "$out/ctest.log")"
  sed -n '/tests FAILED:/,$p' "$out/ctest.log" | grep -E '^\s+[0-9]+ - ' | head -20
else
  echo "ctest skipped: budget"
fi
echo
echo "gpu-check done in $(elapsed) s; logs in $out"
