#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fio against swaplab's io_uring engine on the same real file: a 1 GiB
# contiguous write and read with 512 KiB requests, queue depth 32, O_DIRECT
# (goal: ours >= 90% of fio); then per-page (4 KiB) requests against per-run
# requests (P pages, the device's MaxPagesPerRequest) through our engine,
# with and without the plug merging the per-page bios. Runs interleave
# (fio, ours, fio, ours, ...) and each figure is the median of REPS runs;
# "paired ratio" is the median over runs of ours / the fio run just before.
# docs/performance.md has the figures and their caveats.
#
# usage: bench/io_vs_fio.sh [FILE] [REPS]
#   FILE  default /var/tmp/swaplab_io/bench (must not be on tmpfs)
#   REPS  default 5
# Builds the release preset's io_bench first unless IO_BENCH is set.
set -euo pipefail
cd "$(dirname "$0")/.."
FILE=${1:-/var/tmp/swaplab_io/bench}
REPS=${2:-5}
QD=32
SIZE_MIB=1024

mkdir -p "$(dirname "$FILE")"
fstype=$(df --output=fstype "$(dirname "$FILE")" | tail -1)
if [ "$fstype" = tmpfs ]; then echo "refusing: $FILE is on tmpfs" >&2; exit 1; fi
command -v fio >/dev/null || { echo "fio not installed (scripts/setup installs it)" >&2; exit 1; }
command -v jq >/dev/null || { echo "jq not installed" >&2; exit 1; }
if [ -z "${IO_BENCH:-}" ]; then
  cmake --preset release >/dev/null
  cmake --build --preset release -j2 --target io_bench >/dev/null
  IO_BENCH=./build/release/io_bench
fi

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }

# Lay the file out once (written blocks, like a swap file or fio's layout).
if [ ! -f "$FILE" ] || [ "$(stat -c %s "$FILE")" -lt $((SIZE_MIB << 20)) ]; then
  fio --name=layout --filename="$FILE" --size=${SIZE_MIB}M --rw=write --bs=1M --direct=1 \
      --ioengine=io_uring --iodepth=8 >/dev/null
fi

fio_mib() {  # rw bs
  local key=read; [ "$1" = write ] && key=write
  fio --name=seq --filename="$FILE" --size=${SIZE_MIB}M --rw="$1" --bs="$2" --iodepth=$QD \
      --direct=1 --ioengine=io_uring --output-format=json |
    jq ".jobs[0].$key.bw_bytes / 1048576"
}
ours_mib() {  # op req_kib merge
  "$IO_BENCH" --file "$FILE" --size-mib $SIZE_MIB --op "$1" --req-kib "$2" --qd $QD \
      --merge "$3" --engine uring | sed -n 's/.*MiB\/s=\([0-9.]*\).*/\1/p'
}

P=$("$IO_BENCH" --file "$FILE" --size-mib 4 --op read --req-kib 4 --qd 1 |
    sed -n 's/.* P=\([0-9]*\) .*/\1/p')
RUN_KIB=$((P * 4))
echo "file $FILE ($(df --output=source "$(dirname "$FILE")" | tail -1), $fstype), ${SIZE_MIB} MiB," \
     "qd $QD, O_DIRECT, io_uring; P = $P pages; $REPS runs each, medians; $(date -u +%FT%TZ)"

declare -A v
names=(fio_w ours_w fio_r ours_r page_w page_r plug_w plug_r run_w run_r)
for n in "${names[@]}"; do v[$n]=""; done
for ((r = 1; r <= REPS; r++)); do
  v[fio_w]+="$(fio_mib write 512k) "; v[ours_w]+="$(ours_mib write 512 0) "
  v[fio_r]+="$(fio_mib read 512k) ";  v[ours_r]+="$(ours_mib read 512 0) "
  v[page_w]+="$(ours_mib write 4 0) "; v[run_w]+="$(ours_mib write $RUN_KIB 0) "
  v[page_r]+="$(ours_mib read 4 0) ";  v[run_r]+="$(ours_mib read $RUN_KIB 0) "
  v[plug_w]+="$(ours_mib write 4 1) "; v[plug_r]+="$(ours_mib read 4 1) "
  echo "run $r/$REPS done" >&2
done
declare -A m
for n in "${names[@]}"; do m[$n]=$(tr ' ' '\n' <<<"${v[$n]}" | grep . | median); done

# The machine has slow phases that last seconds: also give the median of
# the ratios of each fio run and the engine run right after it.
paired() {  # fio_key ours_key
  paste -d' ' <(tr ' ' '\n' <<<"${v[$1]}" | grep .) <(tr ' ' '\n' <<<"${v[$2]}" | grep .) |
    awk '{print $2 / $1}' | median
}
printf '\n%-36s %10s %10s %9s %14s\n' "512 KiB requests, qd $QD" "fio MiB/s" "ours MiB/s" "ours/fio" "paired ratio"
printf '%-36s %10.1f %10.1f %9s %14.3f\n' "write 1 GiB" "${m[fio_w]}" "${m[ours_w]}" \
  "$(ratio "${m[ours_w]}" "${m[fio_w]}")" "$(paired fio_w ours_w)"
printf '%-36s %10.1f %10.1f %9s %14.3f\n' "read 1 GiB (host cache: re-reads)" "${m[fio_r]}" \
  "${m[ours_r]}" "$(ratio "${m[ours_r]}" "${m[fio_r]}")" "$(paired fio_r ours_r)"
printf '\n%-44s %10s %10s %8s\n' "ours, qd $QD" "write" "read" ""
printf '%-44s %10.1f %10.1f\n' "per-page: 4 KiB requests, no plug merge" "${m[page_w]}" "${m[page_r]}"
printf '%-44s %10.1f %10.1f\n' "per-page: 4 KiB requests, plug merge to P" "${m[plug_w]}" "${m[plug_r]}"
printf '%-44s %10.1f %10.1f\n' "per-run: $RUN_KIB KiB requests (P pages)" "${m[run_w]}" "${m[run_r]}"
printf '%-44s %10s %10s\n' "ratio per-run / per-page (no merge)" "$(ratio "${m[run_w]}" "${m[page_w]}")" "$(ratio "${m[run_r]}" "${m[page_r]}")"
printf '%-44s %10s %10s\n' "ratio per-run / per-page (plug merge)" "$(ratio "${m[run_w]}" "${m[plug_w]}")" "$(ratio "${m[run_r]}" "${m[plug_r]}")"
printf '\nall runs (MiB/s):\n'
for n in "${names[@]}"; do printf '  %-7s %s\n' "$n" "${v[$n]}"; done
