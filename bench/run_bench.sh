#!/bin/bash
# run_bench.sh: hostccl's Reduce side by side with Open MPI (vader and tcp BTLs), MPICH and gloo.
#
#   bench/run_bench.sh [--quick] [--build-dir DIR] [--out DIR] [--ranks "2 4 8"] [--reps 3] [--budget 0.2] [--warmup 2]
#   bench/run_bench.sh --tables-only results/<run>   (re-measure membw; rebuild tables and plot)
#
# fp32 sum, root 0, sizes 8 B then 16 B x 4^k up to 256 MiB; every library gets the same sizes, the
# same iteration rule (2 warm-up calls, then iterations calibrated to --budget seconds per size from
# the slowest rank's warm-up, 1..5000) and the same exact check (on the first launch; the later
# launches only time). Each configuration is launched --reps times; the tables use the median over launches of the per-call time (max over ranks).
# Writes results/<date>/: raw/ (every launch's output; not committed, results/.gitignore: rerun to
# regenerate), runs.tsv (the rows parsed from raw/, enough for --tables-only), medians.tsv,
# machine.txt, membw.txt, tables.md (one table per rank count, with our ratio to each peer and the
# memory-traffic bound 1/(N/R + 1/W)), reduce_bw.{png,svg} (gnuplot). Every launch is bounded by
# `timeout`. --quick: sizes 8 B, 64 KiB and 16 MiB, ranks 2 and 4, one launch (a smoke test).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${BUILD_DIR:-$repo/build}
out=""
ranks_list="2 4 8"
reps=3
budget=0.2
warmup=2
quick=0
tables_only=0
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --build-dir) build=$2; shift ;;
    --out) out=$2; shift ;;
    --ranks) ranks_list=$2; shift ;;
    --reps) reps=$2; shift ;;
    --budget) budget=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --tables-only) tables_only=1; out=$2; shift ;;  # re-measure membw, rebuild tables/plot from DIR/runs.tsv
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "run_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
sizes="8,16,64,256,1K,4K,16K,64K,256K,1M,4M,16M,64M,256M"
iso_sizes="8,4K"
if ((quick)); then
  sizes="8,64K,16M"; ranks_list=${RANKS_OVERRIDE:-"2 4"}; reps=1; budget=0.1
fi
launch_timeout=${LAUNCH_TIMEOUT:-300}
[[ -n $out ]] || out=$repo/results/$(date +%Y%m%d-%H%M%S)$( ((quick)) && echo -quick)
mkdir -p "$out/raw"

# --- build what is missing ---
bin=$build/bin
need=()
for t in reduce_test hcclrun membw; do [[ -x $bin/$t ]] || need+=("$t"); done
if ((${#need[@]})) || [[ ! -x $bin/mpi_reduce_bench.openmpi && ! -x $bin/mpi_reduce_bench.mpich ]]; then
  echo "== building bench tools in $build"
  [[ -f $build/CMakeCache.txt ]] || cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
  cmake --build "$build" --target bench_tools hcclrun -j2 >/dev/null || { echo "build failed" >&2; exit 1; }
fi
export LD_LIBRARY_PATH=$build/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# --- machine and memory bandwidth (for the bound) ---
((tables_only)) || {
  echo "date: $(date -u +%FT%TZ)"; uname -a
  lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|L1d|L2|L3|Flags' | sed 's/^Flags:.*avx512/Flags: (avx512 present) .../'
  free -g | head -2
  echo "hostccl: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null) $(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo '(with local changes)')"
  dpkg-query -W -f='${Package} ${Version}\n' openmpi-bin mpich libgloo-dev 2>/dev/null
} >"$out/machine.txt"
timeout -k 5 120 "$bin/membw" -s 256M -r 5 >"$out/membw.txt" 2>&1
R=$(awk '$1=="R"{print $2}' "$out/membw.txt"); W=$(awk '$1=="W"{print $2}' "$out/membw.txt")
echo "== memory: R=${R} GB/s (2-thread read), W=${W} GB/s (2-thread write)"

# --- the libraries (name, command prefix; the bench arguments follow) ---
common="--sizes $sizes -d fp32 -o sum -r 0 -w $warmup -T $budget"
ompi="mpirun.openmpi --allow-run-as-root --oversubscribe"
libs=()
[[ -x $bin/reduce_test && -x $bin/hcclrun ]] && libs+=(hostccl)
[[ -x $bin/mpi_reduce_bench.openmpi ]] && command -v mpirun.openmpi >/dev/null && libs+=(ompi-vader ompi-tcp)
[[ -x $bin/mpi_reduce_bench.mpich ]] && command -v mpiexec.mpich >/dev/null && libs+=(mpich)
[[ -x $bin/gloo_reduce_bench ]] && libs+=(gloo)
cmd_for() {  # lib nranks rep -> command line
  # Every library's result is checked exactly on the first launch; later launches only time
  # (the check costs an extra call plus host-side passes, which dominated the 8-rank launches).
  local args="$common -c $(( $3 == 1 ? 1 : 0 ))"
  case "$1" in
    hostccl) echo "$bin/hcclrun -n $2 $bin/reduce_test -W 1 $args" ;;
    ompi-vader) echo "env OMPI_MCA_btl=self,vader $ompi -np $2 $bin/mpi_reduce_bench.openmpi $args" ;;
    ompi-tcp) echo "env OMPI_MCA_btl=self,tcp $ompi -np $2 $bin/mpi_reduce_bench.openmpi $args" ;;
    mpich) echo "mpiexec.mpich -n $2 $bin/mpi_reduce_bench.mpich $args" ;;
    gloo) echo "$here/gloo_launch.sh $2 $bin/gloo_reduce_bench $args" ;;
  esac
}

