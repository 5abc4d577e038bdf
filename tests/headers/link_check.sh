#!/bin/sh
# Builds the hccl_test-like client (two translation units) the way hccl_test's Makefile does and
# runs it, so every referenced symbol must resolve at load time (-Wl,-z,now).
# Usage: link_check.sh <c++ compiler> <include dir> <lib dir> <work dir> <std> <-l flags...>
set -eu
cxx=$1; inc=$2; libdir=$3; work=$4; std=$5; shift 5
src=$(dirname "$0")/clients
mkdir -p "$work"
exe="$work/hccl_test_like_$std$(echo "$*" | tr -d ' -')"
"$cxx" -std="$std" -Wall -Wextra -Wno-missing-field-initializers -Werror -O2 -fstack-protector-strong -fPIE -pie \
  -I"$inc" "$src/hccl_test_like.cc" "$src/all_symbols.cc" -o "$exe" \
  -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack -Wl,--copy-dt-needed-entries \
  -L"$libdir" "$@"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$exe"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$exe" --symbols
