#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `swaplab image read` of REAL 1 GiB-class hibernation images (written by
# Debian's Linux 6.12 in the vm tests' qemu guest) against fio's sequential
# O_DIRECT read of the same number of bytes from the same disk file.
# The target is swaplab / fio >= 0.9 on the uncompressed image.
#
#   bench/real_image_read_vs_fio.sh [OUTDIR] [REPS]
#     OUTDIR  where the per-run JSON, the table (report.txt) and the guest
#             consoles go (default: a new /var/tmp/swaplab-real-read.XXXXXX)
#     REPS    repetitions, at least 5 (default 5)
#
# Images: two swap disks of DISK_MIB (2048) MiB written with dd (real blocks,
# never sparse: dd if=/dev/zero oflag=direct, then mkswap), one per mode:
#   nocompress  kernel arg hibernate=nocompress
#   lzo         the kernel's default (LZO units, CRC32)
# each made by one guest boot (tests/vm/vm_lib.sh: vm_init, vm_boot) whose
# agent mlocks PAGES (230000, ~900 MiB) seeded pattern pages and hibernates;
# the guest has MEM_MIB (2560) MiB and swaplab.image_size=<RAM bytes> (so the
# kernel does not try to shrink the image to 2/5 of RAM; src/vm/guest/init.sh).
# They are kept in CACHE (/var/tmp/swaplab-bench-images/MODE.img, with
# MODE.meta: pages, seed, memory, kernel, sha256, seconds the creation took,
# and the console log) and reused while the .meta matches; SWAPLAB_BENCH_REMAKE=1
# makes them again. Making one under TCG takes minutes.
#
# Runs: REPS times, interleaved, for each image (the order swaplab / fio
# alternates between repetitions):
#   swaplab image read DISK --json   MiB/s = bytes / read_seconds_measured
#     ("bytes" = stream_pages * 4096: the on-disk stream, the map pages and,
#     for LZO, the compressed units as they lie on the disk)
#   fio --rw=read --bs=1M --iodepth=32 --direct=1 --ioengine=io_uring
#       --readonly --size=<bytes rounded up to MiB> --filename=DISK
# Printed: every run, the medians, the ratio of the medians and the median of
# the per-repetition ratios; read_cpu_seconds. The disk's sha256 must be the
# same after the runs (the reader is read-only). Both sides read with O_DIRECT
# from a file on this machine's disk, which the host under it may cache.
#
# Environment: SWAPLAB (default build/release/swaplab of this checkout), AGENT
# (default build/release/swaplab_guest_agent), CACHE, PAGES,
# MEM_MIB, DISK_MIB, MODES ("nocompress lzo"), SEED (1); vm_lib.sh's
# (SWAPLAB_VM_SMP, SWAPLAB_VM_ACCEL, SWAPLAB_VM_TIMEOUT: default 1200 here).
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
SWAPLAB=${SWAPLAB:-$(cd "$(dirname "$0")/.." && pwd)/build/release/swaplab}
AGENT=${AGENT:-$(cd "$(dirname "$0")/.." && pwd)/build/release/swaplab_guest_agent}
CACHE=${CACHE:-/var/tmp/swaplab-bench-images}
PAGES=${PAGES:-230000}
MEM_MIB=${MEM_MIB:-2560}
DISK_MIB=${DISK_MIB:-2048}
MODES=${MODES:-nocompress lzo}
SEED=${SEED:-1}
OUT=${1:-}
REPS=${2:-5}
[ "$REPS" -ge 5 ] 2>/dev/null || { echo "REPS must be >= 5" >&2; exit 2; }
[ -z "$OUT" ] && OUT="$(mktemp -d /var/tmp/swaplab-real-read.XXXXXX)"
mkdir -p "$OUT" "$CACHE" || exit 2

