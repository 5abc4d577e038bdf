#!/usr/bin/env bash
# The README's main command: install what is missing, build, run the four-step Reduce example,
# then a short reduce_test sweep on 4 local ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
echo "== examples/01_reduce: 4 ranks, 8 floats each, sum, root 2"
./build/bin/01_reduce
if [[ -x build/bin/hcclrun && -x build/bin/reduce_test ]]; then
  echo "== reduce_test on 4 local ranks (hcclrun), fp32 sum, root 1, 8 B .. 4 MiB"
  ./build/bin/hcclrun -n 4 ./build/bin/reduce_test -b 8 -e 4M -f 4 -d fp32 -o sum -r 1 -c 1
fi
