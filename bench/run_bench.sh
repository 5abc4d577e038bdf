#!/bin/bash
# run_bench.sh: each collective of hostccl side by side with Open MPI (vader), MPICH and gloo, each
# peer running its own collective (MPI_Reduce/Allreduce/Bcast/Allgather(v)/Reduce_scatter(_block)/
# Scatter/Alltoall(v)/Send+Recv, gloo's reduce/allreduce/broadcast/allgather(v)/
# ReduceScatterHalvingDoubling/scatter/alltoall(v)/unbound-buffer send+recv).
#
#   bench/run_bench.sh [--quick] [--ops "reduce allreduce ..."] [--sizes 8,16M,64M,256M]
#                      [--libs "hostccl ompi-vader mpich gloo"] [--ranks "2 4 8"] [--reps 3]
#                      [--budget 0.2] [--warmup 2] [--iso-libs "hostccl hostccl-nocheck ompi-vader"]
#                      [--build-dir DIR] [--out DIR]
#   bench/run_bench.sh --tables-only results/<run> [--remeasure]   (rebuild the tables, plots and
#                      summary from the run's .tsv files; --remeasure adds a membw probe taken now)
#
# --ops: any of reduce allreduce broadcast allgather allgatherv reducescatter reducescatterv scatter
# alltoall alltoallv sendrecv (default: all). The size is the larger per-rank buffer (nccl-tests'
# convention; per operator in bench/bench_common.h and docs/performance.md); sendrecv is a 2-rank
# ping-pong (one-way time = round trip / 2) and runs only in the 2-rank launches.
# fp32, sum where it reduces, root 0; default sizes 8 B then 16 B x 4^k up to 256 MiB (--sizes: a
# comma list with K/M/G suffixes); every library runs the same program (bench/bench_common.h:
# hostccl_coll_bench on hostccl's public API, mpi_coll_bench.{openmpi,mpich}, gloo_coll_bench) with
# the same iteration rule (2 warm-up calls, then iterations calibrated to --budget seconds per size
# from the slowest rank's time, 1..5000: of a burst of up to 20 calls back to back that fits in a
# quarter of the budget, or of the warm-up when isolated or when fewer than 2 fit) and the same
# exact check (on the first launch; later launches only time). Each configuration is launched
# --reps times; the tables use the median over launches of the per-call time (max over ranks).
# Libraries: hostccl, ompi-vader, ompi-tcp (only when listed in --libs), mpich, gloo;
# hostccl-nobind (only when listed) = hostccl launched with `hcclrun --bind none` (hostccl's own
# default is --bind auto: bound round-robin when ranks >= CPUs), shown as a peer column, so
# 'x hostccl-nobind' = unbound time / bound time.
# Writes results/<date>/: machine.txt, membw.txt (bench/membw before each collective and after the
# launches: R = streaming read, W = non-temporal write, all cores; the bound uses the best), raw/
# (every launch's output; not committed), summary.md (every collective at 64 MiB and 8 B: hostccl
# against each peer and its bound), and per collective <op>/: launches.tsv, runs.tsv, isolated.tsv,
# isolated_group.tsv (-S: from the last rank's start of an isolated call to the last rank's end),
# medians.tsv, tables.md (one table per rank count with our ratio to each peer and the
# memory-traffic bound, then isolated small calls), <op>_bw.{png,svg} (gnuplot).
# A collective hostccl does not offer yet (HCCL_E_NOT_SUPPORT, exit status 3) shows as
# "n/a (HCCL_E_NOT_SUPPORT)" and is not launched again. Every launch is bounded by `timeout`.
# --iso-libs: which libraries get the isolated 8 B / 4 KiB launches (hostccl-nocheck = hostccl
# with HOSTCCL_CHECK_ARGS=0). --quick: sizes 8 B, 64 KiB and 16 MiB, ranks 2 and 4, one launch.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${BUILD_DIR:-$repo/build}
out=""
all_ops="reduce allreduce broadcast allgather allgatherv reducescatter reducescatterv scatter alltoall alltoallv sendrecv"
ops=$all_ops
sizes=""
iso_libs="hostccl hostccl-nocheck ompi-vader"
libs_req="hostccl ompi-vader mpich gloo"
ranks_list="2 4 8"
reps=3
budget=0.2
warmup=2
quick=0
tables_only=0
remeasure=0
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --build-dir) build=$2; shift ;;
    --out) out=$2; shift ;;
    --ops) ops=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --iso-libs) iso_libs=$2; shift ;;
    --libs) libs_req=$2; shift ;;
    --ranks) ranks_list=$2; shift ;;
    --reps) reps=$2; shift ;;
    --budget) budget=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --tables-only) tables_only=1; out=$2; shift ;;
    --remeasure) remeasure=1 ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "run_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for op in $ops; do
  [[ " $all_ops " == *" $op "* ]] || { echo "run_bench.sh: unknown collective $op (known: $all_ops)" >&2; exit 2; }
done
iso_sizes="8,4K"
if ((quick)); then
  [[ -n $sizes ]] || sizes="8,64K,16M"
  ranks_list=${RANKS_OVERRIDE:-"2 4"}; reps=1; budget=0.1
