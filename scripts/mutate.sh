#!/usr/bin/env bash
# Mutation testing: plants each mutant of tests/mutants/*.patch (one realistic one-line bug each)
# in a scratch worktree of HEAD, rebuilds incrementally, runs the tests, and prints a score table.
# A mutant is "killed" when the build succeeds and the default suite (ctest -LE long) fails;
# "survived" when the whole default suite passes with the bug in; "stale" when the patch no longer
# applies to HEAD (rewrite it); "no-build" when the mutated code does not compile (rewrite it too);
# "unclean" when the test that failed also fails without the mutant (a flaky or broken test: fix
# it first). A kill is confirmed by rerunning the catching test on the reverted tree.
#
# Each patch is a unified diff (as `git diff` writes it) preceded by three header lines:
#   Mutant: what the bug is
#   Area: kernels | algorithms | transport | checks | bootstrap | runtime | common
#   Tests: a ctest -R regex of the tests expected to catch it (run first, as a shortcut)
# The hinted tests are part of the default suite, so a mutant they kill is killed by the default
# suite; only when they pass is the whole default suite run (a survivor always costs one full run).
#
# Usage: bash scripts/mutate.sh [--only REGEX] [--skip REGEX] [--full] [--keep] [--workdir DIR]
#   --only REGEX  run only mutants whose file name matches
#   --skip REGEX  leave out mutants whose file name matches
#   --full        skip the hint shortcut: run the whole default suite for every mutant
#   --keep        keep the scratch worktree and its build (faster next time)
#   --workdir DIR scratch worktree (default /tmp/hostccl-mutate)
# Exit status: 0 when every mutant was killed, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
ONLY="" SKIP="" FULL=0 KEEP=0 WORK=/tmp/hostccl-mutate
while (($#)); do
  case "$1" in
    --only) ONLY="$2"; shift 2 ;;
    --skip) SKIP="$2"; shift 2 ;;
    --full) FULL=1; shift ;;
    --keep) KEEP=1; shift ;;
    --workdir) WORK="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "mutate.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

bash scripts/deps.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [[ ! -d "$WORK/.git" && ! -f "$WORK/.git" ]]; then
  git worktree add --detach "$WORK" HEAD >/dev/null
else
  git -C "$WORK" checkout -q --detach "$(git rev-parse HEAD)"
  git -C "$WORK" reset -q --hard
fi
cleanup() {
  git -C "$WORK" reset -q --hard 2>/dev/null || true
  if ((KEEP == 0)); then git worktree remove --force "$WORK" 2>/dev/null || true; fi
}
trap cleanup EXIT

LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$WORK" -B "$WORK/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOSTCCL_WERROR=ON \
  -DHOSTCCL_BUILD_BENCH=OFF "${LAUNCHER[@]}" >/dev/null
echo "mutate: building the unmutated tree"
cmake --build "$WORK/build" -j"$(nproc)" >"$WORK/build/mutate-base.log" 2>&1 ||
  { tail -30 "$WORK/build/mutate-base.log"; echo "mutate: HEAD does not build" >&2; exit 2; }

run_tests() {  # $1 = log file, rest = extra ctest arguments; returns ctest's status
  local log="$1"; shift
  (cd "$WORK/build" && ctest -LE long -j"$(nproc)" --timeout 300 "$@") >"$log" 2>&1
}

declare -a ROWS
killed=0 total=0
for patch in "$REPO"/tests/mutants/*.patch; do
  name=$(basename "$patch" .patch)
  [[ -n "$ONLY" && ! "$name" =~ $ONLY ]] && continue
  [[ -n "$SKIP" && "$name" =~ $SKIP ]] && continue
  total=$((total + 1))
  area=$(sed -n 's/^Area: *//p' "$patch" | head -1)
  hint=$(sed -n 's/^Tests: *//p' "$patch" | head -1)
  start=$(date +%s)
  result="" by=""
  if ! git -C "$WORK" apply --check "$patch" 2>/dev/null; then
    result=stale
  else
    git -C "$WORK" apply "$patch"
    if ! cmake --build "$WORK/build" -j"$(nproc)" >"$WORK/build/mutate-$name.log" 2>&1; then
      result=no-build
    else
      log="$WORK/build/mutate-$name-tests.log"
      if ((FULL == 0)) && [[ -n "$hint" ]] && ! run_tests "$log" --stop-on-failure -R "$hint"; then
        result=killed by="hinted"
      elif run_tests "$log" --stop-on-failure; then
        result=survived
      else
        result=killed by="suite"
      fi
      if [[ $result == killed ]]; then
        by="$by: $(grep -m1 -E '^\s*[0-9]+ - .*\((Failed|Timeout|Subprocess|SEGFAULT|Exception)' "$log" |
                   sed -E 's/^\s*[0-9]+ - //; s/ \(.*//; s/  # .*//')"
      fi
    fi
    git -C "$WORK" apply -R "$patch"
    # A kill counts only when the catching test passes without the mutant: a flaky or already
    # failing test would otherwise "kill" every mutant.
    caught="${by#*: }"
    if [[ $result == killed && -n "$caught" ]]; then
      re="^$(printf '%s' "$caught" | sed 's/[][\.*^$+?(){}|]/\\&/g')( |\$)"
      if ! cmake --build "$WORK/build" -j"$(nproc)" >>"$WORK/build/mutate-$name.log" 2>&1 ||
         ! (cd "$WORK/build" && ctest --timeout 300 -R "$re") >"$WORK/build/mutate-$name-clean.log" 2>&1 ||
         grep -q 'No tests were found' "$WORK/build/mutate-$name-clean.log"; then
        result=unclean by="$caught fails without the mutant too (see mutate-$name-clean.log)"
      fi
    fi
  fi
  [[ $result == killed ]] && killed=$((killed + 1))
  ROWS+=("$(printf '| %s | %s | %s | %s | %ss |' "$name" "$area" "$result" "$by" "$(($(date +%s) - start))")")
  echo "mutate: $name: $result $by"
done
# Leave the build matching HEAD for a --keep rerun.
cmake --build "$WORK/build" -j"$(nproc)" >/dev/null 2>&1 || true

echo
echo "| Mutant | Area | Result | Caught by | Time |"
echo "|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
echo "mutation score: $killed of $total killed"
((killed == total))
