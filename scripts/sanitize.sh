#!/usr/bin/env bash
# sanitize.sh: reliability.md row 9 (long). Builds hostccl, its tools and its tests under ASan+UBSan
# (build-asan, -DHOSTCCL_SANITIZE=address) and under TSan (build-tsan, -DHOSTCCL_SANITIZE=thread)
# and runs the default ctest suite (everything not labelled "long") under each. Any sanitizer
# report fails the test that produced it (halt_on_error / exitcode 66). Suppressions, each with its
# reason, live in scripts/{lsan,tsan}.supp (ubsan.supp if ever needed); a test that cannot run
# under a sanitizer may carry the ctest label "no-asan" / "no-tsan" (none does today; reasons go
# in docs/testing.md) and is excluded here.
# Bounded: SANITIZE_TIMEOUT (default 7200 s) is the budget of the WHOLE script; every build and
# ctest run gets what is left of it, and every test its own TIMEOUT property. The time of each
# phase and the total are printed at the end.
# Both runs cover the whole default suite (measured 2026-11-30 on the shared 2-core machine: ASan
# ctest ~6.5 min, TSan ~4 min, builds 15-40 min from scratch depending on load); TSAN_LABELS /
# TSAN_EXCLUDE can narrow the TSan run.
# Usage: scripts/sanitize.sh [asan|tsan]...   (default: both). Exit 0 = every run clean.
# Env: SANITIZE_TIMEOUT, SANITIZE_JOBS (build and ctest parallelism, default nproc), TSAN_LABELS
# (ctest -L regex), TSAN_EXCLUDE (ctest -E regex).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${SANITIZE_JOBS:-$(nproc)}
LIMIT=${SANITIZE_TIMEOUT:-7200}
START=$SECONDS
KINDS=("$@")
((${#KINDS[@]})) || KINDS=(asan tsan)
# suppression files are passed only when they exist (a missing one is a sanitizer start-up error).
supp() { [[ -f $ROOT/scripts/$1.supp ]] && echo ":suppressions=$ROOT/scripts/$1.supp"; }
# fast_unwind_on_malloc=0: Open MPI is built without frame pointers; the fast unwinder cuts its
# leak stacks to 1-2 frames that no suppression can name (scripts/lsan.supp).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=66:fast_unwind_on_malloc=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-print_suppressions=0$(supp lsan)}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1$(supp ubsan)}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=66:second_deadlock_stack=1$(supp tsan)}
# Open MPI unloads its components before LeakSanitizer runs: keep them so leaks name their library.
export OMPI_MCA_mca_base_component_disable_dlclose=1

left() { local l=$((LIMIT - (SECONDS - START))); ((l > 0)) && echo $l || echo 1; }
summary=()
status=0
for kind in "${KINDS[@]}"; do
  case "$kind" in
    asan) dir=build-asan; san=address; per_test=600; sel=(-LE 'long|no-asan') ;;
    tsan) dir=build-tsan; san=thread; per_test=600; sel=(-LE 'long|no-tsan')
          [[ -n ${TSAN_LABELS:-} ]] && sel+=(-L "$TSAN_LABELS")
          [[ -n ${TSAN_EXCLUDE:-} ]] && sel+=(-E "$TSAN_EXCLUDE") ;;
    *) echo "sanitize: unknown kind $kind (asan, tsan)"; exit 2 ;;
  esac
  t0=$SECONDS
  mkdir -p "$dir"
  echo "sanitize: $kind: configuring and building $dir ($(left) s of budget left)"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOSTCCL_SANITIZE=$san \
        -DHOSTCCL_BUILD_TOOLS=ON -DHOSTCCL_BUILD_BENCH=OFF >"$dir/sanitize-configure.log" 2>&1 || { echo "configure failed: $dir/sanitize-configure.log"; status=1; continue; }
  if ! timeout "$(left)" cmake --build "$dir" -j"$JOBS" >"$dir/sanitize-build.log" 2>&1; then
    echo "sanitize: $kind build failed or ran out of time (see $dir/sanitize-build.log)"; status=1
    summary+=("$kind: build FAILED after $((SECONDS - t0)) s"); continue
  fi
  t1=$SECONDS
  echo "sanitize: $kind: built in $((t1 - t0)) s; ctest ${sel[*]} -j$JOBS"
  # --timeout covers tests without their own TIMEOUT property; the whole run is bounded by the budget.
  if (cd "$dir" && timeout "$(left)" ctest "${sel[@]}" -j"$JOBS" --timeout "$per_test" \
        --output-on-failure >sanitize-ctest.log 2>&1); then
    result=clean
  else
    status=1; result=FAILED
    echo "sanitize: $kind: failures (see $dir/sanitize-ctest.log):"
    grep -E "\*\*\*Failed|\*\*\*Timeout|Exception|ERROR: (Address|Leak|Thread)Sanitizer|runtime error|WARNING: ThreadSanitizer" \
      "$dir/sanitize-ctest.log" | sort | uniq -c | head -40
  fi
  grep -E "tests passed|Total Test time" "$dir/sanitize-ctest.log"
  summary+=("$kind: $result; build $((t1 - t0)) s, ctest $((SECONDS - t1)) s ($(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$dir/sanitize-ctest.log"))")
done
echo "sanitize: summary ($(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null), $JOBS jobs):"
printf '  %s\n' "${summary[@]}"
echo "  total $((SECONDS - START)) s of a ${LIMIT} s budget"
exit $status
