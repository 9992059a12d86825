#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hibernation image write / read on a real swap file against fio (seed
# 001's results tables scaled to this machine): a 2 GiB swap file
# written with dd (never fallocate), the RFC's two layouts scaled to it
# (`--layout shuffled`: 90% swapped out in 2 MiB files, removed in random
# order; `--layout holes`: a third swapped out, every other 64 KiB freed),
# a 1 GiB uncompressed image (no zero pages) written and read back with
#   base              --source base                 --batch per-page
#   allocator         --source free-clusters-sorted --batch per-page
#   allocator+per-run --source free-clusters-sorted --batch per-run
# and fio's sequential O_DIRECT write of 1 GiB on the same file (io_uring,
# bs 1 MiB, depth 32). Runs interleave (fio, then every layout x variant
# write + read, repeated REPS times); figures are medians; "paired" is the
# median over repetitions of allocator+per-run MiB/s / that repetition's fio
# MiB/s. As in the kernel, the snapshot is in memory and the write-copy
# pages exist (allocated, touched and registered with io_uring as fixed
# buffers) before the clock starts: write seconds cover slot allocation, the
# map pages, copying each page into its write copy (write_page) and the
# I/O; read seconds include checking every page. "cpu s" is the process CPU
# time of that phase (all threads, user + system).
#
# usage: bench/image_vs_fio.sh [FILE] [REPS]
#   FILE  default /var/tmp/swaplab_hib/swap (must not be on tmpfs)
#   REPS  default 5 (at least 3)
# Builds the release preset's swaplab first unless SWAPLAB is set.
set -euo pipefail
cd "$(dirname "$0")/.."
FILE=${1:-/var/tmp/swaplab_hib/swap}
REPS=${2:-5}
[ "$REPS" -ge 3 ] || { echo "REPS must be >= 3" >&2; exit 2; }
SIZE_MIB=2048
IMAGE=1G
BUDGET=${BUDGET:-128M}  # write copies before a drain (§6.1); copy pages are reused after it

. bench/bench_lib.sh
bench_real_disk "$FILE"
bench_tools fio jq
SWAPLAB=${SWAPLAB:-$(bench_build swaplab)}

if [ ! -f "$FILE" ] || [ "$(stat -c %s "$FILE")" -ne $((SIZE_MIB << 20)) ]; then
  rm -f "$FILE"
  dd if=/dev/zero of="$FILE" bs=1M count=$SIZE_MIB oflag=direct conv=fsync status=none
fi
"$SWAPLAB" area format "$FILE" --force >/dev/null

fio_mib() {
  fio --name=seq --filename="$FILE" --size=1G --rw=write --bs=1M --iodepth=32 --direct=1 \
      --ioengine=io_uring --output-format=json | jq '.jobs[0].write.bw_bytes / 1048576'
  "$SWAPLAB" area format "$FILE" --force >/dev/null  # fio wrote over the swap header
}

variants=("base base per-page" "allocator free-clusters-sorted per-page" "allocator+per-run free-clusters-sorted per-run")
layouts=(shuffled holes)
declare -A w r wc rc bios runs aruns mib
v_fio=""
for ((rep = 1; rep <= REPS; rep++)); do
  v_fio+="$(fio_mib) "
  for layout in "${layouts[@]}"; do
    for v in "${variants[@]}"; do
      set -- $v
      key="$layout/$1"
      out=$("$SWAPLAB" image write "$FILE" --size $IMAGE --zero-share 0 --layout "$layout" --source "$2" \
            --batch "$3" --memory-budget "$BUDGET" --json)
      w[$key]+="$(jq .write_seconds_measured <<<"$out") "
      wc[$key]+="$(jq .write_cpu_seconds <<<"$out") "
      bios[$key]=$(jq .bios <<<"$out"); runs[$key]=$(jq .runs <<<"$out"); aruns[$key]=$(jq .alloc_runs <<<"$out")
      mib[$key]=$(jq '(.stream_pages + .map_pages) * 4096 / 1048576' <<<"$out")
      rout=$("$SWAPLAB" image read "$FILE" --batch "$3" --json)
      r[$key]+="$(jq .read_seconds_measured <<<"$rout") "
      rc[$key]+="$(jq .read_cpu_seconds <<<"$rout") "
    done
  done
  echo "repetition $rep/$REPS done" >&2
done

list() { tr ' ' '\n' <<<"$1" | grep .; }
fio_med=$(list "$v_fio" | median)
echo "file $FILE ($BENCH_SOURCE, $BENCH_FSTYPE), ${SIZE_MIB} MiB dd-written;" \
     "image $IMAGE uncompressed (no zero pages), memory budget $BUDGET; $REPS repetitions, medians; $(date -u +%FT%TZ)"
printf 'fio sequential write, 1 GiB, O_DIRECT, io_uring, bs 1M, depth 32: %.1f MiB/s (runs: %s)\n\n' "$fio_med" "$v_fio"
printf '%-9s %-18s %6s %10s %7s %8s %6s %7s %6s %11s %6s %7s\n' layout variant runs alloc_runs bios "write s" "cpu s" \
  "read s" "cpu s" "write MiB/s" "/fio" "paired"
for layout in "${layouts[@]}"; do
  for v in "${variants[@]}"; do
    set -- $v
    key="$layout/$1"
    ws=$(list "${w[$key]}" | median)
    rs=$(list "${r[$key]}" | median)
    rate=$(awk -v m="${mib[$key]}" -v s="$ws" 'BEGIN {printf "%.1f", m / s}')
    paired=$(paste -d' ' <(list "$v_fio") <(list "${w[$key]}") |
             awk -v m="${mib[$key]}" '{print (m / $2) / $1}' | median)
    wcs=$(list "${wc[$key]}" | median)
    rcs=$(list "${rc[$key]}" | median)
    printf '%-9s %-18s %6s %10s %7s %8.3f %6.3f %7.3f %6.3f %11s %6.3f %7.3f\n' "$layout" "$1" "${runs[$key]}" \
      "${aruns[$key]}" "${bios[$key]}" "$ws" "$wcs" "$rs" "$rcs" "$rate" \
      "$(awk -v a="$rate" -v b="$fio_med" 'BEGIN {print a / b}')" "$paired"
  done
done
printf '\nall runs (seconds):\n'
for layout in "${layouts[@]}"; do
  for v in "${variants[@]}"; do
    set -- $v
    printf '  %-28s write %s| read %s\n' "$layout/$1" "${w[$layout/$1]}" "${r[$layout/$1]}"
  done
done
