#!/usr/bin/env bash
# Configures and builds hostccl into ./build (Release with debug info, warnings are errors).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOSTCCL_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
