#!/usr/bin/env bash
# Learning curves for the shipped configs: each config over seeds 1-5 (scripts/seeds.py, two
# seeds at a time, one core each), then one image per config (scripts/plot_results.py) in
# docs/images/curves-<name>.png. Runs land in runs/curves/<name>/seedK; a config whose five
# runs are already there is not trained again.
#
# Run: bash scripts/results_curves.sh [name ...]    (names: configs/<name>_ppo.yaml; default all)
#      MYRIAD=path/to/myriad to train with another binary (default build/tools/myriad).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
myriad="${MYRIAD:-$root/build/tools/myriad}"
py="$root/.venv/bin/python"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  names=(cartpole acrobot mountaincar_continuous pendulum sumo tag spread half_cheetah hopper
         walker2d ant humanoid)
fi
for name in "${names[@]}"; do
  cfg="$root/configs/${name}_ppo.yaml"
  out="$root/runs/curves/$name"
  have=$( (ls "$out"/seed*/summary.json 2>/dev/null || true) | wc -l)
  if [ "$have" -lt 5 ]; then
    rm -rf "$out"
    echo "== $name: training seeds 1-5 ($(date -u +%H:%M:%S))"
    "$py" "$root/scripts/seeds.py" "$cfg" --seeds 1-5 --parallel 2 --out "$out" \
        --myriad "$myriad"
  fi
  title="$(awk '/^ *id:/{print $2; exit}' "$cfg") (configs/${name}_ppo.yaml, seeds 1-5, 2-core CPU)"
  "$py" "$root/scripts/plot_results.py" "$out"/seed* --title "$title" \
      --out "$root/docs/images/curves-${name//_/-}.png" || echo "$name: no curve drawn"
done
