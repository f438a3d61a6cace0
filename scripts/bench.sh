#!/usr/bin/env bash
# CPU throughput of Myriad's CartPole-v1 beside EnvPool's, same env count and threads, in one
# run (docs/lab-notebook.md records the results). Usage: bash scripts/bench.sh [NUM_ENVS] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-65536}
threads=${2:-2}
py="$root/.venv/bin/python"
"$py" -c "import envpool" 2>/dev/null || "$py" -m pip install -q envpool
myriad=$("$root/build/tools/myriad" bench --env CartPole-v1 --num-envs "$n" --steps 2000 \
  --threads "$threads" --device cpu --json)
envpool=$("$py" "$root/scripts/bench_envpool.py" --num-envs "$n" --threads "$threads" \
  --steps 100 2>/dev/null)
echo "$myriad"
echo "$envpool"
"$py" -c "import json,sys; m,e=(json.loads(s) for s in sys.argv[1:]); \
print('Myriad/EnvPool steps/s ratio: %.1fx' % (m['steps_per_second']/e['steps_per_second']))" \
  "$myriad" "$envpool"
