#!/usr/bin/env bash
# bench_multihost.sh: HcclReduce (or --op allreduce / broadcast / allgather / reducescatter / alltoall:
# HcclAllReduce, HcclBroadcast, HcclAllGather, HcclReduceScatter, HcclAlltoAll) across hosts in the netns rig (scripts/netns_rig.sh), 64 MiB fp32 sum to root 0, each call timed alone after a barrier, median of 3 calls (-I -n 3, 1 warm-up) per
# launch, and the median over --launches launches (default 3):
#   hostccl and Open MPI (tcp BTL between hosts, vader within one; as is and with
#   mpi_yield_when_idle=1) with 2 hosts x 2 ranks and 4 hosts x 2 ranks, over links shaped to
#   1 Gbit/s (tbf, each way) and over unshaped veths.
# First it measures what a shaped link really delivers to one plain TCP stream (link_probe.py), so
# the table gives algbw both as a share of the nominal rate and of that measured TCP goodput.
# Prints one table; algbw = bytes / median time (Reduce: the root's time, else the slowest rank's);
# a reduce to one root must bring at least the full message into the root's host once, so 100% of
# the link is the bound (AllReduce and Broadcast across 2 hosts: the same, see docs/multihost.md).
# The other operators' bound is F x S / link, F = the bytes that must cross the busiest host link
# in one direction per byte of S (the size convention of docs/performance.md; K hosts x M ranks):
# AllGather (K-1)/K, AlltoAll M(K-1)/K, ReduceScatter with the canonical rank-order fold and K = 2
# (2M-1)/(2M) (derivation in docs/multihost.md; other K: not derived, "-"). "of link" and "of TCP"
# are F x S / time over the nominal rate and over the measured TCP goodput.
# Options: --op reduce|allreduce|broadcast|allgather|reducescatter|alltoall (the hccl_test tool and
# MPI collective; default reduce),
# --reduce-test PATH (the tool, default build/bin/<reduce_test|all_reduce_test|broadcast_test>), --mpi-bench PATH (default: build/bin, else build-*/bin), --size S,
# --iters N, --launches L, --rate R, --per-host M (ranks per host, default 2), --no-ompi, --only
# REGEX (labels to run), -e NAME=VALUE (extra environment for hostccl runs). hostccl gets one extra
# untimed launch first that logs at INFO to name the algorithm. Needs root (the rig exits 77 otherwise). Not a ctest: numbers
# depend on the machine's load.
set -uo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
rig="$here/scripts/netns_rig.sh"
find_bin() {
  local b
  for b in "$here/build/bin/$1" "$here"/build*/bin/"$1"; do [[ -x "$b" ]] && { echo "$b"; return; }; done
}
reduce_test="" mpi_bench="$(find_bin mpi_coll_bench.openmpi)"
probe="$here/tests/multihost/link_probe.py"
size=64M iters=3 launches=3 rate=1gbit ompi=1 only=. extra=() per_host=2 op=reduce
usage="usage: $0 [--op reduce|allreduce|broadcast|allgather|reducescatter|alltoall] [--reduce-test PATH] [--mpi-bench PATH] [--size 64M] [--iters 3] [--launches 3] [--rate 1gbit] [--per-host 2] [--no-ompi] [--only REGEX] [-e NAME=VALUE]..."
while (($#)); do
  case "$1" in
    --op) op="$2"; shift 2 ;;
    --reduce-test) reduce_test="$2"; shift 2 ;;
    --mpi-bench) mpi_bench="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --launches) launches="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --per-host) per_host="$2"; shift 2 ;;
    --no-ompi) ompi=0; shift ;;
    --only) only="$2"; shift 2 ;;
    -e) extra+=(-e "$2"); shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
case "$op" in
  reduce) tool=reduce_test api=HcclReduce ;;
  allreduce) tool=all_reduce_test api=HcclAllReduce ;;
  broadcast) tool=broadcast_test api=HcclBroadcast ;;
  allgather) tool=all_gather_test api=HcclAllGather ;;
  reducescatter) tool=reduce_scatter_test api=HcclReduceScatter ;;
  alltoall) tool=alltoall_test api=HcclAlltoAll ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
