#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `cmake --install` of the build tree into a temporary prefix: the tool, its
# man page and completion, headers, static libraries, CMake package and
# swaplab.pc; then the example consumer built out of tree with find_package
# and, separately, with pkg-config, and run.
# usage: prefix.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
build=$1 src=$2 version=$3
. "$(dirname "$0")/common.sh"
prefix=$W/prefix
cmake --install "$build" --prefix "$prefix" >"$W/install.log" || { cat "$W/install.log"; fail "cmake --install"; }
libdir=$(cd "$prefix" && dirname "$(find . -name swaplab.pc)" | sed 's|^\./||; s|/pkgconfig$||')
for f in bin/swaplab share/man/man1/swaplab.1.gz share/bash-completion/completions/swaplab \
  include/swaplab/alloc/swap_system.h "$libdir/libswaplab_alloc.a" "$libdir/cmake/swaplab/swaplabConfig.cmake" \
  "$libdir/cmake/swaplab/swaplabTargets.cmake" "$libdir/pkgconfig/swaplab.pc"; do
  [ -e "$prefix/$f" ] || fail "cmake --install did not install $f"
done
# No internal header is installed.
[ -z "$(find "$prefix/include" -name '*.h' | grep -v '^'"$prefix"'/include/swaplab/')" ] || fail "headers outside include/swaplab"

out=$("$prefix/bin/swaplab" --version)
echo "$out"
[[ $out == "swaplab $version"* ]] || fail "--version says '$out', not swaplab $version"
zcat "$prefix/share/man/man1/swaplab.1.gz" | grep -q '^\.SS "swaplab reproduce"' || fail "man page has no reproduce section"

# The vm layer's guest agent: the installed swaplab finds it under its own
# prefix (libexec/swaplab), and says where it looked when it is not there.
if [ -x "$build/swaplab_guest_agent" ]; then
  agent=$prefix/libexec/swaplab/swaplab_guest_agent
  [ -x "$agent" ] || fail "cmake --install did not install the guest agent as $agent"
  vm_hibernate() { env -u SWAPLAB_GUEST_AGENT "$prefix/bin/swaplab" vm hibernate --kernel /nonexistent --modules /nonexistent 2>&1 || true; }
  out=$(vm_hibernate)
  [ -n "$out" ] && ! grep -q 'no guest agent' <<<"$out" || fail "the installed swaplab does not find $agent: $out"
  mv "$agent" "$agent.away"
  out=$(vm_hibernate)
  mv "$agent.away" "$agent"
  grep -qF "no guest agent at $prefix/bin/swaplab_guest_agent, $agent" <<<"$out" ||
    fail "without $agent the installed swaplab says '$out'"
  echo "guest agent: found under the prefix"
fi

consumer_cmake "$src" "$prefix" "$W/cmake-consumer"
consumer_pkgconfig "$src" "$prefix/$libdir/pkgconfig" "$W/pc-consumer" --static
echo "ok: installed into a prefix; find_package and pkg-config consumers built and ran"
