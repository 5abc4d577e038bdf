#!/usr/bin/env bash
# Writes one mutant for scripts/mutate.sh: replaces the single occurrence of OLD by NEW in FILE,
# stores the diff with its header as tests/mutants/NAME.patch, and restores FILE.
# Usage: bash scripts/new_mutant.sh NAME AREA TESTS-REGEX FILE OLD NEW "what the bug is"
# OLD must occur exactly once in FILE (a mutant is one realistic small bug).
set -euo pipefail
cd "$(dirname "$0")/.."
(($# == 7)) || { sed -n '2,5p' "$0"; exit 2; }
name="$1" area="$2" tests="$3" file="$4" old="$5" new="$6" what="$7"
[[ -f "$file" ]] || { echo "new_mutant: no file $file" >&2; exit 2; }
git diff --quiet -- "$file" || { echo "new_mutant: $file has uncommitted changes" >&2; exit 2; }
n=$(OLD="$old" python3 -c 'import os,sys; print(open(sys.argv[1]).read().count(os.environ["OLD"]))' "$file")
[[ "$n" == 1 ]] || { echo "new_mutant: OLD occurs $n times in $file (must be once)" >&2; exit 2; }
OLD="$old" NEW="$new" python3 -c '
import os, sys
p = sys.argv[1]
s = open(p).read()
open(p, "w").write(s.replace(os.environ["OLD"], os.environ["NEW"], 1))' "$file"
mkdir -p tests/mutants
{
  echo "Mutant: $what"
  echo "Area: $area"
  echo "Tests: $tests"
  echo
  git diff -- "$file"
} >"tests/mutants/$name.patch"
git checkout -- "$file"
echo "wrote tests/mutants/$name.patch"