fi
[[ -n $sizes ]] || sizes="8,16,64,256,1K,4K,16K,64K,256K,1M,4M,16M,64M,256M"
[[ $sizes =~ ^[0-9]+[kKmMgG]?(,[0-9]+[kKmMgG]?)*$ ]] || { echo "run_bench.sh: bad --sizes $sizes" >&2; exit 2; }
launch_timeout=${LAUNCH_TIMEOUT:-300}
[[ -n $out ]] || out=$repo/results/$(date +%Y%m%d-%H%M%S)$( ((quick)) && echo -quick)
mkdir -p "$out/raw"

# --- the collectives: bytes all ranks together must read and write, in units of S (the size
# column), for a single-pass shared-memory algorithm at n ranks (every output byte written once;
# a copy reads each output byte once from its source, a reduction reads every input once); adding
# a collective = a line here and in size_text, an entry in bench_common.h's kBenchColls and a call
# per program ---
traffic() {  # op n -> "read write footprint" (footprint = distinct bytes touched / S)
  local n=$2
  case "$1" in
    reduce) echo "$n 1 $((n + 1))" ;;                     # n inputs read once, one output written
    allreduce) echo "$n $n $((2 * n))" ;;                 # n inputs read once, the result into n recvBufs
    broadcast) echo "$((n - 1)) $((n - 1)) $n" ;;         # S read and written per non-root
    allgather|allgatherv) echo "1 $n $((n + 1))" ;;       # S = recvBuf (n blocks): each block read once (S), written into n recvBufs
    reducescatter|reducescatterv) echo "$n 1 $((n + 1))" ;;  # S = sendBuf: n sendBufs read once, n blocks of S/n written
    scatter) echo "1 1 2" ;;                              # S = the root's sendBuf: read once, n blocks of S/n written
    alltoall|alltoallv) echo "$n $n $((2 * n))" ;;        # S = sendBuf = recvBuf: every block read once and written once
    sendrecv) echo "1 1 2" ;;                             # one way: S read, S written
    *) echo "0 0 0" ;;
  esac
}
traffic_text() {
  case "$1" in
    reduce) echo "the root's result needs all n inputs read once (n*S) and one output written (S): bound = 1 / (n/R + 1/W)" ;;
    allreduce) echo "single-pass slice AllReduce: the n inputs read once (n*S) and the result written into every rank's recvBuf (n*S): bound = 1 / (n/R + n/W)" ;;
    broadcast) echo "each non-root reads the root's S once and writes S into its own buffer: bound = 1 / ((n-1)/R + (n-1)/W)" ;;
    allgather|allgatherv) echo "a single-pass allgather reads each block once from its owner (S in all) and writes it into all n recvBufs (n*S): bound = 1 / (1/R + n/W)" ;;
    reducescatter|reducescatterv) echo "the n sendBufs read once (n*S) and n blocks of S/n written (S): bound = 1 / (n/R + 1/W)" ;;
    scatter) echo "the root's sendBuf read once (S) and n blocks of S/n written (S): bound = 1 / (1/R + 1/W)" ;;
    alltoall|alltoallv) echo "every block of every sendBuf read once (n*S) and written once into its recvBuf (n*S): bound = 1 / (n/R + n/W)" ;;
    sendrecv) echo "one way: S read from the sender's buffer and S written into the receiver's: bound = 1 / (1/R + 1/W) (all cores' R and W: far above what one transfer between two cores can reach)" ;;
    *) echo "see docs/performance.md" ;;
  esac
}
size_text() {  # what the size column S means
  case "$1" in
    reduce|allreduce|broadcast) echo "S = count x 4 B, each rank's buffer" ;;
    allgather|allgatherv) echo "S = each rank's recvBuf = n blocks of sendCount; a rank sends S/n" ;;
    reducescatter|reducescatterv) echo "S = each rank's sendBuf = n blocks of recvCount; a rank receives S/n" ;;
    scatter) echo "S = the root's sendBuf = n blocks of recvCount; a rank receives S/n" ;;
    alltoall|alltoallv) echo "S = each rank's sendBuf (= recvBuf) = n blocks of sendCount" ;;
    sendrecv) echo "S = the message; time = one way = round trip / 2; 2 ranks only" ;;
  esac
}
workload_text() {
  case "$1" in
    reduce) echo "fp32 sum, root 0" ;;
    allreduce|reducescatter) echo "fp32 sum" ;;
    reducescatterv) echo "fp32 sum, equal counts" ;;
    broadcast|scatter) echo "fp32, root 0" ;;
    allgatherv|alltoallv) echo "fp32, equal counts" ;;
    sendrecv) echo "fp32, ping-pong between ranks 0 and 1" ;;
    *) echo "fp32" ;;
  esac
}
bound_of() {  # op n -> GB/s (0 when unknown)
  local rd wr fp
  read -r rd wr fp <<<"$(traffic "$1" "$2")"
  awk -v R="$R" -v W="$W" -v rd="$rd" -v wr="$wr" 'BEGIN { if (R > 0 && W > 0 && rd + wr > 0) printf "%.3f", 1 / (rd / R + wr / W); else print 0 }'
}

