#!/bin/sh
# HostcclCommInitFromEnv without MASTER_ADDR/MASTER_PORT: N processes started by this script
# (same parent) rendezvous through a FileStore in $HOSTCCL_STORE_DIR, which is removed afterwards.
# Usage: fromenv_filestore.sh <fromenv_probe> <N>
PROBE="$1"; N="$2"
HOSTCCL_STORE_DIR=$(mktemp -d /tmp/hostccl_fromenv.XXXXXX); export HOSTCCL_STORE_DIR
unset MASTER_ADDR MASTER_PORT HOSTCCL_STORE_HOSTED
pids=""
r=0
while [ $r -lt "$N" ]; do
  RANK=$r WORLD_SIZE=$N LOCAL_RANK=$r LOCAL_WORLD_SIZE=$N "$PROBE" "$N" &
  pids="$pids $!"
  r=$((r + 1))
done
status=0
for p in $pids; do wait "$p" || status=1; done
left=$(ls -A "$HOSTCCL_STORE_DIR")
rm -rf "$HOSTCCL_STORE_DIR"
[ $status = 0 ] || { echo "FAIL: a rank failed"; exit 1; }
[ -z "$left" ] || { echo "FAIL: the file store was not cleaned up: $left"; exit 1; }
echo PASS