[[ -n "$reduce_test" ]] || reduce_test="$(find_bin "$tool")"
[[ -x "$reduce_test" ]] || { echo "bench_multihost: $tool not found (build the $tool target)" >&2; exit 2; }
[[ $ompi == 1 && ! -x "$mpi_bench" ]] && { echo "bench_multihost: mpi_coll_bench.openmpi not found; hostccl only" >&2; ompi=0; }
mpi_args=(-b "$size" -e "$size" -d fp32 -o sum -r 0 -n "$iters" -w 1 -I -c 1)
args=("${mpi_args[@]}" -W 1)
[[ $op == allreduce ]] && args=(-b "$size" -e "$size" -d fp32 -o sum -n "$iters" -w 1 -I -c 1 -W 1)
[[ $op == broadcast ]] && args=(-b "$size" -e "$size" -d fp32 -r 0 -n "$iters" -w 1 -I -c 1 -W 1)
[[ $op == allgather || $op == alltoall ]] && args=(-b "$size" -e "$size" -d fp32 -n "$iters" -w 1 -I -c 1 -W 1)
[[ $op == reducescatter ]] && args=(-b "$size" -e "$size" -d fp32 -o sum -n "$iters" -w 1 -I -c 1 -W 1)
mpi_args=(--op "$op" "${mpi_args[@]}")
# The time column: Reduce the root's own (it finishes last); the other operators the slowest
# rank's (an MPI_Bcast root returns once its data is handed to the transport).
col=7
[[ $op != reduce ]] && col=9
# F(K): bytes over the busiest host link, one direction, per byte of S (see the header); "" = not derived.
bound_factor() {
  local k="$1" m="$per_host"
  case "$op" in
    allgather) awk -v k="$k" 'BEGIN { printf "%.6f", (k - 1) / k }' ;;
    alltoall) awk -v k="$k" -v m="$m" 'BEGIN { printf "%.6f", m * (k - 1) / k }' ;;
    reducescatter) ((k == 2)) && awk -v m="$m" 'BEGIN { printf "%.6f", (2 * m - 1) / (2 * m) }' ;;
    *) echo 1 ;;
  esac
}
log="$(mktemp /tmp/bench_multihost.XXXXXX)"
trap 'rm -f "$log"' EXIT
rows=()

# run LABEL HOSTS LINK_GBPS RAW_GBPS RIG_ARGS... -- PROGRAM: `launches` rig runs; one table row
# with the median over launches of the root's per-launch median time. hostccl runs log at INFO
# (COLL) and the row names the algorithm rank 0 reported.
run() {
  local label="$1" hosts="$2" link="$3" raw="$4"
  shift 4
  [[ "$label" =~ $only ]] || return 0
  local times=() algo="-" i rc line first=0
  # hostccl: one more launch first, logging at INFO only to learn the algorithm (a log line per call
  # would be timed too: at 8 B it added ~50 us per call); its time is not used.
  [[ "$label" == hostccl* ]] && first=-1
  for ((i = first; i < launches; i++)); do
    local logenv=()
    ((i < 0)) && logenv=(-e HOSTCCL_LOG_LEVEL=INFO -e HOSTCCL_LOG_SUBSYS=COLL)
    echo "== $label (launch $((i + 1)) of $launches$( ((i < 0)) && echo ', logging the algorithm, not timed'))" >&2
    "$rig" -q -H "$hosts" -n "$per_host" -t 600 "${logenv[@]}" "$@" >"$log" 2>&1
    rc=$?
    line=$(grep -E '^\[(0|mpirun)\] +[0-9]+ +[0-9]+ +fp32' "$log" | tail -1)
    if ((rc != 0)) || [[ -z "$line" ]]; then
      cat "$log" >&2
      rows+=("$(printf '%-40s  %s' "$label" "FAILED (rig status $rc)")")
      return
    fi
    if ((i < 0)); then
      local a
      # The measured call's line (fp32 sum); reduce_test's own barriers/checks use other types.
      a=$(grep -E "^\[0\] .*$api #[0-9]+ count=[0-9]+ fp32 .*: [a-z_]+ \(" "$log" | tail -1 |
        sed -E 's/.*: ([a-z_]+) \(.*/\1/')
      [[ -n "$a" ]] && algo="$a"
      echo "   algorithm: $algo" >&2
      continue
    fi
    times+=("$(awk -v c="$col" '{ print $c }' <<<"$line")")
    echo "   $(awk -v c="$col" '{ printf "%.3f ms", $c / 1000 }' <<<"$line")" >&2
  done
  local med f
  f="$(bound_factor "$hosts")"
  med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  rows+=("$(awk -v l="$label" -v link="$link" -v raw="$raw" -v t="$med" -v b="$(awk '{ print $2 }' <<<"$line")" \
      -v all="$(printf '%s ' "${times[@]}")" -v algo="$algo" -v f="${f:-0}" 'BEGIN {
      bw = b / (t * 1e3);
      pct = link > 0 && f > 0 ? sprintf("%5.1f%%", 100 * f * bw / link) : "    -";
      pr = raw > 0 && f > 0 ? sprintf("%5.1f%%", 100 * f * bw / raw) : "    -";
      n = split(all, v, " "); s = "";
      for (k = 1; k <= n; ++k) s = s sprintf("%s%.*f", k > 1 ? "/" : "", v[k] < 10000 ? 3 : 0, v[k] / 1000);
      printf "%-40s %9.3f %9.4f %7s %7s  %-10s %s", l, t / 1000, bw, pct, pr, algo, s }')")
}