if ((!tables_only)); then
printf 'lib\tranks\trep\tsize\ttime_us\talgbw\twrong\n' >"$out/runs.tsv"
printf 'lib\tranks\trep\texit\tseconds\tcommand\n' >"$out/launches.tsv"
start_all=$(date +%s)
for n in $ranks_list; do
  for rep in $(seq 1 "$reps"); do
    for lib in "${libs[@]}"; do
      cmd=$(cmd_for "$lib" "$n" "$rep")
      raw=$out/raw/${lib}_n${n}_r${rep}.txt
      t0=$(date +%s.%N)
      timeout -k 5 "$launch_timeout" $cmd >"$raw" 2>&1
      rc=$?
      secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
      printf '%s\t%s\t%s\t%s\t%.1f\t%s\n' "$lib" "$n" "$rep" "$rc" "$secs" "$cmd" >>"$out/launches.tsv"
      printf '== %-10s ranks %s launch %s: exit %s, %.1f s\n' "$lib" "$n" "$rep" "$rc" "$secs"
      # Rows: size count type redop root time min max algbw busbw #wrong check (hcclrun prefixes "[r] ").
      sed 's/^\[[0-9]*\] //' "$raw" | awk -v lib="$lib" -v n="$n" -v rep="$rep" \
        '$1 ~ /^[0-9]+$/ && NF >= 12 { t = $8; bw = t > 0 ? $1 / t / 1e3 : 0;
          printf "%s\t%s\t%s\t%s\t%s\t%.6f\t%s\n", lib, n, rep, $1, t, bw, $11 }' >>"$out/runs.tsv"
    done
  done
done
echo "== sweep launches took $(( $(date +%s) - start_all )) s"

# --- isolated small calls: a barrier before each call, median; hostccl with the fingerprint
# check on and off (HOSTCCL_CHECK_ARGS=0), next to Open MPI vader ---
printf 'lib\tranks\trep\tsize\ttime_us\talgbw\twrong\n' >"$out/isolated.tsv"
iso="--sizes $iso_sizes -d fp32 -o sum -r 0 -w $warmup -T $budget -I -c 0"
for n in $ranks_list; do
  for rep in $(seq 1 "$reps"); do
    for lib in hostccl hostccl-nocheck ompi-vader; do
      case $lib in
        hostccl) cmd="$bin/hcclrun -n $n $bin/reduce_test -W 1 $iso" ;;
        hostccl-nocheck) cmd="env HOSTCCL_CHECK_ARGS=0 $bin/hcclrun -n $n $bin/reduce_test -W 1 $iso" ;;
        ompi-vader) [[ " ${libs[*]} " == *" ompi-vader "* ]] || continue
          cmd="env OMPI_MCA_btl=self,vader $ompi -np $n $bin/mpi_reduce_bench.openmpi $iso" ;;
      esac
      raw=$out/raw/isolated_${lib}_n${n}_r${rep}.txt
      timeout -k 5 "$launch_timeout" $cmd >"$raw" 2>&1
      rc=$?
      printf '%s\t%s\t%s\t%s\t-\t%s\n' "isolated-$lib" "$n" "$rep" "$rc" "$cmd" >>"$out/launches.tsv"
      sed 's/^\[[0-9]*\] //' "$raw" | awk -v lib="$lib" -v n="$n" -v rep="$rep" \
        '$1 ~ /^[0-9]+$/ && NF >= 12 { printf "%s\t%s\t%s\t%s\t%s\t0\t%s\n", lib, n, rep, $1, $8, $11 }' >>"$out/isolated.tsv"
    done
  done