# --- build what is missing ---
bin=$build/bin
if ((!tables_only)); then
  if [[ ! -x $bin/hostccl_coll_bench || ! -x $bin/hcclrun || ! -x $bin/membw ]]; then
    echo "== building bench tools in $build"
    [[ -f $build/CMakeCache.txt ]] || cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
    cmake --build "$build" --target bench_tools hcclrun -j2 >/dev/null || { echo "build failed" >&2; exit 1; }
  fi
fi
export LD_LIBRARY_PATH=$build/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# --- the libraries (name -> command prefix; the bench arguments follow) ---
ompi="mpirun.openmpi --allow-run-as-root --oversubscribe"
libs=()
for lib in $libs_req; do
  case $lib in
    hostccl|hostccl-nobind) [[ -x $bin/hostccl_coll_bench && -x $bin/hcclrun ]] && libs+=("$lib") ;;
    ompi-vader|ompi-tcp) [[ -x $bin/mpi_coll_bench.openmpi ]] && command -v mpirun.openmpi >/dev/null && libs+=("$lib") ;;
    mpich) [[ -x $bin/mpi_coll_bench.mpich ]] && command -v mpiexec.mpich >/dev/null && libs+=(mpich) ;;
    gloo) [[ -x $bin/gloo_coll_bench ]] && libs+=(gloo) ;;
    *) echo "run_bench.sh: unknown library $lib" >&2; exit 2 ;;
  esac
done
((tables_only)) && libs=($(cat "$out/libs.txt" 2>/dev/null || echo "$libs_req"))
prefix_for() {  # lib nranks -> launcher and program
  case "$1" in
    hostccl) echo "$bin/hcclrun -n $2 $bin/hostccl_coll_bench" ;;
    hostccl-nocheck) echo "env HOSTCCL_CHECK_ARGS=0 $bin/hcclrun -n $2 $bin/hostccl_coll_bench" ;;
    hostccl-nobind) echo "$bin/hcclrun --bind none -n $2 $bin/hostccl_coll_bench" ;;
    ompi-vader) echo "env OMPI_MCA_btl=self,vader $ompi -np $2 $bin/mpi_coll_bench.openmpi" ;;
    ompi-tcp) echo "env OMPI_MCA_btl=self,tcp $ompi -np $2 $bin/mpi_coll_bench.openmpi" ;;
    mpich) echo "mpiexec.mpich -n $2 $bin/mpi_coll_bench.mpich" ;;
    gloo) echo "$here/gloo_launch.sh $2 $bin/gloo_coll_bench" ;;
  esac
}

# --- machine and memory bandwidth (for the bound) ---
membw() {
  echo "# $1 (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  timeout -k 5 180 "$bin/membw" -s 1G -r 5 2>&1
}
if ((!tables_only)); then
  printf '%s\n' "${libs[@]}" >"$out/libs.txt"
  {
    echo "date: $(date -u +%FT%TZ)"; uname -a
    lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|L1d|L2|L3|Flags' | sed 's/^Flags:.*avx512/Flags: (avx512 present) .../'
    free -g | head -2
    echo "shmem huge pages (host setting): $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null)"
    "$bin/hccl_info" 2>/dev/null | grep -m1 'device memory pages' | sed 's/^ *//'
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "hostccl: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null) $(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo '(with local changes)')"
    dpkg-query -W -f='${Package} ${Version}\n' openmpi-bin mpich libgloo-dev 2>/dev/null
  } >"$out/machine.txt"
  : >"$out/membw.txt"
fi
((tables_only && remeasure)) && membw "re-measured with --tables-only at $(date -u +%FT%TZ)" >>"$out/membw.txt"
llc=$(( $(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo 0) ))
((llc > 0)) || llc=$(( $(sed 's/K$//' /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo 0) * 1024 ))
read_bw() { awk -v k="$1" '$1 == k && $2 + 0 > best { best = $2 + 0 } END { printf "%.2f", best }' "$out/membw.txt"; }
# The cross-core round trip (membw's X line, ns) over the probes: "150-620 ns", or "not measured".
read_rtt() {
  awk '$1 == "X" { v = $2 + 0; if (n == 0 || v < lo) lo = v; if (n == 0 || v > hi) hi = v; n++ }
       END { if (n == 0) print "not measured"; else if (lo == hi) printf "%d ns\n", lo; else printf "%d-%d ns\n", lo, hi }' "$out/membw.txt"
}

