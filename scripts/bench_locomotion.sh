#!/usr/bin/env bash
# Ant-v5 (or another locomotion env) throughput in one run, same env count, threads and random
# actions: Myriad's engine (float32 and float64), libmujoco through the same env code
# (physics=mujoco), EnvPool's own Ant-v5 (its bundled MuJoCo; pip-installed on first use) and
# Gymnasium's vector env. docs/lab-notebook.md records the results.
# Usage: bash scripts/bench_locomotion.sh [ENV] [NUM_ENVS] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
env=${1:-Ant-v5}
n=${2:-256}
threads=${3:-1}
py="$root/.venv/bin/python"
bin="$root/build/tools/myriad"
"$py" -c "import envpool" 2>/dev/null || "$py" -m pip install -q envpool || true
myriad32=$("$bin" bench --env "$env" --num-envs "$n" --steps 200 --threads "$threads" --json)
myriad64=$("$bin" bench --env "$env" --num-envs "$n" --steps 200 --threads "$threads" --float64 --json)
mujoco=$("$bin" bench --env "$env" --num-envs "$n" --steps 200 --threads "$threads" --physics mujoco --json)
envpool=$("$py" "$root/scripts/bench_envpool.py" --env "$env" --num-envs "$n" \
  --threads "$threads" --steps 200 2>/dev/null || echo '{}')
gymnasium=$("$py" "$root/scripts/bench_gymnasium.py" --env "$env" --num-envs "$n" \
  --threads "$threads" --steps 20 2>/dev/null || echo '{}')
for j in "$myriad32" "$myriad64" "$mujoco" "$envpool" "$gymnasium"; do echo "$j"; done
"$py" - "$myriad32" "$myriad64" "$mujoco" "$envpool" "$gymnasium" <<'PY'
import json, sys
names = ["myriad float32", "myriad float64", "physics=mujoco", "envpool", "gymnasium"]
rows = [json.loads(s) for s in sys.argv[1:]]
base = rows[2]["steps_per_second"]
for name, r in zip(names, rows):
    if "steps_per_second" in r:
        print(f"{name:16s} {r['steps_per_second']:12.0f} env steps/s  {r['steps_per_second'] / base:5.2f}x physics=mujoco")
    else:
        print(f"{name:16s} not run (not installed)")
PY
