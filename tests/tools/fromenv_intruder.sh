#!/bin/sh
# An hcclrun job whose store is attacked by a local process without the job's secret: rank 2
# drops HOSTCCL_STORE_SECRET and runs store_intruder, which polls the store for the root info
# (and tries to write a key) while ranks 0 and 1 form a 2-rank communicator; rank 1 starts 1.5 s
# late so the root info sits in the store meanwhile. Pass = the intruder got nothing and the two
# ranks still succeeded. Usage: fromenv_intruder.sh <hcclrun> <store_intruder> <fromenv_probe>
HCCLRUN="$1"; INTRUDER="$2"; PROBE="$3"
T=$(mktemp -d /tmp/hostccl_intruder.XXXXXX)
trap 'rm -rf "$T"' EXIT
"$HCCLRUN" -n 3 --timeout 60 sh -c '
  case $RANK in
    2) exec env -u HOSTCCL_STORE_SECRET "$1" fromenv/1/root 3 ;;
    1) sleep 1.5; exec env WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 "$2" 2 ;;
    *) exec env WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 "$2" 2 ;;
  esac' sh "$INTRUDER" "$PROBE" >"$T/out" 2>"$T/err"
rc=$?
cat "$T/out"
[ $rc = 0 ] || { echo "FAIL: hcclrun exited $rc"; cat "$T/err"; exit 1; }
grep -q '^\[2\] refused' "$T/out" || { echo "FAIL: the intruder was not refused"; exit 1; }
grep -q '^\[0\] fromenv rank 0 of 2 ok' "$T/out" || { echo "FAIL: rank 0 did not succeed"; exit 1; }
grep -q '^\[1\] fromenv rank 1 of 2 ok' "$T/out" || { echo "FAIL: rank 1 did not succeed"; exit 1; }
echo PASS
