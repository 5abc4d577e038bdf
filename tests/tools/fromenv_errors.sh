#!/bin/sh
# HostcclCommInitFromEnv failure messages: no launcher variables, half a pair, a multi-host run
# without MASTER_ADDR/MASTER_PORT, a store secret too short to be one, and a rank whose rank 0 never
# comes (bounded wait).
# Usage: fromenv_errors.sh <fromenv_probe>
PROBE="$1"
T=$(mktemp -d /tmp/hostccl_fromenv_err.XXXXXX)
trap 'rm -rf "$T"' EXIT
CLEAN="env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u LOCAL_WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT
  -u HOSTCCL_STORE_HOSTED -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u PMI_RANK -u PMI_SIZE
  -u SLURM_PROCID -u SLURM_NTASKS -u HOSTCCL_STORE_SECRET HOSTCCL_STORE_DIR=$T"
check() {  # check <name> <expected stderr fragment> <env assignments...>
  name=$1; want=$2; shift 2
  # shellcheck disable=SC2086
  $CLEAN "$@" "$PROBE" >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc != 0 ] || { echo "FAIL [$name]: succeeded"; exit 1; }
  grep -qF -- "$want" "$T/err" || { echo "FAIL [$name]: stderr lacks '$want':"; cat "$T/err"; exit 1; }
  echo "ok [$name]"
}
check no_env "no launcher environment found"
check half_pair "RANK is set but WORLD_SIZE is not" RANK=0
check rank_too_big "RANK=2 is not below WORLD_SIZE=2" RANK=2 WORLD_SIZE=2
check not_integer "WORLD_SIZE=two is not a non-negative integer" RANK=0 WORLD_SIZE=two
check multi_host "export MASTER_ADDR=<rank 0's host> and MASTER_PORT=<a free port>" RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2
check half_master "MASTER_ADDR is set but MASTER_PORT is not" RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1
check short_secret "HOSTCCL_STORE_SECRET is 5 characters long" RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=9 HOSTCCL_STORE_SECRET=short
check no_root "waiting for rank 0's root info" RANK=1 WORLD_SIZE=2 HOSTCCL_CONNECT_TIMEOUT_MS=500
echo PASS
