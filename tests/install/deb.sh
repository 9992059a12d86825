#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `cpack -G DEB` of the build tree: swaplab (the tool, Depends from
# dpkg-shlibdeps) and swaplab-dev. lintian where it is installed. Both
# packages installed with `dpkg --root` into a temporary root whose dpkg
# database holds this machine's status of the packages swaplab depends on
# (so dpkg checks the Depends against what is really installed here, and
# the tool runs with this machine's libraries); swaplab --version and
# reproduce --list run from it, the example consumer builds against
# swaplab-dev; both packages removed again.
# usage: deb.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
build=$1 src=$2 version=$3
for tool in cpack dpkg dpkg-deb dpkg-shlibdeps; do
  command -v $tool >/dev/null || { echo "SKIP: no $tool (scripts/setup installs dpkg-dev)"; exit 77; }
done
. "$(dirname "$0")/common.sh"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$W/pkgs" >"$W/cpack.log" 2>&1 || { cat "$W/cpack.log"; fail "cpack -G DEB"; }
arch=$(dpkg --print-architecture)
deb=$W/pkgs/swaplab_${version}_$arch.deb
dev=$W/pkgs/swaplab-dev_${version}_$arch.deb
[ -f "$deb" ] && [ -f "$dev" ] || { ls "$W/pkgs"; fail "cpack made no swaplab_${version}_$arch.deb and swaplab-dev_${version}_$arch.deb"; }

depends=$(dpkg-deb -f "$deb" Depends)
echo "swaplab Depends: $depends"
for lib in libc6 libstdc++6 liburing libfmt liblz4 liblzo2 libblkid zlib1g; do
  grep -q "\b$lib" <<<"$depends" || fail "swaplab's Depends has no $lib"
done
dpkg-deb -c "$deb" >"$W/deb.list"
dpkg-deb -c "$dev" >"$W/dev.list"
grep -q '/usr/include/' "$W/deb.list" && fail "swaplab ships headers (they belong in swaplab-dev)"
for f in ./usr/bin/swaplab ./usr/share/man/man1/swaplab.1.gz ./usr/share/bash-completion/completions/swaplab \
  ./usr/share/doc/swaplab/copyright; do
  grep -q " $f\$" "$W/deb.list" || fail "swaplab lacks $f"
done
if [ -x "$build/swaplab_guest_agent" ]; then
  grep -q ' ./usr/libexec/swaplab/swaplab_guest_agent$' "$W/deb.list" || fail "swaplab lacks the guest agent"
fi
for f in /usr/include/swaplab/alloc/swap_system.h libswaplab_alloc.a cmake/swaplab/swaplabConfig.cmake pkgconfig/swaplab.pc; do
  grep -q "$f\$" "$W/dev.list" || fail "swaplab-dev lacks $f"
done

if command -v lintian >/dev/null; then
  lintian --no-cfg "$deb" "$dev" >"$W/lintian.log" 2>&1 || true
  cat "$W/lintian.log"
  grep -qE '^[EW]: ' "$W/lintian.log" && fail "lintian reports errors or warnings"
  echo "lintian: no errors or warnings"
else
  echo "lintian not installed: not run"
fi

# The root's dpkg database: this machine's entries for swaplab's Depends.
root=$W/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/available"
for p in $(sed 's/([^)]*)//g; s/[,|]/ /g' <<<"$depends $(dpkg-deb -f "$dev" Depends)"); do
  dpkg-query -s "$p" >>"$root/var/lib/dpkg/status" 2>/dev/null || fail "dependency $p is not installed here"
  echo >>"$root/var/lib/dpkg/status"
  cp /var/lib/dpkg/info/"$p".list /var/lib/dpkg/info/"$p":*.list "$root/var/lib/dpkg/info/" 2>/dev/null || true
done
force=()
[ "$(id -u)" -eq 0 ] || force=(--force-not-root)
dpkg --root="$root" "${force[@]}" -i "$deb" "$dev" >"$W/dpkg.log" 2>&1 || { cat "$W/dpkg.log"; fail "dpkg --root -i"; }
out=$("$root/usr/bin/swaplab" --version)
echo "$out"
[[ $out == "swaplab $version"* ]] || fail "--version of the installed package says '$out'"
"$root/usr/bin/swaplab" reproduce --list >"$W/list" || fail "swaplab reproduce --list from the package"
grep -q 'rfc' "$W/list" || { cat "$W/list"; fail "reproduce --list lists no rfc scenario"; }
consumer_cmake "$src" "$root/usr" "$W/cmake-consumer"
consumer_pkgconfig "$src" "$(dirname "$(find "$root/usr" -name swaplab.pc)")" "$W/pc-consumer" --static

dpkg --root="$root" "${force[@]}" -r swaplab-dev swaplab >>"$W/dpkg.log" 2>&1 || { cat "$W/dpkg.log"; fail "dpkg --root -r"; }
find "$root/usr" -type f >"$W/left" 2>/dev/null || true
[ ! -s "$W/left" ] || { head "$W/left"; fail "$(wc -l <"$W/left") files left after dpkg -r"; }
echo "ok: swaplab and swaplab-dev built, installed into a root, run, used and removed"
