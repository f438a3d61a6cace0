#!/usr/bin/env bash
# ctest driver. MODE: ok2 | ok3 (collectives agree on every rank) | kill (rank 1 is SIGKILLed;
# the survivor's collective must fail, not hang, and its process exit 3 well within 60 s).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$1; MODE=$2
[ -x "$BIN" ] || { echo "SKIP: $BIN not built"; exit 77; }
case $MODE in
  ok2|ok3)
    W=${MODE#ok}
    out=$(timeout 120 "$HERE/run_local.sh" "$BIN" "$W" SPIKE_ITERS=200 2>&1); echo "$out"
    [ "$(grep -c ' exit 0$' <<<"$out")" = "$W" ] || { echo "FAIL: a rank failed"; exit 1; }
    [ "$(grep 'bit checksum' <<<"$out" | awk '{print $NF}' | sort -u | wc -l)" = 1 ] ||
      { echo "FAIL: ranks disagree"; exit 1; }
    awk '/merged RunningMeanStd/ { if ($NF + 0 > 1e-9) bad = 1; n++ } END { exit (bad || n == 0) }' <<<"$out" ||
      { echo "FAIL: RunningMeanStd merge"; exit 1; } ;;
  kill)
    start=$(date +%s)
    out=$(timeout 60 "$HERE/run_local.sh" "$BIN" 2 SPIKE_FAULT=kill SPIKE_TIMEOUT_MS=5000 2>&1); echo "$out"
    took=$(( $(date +%s) - start ))
    grep -q 'rank 0 exit 3$' <<<"$out" || { echo "FAIL: survivor did not report the failure"; exit 1; }
    [ "$took" -lt 30 ] || { echo "FAIL: took ${took}s"; exit 1; } ;;
esac
echo PASS
