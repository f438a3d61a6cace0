#!/usr/bin/env bash
# A wheel of this checkout, installed into a fresh venv, gives a working `myriad` command and
# Python package: `myriad --version`, `myriad envs`, `myriad train` on a copied config, `myriad
# view --html` on the run's replay, and `import myriad`. CI runs it after `make test`.
#
# Run: bash scripts/wheel_check.sh     (after `make test`: the wheel reuses build/, so only the
#      install step runs; BUILD=path to use another configured build folder)
#
# The fresh venv takes torch and numpy from the project's venv through a .pth file (nothing is
# downloaded); the wheel's files must be the ones imported, which the script checks.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="$root/.venv/bin/python"
build="${BUILD:-$root/build}"
[ -f "$build/CMakeCache.txt" ] || { echo "wheel_check: $build is not configured (run make test first)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cuda="$(sed -n 's/^MYRIAD_CUDA:STRING=//p' "$build/CMakeCache.txt")"

echo "== wheel (build folder $build, MYRIAD_CUDA=$cuda)"
"$py" -m pip wheel "$root" --no-deps --no-build-isolation -q -w "$tmp/dist" \
    --config-settings=build-dir="$build" \
    --config-settings=cmake.define.MYRIAD_TESTS=ON \
    --config-settings=cmake.define.MYRIAD_CUDA="$cuda"
wheel="$(ls "$tmp"/dist/myriad_rl-*.whl)"
echo "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

echo "== fresh venv"
"$py" -m venv "$tmp/venv"
site="$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$site/project-deps.pth"
"$tmp/venv/bin/python" -m pip install -q --no-deps "$wheel"
export PATH="$tmp/venv/bin:$PATH"
cmd="$(command -v myriad)"
[ "$cmd" = "$tmp/venv/bin/myriad" ] || { echo "wheel_check: myriad resolves to $cmd" >&2; exit 1; }

echo "== myriad --version"; myriad --version
echo "== myriad envs"; myriad envs | head -5
echo "== myriad train (copied config)"
cp "$root/configs/cartpole_ppo.yaml" "$tmp/cartpole.yaml"
(cd "$tmp" && myriad train cartpole.yaml --out run > train.log 2>&1) || { tail -20 "$tmp/train.log"; exit 1; }
tail -2 "$tmp/train.log"
echo "== myriad view --html"
myriad view "$tmp/run" --html "$tmp/replay.html"
[ -s "$tmp/replay.html" ] || { echo "wheel_check: no page written" >&2; exit 1; }
echo "== import myriad"
(cd "$tmp" && python -c "
import myriad, os
where = os.path.dirname(myriad.__file__)
assert where.startswith('$site'), f'imported myriad from {where}, not the wheel'
env = myriad.make('CartPole-v1', num_envs=4)
print('myriad', myriad.__version__, 'from', where, '; CartPole reset', env.reset(seed=0)[0].shape)
")
echo "wheel_check: ok"