# --- launches ---
# run_one op lib n tag args -> appends to <op>/launches.tsv, returns the exit status
run_one() {
  local op=$1 lib=$2 n=$3 tag=$4; shift 4
  local cmd raw t0 rc secs
  cmd="$(prefix_for "$lib" "$n") --op $op $*"
  raw=$out/raw/${op}_${tag}_${lib}_n${n}.txt
  t0=$(date +%s.%N)
  timeout -k 5 "$launch_timeout" $cmd >"$raw" 2>&1
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tag-$lib" "$n" "$op" "$rc" "$secs" "$cmd" >>"$out/$op/launches.tsv"
  printf '== %-9s %-16s ranks %s %-6s: exit %s, %s s\n' "$op" "$lib" "$n" "$tag" "$rc" "$secs"
  if ((rc == 3)) && grep -q '^\(\[[0-9]*\] \)\?n/a (' "$raw"; then
    sed -n 's/^\(\[[0-9]*\] \)\?\(n\/a (.*)\)$/\2/p' "$raw" | head -1 | sed "s/^/$lib\t/" >>"$out/$op/na.tsv"
  fi
  return $rc
}
# rows: size count type redop root time min max algbw busbw #wrong check (hcclrun prefixes "[r] ")
rows() {  # raw lib n rep
  sed 's/^\[[0-9]*\] //' "$1" | awk -v lib="$2" -v n="$3" -v rep="$4" \
    '$1 ~ /^[0-9]+$/ && NF >= 12 { t = $8; bw = t > 0 ? $1 / t / 1e3 : 0;
      printf "%s\t%s\t%s\t%s\t%s\t%.6f\t%s\n", lib, n, rep, $1, t, bw, $11 }'
}
group_rows() {  # raw lib n rep: the -S line after each isolated row, in rows()'s columns
  sed 's/^\[[0-9]*\] //' "$1" | awk -v lib="$2" -v n="$3" -v rep="$4" '
    $1 ~ /^[0-9]+$/ && NF >= 12 { size = $1 }
    $1 == "#" && $2 == "-S:" && size != "" { printf "%s\t%s\t%s\t%s\t%s\t0\t0\n", lib, n, rep, size, $8 }'
}
is_na() { [[ -s $out/$1/na.tsv ]] && cut -f1 "$out/$1/na.tsv" | grep -qx "$2"; }

start_all=$(date +%s)
if ((!tables_only)); then
  for op in $ops; do
    d=$out/$op
    mkdir -p "$d"
    printf 'lib\tranks\trep\tsize\ttime_us\talgbw\twrong\n' >"$d/runs.tsv"
    printf 'lib\tranks\trep\tsize\ttime_us\talgbw\twrong\n' >"$d/isolated.tsv"
    printf 'lib\tranks\trep\tsize\ttime_us\talgbw\twrong\n' >"$d/isolated_group.tsv"
    printf 'launch\tranks\top\texit\tseconds\tcommand\n' >"$d/launches.tsv"
    : >"$d/na.tsv"
    membw "before $op" >>"$out/membw.txt"
    common="--sizes $sizes -d fp32 -o sum -r 0 -w $warmup -T $budget"
    for n in $ranks_list; do
      [[ $op == sendrecv && $n != 2 ]] && continue  # a 2-rank ping-pong
      for rep in $(seq 1 "$reps"); do
        for lib in "${libs[@]}"; do
          is_na "$op" "$lib" && continue
          # Every library's result is checked exactly on the first launch; later launches only time.
          run_one "$op" "$lib" "$n" "r$rep" $common -c $((rep == 1 ? 1 : 0))
          rows "$out/raw/${op}_r${rep}_${lib}_n${n}.txt" "$lib" "$n" "$rep" >>"$d/runs.tsv"
        done
      done
    done
    # Isolated small calls: a barrier before each call, median; hostccl with the fingerprint
    # check on and off (HOSTCCL_CHECK_ARGS=0), next to Open MPI vader.
    iso="--sizes $iso_sizes -d fp32 -o sum -r 0 -w $warmup -T $budget -I -S -c 0"
    for n in $ranks_list; do
      [[ $op == sendrecv && $n != 2 ]] && continue
      for rep in $(seq 1 "$reps"); do
        for lib in $iso_libs; do
          [[ " ${libs[*]} " == *" ${lib%-nocheck} "* ]] || continue
          is_na "$op" "${lib%-nocheck}" && continue
          run_one "$op" "$lib" "$n" "iso$rep" $iso
          rows "$out/raw/${op}_iso${rep}_${lib}_n${n}.txt" "$lib" "$n" "$rep" >>"$d/isolated.tsv"
          group_rows "$out/raw/${op}_iso${rep}_${lib}_n${n}.txt" "$lib" "$n" "$rep" >>"$d/isolated_group.tsv"
        done
      done
    done
    echo "== $op: launches so far took $(($(date +%s) - start_all)) s"
  done
  membw "after the launches" >>"$out/membw.txt"
