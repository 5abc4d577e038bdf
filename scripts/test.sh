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
cd build
ctest --output-on-failure --timeout 300 -LE long -j2 "$@"