. "$ROOT/bench/bench_lib.sh"
bench_real_disk "$CACHE/x"
bench_tools fio jq python3 sha256sum dd mkswap
[ -x "$SWAPLAB" ] || { echo "no swaplab at $SWAPLAB" >&2; exit 2; }
# Run a private copy: the build directory may be relinked while this runs.
SWAPLAB_SRC="$SWAPLAB"
mkdir -p "$OUT/bin" && cp "$SWAPLAB" "$OUT/bin/swaplab" || exit 2
SWAPLAB="$OUT/bin/swaplab"
SWAPLAB_ID="$SWAPLAB_SRC ($(stat -c %y "$SWAPLAB_SRC" | cut -d. -f1), sha256 $(sha256sum <"$SWAPLAB" | cut -c1-12))"

export SWAPLAB_VM_MEM="$MEM_MIB"
export SWAPLAB_VM_TIMEOUT="${SWAPLAB_VM_TIMEOUT:-1200}"
VM_READY=0

meta_get() { sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n1; }

# make_image MODE: CACHE/MODE.img + CACHE/MODE.meta, unless a matching one is there.
make_image() {
  local mode="$1" img="$CACHE/$1.img" meta="$CACHE/$1.meta" args=() t0 t1 line n
  if [ "${SWAPLAB_BENCH_REMAKE:-0}" != 1 ] && [ -f "$img" ] && [ -f "$meta" ] &&
     [ "$(meta_get "$meta" pages)" = "$PAGES" ] && [ "$(meta_get "$meta" mem_mib)" = "$MEM_MIB" ] &&
     [ "$(meta_get "$meta" disk_mib)" = "$DISK_MIB" ] && [ "$(meta_get "$meta" seed)" = "$SEED" ]; then
    echo "image $mode: reusing $img (made $(meta_get "$meta" made) in $(meta_get "$meta" make_seconds) s)"
    return 0
  fi
  case "$mode" in
    nocompress) args=(hibernate=nocompress) ;;
    lzo) ;;
    lz4) args=(hibernate.compressor=lz4) ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
  esac
  if [ "$VM_READY" = 0 ]; then
    # vm_init skips (exit 77) or fails with the reason; it sets an EXIT trap
    # that kills every qemu it started and removes its work dir.
    . "$ROOT/tests/vm/vm_lib.sh"
    vm_init "$SWAPLAB" "$AGENT"
    VM_READY=1
  fi
  rm -f "$img" "$meta"
  t0="$(date +%s.%N)"
  dd if=/dev/zero of="$img.tmp" bs=1M count="$DISK_MIB" oflag=direct conv=fsync status=none || exit 1
  chmod 0600 "$img.tmp" && mkswap "$img.tmp" >/dev/null || exit 1
  t1="$(date +%s.%N)"
  echo "image $mode: dd + mkswap of $DISK_MIB MiB in $(vm_secs "$t0" "$t1") s; booting the guest ($VM_ACCEL, ${MEM_MIB} MiB, $PAGES pattern pages)"
  vm_boot "$mode" "$img.tmp" hibernate "swaplab.pages=$PAGES" "swaplab.seed=$SEED" \
    "swaplab.image_size=$((MEM_MIB << 20))" "${args[@]}"
  local rc=$?
  cp "$VM_WORK/$mode.log" "$CACHE/$mode.console.log" 2>/dev/null
  if [ $rc -ne 0 ] || ! grep -q "PM: Image saving done" "$VM_WORK/$mode.log"; then
    vm_tail "$mode" 30
    echo "image $mode: the guest did not save an image" >&2
    exit 1
  fi
  t1="$(date +%s.%N)"
  line="$(grep -oE 'PM: (Saving image data pages|Compressing and saving image data) \([0-9]+ pages\)' "$VM_WORK/$mode.log" | head -n1)"
  n="$(echo "$line" | sed 's/.*(\([0-9]*\) pages).*/\1/')"
  mv "$img.tmp" "$img"
  {
    echo "mode=$mode"
    echo "pages=$PAGES"
    echo "seed=$SEED"
    echo "mem_mib=$MEM_MIB"
    echo "disk_mib=$DISK_MIB"
    echo "kernel=$VM_RELEASE"
    echo "accel=$VM_ACCEL"
    echo "made=$(date -u +%FT%TZ)"
    echo "make_seconds=$(vm_secs "$t0" "$t1")"
    echo "boot_seconds=$VM_T_WALL"
    echo "hibernate_seconds=$VM_T_HIB"
    echo "kernel_T=$((n + 1))"
    echo "kernel_write=$(sed -n 's/.*PM: hibernation: Wrote \([0-9]* kbytes in [0-9.]* seconds.*\)/\1/p' "$VM_WORK/$mode.log" | head -n1 | tr -d '\r')"
    echo "sha256=$(sha256sum <"$img" | cut -d' ' -f1)"
  } >"$meta"
  echo "image $mode: made in $(meta_get "$meta" make_seconds) s (guest boot $VM_T_WALL s, hibernate $VM_T_HIB s); kernel: \"$line\""
}

