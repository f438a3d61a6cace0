#!/usr/bin/env bash
# Start WORLD ranks of BIN on loopback with torchrun's variables, wait for all, print each exit
# status. Usage: run_local.sh BIN WORLD [VAR=VALUE ...]   (MASTER_PORT: a free port if unset)
set -u
BIN=$1; WORLD=$2; shift 2
export MASTER_ADDR=127.0.0.1 WORLD_SIZE=$WORLD
export MASTER_PORT=${MASTER_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
pids=()
for ((r = 0; r < WORLD; r++)); do
  env RANK=$r LOCAL_RANK=$r "$@" "$BIN" &
  pids+=($!)
done
for r in "${!pids[@]}"; do
  wait "${pids[$r]}"
  echo "rank $r exit $?"
done
