#!/usr/bin/env bash
# The README's test command: install what is missing, build, check that the library and tools also
# build the way packagers build them (Release, -O3), then run every default test (ctest, excluding
# the "long" label; see README for the long suites).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
bash scripts/build.sh --release
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Many fault tests fail on purpose, and every failing rank dumps its flight recorder: keep those
# dumps in a directory of this run (unless the caller chose one) instead of /tmp/hostccl-fr-*.
if [[ -z "${HOSTCCL_FR_DIR:-}" ]]; then
  HOSTCCL_FR_DIR=$(mktemp -d /tmp/hostccl-test-fr.XXXXXX)
  export HOSTCCL_FR_DIR
  trap 'rm -rf "$HOSTCCL_FR_DIR"' EXIT
fi
cd build
ctest --output-on-failure --timeout 300 -LE long -j2 "$@"
