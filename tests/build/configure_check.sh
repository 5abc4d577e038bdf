#!/bin/sh
# What a packager types must configure: `cmake -DCMAKE_BUILD_TYPE=Release` with neither GoogleTest
# nor Google Benchmark nor Torch available (hidden with CMAKE_DISABLE_FIND_PACKAGE_*). It must succeed, say
# that the tests and kernel_bench are skipped, leave -Werror off, and still define the library and
# the tools. Configure only (seconds); .ci/run builds such a tree in Release.
# Usage: configure_check.sh <cmake> <source dir> <work dir>
set -u
cmake=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cmake" -S "$src" -B "$work" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "Release configure without GTest/benchmark"; }
grep -q "GoogleTest not found: the tests are skipped" "$work/configure.log" ||
  { cat "$work/configure.log"; fail "no message that the tests are skipped"; }
grep -q "Google Benchmark not found, kernel_bench skipped" "$work/configure.log" ||
  { cat "$work/configure.log"; fail "no message that kernel_bench is skipped"; }
grep -q "hostccl Python package: off (missing Torch" "$work/configure.log" ||
  { cat "$work/configure.log"; fail "no message that the Python package is off without Torch"; }
grep -q "^HOSTCCL_WERROR:BOOL=OFF$" "$work/CMakeCache.txt" || fail "HOSTCCL_WERROR is not OFF by default"
grep -q "^CMAKE_BUILD_TYPE:STRING=Release$" "$work/CMakeCache.txt" || fail "build type is not Release"
# The library and the tools are still there; no test or kernel_bench target is.
targets=$("$cmake" --build "$work" --target help 2>/dev/null)
for t in hccl hcclrun hccl_info reduce_test; do
  echo "$targets" | grep -q "\.\.\. $t\$" || fail "target $t is missing"
done
for t in kernel_bench header_layout_test; do
  echo "$targets" | grep -q "\.\.\. $t\$" && fail "target $t is defined although its dependency is hidden"
done
rm -rf "$work"
echo "Release configure without GoogleTest and Google Benchmark: OK (library and tools defined)"