for mode in $MODES; do make_image "$mode"; done

# One swaplab read: prints "bytes seconds cpu stream_pages snapshot_pages map_pages".
swaplab_run() {  # MODE REP
  local j="$OUT/$1.swaplab.$2.json"
  "$SWAPLAB" image read "$CACHE/$1.img" --json >"$j" 2>"$OUT/$1.swaplab.$2.err" ||
    { echo "swaplab image read $1 failed: $(head -c 400 "$OUT/$1.swaplab.$2.err")" >&2; exit 1; }
  jq -r '"\(.bytes) \(.read_seconds_measured) \(.read_cpu_seconds) \(.stream_pages) \(.snapshot_pages) \(.map_pages)"' "$j"
}

# One fio read of SIZE_MIB MiB: prints MiB/s.
fio_run() {  # MODE REP SIZE_MIB
  local j="$OUT/$1.fio.$2.json"
  fio --name=seqread --filename="$CACHE/$1.img" --readonly --rw=read --bs=1M --iodepth=32 --direct=1 \
      --ioengine=io_uring --size="$3M" --output-format=json >"$j" 2>"$OUT/$1.fio.$2.err" ||
    { echo "fio $1 failed: $(head -c 400 "$OUT/$1.fio.$2.err")" >&2; exit 1; }
  jq '.jobs[0].read.bw_bytes / 1048576' "$j"
}

declare -A SHA0 BYTES SIZE_MIB STREAM SNAP MAPS SW FIO CPU RATIO
for mode in $MODES; do
  SHA0[$mode]="$(sha256sum <"$CACHE/$mode.img" | cut -d' ' -f1)"
  [ "${SHA0[$mode]}" = "$(meta_get "$CACHE/$mode.meta" sha256)" ] ||
    { echo "$CACHE/$mode.img: sha256 differs from its .meta (remake: SWAPLAB_BENCH_REMAKE=1)" >&2; exit 1; }
  read -r b _ _ st sn mp < <(swaplab_run "$mode" warmup)
  [ -n "${b:-}" ] || exit 1
  BYTES[$mode]=$b STREAM[$mode]=$st SNAP[$mode]=$sn MAPS[$mode]=$mp
  SIZE_MIB[$mode]=$(((b + (1 << 20) - 1) >> 20))
done

