#!/usr/bin/env bash
# Fails when a mutant of tests/mutants/*.patch no longer applies to the sources: a stale mutant
# tests nothing (scripts/mutate.sh would skip it). Rewrite it with scripts/new_mutant.sh.
#
#   scripts/check_mutants.sh [repo]        (ctest: mutants.apply)
#
# `git apply --check` needs no repository (it reads the patch and the files only), so this also
# runs on a source tree without .git. Prints one line per stale patch.
set -uo pipefail
repo=$(cd "${1:-$(dirname "$0")/..}" && pwd -P)
cd "$repo" || exit 2
command -v git >/dev/null || { echo "check_mutants: git not found (skipped)"; exit 0; }
stale=0 total=0
for patch in tests/mutants/*.patch; do
  total=$((total + 1))
  if ! git apply --check "$patch" 2>/dev/null; then
    echo "$patch: no longer applies (the code under it changed; rewrite it with scripts/new_mutant.sh)"
    stale=$((stale + 1))
  fi
done
echo "check_mutants: $total patches, $stale stale"
((stale == 0))
