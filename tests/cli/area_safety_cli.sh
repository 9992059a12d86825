#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Areas and locking: what `area inspect|format` and `image
# write|read|inspect` do with paths that are not areas, areas in use, areas
# that hold something else, sizes that cannot fit, and the exit-code rule
# (0 ok, 1 the run or the checked object failed, 2 bad usage or unusable
# input). Every refusal checks the message, the exit code and, where
# nothing may change, the file's sha256.
# usage: area_safety_cli.sh SWAPLAB
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
SWAPPED="" MNT="" LOOPDEV=""
cleanup() { # run on exit by test_env.sh, before W is removed
  [ -n "$SWAPPED" ] && swapoff "$SWAPPED" 2>/dev/null
  [ -n "$MNT" ] && umount "$MNT" 2>/dev/null
  [ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null
}
# sha, limited, run CODE PATTERN CMD... (256 MiB, 5 s, exit code,
# message), bound_summary
source "$(dirname "$0")/lib.sh"

# ---- 1. never open what is not a regular file or a block device ------------
mkfifo "$W/fifo"; mkdir "$W/dir"
for cmd in "area inspect" "image inspect" "image read" "image read --consume" "image write" "area format"; do
  # shellcheck disable=SC2086
  run 2 "fifo: is a FIFO" "$S" $cmd "$W/fifo"
  run 2 "/dev/null: is a character device" "$S" $cmd /dev/null
  run 2 "dir: is a directory" "$S" $cmd "$W/dir"
done
[ -p "$W/fifo" ] && [ -c /dev/null ] && [ -z "$(ls -A "$W/dir")" ] || fail "a refused FIFO, /dev/null or directory changed"
echo "ok: FIFO, character device, directory refused (exit 2, no blocking, nothing changed)"

# ---- 5. exit codes: missing, EACCES, ELOOP -> 2 ------------------------------
run 2 "nope: No such file" "$S" area inspect "$W/nope"
run 2 "nope: No such file" "$S" image write "$W/nope" --size 1M
ln -s "$W/loop" "$W/loop"
run 2 "Too many levels of symbolic links" "$S" area inspect "$W/loop"
run 2 "Too many levels of symbolic links" "$S" image write "$W/loop" --size 1M
run 2 "Too many levels of symbolic links" "$S" area format "$W/loop"
[ ! -e "$W/nope" ] && [ -L "$W/loop" ] || fail "a refused missing path or symlink loop was created or changed"
"$S" area format "$W/a" --size 64M >/dev/null || fail "area format"
sum="$(sha "$W/a")"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && "${NOBODY[@]}" "$S" --help >/dev/null 2>&1; then
  chmod 0711 "$W"
  run 2 "a: open: Permission denied" "${NOBODY[@]}" "$S" area inspect "$W/a"
  run 2 "a: open: Permission denied" "${NOBODY[@]}" "$S" image write "$W/a" --size 1M
  chmod 0700 "$W"
elif [ "$(id -u)" -eq 0 ]; then
  echo "SKIP: EACCES case: user nobody cannot run $S here"
else
  chmod 000 "$W/a"
  if ! [ -r "$W/a" ]; then run 2 "Permission denied" "$S" area inspect "$W/a"; fi
  chmod 600 "$W/a"
fi
run 2 "batch mode 'sideways'" "$S" image write "$W/a" --size 1M --batch sideways
[ "$(sha "$W/a")" = "$sum" ] || fail "a refused EACCES or bad option changed the area"
# an area swapon refuses: inspect prints its report, then exits 1
head -c 1M /dev/urandom >"$W/junk"
junk="$(sha "$W/junk")"
run 1 "" "$S" area inspect "$W/junk"
grep -q "^swapon *refused" "$W/out" || fail "inspect of junk printed no report: $(head -c 300 "$W/out")"
[ "$(sha "$W/junk")" = "$junk" ] || fail "area inspect changed the file"
run 0 "" "$S" area inspect "$W/a"
echo "ok: exit codes (missing, ELOOP, EACCES, bad option: 2; refused area: 1 with its report)"

# ---- 4. --size checked before anything is built ------------------------------
sum="$(sha "$W/a")"
for sz in 1T 4T; do
  run 2 "--size $sz: the image needs [0-9]+ slots, the area has 16383" "$S" image write "$W/a" --size $sz
  [ $RUN_MS -lt 1000 ] || fail "--size $sz took $RUN_MS ms"
done
run 2 "even at the best compression" "$S" image write "$W/a" --size 1T --compress lz4
[ "$(sha "$W/a")" = "$sum" ] || fail "a refused --size changed the area"
echo "ok: --size 1T / 4T refused in < 1 s under ulimit -v 256M, area unchanged"

# ---- 2. the writers' lock ----------------------------------------------------
command -v flock >/dev/null || fail "flock(1) missing (util-linux)"
# this shell holds the lock (flock(1) on fd 9) while swaplab runs: deterministic
exec 9<"$W/a"
flock -x -n 9 || fail "flock(1) could not take the lock"
run 1 "a: in use by another swaplab \(locked\)" "$S" image write "$W/a" --size 1M
run 1 "a: in use by another swaplab \(locked\)" "$S" area format "$W/a"
run 1 "a: in use by another swaplab \(locked\)" "$S" image read "$W/a" --consume
"$S" image write "$W/a" --size 1M --json >/dev/null 2>&1 && fail "second writer not refused"
[ "$(sha "$W/a")" = "$sum" ] || fail "a refused writer changed the area"
run 0 "" "$S" area inspect "$W/a"   # readers do not lock
exec 9<&-   # released
"$S" image write "$W/a" --size 1M >/dev/null || fail "image write after the lock was released"
"$S" area format "$W/a" --force >/dev/null || fail "reformat after the lock was released"
echo "ok: a held lock refuses image write and area format (exit 1, unchanged)"

# ---- 2. an area the running kernel swaps on ---------------------------------
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: swapped-on area: not root"
else
  dd if=/dev/zero of="$W/sw" bs=1M count=16 status=none && chmod 600 "$W/sw"
  mkswap -q "$W/sw" >/dev/null
  if swapon "$W/sw" 2>"$W/err"; then
    SWAPPED="$W/sw"
    sum="$(sha "$W/sw")"
    ln -s "$W/sw" "$W/sw-link"   # another name, same inode
    run 1 "sw-link: the running kernel swaps on it \(/proc/swaps: .*sw\)" "$S" area format "$W/sw-link" --force
    run 1 "sw: the running kernel swaps on it" "$S" image write "$W/sw" --size 1M
    run 1 "sw: the running kernel swaps on it" "$S" image read "$W/sw" --consume
    swapoff "$W/sw"; SWAPPED=""
    [ "$(sha "$W/sw")" = "$sum" ] || fail "a swapped-on area changed"
    echo "ok: a swapped-on area is refused (exit 1, unchanged)"
  else
    echo "SKIP: swapped-on area: swapon failed here: $(cat "$W/err")"
  fi
fi

# ---- 2. a mounted block device: never written, not even with --force --------
if [ "$(id -u)" -ne 0 ] || ! command -v losetup >/dev/null || ! command -v mkfs.ext4 >/dev/null; then
  echo "SKIP: mounted device: needs root, losetup and mkfs.ext4"
else
  dd if=/dev/zero of="$W/fs" bs=1M count=16 status=none && mkfs.ext4 -q -F "$W/fs" || fail "mkfs.ext4"
  if LOOPDEV="$(losetup -f --show "$W/fs" 2>"$W/err")" && mkdir "$W/mnt" && mount "$LOOPDEV" "$W/mnt" 2>"$W/err"; then
    MNT="$W/mnt"
    run 1 "$LOOPDEV: mounted at $W/mnt .*not even with --force" "$S" area format "$LOOPDEV" --force
    run 1 "$LOOPDEV: mounted at" "$S" image write "$LOOPDEV" --size 1M
    umount "$MNT"; MNT=""
    # (the mount itself writes the superblock: check the filesystem is still there)
    [ "$(blkid -p -o value -s TYPE "$LOOPDEV")" = ext4 ] || fail "a mounted device lost its ext4 signature"
    ! grep -q SWAPSPACE2 <(head -c 4096 "$LOOPDEV") || fail "a swap header was written to a mounted device"
    losetup -d "$LOOPDEV"; LOOPDEV=""
    echo "ok: a mounted block device is refused (exit 1, still ext4, no swap header)"
  else
    echo "SKIP: mounted device: losetup or mount failed here: $(cat "$W/err")"
    [ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV"; LOOPDEV=""
  fi
fi

# ---- 3. area format probes what is there ------------------------------------
check_refused() {  # FILE PATTERN
  local before; before="$(sha "$1")"
  run 1 "$2.*use --force to overwrite" "$S" area format "$1"
  [ "$(sha "$1")" = "$before" ] || fail "refused format changed $1"
  head -c 1024 "$1" >"$W/boot"
  "$S" area format "$1" --force >/dev/null 2>"$W/err" || fail "--force on $1: $(cat "$W/err")"
  cmp -s "$W/boot" <(head -c 1024 "$1") || fail "--force on $1 did not keep bytes 0..1023"
  # a swap header now (mkfs.ext4 may leave the file sparse: swapon's verdict is not the point)
  "$S" area inspect "$1" --json >"$W/insp" 2>/dev/null
  grep -q '"signature": "SWAPSPACE2"' "$W/insp" || fail "--force on $1 wrote no swap header"
}
if command -v mkfs.ext4 >/dev/null; then
  dd if=/dev/zero of="$W/ext4" bs=1M count=16 status=none && mkfs.ext4 -q -F -E nodiscard -L data "$W/ext4" || fail "mkfs.ext4"
  check_refused "$W/ext4" 'holds a signature \(filesystem, type ext4, LABEL="data"'
else
  echo "SKIP: ext4 case: no mkfs.ext4"
fi
dd if=/dev/zero of="$W/dos" bs=1M count=16 status=none
if command -v sfdisk >/dev/null; then
  echo 'start=2048, type=83' | sfdisk -q "$W/dos" >/dev/null || fail "sfdisk"
else
  python3 -c 'import sys; f=open(sys.argv[1],"r+b"); f.seek(446); f.write(bytes([0,0,0,0,0x83,0,0,0])+(2048).to_bytes(4,"little")+(30000).to_bytes(4,"little")); f.seek(510); f.write(b"\x55\xaa")' "$W/dos"
fi
check_refused "$W/dos" 'holds a partition table \(type dos\)'
dd if=/dev/zero of="$W/mk" bs=1M count=4 status=none && mkswap -q -L x "$W/mk" >/dev/null
check_refused "$W/mk" 'holds a swap area \(other, type swap, LABEL="x"'
yes 'not a swap area' | head -c 1M >"$W/text"
check_refused "$W/text" 'holds data with no signature libblkid knows \(a non-zero byte at offset 0'
# what is reformatted without --force: all zeros, an unlabelled swap area
dd if=/dev/zero of="$W/zero" bs=1M count=16 status=none
run 0 "" "$S" area format "$W/zero"
run 0 "" "$S" area format "$W/zero"
dd if=/dev/zero of="$W/mk2" bs=1M count=4 status=none && mkswap -q "$W/mk2" >/dev/null
run 0 "" "$S" area format "$W/mk2"
# a hibernation image is not written over
"$S" image write "$W/zero" --size 1M >/dev/null || fail "image write on zero"
sum="$(sha "$W/zero")"
run 1 "holds a signature .*type swsuspend.*use --force" "$S" area format "$W/zero"
[ "$(sha "$W/zero")" = "$sum" ] || fail "format over an image changed it"
echo "ok: area format refuses ext4, dos, a labelled swap area, text, an image (exit 1, unchanged); --force keeps the boot area"

# ---- 6. input strings are escaped --------------------------------------------
E="$W/"$'\e[2Jevil'
run 2 'evil: No such file' "$S" area inspect "$E"
if grep -q $'\e' "$W/err"; then fail "a raw ESC from the path reached stderr"; fi
grep -q '\\x1b\[2Jevil' "$W/err" || fail "path not escaped: $(cat "$W/err")"
run 2 "" "$S" image write "$E" --size 1M
if grep -q $'\e' "$W/err"; then fail "image write printed a raw ESC"; fi
long="$W/$(head -c 3000 /dev/zero | tr '\0' x)"
run 2 "ENAMETOOLONG: .*xxx… \\(" "$S" area inspect "$long"
[ "$(wc -c <"$W/err")" -lt 1400 ] || fail "a 3000-byte path was not cut ($(wc -c <"$W/err") bytes)"
echo "ok: paths escaped and cut"
bound_summary
echo "area safety CLI: all checks passed"