else
  ops=$(for d in "$out"/*/; do [[ -f $d/runs.tsv ]] && basename "$d"; done | tr '\n' ' ')
fi
R=$(read_bw R); W=$(read_bw W)
echo "== memory: R = $R GB/s (streaming read), W = $W GB/s (non-temporal write), all cores, best of the probes in membw.txt"

median_tsv() {  # in.tsv -> lib ranks size median_us algbw launches wrong
  tail -n +2 "$1" | sort -t$'\t' -k1,1 -k2,2n -k4,4n -k5,5g | awk -F'\t' '
    function flush() { if (key == "") return; m = c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2;
      split(key, k, SUBSEP); printf "%s\t%s\t%s\t%.3f\t%.6f\t%d\t%d\t%.3f\t%.3f\n", k[1], k[2], k[3], m, (m > 0 ? k[3] / m / 1e3 : 0), c, w, v[1], v[c] }
    { nk = $1 SUBSEP $2 SUBSEP $4; if (nk != key) { flush(); key = nk; c = 0; w = 0 } v[++c] = $5; w += $7 }
    END { flush() }'
}

iso_table() {  # isolated.tsv or isolated_group.tsv -> the markdown table (uses $na_cell)
  echo "| ranks | size | hostccl (check on) | hostccl (check off) | hostccl (--bind none) | ompi-vader | x ompi-vader |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
  median_tsv "$1" | awk -F'\t' -v na="$na_cell" '
    { med[$1, $2, $3] = $4; lo[$1, $2, $3] = $8; hi[$1, $2, $3] = $9;
      if (!(($2, $3) in row)) { row[$2, $3] = 1; rows[++nr] = $2 SUBSEP $3 } }
    function human(s) { return s >= 1048576 ? s / 1048576 " MiB" : s >= 1024 ? s / 1024 " KiB" : s " B" }
    function cell(l, n, s) { return ((l, n, s) in med) ? sprintf("%.2f (%.2f-%.2f)", med[l, n, s], lo[l, n, s], hi[l, n, s]) : (l ~ /^hostccl/ && na != "" ? na : "-") }
    END {
      for (i = 1; i <= nr; i++) for (j = i + 1; j <= nr; j++) {
        split(rows[i], a, SUBSEP); split(rows[j], b, SUBSEP);
        if (b[1] + 0 < a[1] + 0 || (b[1] + 0 == a[1] + 0 && b[2] + 0 < a[2] + 0)) { x = rows[i]; rows[i] = rows[j]; rows[j] = x } }
      for (i = 1; i <= nr; i++) { split(rows[i], r, SUBSEP); n = r[1]; s = r[2];
        ratio = "-";
        if ((("hostccl", n, s) in med) && (("ompi-vader", n, s) in med) && med["hostccl", n, s] > 0)
          ratio = sprintf("%.2f", med["ompi-vader", n, s] / med["hostccl", n, s]);
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", n, human(s), cell("hostccl", n, s), cell("hostccl-nocheck", n, s), cell("hostccl-nobind", n, s), cell("ompi-vader", n, s), ratio } }'
}

tables() {  # op
  local op=$1 d=$out/$1 na_cell="" n rd wr fp
  [[ -s $d/na.tsv ]] && na_cell=$(awk -F'\t' '$1 == "hostccl" { print $2; exit }' "$d/na.tsv")
  printf 'lib\tranks\tsize\ttime_us\talgbw\tlaunches\twrong\tmin_us\tmax_us\n' >"$d/medians.tsv"
  median_tsv "$d/runs.tsv" >>"$d/medians.tsv"
  local nreps
  nreps=$(tail -n +2 "$d/runs.tsv" | cut -f3 | sort -n | tail -1)
  echo "# $op, $(workload_text "$op") - hostccl vs peers (each peer's own $op)"
  echo
  echo "Size: $(size_text "$op"); algbw = S / time."
  echo "Machine: see ../machine.txt. Memory (../membw.txt): R = $R GB/s streaming read, W = $W GB/s"
  echo "non-temporal write, all cores busy. Each cell: median over ${nreps:-0} launch(es) of the per-call"
  echo "time (max over ranks); sizes up to 64 KiB show time in us (lower is better), larger sizes"
  echo "algbw = size / time in GB/s (higher is better). 'x peer' = how many times better hostccl is"
  echo "than that peer. Memory-traffic bound (S = size, n = ranks): $(traffic_text "$op")."
  echo "'in cache' = every byte the call touches fits in the last-level cache ($((llc >> 20)) MiB), so the"
  echo "memory bound does not apply. Results are checked exactly on each configuration's first"
  echo "launch; a wrong one is marked '!'."
  [[ -n $na_cell ]] && { echo; echo "hostccl: $na_cell - $op is not offered by this build; only the peers ran."; }
  for n in $(tail -n +2 "$d/medians.tsv" | cut -f2 | sort -nu); do
    read -r rd wr fp <<<"$(traffic "$op" "$n")"
    echo
    echo "## $n ranks"
    echo
    awk -F'\t' -v n="$n" -v R="$R" -v W="$W" -v rd="$rd" -v wr="$wr" -v fp="$fp" -v llc="$llc" \
        -v na="$na_cell" -v libs="${libs[*]}" '
      NR > 1 && $2 == n { t[$1, $3] = $4; b[$1, $3] = $5; bad[$1, $3] = $7; if (!($3 in seen)) { seen[$3] = 1; sz[++ns] = $3 } }
      function human(s) { return s >= 1048576 ? s / 1048576 " MiB" : s >= 1024 ? s / 1024 " KiB" : s " B" }
      END {
        nl = split(libs, L, " ");
        hdr = "| size | unit | hostccl | bound GB/s | hostccl / bound |"; sep = "|---:|---|---:|---:|---:|";
        for (i = 1; i <= nl; i++) if (L[i] != "hostccl") { hdr = hdr " " L[i] " |"; sep = sep "---:|" }
        for (i = 1; i <= nl; i++) if (L[i] != "hostccl") { hdr = hdr " x " L[i] " |"; sep = sep "---:|" }
        print hdr; print sep;
        for (k = 1; k <= ns; k++) for (j = k + 1; j <= ns; j++) if (sz[j] + 0 < sz[k] + 0) { x = sz[k]; sz[k] = sz[j]; sz[j] = x }
        bound = (R > 0 && W > 0 && rd + wr > 0) ? 1 / (rd / R + wr / W) : 0;
        for (k = 1; k <= ns; k++) {
          s = sz[k]; small = s + 0 <= 65536;
          line = "| " human(s) " | " (small ? "us" : "GB/s") " |";
          if (("hostccl", s) in t) line = line " " (small ? sprintf("%.2f", t["hostccl", s]) : sprintf("%.3f", b["hostccl", s])) (bad["hostccl", s] > 0 ? "!" : "") " |";
          else line = line " " (na != "" ? na : "-") " |";
          if (small || bound <= 0) line = line " - | - |";
          else {
            frac = (("hostccl", s) in b) ? sprintf("%.0f%%", 100 * b["hostccl", s] / bound) : "-";
            if (fp * s <= llc) frac = frac " (in cache)";
            line = line sprintf(" %.2f | %s |", bound, frac);
          }
          for (i = 1; i <= nl; i++) {
            if (L[i] == "hostccl") continue;
            if (!((L[i], s) in t)) { line = line " - |"; continue }
            v = small ? sprintf("%.2f", t[L[i], s]) : sprintf("%.3f", b[L[i], s]);
            line = line " " v (bad[L[i], s] > 0 ? "!" : "") " |"
          }
          for (i = 1; i <= nl; i++) {
            if (L[i] == "hostccl") continue;
            if (!(("hostccl", s) in t) || !((L[i], s) in t) || t["hostccl", s] <= 0) { line = line " - |"; continue }
            line = line sprintf(" %.2f |", t[L[i], s] / t["hostccl", s])
          }
          print line
        }
      }' "$d/medians.tsv"
  done
  if [[ $(wc -l <"$d/isolated.tsv") -gt 1 ]]; then
    echo
    echo "## Isolated small calls (a barrier before each call; per-launch median over calls, max over ranks)"
    echo
    echo "Median over launches, in us, with the range over launches; 'check off' = HOSTCCL_CHECK_ARGS=0"
    echo "(no fingerprint comparison); '--bind none' = launched unbound (hostccl-nobind in --iso-libs)."
    echo "'x ompi-vader' = Open MPI's time / hostccl's (check on)."
    echo
    iso_table "$d/isolated.tsv"
  fi
  if [[ -f $d/isolated_group.tsv && $(wc -l <"$d/isolated_group.tsv") -gt 1 ]]; then
    echo
    echo "## Isolated small calls, one clock: from the last rank's start to the last rank's end (-S)"
    echo
    echo "The same launches: per launch the median over calls of the time from the last rank's start of"
    echo "a call to the last rank's end, without the barrier's exit skew that the max over ranks above"
    echo "carries (docs/performance.md \"8-byte isolated calls at 2 ranks: the barrier's exit skew\")."
    echo
    iso_table "$d/isolated_group.tsv"
  fi
  if [[ ${nreps:-0} -ge 3 ]]; then
    echo
    echo "## Launch spread (back to back, sizes up to 64 KiB): slowest launch / median launch"
    echo
    echo "Over the ${nreps} launches of each configuration (a launch far slower than the median is a slow mode)."
    echo
    echo "| lib | ranks | size | median us | slowest us | slowest / median |"
    echo "|---|---:|---:|---:|---:|---:|"
    awk -F'\t' 'NR > 1 && $3 <= 65536 && $4 > 0 {
        s = $3 >= 1024 ? $3 / 1024 " KiB" : $3 " B";
        printf "| %s | %s | %s | %.2f | %.2f | %.2f |\n", $1, $2, s, $4, $9, $9 / $4 }' "$d/medians.tsv"
  fi
  echo
  echo "Launches that failed (exit status other than 0 and 3 = n/a):"
  awk -F'\t' 'NR > 1 && $4 != 0 && $4 != 3 { printf "- %s, %s ranks: exit %s after %s s\n", $1, $2, $4, $5; f = 1 } END { if (!f) print "- none" }' "$d/launches.tsv"
}

plot() {  # op: algbw vs size, one line per library, one panel per rank count, bound dashed
  local op=$1 d=$out/$1 np lib n bound term ext plot_cmd ranks_here
  command -v gnuplot >/dev/null || return 0
  mkdir -p "$d/plot"
  ranks_here=$(tail -n +2 "$d/medians.tsv" | cut -f2 | sort -nu | tr '\n' ' ')
  [[ -n $ranks_here ]] || return 0
  for lib in "${libs[@]}"; do
    for n in $ranks_here; do
      awk -F'\t' -v l="$lib" -v n="$n" 'NR > 1 && $1 == l && $2 == n { print $3, $5 }' "$d/medians.tsv" | sort -n >"$d/plot/${lib}_n${n}.dat"
    done
  done
  np=$(echo "$ranks_here" | wc -w)
  for term in "pngcairo size $((560 * np)),480 font ',10'" "svg size $((560 * np)),480"; do
    ext=png; [[ $term == svg* ]] && ext=svg
    {
      echo "set terminal $term"
      echo "set output '$d/${op}_bw.$ext'"
      echo "set multiplot layout 1,$np title '$op, $(workload_text "$op"): algbw (GB/s) vs size S (median of launches); dashed: memory-traffic bound'"
      echo "set logscale xy; set grid; set key bottom right; set xlabel 'size S, bytes (see tables.md)'; set ylabel 'GB/s'"
      echo "set format y '%g'; set xtics ('8' 8, '256' 256, '8K' 8192, '256K' 262144, '8M' 8388608, '256M' 268435456)"
      for n in $ranks_here; do
        bound=$(bound_of "$op" "$n")
        echo "set title '$n ranks'"
        plot_cmd="plot"
        for lib in "${libs[@]}"; do
          [[ -s $d/plot/${lib}_n${n}.dat ]] && plot_cmd="$plot_cmd '$d/plot/${lib}_n${n}.dat' using 1:2 with linespoints title '$lib',"
        done
        echo "$plot_cmd $bound with lines dashtype 2 lc rgb 'black' title 'memory bound'"
      done
      echo "unset multiplot"
    } | gnuplot 2>>"$out/raw/gnuplot_$op.log"
  done
}

# The size of an operator's small-message row: 8 B if it ran, else its smallest size if that is at
# most 64 KiB, else nothing (a run of large sizes only).
small_of() {
  awk -F'\t' 'NR > 1 { if ($3 == 8) f = 1; if (m == "" || $3 + 0 < m) m = $3 + 0 }
    END { print f ? 8 : m != "" && m <= 65536 ? m : "" }' "$out/$1/medians.tsv"
}

# summary.md: every collective at one large size (64 MiB when measured, else the largest size)
# and at the smallest (8 B when measured): hostccl against each peer and against its bound.
summary() {
  local op n big small bound na peers fp
  peers=$(for l in "${libs[@]}"; do [[ $l == hostccl ]] || printf '%s ' "$l"; done)
  echo "# Summary: hostccl against each peer, every collective"
  echo
  echo "Machine: machine.txt (load average at the start: $(sed -n 's/^load average at start: //p' "$out/machine.txt" 2>/dev/null))."
  echo "Memory (membw.txt): R = $R GB/s streaming read, W = $W GB/s non-temporal write, all cores."
  echo "Cross-core cache-line round trip (membw.txt, X; the floor of a small call that waits for"
  echo "another rank): $(read_rtt) over the probes."
  echo "Each cell: the median over launches of the per-call time (max over ranks); 'x peer' = the peer's"
  echo "time / hostccl's (> 1: hostccl faster); '!' = a wrong result. The size S and the bound of"
  echo "each collective are in its <op>/tables.md (S is the larger per-rank buffer; sendrecv: one way,"
  echo "2 ranks). Every size, the plots and the isolated 4 KiB calls: <op>/tables.md, <op>/<op>_bw.png."
  echo
  echo "## Large messages (GB/s = S / time)"
  echo
  printf '| collective | ranks | S | hostccl | bound | %% of bound |'
  for l in $peers; do printf ' %s |' "$l"; done
  for l in $peers; do printf ' x %s |' "$l"; done
  echo
  printf '|---|---:|---:|---:|---:|---:|'
  for l in $peers; do printf -- '---:|'; done
  for l in $peers; do printf -- '---:|'; done
  echo
  for op in $all_ops; do
    [[ -s $out/$op/medians.tsv ]] || continue
    na=$(awk -F'\t' '$1 == "hostccl" { print $2; exit }' "$out/$op/na.tsv" 2>/dev/null)
    big=$(awk -F'\t' 'NR > 1 { if ($3 == 67108864) f = 1; if ($3 + 0 > m) m = $3 + 0 } END { print f ? 67108864 : m }' "$out/$op/medians.tsv")
    for n in $(tail -n +2 "$out/$op/medians.tsv" | cut -f2 | sort -nu); do
      bound=$(bound_of "$op" "$n")
      read -r _ _ fp <<<"$(traffic "$op" "$n")"
      awk -F'\t' -v op="$op" -v n="$n" -v s="$big" -v bound="$bound" -v peers="$peers" -v na="$na" -v fp="$fp" -v llc="$llc" '
        function human(x) { return x >= 1048576 ? x / 1048576 " MiB" : x >= 1024 ? x / 1024 " KiB" : x " B" }
        NR > 1 && $2 == n && $3 == s { t[$1] = $4; b[$1] = $5; bad[$1] = $7 }
        END {
          np = split(peers, P, " ");
          h = ("hostccl" in b) ? sprintf("%.3f%s", b["hostccl"], bad["hostccl"] > 0 ? "!" : "") : (na != "" ? na : "-");
          frac = (("hostccl" in b) && bound > 0) ? sprintf("%.0f%%", 100 * b["hostccl"] / bound) : "-";
          if (bound > 0 && fp * s <= llc) frac = frac " (in cache)";
          line = sprintf("| %s | %s | %s | %s | %s | %s |", op, n, human(s), h, bound > 0 ? bound : "-", frac);
          for (i = 1; i <= np; i++) line = line " " ((P[i] in b) ? sprintf("%.3f%s", b[P[i]], bad[P[i]] > 0 ? "!" : "") : "-") " |";
          for (i = 1; i <= np; i++) line = line " " ((P[i] in t) && ("hostccl" in t) && t["hostccl"] > 0 ? sprintf("%.2f", t[P[i]] / t["hostccl"]) : "-") " |";
          print line }' "$out/$op/medians.tsv"
    done
  done
  echo
  echo "## Small messages (time per call in us: back to back, and isolated with a barrier before each call)"
  echo
  local any_small=
  for op in $all_ops; do [[ -s $out/$op/medians.tsv && -n $(small_of "$op") ]] && any_small=1; done
  if [[ -z $any_small ]]; then
    echo "No size up to 64 KiB in this run."
  else
    echo "Isolated: the max over ranks of the per-rank medians; isolated, one clock: from the last rank's start"
    echo "of a call to the last rank's end (-S, docs/performance.md \"8-byte isolated calls at 2 ranks: the"
    echo "barrier's exit skew\")."
    echo
    printf '| collective | ranks | S | hostccl |'
    for l in $peers; do printf ' %s |' "$l"; done
    for l in $peers; do printf ' x %s |' "$l"; done
    printf ' isolated: hostccl | ompi-vader | x ompi-vader | isolated, one clock: hostccl | ompi-vader | x ompi-vader |\n'
    printf '|---|---:|---:|---:|'
    for l in $peers; do printf -- '---:|'; done
    for l in $peers; do printf -- '---:|'; done
    printf -- '---:|---:|---:|---:|---:|---:|\n'
    for op in $all_ops; do
      [[ -s $out/$op/medians.tsv ]] || continue
      na=$(awk -F'\t' '$1 == "hostccl" { print $2; exit }' "$out/$op/na.tsv" 2>/dev/null)
      small=$(small_of "$op")
      [[ -n $small ]] || continue
      for n in $(tail -n +2 "$out/$op/medians.tsv" | cut -f2 | sort -nu); do
        { tail -n +2 "$out/$op/medians.tsv" | sed 's/^/B\t/'; median_tsv "$out/$op/isolated.tsv" | sed 's/^/I\t/'
          [[ -f $out/$op/isolated_group.tsv ]] && median_tsv "$out/$op/isolated_group.tsv" | sed 's/^/G\t/'; } |
        awk -F'\t' -v op="$op" -v n="$n" -v s="$small" -v peers="$peers" -v na="$na" '
          function human(x) { return x >= 1048576 ? x / 1048576 " MiB" : x >= 1024 ? x / 1024 " KiB" : x " B" }
          $3 == n && $4 == s { if ($1 == "B") { t[$2] = $5; bad[$2] = $8 } else if ($1 == "I") iso[$2] = $5; else grp[$2] = $5 }
          END {
            np = split(peers, P, " ");
            line = sprintf("| %s | %s | %s | %s |", op, n, human(s), ("hostccl" in t) ? sprintf("%.2f%s", t["hostccl"], bad["hostccl"] > 0 ? "!" : "") : (na != "" ? na : "-"));
            for (i = 1; i <= np; i++) line = line " " ((P[i] in t) ? sprintf("%.2f%s", t[P[i]], bad[P[i]] > 0 ? "!" : "") : "-") " |";
            for (i = 1; i <= np; i++) line = line " " ((P[i] in t) && ("hostccl" in t) && t["hostccl"] > 0 ? sprintf("%.2f", t[P[i]] / t["hostccl"]) : "-") " |";
            line = line " " (("hostccl" in iso) ? sprintf("%.2f", iso["hostccl"]) : (na != "" ? na : "-")) " | " (("ompi-vader" in iso) ? sprintf("%.2f", iso["ompi-vader"]) : "-") " |";
            line = line " " ((("hostccl" in iso) && ("ompi-vader" in iso) && iso["hostccl"] > 0) ? sprintf("%.2f", iso["ompi-vader"] / iso["hostccl"]) : "-") " |";
            line = line " " (("hostccl" in grp) ? sprintf("%.2f", grp["hostccl"]) : (na != "" ? na : "-")) " | " (("ompi-vader" in grp) ? sprintf("%.2f", grp["ompi-vader"]) : "-") " |";
            line = line " " ((("hostccl" in grp) && ("ompi-vader" in grp) && grp["hostccl"] > 0) ? sprintf("%.2f", grp["ompi-vader"] / grp["hostccl"]) : "-") " |";
            print line }'
      done
    done
  fi
  echo
  echo "Launches that failed (exit status other than 0 and 3 = n/a), all collectives:"
  for op in $all_ops; do
    [[ -f $out/$op/launches.tsv ]] || continue
    awk -F'\t' -v op="$op" 'NR > 1 && $4 != 0 && $4 != 3 { printf "- %s %s, %s ranks: exit %s after %s s\n", op, $1, $2, $4, $5 }' "$out/$op/launches.tsv"
  done | { grep . || echo "- none"; }
}

for op in $ops; do
  [[ -f $out/$op/runs.tsv ]] || continue
  tables "$op" >"$out/$op/tables.md"
  plot "$op"
done
summary >"$out/summary.md"
echo "== all launches took $(($(date +%s) - start_all)) s; results in $out (summary.md, <op>/tables.md, <op>/<op>_bw.png|svg; raw/ not committed)"
for op in $ops; do [[ -f $out/$op/tables.md ]] && cat "$out/$op/tables.md"; done
cat "$out/summary.md"
