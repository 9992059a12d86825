#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# BUILD_SHARED_LIBS=ON: the libraries and the tool built shared (tests off:
# they use internal symbols), installed into a temporary prefix. The
# libraries export what include/swaplab/ declares and nothing that only
# src/ declares; the installed tool runs through its RUNPATH; the example
# consumer builds with find_package and with pkg-config and runs.
# usage: shared.sh SOURCE_DIR [BUILD_DIR]
# BUILD_DIR (default a temporary directory) is the shared tree, reused
# when it exists. CMake gives it under the release build: a tree at a fixed path
# under the sources lets ccache hash its generated include paths relative
# to them, so a new clone compiles it from the cache (CI, "CI stage times"
# in docs/performance.md); a random temporary path missed every time.
set -euo pipefail
src=$1
. "$(dirname "$0")/common.sh"
command -v nm >/dev/null || { echo "SKIP: no nm (binutils)"; exit 77; }
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# Unoptimised and without debug information (no CMAKE_BUILD_TYPE): what is
# checked here is what the libraries export and that consumers link, and a
# cold -O2 build of every library would not fit CI's time on two cores.
build=${2:-$W/build}
cmake -S "$src" -B "$build" "${gen[@]}" -DBUILD_SHARED_LIBS=ON -DSWAPLAB_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE= >"$W/configure.log" 2>&1 || { cat "$W/configure.log"; fail "configure shared"; }
cmake --build "$build" -j2 >"$W/build.log" 2>&1 || { tail -50 "$W/build.log"; fail "build shared"; }
prefix=$W/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
"$prefix/bin/swaplab" --version || fail "the installed shared swaplab does not run"
"$prefix/bin/swaplab" reproduce --list >/dev/null || fail "swaplab reproduce --list (shared)"

lib=$(find "$prefix" -name 'libswaplab_alloc.so.*.*.*' | head -1)
[ -n "$lib" ] || fail "no versioned libswaplab_alloc.so installed"
libdir=$(dirname "$lib")
exports=$W/exports.txt
for so in "$libdir"/libswaplab_*.so; do nm -D --defined-only -C "$so"; done | awk '{ $1 = ""; $2 = ""; print }' >"$exports"
grep -q 'swaplab::alloc::SwapSystem::FolioAllocSwap' "$exports" || fail "SwapSystem::FolioAllocSwap not exported"
grep -q 'swaplab::area::SwapArea' "$exports" || fail "swaplab::area::SwapArea not exported"
# Declared only under src/: internal namespaces, the allocator's State,
# the run session of the kernel layer.
if grep -E 'swaplab::[a-z]+::internal::|SwapSystem::State::|swaplab::kernel::Session::' "$exports" >"$W/leaks"; then
  head -20 "$W/leaks"
  fail "$(wc -l <"$W/leaks") internal symbols exported"
fi
echo "exported swaplab symbols: $(grep -c 'swaplab::' "$exports"), none internal"

consumer_cmake "$src" "$prefix" "$W/cmake-consumer"
export LD_LIBRARY_PATH=$libdir
consumer_pkgconfig "$src" "$libdir/pkgconfig" "$W/pc-consumer"
echo "ok: shared libraries export the public API only; consumers built and ran"