LOAD0="$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %3s %-7s %10s %10s %9s\n' image rep first "swaplab" "fio" ratio | tee "$OUT/runs.txt"
for ((rep = 1; rep <= REPS; rep++)); do
  for mode in $MODES; do
    if ((rep % 2)); then
      read -r b s c _ _ _ < <(swaplab_run "$mode" "$rep")
      f=$(fio_run "$mode" "$rep" "${SIZE_MIB[$mode]}") || exit 1
      first=swaplab
    else
      f=$(fio_run "$mode" "$rep" "${SIZE_MIB[$mode]}") || exit 1
      read -r b s c _ _ _ < <(swaplab_run "$mode" "$rep")
      first=fio
    fi
    [ -n "${s:-}" ] || exit 1
    m=$(awk -v b="$b" -v s="$s" 'BEGIN { printf "%.1f", b / s / 1048576 }')
    r=$(awk -v m="$m" -v f="$f" 'BEGIN { printf "%.3f", m / f }')
    SW[$mode]+="$m " FIO[$mode]+="$(printf '%.1f' "$f") " CPU[$mode]+="$c " RATIO[$mode]+="$r "
    printf '%-10s %3d %-7s %10s %10.1f %9s   (swaplab %.3f s, cpu %.3f s)\n' "$mode" "$rep" "$first" "$m" "$f" "$r" "$s" "$c" |
      tee -a "$OUT/runs.txt"
  done
done

med() { tr ' ' '\n' <<<"$1" | grep . | median; }
{
  echo
  echo "real hibernation images (Linux $(meta_get "$CACHE/$(set -- $MODES; echo "$1").meta" kernel), $PAGES mlocked pattern pages, guest ${MEM_MIB} MiB) on ${DISK_MIB} MiB dd-written swap disks in $CACHE ($BENCH_SOURCE, $BENCH_FSTYPE)"
  echo "$REPS interleaved repetitions, medians; swaplab $SWAPLAB_ID; fio $(fio --version) bs 1M depth 32 O_DIRECT io_uring; $(date -u +%FT%TZ)"
  printf '%-10s %8s %8s %5s %9s %11s %9s %8s %8s %10s\n' image T stream map MiB swaplab_MiB/s fio_MiB/s ratio "med(r)" cpu_s
  for mode in $MODES; do
    sm=$(med "${SW[$mode]}") fm=$(med "${FIO[$mode]}")
    printf '%-10s %8s %8s %5s %9s %11.1f %9.1f %8.3f %8.3f %10.3f\n' "$mode" "${SNAP[$mode]}" "${STREAM[$mode]}" "${MAPS[$mode]}" \
      "$(awk -v b="${BYTES[$mode]}" 'BEGIN { printf "%.1f", b / 1048576 }')" "$sm" "$fm" \
      "$(awk -v a="$sm" -v b="$fm" 'BEGIN { print a / b }')" "$(med "${RATIO[$mode]}")" "$(med "${CPU[$mode]}")"
  done
  echo "(T: snapshot pages; stream: on-disk stream pages (T for nocompress; the LZO units' pages for lzo); map: swap map pages,"
  echo " read too but not counted; MiB: \"bytes\" = stream * 4096, swaplab's MiB/s numerator and fio's size (rounded up to MiB);"
  echo " ratio: median swaplab / median fio; med(r): median of per-repetition ratios; cpu_s: median read_cpu_seconds)"
  echo "load average at the start: $LOAD0; at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  for mode in $MODES; do
    echo "image $mode: made $(meta_get "$CACHE/$mode.meta" made) in $(meta_get "$CACHE/$mode.meta" make_seconds) s ($(meta_get "$CACHE/$mode.meta" accel); hibernate $(meta_get "$CACHE/$mode.meta" hibernate_seconds) s; kernel wrote $(meta_get "$CACHE/$mode.meta" kernel_write))"
  done
} | tee "$OUT/report.txt"

bad=0
for mode in $MODES; do
  sha1="$(sha256sum <"$CACHE/$mode.img" | cut -d' ' -f1)"
  if [ "$sha1" = "${SHA0[$mode]}" ]; then
    echo "image $mode: sha256 unchanged after the runs (${sha1:0:16}…)" | tee -a "$OUT/report.txt"
  else
    echo "image $mode: sha256 CHANGED: ${SHA0[$mode]} -> $sha1" | tee -a "$OUT/report.txt"
    bad=1
  fi
done
echo "per-run JSON and the table: $OUT"
exit $bad