done
echo "== all launches took $(( $(date +%s) - start_all )) s"
else
  reps=$(tail -n +2 "$out/runs.tsv" | cut -f3 | sort -n | tail -1)
  ranks_list=$(tail -n +2 "$out/runs.tsv" | cut -f2 | sort -nu | tr '\n' ' ')
fi

# --- medians over launches ---
printf 'lib\tranks\tsize\ttime_us\talgbw\tlaunches\twrong\n' >"$out/medians.tsv"
tail -n +2 "$out/runs.tsv" | sort -t$'\t' -k1,1 -k2,2n -k4,4n -k5,5g | awk -F'\t' '
  function flush() { if (key == "") return; m = c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2;
    split(key, k, SUBSEP); printf "%s\t%s\t%s\t%.3f\t%.6f\t%d\t%d\n", k[1], k[2], k[3], m, (m > 0 ? k[3] / m / 1e3 : 0), c, w }
  { nk = $1 SUBSEP $2 SUBSEP $4; if (nk != key) { flush(); key = nk; c = 0; w = 0 } v[++c] = $5; w += $7 }
  END { flush() }' >>"$out/medians.tsv"

# --- isolated small calls: median over launches, min-max range ---
iso_table() {
  [[ -s $out/isolated.tsv ]] || return 0
  echo
  echo "## Isolated small calls (a barrier before each call; per-launch median over calls, max over ranks)"
  echo
  echo "Median over $reps launches, in us, with the range over launches; 'check off' = HOSTCCL_CHECK_ARGS=0"
  echo "(no fingerprint comparison). 'x ompi-vader' = Open MPI's time / hostccl's (check on)."
  echo
  echo "| ranks | size | hostccl (check on) | hostccl (check off) | ompi-vader | x ompi-vader |"
  echo "|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$out/isolated.tsv" | sort -t$'\t' -k2,2n -k4,4n -k1,1 -k5,5g | awk -F'\t' '
    function flush() { if (key == "") return; m = c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2;
      split(key, k, SUBSEP); med[k[1], k[2], k[3]] = m; lo[k[1], k[2], k[3]] = v[1]; hi[k[1], k[2], k[3]] = v[c];
      if (!((k[2], k[3]) in row)) { row[k[2], k[3]] = 1; rows[++nr] = k[2] SUBSEP k[3] } }
    { nk = $1 SUBSEP $2 SUBSEP $4; if (nk != key) { flush(); key = nk; c = 0 } v[++c] = $5 }
    function human(s) { return s >= 1048576 ? s / 1048576 " MiB" : s >= 1024 ? s / 1024 " KiB" : s " B" }
    function cell(l, n, s) { return ((l, n, s) in med) ? sprintf("%.2f (%.2f-%.2f)", med[l, n, s], lo[l, n, s], hi[l, n, s]) : "-" }
    END { flush();
      for (i = 1; i <= nr; i++) { split(rows[i], r, SUBSEP); n = r[1]; s = r[2];
        ratio = "-";
        if ((("hostccl", n, s) in med) && (("ompi-vader", n, s) in med) && med["hostccl", n, s] > 0)
          ratio = sprintf("%.2f", med["ompi-vader", n, s] / med["hostccl", n, s]);
        printf "| %s | %s | %s | %s | %s | %s |\n", n, human(s), cell("hostccl", n, s), cell("hostccl-nocheck", n, s), cell("ompi-vader", n, s), ratio } }'
}