[[ "${rate,,}" =~ ^([0-9]+)([kmg]?)bit$ ]] || { echo "bench_multihost: --rate $rate: expected <N>[k|m|g]bit" >&2; exit 2; }
case "${BASH_REMATCH[2]}" in k) m=1e3 ;; m) m=1e6 ;; g) m=1e9 ;; *) m=1 ;; esac
link=$(awk -v n="${BASH_REMATCH[1]}" -v m="$m" 'BEGIN { printf "%.4f", n * m / 8e9 }')
# What one TCP stream gets through a shaped link (payload goodput; tbf counts frame bytes).
raw=0
if [[ -x "$probe" ]]; then
  raws=()
  for ((i = 0; i < 3; i++)); do
    r=$("$rig" -q -H 2 -n 1 --rate "$rate" -t 120 -- "$probe" stream 128 2>&1 | sed -nE 's/.* ([0-9.]+) MB\/s.*/\1/p')
    [[ -n "$r" ]] && raws+=("$r")
  done
  ((${#raws[@]})) && raw=$(printf '%s\n' "${raws[@]}" | sort -g | awk '{ v[NR] = $1 } END { printf "%.4f", v[int((NR + 1) / 2)] / 1000 }')
fi
ompi_base=(--launcher ompi --ompi-arg --mca --ompi-arg btl --ompi-arg self,vader,tcp --ompi-arg --bind-to
           --ompi-arg none --ompi-arg --oversubscribe)
ompi_yield=(--ompi-arg --mca --ompi-arg mpi_yield_when_idle --ompi-arg 1)
for h in 2 4; do
  run "hostccl ${h}x${per_host} @ $rate" "$h" "$link" "$raw" --rate "$rate" "${extra[@]}" -- "$reduce_test" "${args[@]}"
  if ((ompi)); then
    run "Open MPI ${h}x${per_host} @ $rate" "$h" "$link" "$raw" --rate "$rate" "${ompi_base[@]}" -- "$mpi_bench" "${mpi_args[@]}"
    run "Open MPI ${h}x${per_host} @ $rate yield" "$h" "$link" "$raw" --rate "$rate" "${ompi_base[@]}" "${ompi_yield[@]}" \
      -- "$mpi_bench" "${mpi_args[@]}"
  fi
done
for h in 2 4; do
  run "hostccl ${h}x${per_host} unshaped veth" "$h" 0 0 "${extra[@]}" -- "$reduce_test" "${args[@]}"
  if ((ompi)); then
    run "Open MPI ${h}x${per_host} unshaped veth" "$h" 0 0 "${ompi_base[@]}" -- "$mpi_bench" "${mpi_args[@]}"
    run "Open MPI ${h}x${per_host} unshaped veth yield" "$h" 0 0 "${ompi_base[@]}" "${ompi_yield[@]}" -- "$mpi_bench" "${mpi_args[@]}"
  fi
done
echo
echo "$api $size fp32 (sum, root 0 where they apply), $per_host rank(s) per host; per launch the median of $iters calls, then the median of"
echo "$launches launches (load avg $(cut -d' ' -f1 /proc/loadavg) at the end). 'of link': F x algbw / nominal rate;"
echo "'of TCP': F x algbw / one plain TCP stream through the shaped link (link_probe.py, median of 3: $raw GB/s);"
f2="$(bound_factor 2)" f4="$(bound_factor 4)"
echo "F = bytes over the busiest host link per direction per byte of S: 2 hosts ${f2:--}, 4 hosts ${f4:--}."
printf '%-40s %9s %9s %7s %7s  %-10s %s\n' "configuration" "time(ms)" "GB/s" "of link" "of TCP" "algorithm" "per launch (ms)"
printf '%s\n' "${rows[@]}"
