#!/usr/bin/env bash
# sanitize.sh: reliability.md row 9 (long). Builds hostccl and its tests under ASan+UBSan
# (build-asan, -DHOSTCCL_SANITIZE=address) and under TSan (build-tsan, -DHOSTCCL_SANITIZE=thread)
# and runs the default ctest suite (everything not labelled "long") under each. Any sanitizer
# report fails the test that produced it (halt_on_error / exitcode). Bounded: every ctest run has
# a per-test timeout and the whole script a SANITIZE_TIMEOUT (default 3600 s per build).
# TSan slows the multi-process and grid tests by 5-15x; by default it runs the labels in
# TSAN_LABELS (harness|runtime|transport|bootstrap|fault|unit) and skips the correctness grid.
# Usage: scripts/sanitize.sh [asan|tsan]...   (default: both). Exit 0 = both clean.
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)
LIMIT=${SANITIZE_TIMEOUT:-3600}
KINDS=("$@")
((${#KINDS[@]})) || KINDS=(asan tsan)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=66}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=66:second_deadlock_stack=1}
status=0
for kind in "${KINDS[@]}"; do
  case "$kind" in
    asan) dir=build-asan; san=address; sel=(-LE long) ;;
    tsan) dir=build-tsan; san=thread; sel=(-L "${TSAN_LABELS:-harness|runtime|transport|bootstrap|fault|unit}" -LE long) ;;
    *) echo "sanitize: unknown kind $kind (asan, tsan)"; exit 2 ;;
  esac
  echo "sanitize: $kind: configuring and building $dir"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOSTCCL_SANITIZE=$san \
        -DHOSTCCL_BUILD_TOOLS=OFF -DHOSTCCL_BUILD_BENCH=OFF >"$dir.configure.log" 2>&1 || { echo "configure failed: $dir.configure.log"; status=1; continue; }
  if ! timeout "$LIMIT" cmake --build "$dir" -j"$JOBS" >"$dir.build.log" 2>&1; then
    echo "sanitize: $kind build failed (see $dir.build.log)"; status=1; continue
  fi
  echo "sanitize: $kind: ctest ${sel[*]}"
  if ! (cd "$dir" && timeout "$LIMIT" ctest "${sel[@]}" --timeout 600 --output-on-failure >"../$dir.ctest.log" 2>&1); then
    status=1
    echo "sanitize: $kind: failures (see $dir.ctest.log):"
    grep -E "\*\*\*Failed|\*\*\*Timeout|Exception|ERROR: (Address|Leak|Thread)Sanitizer|runtime error|WARNING: ThreadSanitizer" \
      "$dir.ctest.log" | sort | uniq -c | head -40
  fi
  tail -3 "$dir.ctest.log"
done
exit $status
