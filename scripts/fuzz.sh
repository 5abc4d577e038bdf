#!/usr/bin/env bash
# fuzz.sh: libFuzzer runs of hostccl's untrusted-input decoders (reliability.md row 7, long):
#   ranktable  hostccl::boot::ParseRankTable   (src/bootstrap/ranktable.cc)
#   root_info  hostccl::boot::DecodeRootInfo   (src/bootstrap/root_info.cc) + encode/decode round trip
#   frame      hostccl::net::DecodeFrameHeader (src/transport/tcp/wire.cc)
#   stream     hostccl::net::TcpTransport's read path over a byte stream from a peer
#              (src/transport/tcp/tcp_transport.cc): never crashes, never leaves a wait hanging
# Each target (tests/fuzz/<target>_fuzz.cc) is built with clang++ -fsanitize=fuzzer,address,undefined
# in build-fuzz/ from its sources plus src/common/*.cc, then run for FUZZ_SECONDS (default 60) on a
# copy of the seed corpus tests/fuzz/corpus/<target>/ (the seeds are never modified). Installs
# clang / libclang-rt-14-dev from Debian if missing. Exit status: 0 no crash and no sanitizer report;
# 1 a target failed (its crash-* input is kept in build-fuzz/artifacts/<target>/).
# Usage: scripts/fuzz.sh [target...]     e.g. FUZZ_SECONDS=600 scripts/fuzz.sh frame
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${FUZZ_SECONDS:-60}
OUT=$ROOT/build-fuzz
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(ranktable root_info frame stream)

if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz: installing clang and libclang-rt-14-dev"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
fi

sources_for() {
  case "$1" in
    ranktable) echo src/bootstrap/ranktable.cc ;;
    # root_info.cc also holds HcclGetRootInfo's helpers, which need sockets and interface selection.
    root_info) echo src/bootstrap/root_info.cc src/bootstrap/local_address.cc src/bootstrap/node_id.cc \
                    src/transport/tcp/socket.cc src/transport/tcp/wire.cc ;;
    frame) echo src/transport/tcp/wire.cc ;;
    stream) echo src/transport/tcp/tcp_transport.cc src/transport/tcp/wire.cc src/transport/tcp/socket.cc ;;
    *) echo "fuzz: unknown target $1 (ranktable, root_info, frame, stream)" >&2; return 1 ;;
  esac
}

mkdir -p "$OUT"
CXXFLAGS=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
          -fno-sanitize-recover=undefined -I"$ROOT/src" -I"$ROOT/include")
status=0
for t in "${TARGETS[@]}"; do
  srcs=$(sources_for "$t")
  bin=$OUT/${t}_fuzz
  echo "fuzz: building $t"
  # shellcheck disable=SC2086
  clang++ "${CXXFLAGS[@]}" "tests/fuzz/${t}_fuzz.cc" $srcs src/common/*.cc -lpthread -o "$bin"
  corpus=$OUT/corpus/$t
  mkdir -p "$corpus" "$OUT/artifacts/$t"
  cp -n tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  echo "fuzz: running $t for ${SECONDS_EACH}s"
  if HOSTCCL_LOG_LEVEL=ERROR "$bin" -max_total_time="$SECONDS_EACH" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$t/" "$corpus" >"$OUT/$t.log" 2>&1; then
    echo "fuzz: $t OK ($(grep -E '^stat::number_of_executed_units' "$OUT/$t.log" | awk '{print $2}') runs," \
         "corpus $(ls "$corpus" | wc -l) inputs)"
  else
    status=1
    echo "fuzz: $t FAILED; see $OUT/$t.log and $OUT/artifacts/$t/"
    grep -E "ERROR|SUMMARY|runtime error" "$OUT/$t.log" | head -5 || true
  fi
done
exit $status
