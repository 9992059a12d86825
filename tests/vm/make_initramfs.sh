#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the vm tests' initramfs (an uncompressed newc cpio archive):
#
#   make_initramfs.sh OUT.cpio AGENT MODULES_DIR [MODULE...]
#
# with busybox (the static one of busybox-static), the guest agent, tests/vm/
# src/vm/guest/init.sh as /init, and the named kernel modules of MODULES_DIR
# (lib/modules/RELEASE of an unpacked kernel package) plus everything they
# depend on, decompressed (.ko.xz / .ko.zst / .ko.gz), listed in load order in
# /modules.list. A module that the kernel has built in is skipped. Needs no
# root and no kmod: dependencies are read from each module's modinfo section.
# With SWAPLAB_INITRAMFS_SWAPLAB=PATH, that swaplab program goes in as
# /bin/swaplab with the shared libraries and the loader ldd names, at their
# own paths (the doctor test runs it in the guest).
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: $0 OUT.cpio AGENT MODULES_DIR [MODULE...]" >&2; exit 2; }
out="$1" agent="$2" moddir="$3"
shift 3
here="$(cd "$(dirname "$0")" && pwd)"

busybox=""
for b in /bin/busybox /usr/bin/busybox; do
  if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then busybox="$b"; break; fi  # static: ldd fails
done
[ -n "$busybox" ] || { echo "make_initramfs: no static busybox (install busybox-static)" >&2; exit 3; }
[ -f "$moddir/modules.order" ] || { echo "make_initramfs: $moddir has no modules.order" >&2; exit 3; }

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,lib/modules}
cp "$busybox" "$root/bin/busybox"
cp "$agent" "$root/bin/swaplab_guest_agent"
cp "$here/../../src/vm/guest/init.sh" "$root/init"
chmod 0755 "$root/init" "$root/bin/busybox" "$root/bin/swaplab_guest_agent"
if [ -n "${SWAPLAB_INITRAMFS_SWAPLAB:-}" ]; then
  # Without its debug info (a RelWithDebInfo build is over 100 MB).
  strip --strip-debug -o "$root/bin/swaplab" "$SWAPLAB_INITRAMFS_SWAPLAB" && chmod 0755 "$root/bin/swaplab"
  for lib in $(ldd "$SWAPLAB_INITRAMFS_SWAPLAB" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
    mkdir -p "$root$(dirname "$lib")"
    strip --strip-debug -o "$root$lib" "$lib" 2>/dev/null || cp -L "$lib" "$root$lib"
  done
fi

norm() { echo "$1" | tr '-' '_'; }

# The module's file under moddir (compressed or not); modules.order lists the
# modules built as such, by path without the compression suffix.
module_path() {
  local rel f
  rel="$(awk -v m="$1" '{ n = $0; sub(/.*\//, "", n); sub(/\.ko$/, "", n); gsub(/-/, "_", n)
                          if (n == m) { print; exit } }' "$moddir/modules.order")"
  [ -n "$rel" ] || return 1
  for f in "$moddir/$rel" "$moddir/$rel.xz" "$moddir/$rel.zst" "$moddir/$rel.gz"; do
    [ -f "$f" ] && { echo "$f"; return 0; }
  done
  return 1
}

unpack() {  # $1 module file -> stdout
  case "$1" in
    *.xz) xz -dc "$1" ;;
    *.zst) zstd -qdc "$1" ;;
    *.gz) gzip -dc "$1" ;;
    *) cat "$1" ;;
  esac
}

declare -A added=()
order=()
add_module() {
  local m path deps d
  m="$(norm "$1")"
  [ -n "${added[$m]:-}" ] && return 0
  added[$m]=1
  if grep -q "/$m.ko\$\|/$(echo "$m" | tr '_' '-').ko\$" "$moddir/modules.builtin" 2>/dev/null; then
    return 0  # built in
  fi
  path="$(module_path "$m")" || { echo "make_initramfs: no module $m in $moddir" >&2; exit 3; }
  unpack "$path" >"$root/lib/modules/$m.ko"
  deps="$(tr '\0' '\n' <"$root/lib/modules/$m.ko" | sed -n 's/^depends=//p' | head -n1)"
  for d in ${deps//,/ }; do add_module "$d"; done
  order+=("$m")  # after its dependencies
}
for m in "$@"; do add_module "$m"; done
printf '%s\n' "${order[@]}" >"$root/modules.list"

(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --owner=0:0 --quiet) >"$out"
echo "make_initramfs: $out ($(($(stat -c %s "$out") / 1024)) KiB; modules: ${order[*]:-none})"
