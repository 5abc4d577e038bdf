#!/usr/bin/env bash
# soak.sh: reliability.md row 8 (long). Builds hostccl_soak (tests/fault/soak/soak.cc) in
# build-soak/ and runs it with ranks as threads over the in-process path and over TCP:
# 100,000 small HcclReduce calls back to back, 8 communicators on 8 streams at once, 1,000
# create/destroy cycles; fds, threads, RSS and /dev/shm are compared before/after each phase.
# Bounded: each run is killed after SOAK_TIMEOUT seconds (default 1800). Exit 0 = every run passed.
# Knobs: SOAK_SMALL (100000), SOAK_MULTI (2000 rounds), SOAK_CYCLES (1000), SOAK_TRANSPORTS ("auto tcp").
set -euo pipefail
cd "$(dirname "$0")/.."
B=build-soak
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOSTCCL_BUILD_TOOLS=OFF -DHOSTCCL_BUILD_BENCH=OFF >/dev/null
cmake --build "$B" -j"$(nproc)" --target hostccl_soak >/dev/null
status=0
for t in ${SOAK_TRANSPORTS:-auto tcp}; do
  echo "soak: HOSTCCL_TRANSPORT=$t"
  if ! HOSTCCL_TRANSPORT=$t HOSTCCL_EXEC_TIMEOUT_MS=60000 timeout "${SOAK_TIMEOUT:-1800}" "$B/bin/hostccl_soak" \
       --small "${SOAK_SMALL:-100000}" --multi "${SOAK_MULTI:-2000}" --cycles "${SOAK_CYCLES:-1000}"; then
    echo "soak: HOSTCCL_TRANSPORT=$t FAILED"
    status=1
  fi
done
exit $status
