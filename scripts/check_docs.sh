#!/usr/bin/env bash
# Fails when README.md or a page of docs/ refers to a file the repository does not have.
#
#   scripts/check_docs.sh [repo]        (ctest: docs.references)
#
# Checked in every file: (1) Markdown link targets `[text](target)` other than URLs and anchors,
# resolved from the file's directory; (2) every mention of a `*.md` file: `docs/x.md` from the
# repository root, a bare `x.md` from the file's directory, docs/ or the root (or, for a name like
# tables.md that a script writes, any tracked file of that name); (3) every path that starts with a
# top-level folder (`src/`, `tests/`, `scripts/`, ...), which must exist or be the start of an
# existing path (`src/api/acl_*.cc`, `bench/membw`); (4) no reference outside the repository
# (absolute /work/... paths or ../ above the root). Prints one line per broken reference.
set -uo pipefail
repo=$(cd "${1:-$(dirname "$0")/..}" && pwd -P)
cd "$repo" || exit 2

files=(README.md docs/*.md)
if command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  tracked=$(git ls-files)
else
  tracked=$(find . -type f -not -path './build*' | sed 's|^\./||')
fi
bad=0
report() { echo "$1:$2: $3"; bad=$((bad + 1)); }

# exists_prefix P: P is a file or folder, or the start of one (globs and {a,b} cut the token short).
exists_prefix() {
  [[ -e $1 ]] && return 0
  compgen -G "$1*" >/dev/null
}

for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  dir=$(dirname "$f")

  # (1) Markdown links.
  while IFS=: read -r line target; do
    [[ $target =~ ^(https?:|mailto:|#) ]] && continue
    path=${target%%#*}
    [[ -z $path ]] && continue
    if [[ $path == /* ]]; then report "$f" "$line" "link to $target is outside the repository"; continue; fi
    [[ -e $dir/$path ]] || report "$f" "$line" "link target $target does not exist (from $dir/)"
    resolved=$(realpath -m "$dir/$path")
    [[ $resolved == "$repo"* ]] || report "$f" "$line" "link to $target leaves the repository"
  done < <(grep -onP '\]\(\K[^)\s]+(?=\))' "$f")

  # (2) *.md mentions.
  while IFS=: read -r line name; do
    if [[ $name == /* || $name == ../* ]]; then
      report "$f" "$line" "$name is outside the repository (cite files of the repository only)"
      continue
    fi
    if [[ $name == */* ]]; then
      [[ -e $name || -e $dir/$name ]] || report "$f" "$line" "$name does not exist"
      continue
    fi
    [[ -e $dir/$name || -e docs/$name || -e $name ]] && continue
    grep -qxE "(.*/)?${name//./\\.}" <<<"$tracked" && continue
    report "$f" "$line" "$name does not exist (looked beside $f, in docs/, the root and every tracked file)"
  done < <(grep -onP '(?<![\w.<>*{$%-])(?:\.\./|/)?[\w.-]+(?:/[\w.-]+)*\.md\b(?![\w-])' "$f")

  # (3) Paths from the repository root.
  while IFS=: read -r line path; do
    path=${path%.}
    exists_prefix "$path" || report "$f" "$line" "$path does not exist"
  done < <(grep -onP '(?<![\w./<>*{$%-])(?:src|tests|scripts|bench|tools|cmake|include|examples|docs|results|\.ci)/[\w./+-]*[\w+-]' "$f")

  # (4) Anything under the machine's /work tree is not part of the repository.
  while IFS=: read -r line path; do
    [[ $path =~ \.md\.?$ ]] && continue  # reported by (2)
    report "$f" "$line" "$path is outside the repository"
  done < <(grep -onP '(?<![\w.])/work/[\w./-]+' "$f")
done

if ((bad)); then
  echo "check_docs: $bad broken reference(s) in README.md and docs/"
  exit 1
fi
echo "check_docs: every reference in README.md and docs/ (${#files[@]} files) resolves"
