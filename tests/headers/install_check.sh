#!/bin/sh
# Installs the build tree into a fresh prefix and checks the CANN-like layout: headers, library and
# alias links, lib -> lib64, set_env.sh (sourced by bash and sh from another directory), the CMake
# package (a consumer project configures, builds and runs) and pkg-config.
# Usage: install_check.sh <cmake> <build dir> <work dir> <c++ compiler>
set -eu
cmake=$1; build=$2; work=$3; cxx=$4
rm -rf "$work"; mkdir -p "$work"
prefix="$work/prefix"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install"; }
prefix=$(cd "$prefix" && pwd -P)

for f in include/hccl/hccl.h include/hccl/hccl_types.h include/hccl/hccl_comm.h \
         include/acl/acl.h include/acl/acl_rt.h include/acl/acl_prof.h \
         include/acl/acl_base.h include/acl/error_codes/rt_error_codes.h \
         lib64/libhccl.so lib64/cmake/hostccl/hostcclConfig.cmake \
         lib64/cmake/hostccl/hostcclConfigVersion.cmake lib64/pkgconfig/hostccl.pc set_env.sh; do
  [ -e "$prefix/$f" ] || fail "missing $prefix/$f"
done
for alias in hcomm ascendcl acl acl_rt msprofiler; do
  [ -L "$prefix/lib64/lib$alias.so" ] || fail "lib$alias.so is not a symlink"
  [ "$(readlink -f "$prefix/lib64/lib$alias.so")" = "$(readlink -f "$prefix/lib64/libhccl.so")" ] ||
    fail "lib$alias.so does not resolve to libhccl.so"
done
[ -L "$prefix/lib" ] && [ "$(readlink -f "$prefix/lib")" = "$prefix/lib64" ] || fail "lib -> lib64"
[ -e "$prefix/lib/libascendcl.so" ] || fail "lib/libascendcl.so not reachable"

# set_env.sh from another cwd, by relative path, with bash and with sh.
mkdir -p "$work/elsewhere"
for sh in bash sh; do
  command -v "$sh" >/dev/null || continue
  out=$(cd "$work/elsewhere" && env -i HOME="$work" PATH=/usr/bin:/bin LD_LIBRARY_PATH=/opt/x \
        PKG_CONFIG_PATH=/opt/y "$sh" -c '. ../prefix/set_env.sh && . ../prefix/set_env.sh &&
        echo "$ASCEND_HOME_PATH|$ASCEND_TOOLKIT_HOME|$ASCEND_DIR|$LD_LIBRARY_PATH|$PKG_CONFIG_PATH|$PATH"')
  want="$prefix|$prefix|$prefix|$prefix/lib64:/opt/x|$prefix/lib64/pkgconfig:/opt/y|$prefix/bin:/usr/bin:/bin"
  [ "$out" = "$want" ] || fail "$sh set_env.sh gave '$out', want '$want'"
  # With nothing set before, PKG_CONFIG_PATH is exactly the prefix's pkgconfig directory.
  out=$(cd "$work/elsewhere" && env -i HOME="$work" PATH=/usr/bin:/bin \
        "$sh" -c '. ../prefix/set_env.sh && echo "$PKG_CONFIG_PATH"')
  [ "$out" = "$prefix/lib64/pkgconfig" ] || fail "$sh set_env.sh: PKG_CONFIG_PATH '$out'"
done

# find_package(hostccl) consumer.
consumer="$work/consumer"
mkdir -p "$consumer"
cat > "$consumer/CMakeLists.txt" <<'CMEOF'
cmake_minimum_required(VERSION 3.16)
project(consumer CXX)
find_package(hostccl 0.1 REQUIRED CONFIG)
add_executable(consumer main.cc)
target_link_libraries(consumer PRIVATE hostccl::hccl hostccl::ascendcl)
CMEOF
cat > "$consumer/main.cc" <<'CCEOF'
#include <hccl/hccl.h>
int main() {
  HcclCommConfig config;
  HcclCommConfigInit(&config);
  return config.hcclBufferSize == HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET ? 0 : 1;
}
CCEOF
"$cmake" -S "$consumer" -B "$consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" > "$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log"; fail "consumer configure"; }
"$cmake" --build "$consumer/build" >> "$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log"; fail "consumer build"; }
(. "$prefix/set_env.sh" && "$consumer/build/consumer") || fail "consumer run"

# pkg-config, found through set_env.sh alone (as README.md tells users to do).
flags=$(env -i HOME="$work" PATH=/usr/bin:/bin sh -c \
        ". '$prefix/set_env.sh' && pkg-config --cflags --libs hostccl") ||
  fail "pkg-config hostccl after sourcing set_env.sh"
case " $flags " in *" -lhccl "*) ;; *) fail "pkg-config libs lack -lhccl: '$flags'" ;; esac
inc=$(echo "$flags" | tr ' ' '\n' | sed -n 's/^-I//p' | head -1)
[ -n "$inc" ] && [ "$(cd "$inc" && pwd -P)" = "$prefix/include" ] ||
  fail "pkg-config cflags '$flags' do not point at $prefix/include"
# shellcheck disable=SC2086
"$cxx" -std=c++11 "$consumer/main.cc" -o "$work/pc_consumer" $flags || fail "pkg-config build"
(. "$prefix/set_env.sh" && "$work/pc_consumer") || fail "pkg-config consumer run"
# The Python package, when this build made it: found through set_env.sh's PYTHONPATH, and its
# extensions load the installed libhccl through their RUNPATH (no LD_LIBRARY_PATH).
if [ -d "$build/python/hostccl" ]; then
  pkg="$prefix/python/site-packages/hostccl"
  [ -f "$pkg/__init__.py" ] && [ -f "$pkg/torch.py" ] || fail "python package not installed in $pkg"
  out=$(cd "$work/elsewhere" && env -i HOME="$work" PATH=/usr/bin:/bin sh -c \
        ". ../prefix/set_env.sh && unset LD_LIBRARY_PATH && /usr/bin/python3 -c 'import hostccl, hostccl.torch, os; print(os.path.dirname(hostccl.__file__)); print(hostccl.__version__)'") ||
    fail "import hostccl from the installed prefix"
  [ "$(echo "$out" | head -1)" = "$pkg" ] || fail "hostccl imported from '$(echo "$out" | head -1)', want $pkg"
  lib=$(ldd "$pkg"/_hostccl*.so | awk '/libhccl.so/ { print $3 }')
  [ "$(readlink -f "$lib")" = "$(readlink -f "$prefix/lib64/libhccl.so")" ] ||
    fail "installed _hostccl resolves libhccl.so to '$lib', want $prefix/lib64/libhccl.so"
fi
echo "install layout OK: $prefix"
