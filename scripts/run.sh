#!/usr/bin/env bash
# The README's main command: install what is missing, build, run the four-step examples (Reduce,
# AllReduce, Broadcast, AllGather, ReduceScatter, AlltoAll, Send/Recv, an AllReduce captured and
# replayed with aclmdlRI), then short reduce_test /
# all_reduce_test / broadcast_test / all_gather_test / scatter_test / reduce_scatter_test /
# alltoall_test sweeps on 4 local ranks and a send_recv_test ping-pong on 2.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
echo "== examples/01_reduce: 4 ranks, 8 floats each, sum, root 2"
./build/bin/01_reduce
for ex in 02_allreduce 03_broadcast 04_allgather 05_reduce_scatter 06_alltoall 07_send_recv 08_aclgraph; do
  echo "== examples/$ex"
  ./build/bin/$ex
done
if [[ -x build/bin/hcclrun && -x build/bin/reduce_test ]]; then
  echo "== reduce_test on 4 local ranks (hcclrun), fp32 sum, root 1, 8 B .. 4 MiB"
  ./build/bin/hcclrun -n 4 ./build/bin/reduce_test -b 8 -e 4M -f 4 -d fp32 -o sum -r 1 -c 1
  echo "== all_reduce_test on 4 local ranks, fp32 sum, 8 B .. 4 MiB"
  ./build/bin/hcclrun -n 4 ./build/bin/all_reduce_test -b 8 -e 4M -f 4 -d fp32 -o sum -c 1
  echo "== broadcast_test on 4 local ranks, fp32, root 1, 8 B .. 4 MiB"
  ./build/bin/hcclrun -n 4 ./build/bin/broadcast_test -b 8 -e 4M -f 4 -d fp32 -r 1 -c 1
  echo "== all_gather_test on 4 local ranks, fp32, 8 B .. 4 MiB (data_size: the gathered total)"
  ./build/bin/hcclrun -n 4 ./build/bin/all_gather_test -b 8 -e 4M -f 4 -d fp32 -c 1
  echo "== scatter_test on 4 local ranks, fp32, root 1, 8 B .. 4 MiB (data_size: the root's total)"
  ./build/bin/hcclrun -n 4 ./build/bin/scatter_test -b 8 -e 4M -f 4 -d fp32 -r 1 -c 1
  echo "== reduce_scatter_test on 4 local ranks, fp32 sum, 8 B .. 4 MiB"
  ./build/bin/hcclrun -n 4 ./build/bin/reduce_scatter_test -b 8 -e 4M -f 4 -d fp32 -o sum -c 1
  echo "== alltoall_test on 4 local ranks, fp32, 8 B .. 4 MiB"
  ./build/bin/hcclrun -n 4 ./build/bin/alltoall_test -b 8 -e 4M -f 4 -d fp32 -c 1
fi
if [[ -x build/bin/hcclrun && -x build/bin/send_recv_test ]]; then
  echo "== send_recv_test: ping-pong between 2 local ranks, 8 B .. 4 MiB"
  ./build/bin/hcclrun -n 2 ./build/bin/send_recv_test -b 8 -e 4M -f 4 -c 1
fi
