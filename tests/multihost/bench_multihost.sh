#!/usr/bin/env bash
# bench_multihost.sh: HcclReduce across hosts in the netns rig (scripts/netns_rig.sh), 64 MiB fp32
# sum to root 0, each call timed alone after a barrier, median of 3 (-I -n 3, 1 warm-up):
#   hostccl 2 hosts x 2 ranks and 4 hosts x 2 ranks over links shaped to 1 Gbit/s (tbf, each way);
#   hostccl vs Open MPI (tcp BTL between hosts, vader within one) over unshaped veths, 2x2 and 4x2.
# Prints one table; algbw = bytes / median time; "of link" = algbw / link rate (a reduce to one
# root must bring at least the full message into the root's host once, so 100% is the bound).
# Options: --reduce-test PATH, --mpi-bench PATH (default: build/bin, else build-*/bin), --size S,
# --iters N, --rate R, --no-ompi. Needs root (the rig exits 77 otherwise). Not a ctest: numbers
# depend on the machine's load.
set -uo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
rig="$here/scripts/netns_rig.sh"
find_bin() {
  local b
  for b in "$here/build/bin/$1" "$here"/build*/bin/"$1"; do [[ -x "$b" ]] && { echo "$b"; return; }; done
}
reduce_test="$(find_bin reduce_test)" mpi_bench="$(find_bin mpi_reduce_bench.openmpi)"
size=64M iters=3 rate=1gbit ompi=1
while (($#)); do
  case "$1" in
    --reduce-test) reduce_test="$2"; shift 2 ;;
    --mpi-bench) mpi_bench="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --no-ompi) ompi=0; shift ;;
    *) echo "usage: $0 [--reduce-test PATH] [--mpi-bench PATH] [--size 64M] [--iters 3] [--rate 1gbit] [--no-ompi]" >&2; exit 2 ;;
  esac
done
[[ -x "$reduce_test" ]] || { echo "bench_multihost: reduce_test not found (build the reduce_test target)" >&2; exit 2; }
[[ $ompi == 1 && ! -x "$mpi_bench" ]] && { echo "bench_multihost: mpi_reduce_bench.openmpi not found; hostccl only" >&2; ompi=0; }
mpi_args=(-b "$size" -e "$size" -d fp32 -o sum -r 0 -n "$iters" -w 1 -I -c 1)
args=("${mpi_args[@]}" -W 1)
log="$(mktemp /tmp/bench_multihost.XXXXXX)"
trap 'rm -f "$log"' EXIT
rows=()

# run LABEL HOSTS LINK_GBPS RIG_ARGS... -- PROGRAM: one rig run, one table row from the root's line.
run() {
  local label="$1" hosts="$2" link="$3"
  shift 3
  echo "== $label" >&2
  "$rig" -q -H "$hosts" -n 2 -t 600 "$@" >"$log" 2>&1
  local rc=$? line
  line=$(grep -E '^\[(0|mpirun)\] +[0-9]+ +[0-9]+ +fp32' "$log" | tail -1)
  if ((rc != 0)) || [[ -z "$line" ]]; then
    cat "$log" >&2
    rows+=("$(printf '%-34s  %s' "$label" "FAILED (rig status $rc)")")
    return
  fi
  rows+=("$(awk -v l="$label" -v link="$link" '{
      t = $7 / 1000; bw = $2 / ($7 * 1e3);
      pct = link > 0 ? sprintf("%5.1f%%", 100 * bw / link) : "    -";
      printf "%-34s %10.1f %10.4f %8s %7s  %s", l, t, bw, (link > 0 ? sprintf("%.4f", link) : "-"), pct, $13 }' <<<"$line")")
}

[[ "${rate,,}" =~ ^([0-9]+)([kmg]?)bit$ ]] || { echo "bench_multihost: --rate $rate: expected <N>[k|m|g]bit" >&2; exit 2; }
case "${BASH_REMATCH[2]}" in k) m=1e3 ;; m) m=1e6 ;; g) m=1e9 ;; *) m=1 ;; esac
link=$(awk -v n="${BASH_REMATCH[1]}" -v m="$m" 'BEGIN { printf "%.4f", n * m / 8e9 }')
run "hostccl 2x2 @ $rate" 2 "$link" --rate "$rate" -- "$reduce_test" "${args[@]}"
run "hostccl 4x2 @ $rate" 4 "$link" --rate "$rate" -- "$reduce_test" "${args[@]}"
for h in 2 4; do
  run "hostccl ${h}x2 unshaped veth" "$h" 0 -- "$reduce_test" "${args[@]}"
  if ((ompi)); then
    run "Open MPI ${h}x2 unshaped veth" "$h" 0 --launcher ompi --ompi-arg --mca --ompi-arg btl \
      --ompi-arg self,vader,tcp --ompi-arg --bind-to --ompi-arg none -- "$mpi_bench" "${mpi_args[@]}"
  fi
done
echo
echo "HcclReduce $size fp32 sum root 0, 2 ranks per host, median of $iters (load avg $(cut -d' ' -f1 /proc/loadavg) at the end)"
printf '%-34s %10s %10s %8s %7s  %s\n' "configuration" "time(ms)" "algbw GB/s" "link" "of link" "check"
printf '%s\n' "${rows[@]}"
