#!/usr/bin/env bash
# Configures and builds hostccl with warnings as errors.
#   scripts/build.sh            ./build: RelWithDebInfo, everything (library, tools, examples,
#                               tests, benchmarks)
#   scripts/build.sh --release  ./build-release: what packagers and most users build, Release (-O3),
#                               library, tools and examples only (tests and benchmarks off to save
#                               CI time). scripts/test.sh runs both.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --release ]]; then
  start=$(date +%s)
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DHOSTCCL_WERROR=ON \
    -DHOSTCCL_BUILD_TESTS=OFF -DHOSTCCL_BUILD_BENCH=OFF >/dev/null
  cmake --build build-release -j"$(nproc)"
  echo "build.sh --release: library, tools and examples built in Release in $(( $(date +%s) - start )) s"
  exit 0
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOSTCCL_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
