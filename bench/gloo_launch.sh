#!/bin/bash
# gloo_launch.sh N program [args...]: starts N local ranks of a gloo program with RANK, SIZE,
# GLOO_STORE (a fresh FileStore directory) and GLOO_PREFIX set; when one rank fails the others
# are ended (by PID); the store directory is removed afterwards. Exit status: the first failure.
set -u
n=${1:?usage: gloo_launch.sh N program [args...]}
shift
store=$(mktemp -d /tmp/gloo_store.XXXXXX)
trap 'rm -rf "$store"' EXIT
pids=()
for ((r = 0; r < n; r++)); do
  RANK=$r SIZE=$n GLOO_STORE=$store GLOO_PREFIX="run$$" "$@" &
  pids+=($!)
done
status=0
remaining=$n
while ((remaining > 0)); do
  wait -n "${pids[@]}" 2>/dev/null
  rc=$?
  remaining=$((remaining - 1))
  if ((rc != 0 && status == 0)); then
    status=$rc
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  fi
done
exit $status
