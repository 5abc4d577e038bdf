#!/usr/bin/env bash
# Interleaved A/B of small calls against Open MPI vader (docs/performance.md "8-byte isolated
# calls: the per-call cost"): for each operator and mode, launches A's build, B's build and Open
# MPI one after the other, ROUNDS times, and prints one line per launch (time per call in us, max
# over ranks). Medians are taken by the reader (or `sort -n`), never from one launch.
#   bench/callpath/ab_small.sh A_BUILD_DIR B_BUILD_DIR [RANKS] [ROUNDS] [OPS] [SIZE]
# e.g. bench/callpath/ab_small.sh ../base/build build 2 3 "reduce allreduce broadcast" 8
# AB_PREFIX is put before every launch: on a machine other work keeps busy, AB_PREFIX="chrt -f 10"
# (root) runs the ranks at real-time priority, so a launch measures the call path rather than the
# other work's time slices (every library alike; the spin-then-yield waits then yield only to each
# other). Leave it empty on a quiet machine.
set -u
prefix=${AB_PREFIX:-}
a=$1 b=$2 n=${3:-2} rounds=${4:-3} ops=${5:-"reduce allreduce broadcast allgather reducescatter scatter alltoall sendrecv"}
size=${6:-8}
iters=20000
time_of() {  # the max(us) column (the slowest rank's time) of the size row, from rank 0's table
  awk -v s="$size" '$1 == "[0]" && $2 == s { print $9; exit }'
}
for op in $ops; do
  [[ $op == sendrecv && $n != 2 ]] && continue
  for mode in iso b2b; do
    flag=; [[ $mode == iso ]] && flag=-I
    for r in $(seq "$rounds"); do
      for lib in A B ompi; do
        case $lib in
          A) t=$($prefix timeout 60 "$a/bin/hcclrun" -n "$n" "$a/bin/hostccl_coll_bench" --op "$op" --sizes "$size" -w 20 -n $iters -c 0 $flag 2>&1 | time_of) ;;
          B) t=$($prefix timeout 60 "$b/bin/hcclrun" -n "$n" "$b/bin/hostccl_coll_bench" --op "$op" --sizes "$size" -w 20 -n $iters -c 0 $flag 2>&1 | time_of) ;;
          ompi) t=$(OMPI_MCA_btl=self,vader $prefix timeout 60 mpirun.openmpi --allow-run-as-root --oversubscribe -np "$n" \
                    "$b/bin/mpi_coll_bench.openmpi" --op "$op" --sizes "$size" -w 20 -n $iters -c 0 $flag 2>&1 |
                    sed 's/^/[0] /' | awk -v s="$size" '$2 == s { print $9; exit }') ;;
        esac
        echo "$op $n $mode $lib $r ${t:-fail}"
      done
    done
  done
done