# --- tables: time (us) up to 64 KiB, algbw (GB/s) from 256 KiB; ratios; the traffic bound ---
{
  echo "# Reduce, fp32 sum, root 0 - hostccl vs peers"
  echo
  echo "Machine: see machine.txt. Memory: R = $R GB/s (2-thread read), W = $W GB/s (2-thread write)."
  echo "Each cell: median over $reps launch(es) of the per-call time (max over ranks); sizes up to 64 KiB show"
  echo "time in us (lower is better), larger sizes show algbw = size / time in GB/s (higher is better)."
  echo "'x peer' = how many times better hostccl is than that peer (time ratio or bandwidth ratio)."
  echo "bound = 1 / (N/R + 1/W): the root must read N inputs and write one output."
  echo "Results are checked exactly on each configuration's first launch; a wrong one is marked '!'."
  for n in $ranks_list; do
    echo
    echo "## $n ranks"
    echo
    awk -F'\t' -v n="$n" -v R="$R" -v W="$W" -v libs="${libs[*]}" '
      NR > 1 && $2 == n { t[$1, $3] = $4; b[$1, $3] = $5; bad[$1, $3] = $7; if (!($3 in seen)) { seen[$3] = 1; sz[++ns] = $3 } }
      function human(s) { return s >= 1048576 ? s / 1048576 " MiB" : s >= 1024 ? s / 1024 " KiB" : s " B" }
      END {
        nl = split(libs, L, " ");
        hdr = "| size | unit |"; sep = "|---:|---|";
        for (i = 1; i <= nl; i++) { hdr = hdr " " L[i] " |"; sep = sep "---:|" }
        for (i = 1; i <= nl; i++) if (L[i] != "hostccl") { hdr = hdr " x " L[i] " |"; sep = sep "---:|" }
        hdr = hdr " bound GB/s | hostccl / bound |"; sep = sep "---:|---:|";
        print hdr; print sep;
        for (k = 1; k <= ns; k++) for (j = k + 1; j <= ns; j++) if (sz[j] + 0 < sz[k] + 0) { x = sz[k]; sz[k] = sz[j]; sz[j] = x }
        bound = (R > 0 && W > 0) ? 1 / (n / R + 1 / W) : 0;
        for (k = 1; k <= ns; k++) {
          s = sz[k]; small = s + 0 <= 65536;
          line = "| " human(s) " | " (small ? "us" : "GB/s") " |";
          for (i = 1; i <= nl; i++) {
            if (!((L[i], s) in t)) { line = line " - |"; continue }
            v = small ? sprintf("%.2f", t[L[i], s]) : sprintf("%.3f", b[L[i], s]);
            line = line " " v (bad[L[i], s] > 0 ? "!" : "") " |"
          }
          for (i = 1; i <= nl; i++) {
            if (L[i] == "hostccl") continue;
            if (!(("hostccl", s) in t) || !((L[i], s) in t) || t["hostccl", s] <= 0) { line = line " - |"; continue }
            line = line sprintf(" %.2f |", t[L[i], s] / t["hostccl", s])
          }
          if (small) line = line " - | - |";
          else line = line sprintf(" %.2f | %s |", bound, (("hostccl", s) in b && bound > 0) ? sprintf("%.0f%%", 100 * b["hostccl", s] / bound) : "-");
          print line
        }
      }' "$out/medians.tsv"
  done
  iso_table
  echo
  echo "Launches that failed (exit status != 0):"
  awk -F'\t' 'NR > 1 && $4 != 0 { printf "- %s, %s ranks, launch %s: exit %s after %s s\n", $1, $2, $3, $4, $5; f = 1 } END { if (!f) print "- none" }' "$out/launches.tsv"
} >"$out/tables.md"

# --- plot: algbw vs size, one line per library, one panel per rank count ---
mkdir -p "$out/plot"
for lib in "${libs[@]}"; do
  for n in $ranks_list; do
    awk -F'\t' -v l="$lib" -v n="$n" 'NR > 1 && $1 == l && $2 == n { print $3, $5 }' "$out/medians.tsv" | sort -n >"$out/plot/${lib}_n${n}.dat"
  done
done
if command -v gnuplot >/dev/null; then
  np=$(echo "$ranks_list" | wc -w)
  for term in "pngcairo size $((560 * np)),480 font ',10'" "svg size $((560 * np)),480"; do
    ext=png; [[ $term == svg* ]] && ext=svg
    {
      echo "set terminal $term"
      echo "set output '$out/reduce_bw.$ext'"
      echo "set multiplot layout 1,$np title 'Reduce fp32 sum, root 0: algbw (GB/s) vs size (median of $reps launches)'"
      echo "set logscale xy; set grid; set key bottom right; set xlabel 'bytes per rank'; set ylabel 'GB/s'"
      echo "set format y '%g'; set xtics ('8' 8, '256' 256, '8K' 8192, '256K' 262144, '8M' 8388608, '256M' 268435456)"
      for n in $ranks_list; do
        bound=$(awk -v n="$n" -v R="$R" -v W="$W" 'BEGIN { if (R > 0 && W > 0) printf "%.3f", 1 / (n / R + 1 / W); else print 0 }')
        echo "set title '$n ranks'"
        plot="plot"
        for lib in "${libs[@]}"; do
          plot="$plot '$out/plot/${lib}_n${n}.dat' using 1:2 with linespoints title '$lib',"
        done
        echo "$plot $bound with lines dashtype 2 lc rgb 'black' title 'memory bound'"
      done
      echo "unset multiplot"
    } | gnuplot 2>>"$out/plot/gnuplot.log"
  done
fi
echo "== results in $out (tables.md, reduce_bw.png/svg, medians.tsv; raw/ is not committed)"
cat "$out/tables.md"
